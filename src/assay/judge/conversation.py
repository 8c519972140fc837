"""Conversation-level checks: a turn judged with the turns before it (`Entry.conversation`).

They rate the turns of conversations (the ``conversation`` check group) and read the answers to
a turn's earlier turns from the run (`CheckContext.turn_answer`); without the run they abstain.
A conversation whose ``criteria`` name checks is rated only by those it names; one without
criteria by each of them where it applies.

* ``kept_context`` (binary; turns with ``depends_on``): the follow-up is answered right in the
  context it carries. Two things must hold: (1) the answer is correct as ``answer_correct``
  says (every critical key fact stated, nothing contradicted, no other fiscal year): the turn's
  gold is for the period it means ("And the year before?" has the earlier year's figure as its
  key fact), so an answer about the earlier turn's period again fails here; (2) it is about the
  entity of the turns it depends on: it does not name another company of the dataset in place
  of theirs (a turn that names a company itself, "And Kestrel Systems?", is about that one;
  a ticker, "GRAN", is named by a name whose letters it takes in order from the first,
  "Granite State Bancorp").
  The entities of a turn are the names its ``metadata.company`` (or ``metadata.companies``)
  gives and the proper names of its query (capitalised words that do not open it: "Averix" of
  "What was Averix's revenue?"); the dataset's companies are those of every entry. An answer
  that names another company and none of the earlier turns' fails, naming it; one that names
  no company passes this part. Without key facts or a figure to hold the answer to, (1)
  abstains and the turn is rated on (2) alone when it fails, else abstains.
* ``no_contradiction`` (binary; turns 2 and later): no later answer states a different figure
  for a key fact an earlier answer of the same conversation stated. For each critical key fact
  of an earlier turn whose figure that turn's answer stated (`assay.judge.numbers`' matching,
  scale and rounding aware), the answer is read clause by clause (sentences, then split at
  ";" and ", and / but / while"; citations in brackets left out); a clause that speaks of
  the same thing (every word of what the key fact names, "net income"; for a fact that is
  only a figure, a word of the earlier question, such as "revenue"), of the same company (it
  names no other company of the dataset), of the same period (a year the earlier answer
  stated the figure for; a clause naming no year is not compared) and states a figure of the
  same kind (currency, percent, ...) none of whose figures match is a contradiction.
  Abstains when no earlier answer stated a key-fact figure.
* ``clarified`` (binary; turns whose ``expected_behavior`` is ``clarify``): the answer asks a
  question instead of answering. With ``clarify_with`` on the turn this is ``clarify_ok``
  (asks which reading is meant, or answers each reading naming it); without it the answer
  must ask (a question mark or a request such as "could you specify") and state no figure.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from assay._stopwords import FACT_STOPWORDS
from assay.dataset import Entry, ExpectedBehavior
from assay.judge.behaviour import _ASK_RE
from assay.judge.context import CheckContext
from assay.judge.numbers import Quantity, compare
from assay.judge.numeric import read_figures, stated_years
from assay.judge.refusal import split_sentences
from assay.judge.registry import Outcome, check, check_group

__all__ = [
    "CONVERSATION_CHECKS",
    "contradicting_clause",
    "entity_names",
    "named_companies",
    "split_clauses",
]

CONVERSATION_CHECKS = ("kept_context", "no_contradiction", "clarified")
"""The conversation-level checks, in the order reports show them."""

check_group(
    "conversation",
    applies=lambda entry: getattr(entry, "conversation", None) is not None,
    description="conversations: the turns of conversation entries",
)


def _asked(entry: Any, name: str) -> bool:
    """Is the conversation rated by check `name` (its criteria name it, or it has none)?"""
    ref = getattr(entry, "conversation", None)
    return ref is not None and (not ref.criteria or name in ref.criteria)


def _follow_up(entry: Any) -> bool:
    ref = getattr(entry, "conversation", None)
    return ref is not None and bool(ref.depends_on) and _asked(entry, "kept_context")


def _later(entry: Any) -> bool:
    ref = getattr(entry, "conversation", None)
    return ref is not None and ref.turn > 1 and _asked(entry, "no_contradiction")


def _clarifying(entry: Any) -> bool:
    return (
        getattr(entry, "conversation", None) is not None
        and entry.behavior() is ExpectedBehavior.clarify
        and _asked(entry, "clarified")
    )


def _turn(ctx: CheckContext, n: int) -> Entry | None:
    ref = ctx.entry.conversation
    if ref is None or ctx.dataset is None:
        return None
    got: Entry | None = ctx.dataset.by_id.get(f"{ref.id}#{n}")
    return got


# ------------------------------------------------------------------ entities

_SUFFIXES = frozenset(
    ["inc", "incorporated", "corp", "corporation", "co", "ltd", "plc", "llc", "sa", "ag", "nv"]
)
_CAPITAL = re.compile(r"\b([A-Z][A-Za-z0-9&\-]*(?:\s+[A-Z][A-Za-z0-9&\-]*)*)")
_PERIOD_TOKEN = re.compile(r"(?:FY|Q[1-4]|H[12])?'?\d{2,4}|[QH][1-4]", re.IGNORECASE)
_NOT_NAMES = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "when",
        "where",
        "why",
        "is",
        "was",
        "were",
        "are",
        "did",
        "does",
        "do",
        "and",
        "or",
        "the",
        "a",
        "an",
        "in",
        "on",
        "of",
        "for",
        "to",
        "by",
        "from",
        "as",
        "at",
        "its",
        "it",
        "their",
        "this",
        "that",
        "these",
        "those",
        "please",
        "could",
        "can",
        "would",
        "fiscal",
        "fy",
        "q1",
        "q2",
        "q3",
        "q4",
        "quarter",
        "year",
        "gaap",
        "non",
        "ebitda",
        "eps",
        "usd",
        "i",
        "we",
        "you",
        "tell",
        "give",
        "show",
        "list",
        "compare",
    ]
)


def entity_names(entry: Entry) -> list[str]:
    """The entities a turn is about: the names ``metadata.company`` / ``metadata.companies``
    give (a value with a capital letter: a name, not an id such as ``fern``), then the proper
    names of its query (capitalised words not opening it, "'s" dropped)."""
    md = entry.metadata
    given = md.get("company") or md.get("companies")
    listed = [given] if isinstance(given, str) else given if isinstance(given, list) else []
    out: list[str] = [
        g.strip() for g in listed if isinstance(g, str) and g.strip() and g != g.lower()
    ]
    for m in _CAPITAL.finditer(entry.query):
        words = [
            w.removesuffix("'s").removesuffix("\u2019s")
            for w in m.group(1).split()
            if not _PERIOD_TOKEN.fullmatch(w)
        ]
        while words and words[0].lower() in _NOT_NAMES:
            words.pop(0)
        if m.start() == 0 and words and m.group(1).split()[0] == words[0]:
            words.pop(0)  # the query's first word is capitalised as a sentence opens
        name = " ".join(words)
        if name and name.lower() not in _NOT_NAMES and name not in out:
            out.append(name)
    return out


def _core(name: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z0-9&]+", name) if w.lower() not in _SUFFIXES]
    return " ".join(words)


@functools.lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str] | None:
    """What names `name` in a text (`named_companies`), compiled once per name; None for a
    name that is only a legal suffix."""
    core = _core(name)
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(core)}(?![A-Za-z0-9])") if core else None


def named_companies(names: list[str], answer: str) -> list[str]:
    """The `names` the answer names (a name without its legal suffix, as a whole word, the
    case as written; "Averix Technologies Inc." is named by "Averix Technologies")."""
    return [n for n in names if (p := _name_pattern(n)) is not None and p.search(answer)]


def _ticker_of(ticker: str, name: str) -> bool:
    """Is `ticker` (up to 5 capitals, "GRAN", "AVX") the ticker of `name` ("Granite State
    Bancorp", "Averix"): its letters in order within the name's, the first the name's first?"""
    if not (ticker.isupper() and ticker.isalnum() and len(ticker) <= 5):
        return False
    letters = iter("".join(_core(name).split()).lower())
    want = ticker.lower()
    return _core(name).lower().startswith(want[0]) and all(ch in letters for ch in want)


def _entity_memo(ctx: CheckContext) -> dict[str, list[str]] | None:
    """Entry id -> `entity_names` of every entry of the dataset, and under "" the companies of
    the dataset (each name once, in order): read once per dataset, kept on it."""
    ds = ctx.dataset
    if ds is None:
        return None
    memo: dict[str, list[str]] | None = ds.__dict__.get("_conversation_entities")
    if memo is None:
        memo = {e.id: entity_names(e) for e in ds.entries}
        memo[""] = list(dict.fromkeys(n for names in memo.values() for n in names))
        ds.__dict__["_conversation_entities"] = memo
    return memo


def _dataset_companies(ctx: CheckContext) -> list[str]:
    memo = _entity_memo(ctx)
    return [] if memo is None else memo[""]


def _names_of(ctx: CheckContext, entry: Entry) -> list[str]:
    """`entity_names` of `entry`, read from the dataset's memo when the entry is the dataset's."""
    memo = _entity_memo(ctx)
    if memo is not None and ctx.dataset is not None and ctx.dataset.by_id.get(entry.id) is entry:
        return memo[entry.id]
    return entity_names(entry)


@check("kept_context", group="conversation", rates=_follow_up)
def kept_context(ctx: CheckContext) -> Outcome:
    """A follow-up is answered right in the context it carries: correct (answer_correct) and
    about the company of the turns it depends on, not another."""
    ref = ctx.entry.conversation
    if ref is None or not _follow_up(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    earlier = [t for t in (_turn(ctx, d) for d in ref.depends_on) if t is not None]
    # a turn that names its company ("And Quillon?") is about it; else about the earlier ones'
    theirs: list[str] = list(_names_of(ctx, ctx.entry))
    if not theirs:
        for t in earlier:
            theirs += [n for n in _names_of(ctx, t) if n not in theirs]
    answer = ctx.answer or ""
    others = [n for n in _dataset_companies(ctx) if n not in theirs]
    if theirs and not named_companies(theirs, answer):
        named = named_companies(others, answer)
        # a ticker ("GRAN") is named by its company's name ("Granite State Bancorp")
        swapped = [] if any(_ticker_of(t, n) for t in theirs for n in named) else named
        if swapped:
            return Outcome(
                False,
                (
                    f"about {', '.join(swapped)}, not {', '.join(theirs)} of turn "
                    f"{', '.join(map(str, ref.depends_on))}",
                ),
            )
    correct = ctx.result("answer_correct")
    if correct is None:
        return Outcome(None, ("no key facts or figure to hold the follow-up's answer to",))
    if not correct:
        return Outcome(False, ("the follow-up's answer is not correct (answer_correct)",))
    return Outcome(True)


# ------------------------------------------------------------------ contradictions

_CLAUSE = re.compile(r";\s*|,\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
_CITATION = re.compile(r"\[[^\]]*\]")  # "[fern-2024-10k/3/2~565c]": no year, no figure
_WORD = re.compile(r"[a-z][a-z0-9]+")
_PERIOD_WORDS = frozenset(
    ["fiscal", "year", "years", "quarter", "quarters", "fy", "annual", "ended", "ending", "end",
     "january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december", "prior", "previous", "last", "current"]
)  # fmt: skip
_ASKING = frozenset(
    ["much", "many", "report", "reported", "pull", "say", "said", "state", "stated", "disclose",
     "disclosed", "total", "amount", "figure", "number", "value", "about", "thousand",
     "million", "billion", "trillion", "bn", "mn", "percent", "dollar", "usd", "eur"]
)  # fmt: skip


def split_clauses(text: str) -> list[str]:
    """The answer's clauses: its sentences, each split at ";" and ", and / but / while"
    (citations in square brackets left out)."""
    text = _CITATION.sub(" ", text)
    return [c for s in split_sentences(text) for c in _CLAUSE.split(s) if c.strip()]


def _concept(text: str, entities: list[str]) -> set[str]:
    """The words naming what a fact or question is about ("net income"), stemmed: no stop,
    period, asking or entity word, no number."""
    named = {w for n in entities for w in _WORD.findall(n.lower())}
    return {
        w.removesuffix("s")
        for w in _WORD.findall(text.lower())
        if w not in FACT_STOPWORDS
        and w not in _NOT_NAMES
        and w not in _PERIOD_WORDS
        and w not in _ASKING
        and w not in named
        and not any(ch.isdigit() for ch in w)
    }


def contradicting_clause(
    fact: Quantity,
    years: set[int],
    concept: set[str],
    answer: str,
    *,
    every_word: bool = False,
    elsewhere: list[str] | None = None,
) -> tuple[str, Quantity] | None:
    """The first clause of `answer` that states another figure than `fact` for the same
    thing (a word of `concept`; each of them with `every_word`) and period (`years`), and
    names none of the companies `elsewhere` (another company's figure is another fact), with
    the figure it states; None if none."""
    for clause in split_clauses(answer):
        words = {w.removesuffix("s") for w in _WORD.findall(clause.lower())}
        same = concept <= words if every_word else bool(words & concept)
        if not concept or not same or not (stated_years(clause) & years):
            continue
        if elsewhere and named_companies(elsewhere, clause):
            continue
        figs = [q for q in read_figures(clause) if q.kind == fact.kind and not q.is_year]
        if not figs or any(compare(fact, q).ok for q in figs):
            continue
        return clause.strip(), figs[0]
    return None


@check("no_contradiction", group="conversation", rates=_later)
def no_contradiction(ctx: CheckContext) -> Outcome:
    """No later answer states a different figure for a key fact an earlier answer of the same
    conversation stated."""
    ref = ctx.entry.conversation
    if ref is None or not _later(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    compared = False
    for n in range(1, ref.turn):
        earlier = _turn(ctx, n)
        said = ctx.turn_answer(f"{ref.id}#{n}")
        if earlier is None or not said:
            continue
        facts = [kf for kf in earlier.key_facts if kf.critical]
        if not facts:
            continue
        theirs = _names_of(ctx, earlier)
        elsewhere = [c for c in _dataset_companies(ctx) if c not in theirs]
        asked = _concept(earlier.query, theirs)
        stated = [(c, read_figures(c)) for c in split_clauses(said)]  # once per earlier turn
        for kf in facts:
            # what the fact is about: its own words ("net income for fiscal 2024: $283
            # million"), all of them; else a word of the earlier question
            own = _concept(_CITATION.sub(" ", kf.fact), theirs)
            concept, every_word = (own, True) if own else (asked, False)
            for fig in read_figures(kf.fact):
                where = next(
                    (c for c, figs in stated if any(compare(fig, q).ok for q in figs)), None
                )
                if where is None:
                    continue  # the earlier answer did not state it: nothing to hold to
                years = stated_years(where) or stated_years(earlier.query)
                compared = True
                hit = contradicting_clause(
                    fig, years, concept, ctx.answer or "", every_word=every_word,
                    elsewhere=elsewhere,
                )  # fmt: skip
                if hit is not None:
                    clause, q = hit
                    return Outcome(
                        False,
                        (
                            f"states {q.text} where turn {n}'s answer stated {fig.text} "
                            f"({kf.fact}): {clause[:120]}",
                        ),
                    )
    if not compared:
        return Outcome(None)
    return Outcome(True)


# ------------------------------------------------------------------ clarification


@check("clarified", group="conversation", rates=_clarifying)
def clarified(ctx: CheckContext) -> Outcome:
    """A turn that calls for clarification asks a question instead of answering."""
    if not _clarifying(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    if ctx.entry.clarify_with:
        return ctx.outcome("clarify_ok")
    answer = ctx.answer or ""
    asks = next((s for s in split_sentences(answer) if _ASK_RE.search(s)), None)
    figures = [q for q in read_figures(answer) if not q.is_year]
    if asks is None:
        return Outcome(False, ("answers without asking which is meant",))
    if figures:
        return Outcome(False, (f"asks, but answers anyway ({figures[0].text})",))
    return Outcome(True, (f"asks: {asks[:120]}",))
