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
  of theirs. The entities of a turn are its ``metadata.company`` (or ``metadata.companies``),
  else the proper names of its query (capitalised words that do not open it: "Averix" of
  "What was Averix's revenue?"); the dataset's companies are those of every entry. An answer
  that names another company and none of the earlier turns' fails, naming it; one that names
  no company passes this part. Without key facts or a figure to hold the answer to, (1)
  abstains and the turn is rated on (2) alone when it fails, else abstains.
* ``no_contradiction`` (binary; turns 2 and later): no later answer states a different figure
  for a key fact an earlier answer of the same conversation stated. For each critical key fact
  of an earlier turn whose figure that turn's answer stated (`assay.judge.numbers`' matching,
  scale and rounding aware), the answer is read clause by clause (sentences, then split at
  ";" and ", and / but / while"); a clause that speaks of the same thing (a word of the
  earlier question's concept, such as "revenue"), of the same period (a year the earlier
  answer stated the figure for; a clause naming no year is not compared) and states a figure
  of the same kind (currency, percent, ...) none of whose figures match is a contradiction.
  Abstains when no earlier answer stated a key-fact figure.
* ``clarified`` (binary; turns whose ``expected_behavior`` is ``clarify``): the answer asks a
  question instead of answering. With ``clarify_with`` on the turn this is ``clarify_ok``
  (asks which reading is meant, or answers each reading naming it); without it the answer
  must ask (a question mark or a request such as "could you specify") and state no figure.
"""

from __future__ import annotations

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
    """The entities a turn is about: ``metadata.company`` / ``metadata.companies``, else the
    proper names of its query (capitalised words not opening it, "'s" dropped)."""
    md = entry.metadata
    given = md.get("company") or md.get("companies")
    if isinstance(given, str) and given.strip():
        return [given.strip()]
    if isinstance(given, list):
        return [g.strip() for g in given if isinstance(g, str) and g.strip()]
    out: list[str] = []
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


def named_companies(names: list[str], answer: str) -> list[str]:
    """The `names` the answer names (a name without its legal suffix, as a whole word, the
    case as written; "Averix Technologies Inc." is named by "Averix Technologies")."""
    out = []
    for n in names:
        core = _core(n)
        if core and re.search(rf"(?<![A-Za-z0-9]){re.escape(core)}(?![A-Za-z0-9])", answer):
            out.append(n)
    return out


def _dataset_companies(ctx: CheckContext) -> list[str]:
    ds = ctx.dataset
    if ds is None:
        return []
    memo: dict[str, list[str]] = ds.__dict__.setdefault("_conversation_companies", {})
    if "all" not in memo:
        seen: dict[str, None] = {}
        for e in ds.entries:
            for n in entity_names(e):
                seen.setdefault(n, None)
        memo["all"] = list(seen)
    return memo["all"]


@check("kept_context", group="conversation", rates=_follow_up)
def kept_context(ctx: CheckContext) -> Outcome:
    """A follow-up is answered right in the context it carries: correct (answer_correct) and
    about the company of the turns it depends on, not another."""
    ref = ctx.entry.conversation
    if ref is None or not _follow_up(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    earlier = [t for t in (_turn(ctx, d) for d in ref.depends_on) if t is not None]
    theirs: list[str] = []
    for t in earlier:
        theirs += [n for n in entity_names(t) if n not in theirs]
    answer = ctx.answer or ""
    others = [n for n in _dataset_companies(ctx) if n not in theirs]
    if theirs and not named_companies(theirs, answer):
        swapped = named_companies(others, answer)
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
_WORD = re.compile(r"[a-z][a-z0-9]+")
_PERIOD_WORDS = frozenset(["fiscal", "year", "years", "quarter", "quarters", "fy", "annual"])


def split_clauses(text: str) -> list[str]:
    """The answer's clauses: its sentences, each split at ";" and ", and / but / while"."""
    return [c for s in split_sentences(text) for c in _CLAUSE.split(s) if c.strip()]


def _concept(question: str, entities: list[str]) -> set[str]:
    named = {w for n in entities for w in _WORD.findall(n.lower())}
    return {
        w.removesuffix("s")
        for w in _WORD.findall(question.lower())
        if w not in FACT_STOPWORDS
        and w not in _NOT_NAMES
        and w not in _PERIOD_WORDS
        and w not in named
        and not w.isdigit()
    }


def contradicting_clause(
    fact: Quantity, years: set[int], concept: set[str], answer: str
) -> tuple[str, Quantity] | None:
    """The first clause of `answer` that states another figure than `fact` for the same
    thing (`concept` words) and period (`years`), with the figure it states; None if none."""
    for clause in split_clauses(answer):
        words = {w.removesuffix("s") for w in _WORD.findall(clause.lower())}
        if not (words & concept) or not (stated_years(clause) & years):
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
        concept = _concept(earlier.query, entity_names(earlier))
        for kf in earlier.key_facts:
            if not kf.critical:
                continue
            for fig in read_figures(kf.fact):
                where = next(
                    (
                        c
                        for c in split_clauses(said)
                        if any(compare(fig, q).ok for q in read_figures(c))
                    ),
                    None,
                )
                if where is None:
                    continue  # the earlier answer did not state it: nothing to hold to
                years = stated_years(where) or stated_years(earlier.query)
                compared = True
                hit = contradicting_clause(fig, years, concept, ctx.answer or "")
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
