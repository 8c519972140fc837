"""The ``conversation`` group (declared here), the turns and the companies its checks read, and
``kept_context`` (binary; turns with ``depends_on``): the follow-up is answered in the
context it carries, the entity of the turns it depends on and the period it means; whether
the answer is also correct is ``answer_correct``'s to say, not this check's (a wrong or
rounded figure for the right company and year passes here). It fails when the answer is
(1) about another entity: it names another company of the dataset and none of the turn's
(a turn that names a company itself, "And Kestrel Systems?", is about that one; else it is
about the company of the latest turn it depends on that names one), or (2) about another
period than the one the turn means: it states a critical key-fact figure of a turn it
depends on as its answer (every figure it states is one, or it states one and none of this
turn's key-fact figures nor a year this turn means) where this turn's gold does not hold
that figure, or it names only fiscal years the turn does not mean, when the turn's years
are known from its gold (its question, key facts and reference answer). It passes
otherwise when it shows the context (names the turn's company, states a figure of the
turn's gold or every critical key fact word for word, or names a year the turn means) and
abstains when it cannot tell: it shows none of these, or it names another company beside
the turn's own. Names are read in the whole answer (a citation's "Granite State Bancorp
10-K" says whose filing it quotes), years and figures without its bracketed citations.
Companies are read alias-aware: the dataset's names (the names ``metadata.company`` /
``metadata.companies`` give, then the proper names of each query: capitalised words that
do not open it) are grouped by the entries' ``metadata.company``: a name that spells a
company's name (case-insensitive, legal suffixes, a leading "the", punctuation and
"&"/"and" folded: "The Coca-Cola Company" and "Coca Cola", "Pepsico" and "PepsiCo") is
that company's, as is a name that appears only in questions about one company ("Upjohn"
in a Pfizer question); a name several companies' questions use is none's. The turn's
company is named by a name given for it, a spelling of one, or an abbreviation or ticker
of one (two to six letters, two of them capitals, each a letter of the name, the first
its first: "JnJ", "J&J" of "Johnson & Johnson", "MGM" of "MGM Resorts", "GRAN" of
"Granite State Bancorp"), or a name of the dataset related to one so (one runs within the
other, "Granite State" in "Granite State Bancorp", or abbreviates it); without
``metadata.company`` each name stands for itself.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from assay.dataset import Entry, ExpectedBehavior
from assay.judge.context import CheckContext
from assay.judge.numbers import Quantity, compare
from assay.judge.numeric import read_figures, stated_years
from assay.judge.registry import Outcome, check, check_group

__all__ = ["entity_names", "named_companies"]

check_group(
    "conversation",
    applies=lambda entry: getattr(entry, "conversation", None) is not None,
    description="conversations: the turns of conversation entries",
)


def _asked(entry: Any, name: str) -> bool:
    """Is the entry a turn that check `name` rates (its conversation's criteria name the check,
    or it has none)?"""
    ref = getattr(entry, "conversation", None)
    return ref is not None and (not ref.criteria or name in ref.criteria)


def _follow_up(entry: Any) -> bool:
    return _asked(entry, "kept_context") and bool(entry.conversation.depends_on)


def _later(entry: Any) -> bool:
    return _asked(entry, "no_contradiction") and entry.conversation.turn > 1


def _clarifying(entry: Any) -> bool:
    return _asked(entry, "clarified") and entry.behavior() is ExpectedBehavior.clarify


def _turn(ctx: CheckContext, n: int) -> Entry | None:
    ref = ctx.entry.conversation
    if ref is None or ctx.dataset is None:
        return None
    got: Entry | None = ctx.dataset.by_id.get(f"{ref.id}#{n}")
    return got


# ------------------------------------------------------------------ entities

_CITATION = re.compile(r"\[[^\]]*\]")  # "[fern-2024-10k/3/2~565c]": no year, no figure
_WORD = re.compile(r"[a-z][a-z0-9]+")
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
        "nii",
        "cogs",
        "ebit",
        "capex",
        "roa",
        "roe",
        "roic",
        "dpo",
        "dso",
        "pp&e",
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
    out = _given_names(entry)
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


@functools.lru_cache(maxsize=65_536)
def _fold_name(name: str) -> str:
    """A company name folded for comparing spellings: lower case, "&" read as "and", a leading
    "the" and legal suffixes dropped, punctuation as spaces ("The Coca-Cola Company" and "Coca
    Cola" fold alike, "Johnson & Johnson" and "Johnson and Johnson", "PepsiCo" and "Pepsico")."""
    words = re.findall(r"[a-z0-9]+", name.lower().replace("&", " and "))
    if words and words[0] == "the":
        words.pop(0)
    return " ".join(w for w in words if w not in _SUFFIXES and w != "company")


@functools.lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str] | None:
    """What names `name` in a text (`named_companies`), compiled once per name; None for a
    name that is only a legal suffix."""
    core = _core(name)
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(core)}(?![A-Za-z0-9])") if core else None


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")


@functools.lru_cache(maxsize=4096)
def _lead(name: str) -> str | None:
    """The letters and digits `name`'s pattern opens with, up to its first other character
    (None when it opens with another: "&"). Where the pattern matches, a text has this run
    whole (a letter or digit neither before nor after it), so a text without it is not
    searched."""
    m = _ALNUM_RUN.match(_core(name))
    return m.group(0) if m else None


@functools.lru_cache(maxsize=4096)
def _loose_pattern(name: str) -> re.Pattern[str] | None:
    """`_name_pattern` in any case, "&" or "and" between the words, hyphens as spaces ("Pepsico"
    names "PepsiCo", "Johnson and Johnson" names "Johnson & Johnson"); its first letter must
    not be lower case where it is found (`_names_loosely`)."""
    words = _fold_name(name).split()
    if not words:
        return None
    gap = r"(?:\s*(?:&|and)\s*|[\s\-]+)"
    body = gap.join(re.escape(w) for w in words if w != "and")
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.IGNORECASE)


def named_companies(names: list[str], answer: str) -> list[str]:
    """The `names` the answer names (a name without its legal suffix, as a whole word, the
    case as written; "Averix Technologies Inc." is named by "Averix Technologies")."""
    runs = set(_ALNUM_RUN.findall(answer))
    return [
        n
        for n in names
        if (p := _name_pattern(n)) is not None
        and ((lead := _lead(n)) is None or lead in runs)
        and p.search(answer)
    ]


@functools.lru_cache(maxsize=65_536)
def _first_word(name: str) -> str:
    words = _fold_name(name).split()
    return words[0] if words else ""


def _names_loosely(names: list[str], answer: str) -> list[str]:
    """How the answer names any of `names` (as `_fold_name` reads spellings, not lower case
    where found: "target" does not name Target), each spelling once, as written."""
    out: list[str] = []
    low = answer.lower()
    for n in names:
        p = _loose_pattern(n)
        if p is None or _first_word(n) not in low:  # no regex run for a name not there
            continue
        for m in p.finditer(answer):
            if not m.group(0)[:1].islower() and m.group(0) not in out:
                out.append(m.group(0))
    return out


_ABBREVIATION = re.compile(r"(?<![A-Za-z0-9&])[A-Z][A-Za-z&]{1,5}(?![A-Za-z0-9&])")


def _abbreviates(short: str, name: str) -> bool:
    """Is `short` an abbreviation or ticker of `name` ("GRAN", "GSB" of "Granite State Bancorp",
    "AMD" of "Advanced Micro Devices", "JnJ" and "J&J" of "Johnson & Johnson", "MGM" of "MGM
    Resorts"): two to six letters, at least two of them capitals, each of its letters one of
    the name's (a ticker need not keep their order: "FFEN" of "Fernleaf Financial"), the first
    the name's first."""
    letters = short.replace("&", "")
    if not (2 <= len(letters) <= 6 and letters.isalpha()):
        return False
    if sum(ch.isupper() for ch in letters) < 2 or letters.lower() in _NOT_NAMES:
        return False
    folded = "".join(_fold_name(name).split())
    want = letters.lower()
    if not folded or folded == want or not folded.startswith(want[0]):
        return False
    return all(want.count(ch) <= folded.count(ch) for ch in set(want))


@functools.lru_cache(maxsize=65_536)
def _related(a: str, b: str) -> bool:
    """Do names `a` and `b` name one company: one abbreviates the other, or one's folded words
    run within the other's ("Granite State" in "Granite State Bancorp")?"""
    if _abbreviates(a, b) or _abbreviates(b, a):
        return True
    fa, fb = f" {_fold_name(a)} ", f" {_fold_name(b)} "
    return fa.strip() != "" and fb.strip() != "" and (fa in fb or fb in fa)


def _ticker_of(ticker: str, name: str) -> bool:
    """Is `ticker` (up to 5 capitals, "GRAN", "AVX") the ticker of `name` ("Granite State
    Bancorp", "Averix"): its letters in order within the name's, the first the name's first?"""
    if not (ticker.isupper() and ticker.isalnum() and len(ticker) <= 5):
        return False
    letters = iter("".join(_core(name).split()).lower())
    want = ticker.lower()
    return _core(name).lower().startswith(want[0]) and all(ch in letters for ch in want)


def _given_names(entry: Entry) -> list[str]:
    """The names ``metadata.company`` / ``metadata.companies`` give (a value with a capital
    letter: a name, not an id such as ``fern``)."""
    md = entry.metadata
    given = md.get("company") or md.get("companies")
    listed = [given] if isinstance(given, str) else given if isinstance(given, list) else []
    return [g.strip() for g in listed if isinstance(g, str) and g.strip() and g != g.lower()]


def _company_key(entry: Entry) -> str | None:
    """The one company an entry is about by its ``metadata.company`` (a name or an id, folded;
    a list of one), else None."""
    given = entry.metadata.get("company")
    if isinstance(given, list) and len(given) == 1:
        given = given[0]
    return _fold_name(given) or None if isinstance(given, str) else None


class _Entities:
    """The dataset's company names grouped into companies, read once per dataset.

    A name's company is the ``metadata.company`` (folded by `_fold_name`) it spells, else the
    one company whose entries' questions name it ("Upjohn" in a question about Pfizer is one of
    Pfizer's names), else itself (a dataset without ``metadata.company``); a name the questions
    of several companies use, and that is none of theirs, is no company's ("Cash Flow")."""

    def __init__(self, entries: list[Entry]):
        self.names = {e.id: entity_names(e) for e in entries}
        keys = {e.id: _company_key(e) for e in entries}
        given: dict[str, list[str]] = {}  # company -> the names metadata.company gives it
        for e in entries:
            if (k := keys[e.id]) is not None:
                for n in _given_names(e):
                    if n not in given.setdefault(k, []):
                        given[k].append(n)
        companies = {k for k in keys.values() if k is not None}
        asked_by: dict[str, set[str]] = {}
        for e in entries:
            for n in self.names[e.id]:
                if (k := keys[e.id]) is not None:
                    asked_by.setdefault(_fold_name(n), set()).add(k)
        self._others: dict[tuple[str, ...], list[str]] = {}  # `others`, once per company
        self._related: dict[tuple[str, ...], list[str]] = {}  # `related_to`, likewise
        self.group: dict[str, str | None] = {}
        self.spellings: dict[str, list[str]] = {}
        for names in self.names.values():
            for n in names:
                if n in self.group:
                    continue
                f = _fold_name(n)
                by = asked_by.get(f, set())
                g = f if f in companies or not by else next(iter(by)) if len(by) == 1 else None
                self.group[n] = g
                if g is not None:
                    self.spellings.setdefault(g, []).append(n)
        # the names that say the company itself: the names given and their spellings and
        # abbreviations where names are given ("PP&E", "Upjohn" of a question about a company
        # are its names, no other's, yet not the company); else every name of it
        self.proper: dict[str, list[str]] = {}
        for g, names in self.spellings.items():
            told = given.get(g, [])
            folds = {_fold_name(t) for t in told}
            self.proper[g] = [
                n
                for n in names
                if not told or _fold_name(n) in folds or any(_abbreviates(n, t) for t in told)
            ]

    def of(self, names: list[str]) -> list[str]:
        """Every spelling of the companies `names` name (each once, `names` first)."""
        out = list(names)
        for n in names:
            g = self.group.get(n, _fold_name(n))
            out += [s for s in self.spellings.get(g or "", []) if s not in out]
        return out

    def proper_of(self, names: list[str]) -> list[str]:
        """The spellings of the companies `names` name that name the company itself."""
        out: list[str] = []
        for n in names:
            g = self.group.get(n, _fold_name(n))
            got = self.proper.get(g, [n]) if g is not None else []
            out += [s for s in got if s not in out]
        return out

    def related_to(self, names: list[str]) -> list[str]:
        """`names`, then the dataset's names `_related` to one of them (once per `names`)."""
        key = tuple(names)
        if key not in self._related:
            extra = [n for n in self.group if n not in names and any(_related(n, t) for t in names)]
            self._related[key] = [*names, *extra]
        return self._related[key]

    def others(self, theirs: list[str]) -> list[str]:
        """The names that say the dataset's other companies (`proper_of`): of no company of
        `theirs`, nor `_related` to one of them."""
        key = tuple(theirs)
        if key not in self._others:
            self._others[key] = self._others_of(theirs)
        return self._others[key]

    def _others_of(self, theirs: list[str]) -> list[str]:
        mine = {self.group.get(n, _fold_name(n)) for n in theirs}
        return [
            n
            for g, names in self.proper.items()
            if g not in mine
            for n in names
            if not any(_related(n, t) for t in theirs)
        ]


def _entities(ctx: CheckContext) -> _Entities | None:
    ds = ctx.dataset
    if ds is None:
        return None
    memo: _Entities | None = ds.__dict__.get("_conversation_entities")
    if memo is None:
        memo = _Entities(list(ds.entries))
        ds.__dict__["_conversation_entities"] = memo
    return memo


def _names_of(ctx: CheckContext, entry: Entry) -> list[str]:
    """`entity_names` of `entry`, read from the dataset's memo when the entry is the dataset's."""
    memo = _entities(ctx)
    if memo is not None and ctx.dataset is not None and ctx.dataset.by_id.get(entry.id) is entry:
        return memo.names[entry.id]
    return entity_names(entry)


def _names_theirs(theirs: list[str], answer: str) -> bool:
    """Does the answer name the company of `theirs` (any spelling; or an abbreviation or
    ticker of one in capitals: "AMD", "J&J")?"""
    if _names_loosely(theirs, answer):
        return True
    return any(_abbreviates(m.group(0), t) for m in _ABBREVIATION.finditer(answer) for t in theirs)


def _key_figures(entry: Entry) -> list[tuple[str, Quantity]]:
    """The figures of an entry's critical key facts, with the fact."""
    return [(kf.fact, q) for kf in entry.key_facts if kf.critical for q in read_figures(kf.fact)]


def _states(fig: Quantity, said: list[Quantity]) -> bool:
    """Does a figure of `said` of the same kind state `fig` (a ratio of 0.54 is not "$1")?"""
    return any(q.kind == fig.kind and compare(fig, q).ok for q in said)


def _meant_years(entry: Entry) -> set[int]:
    """The years a turn means, as its gold says them: its question's, its key facts' and its
    reference answer's (citations left out)."""
    texts = [entry.query, entry.reference_answer or "", *(kf.fact for kf in entry.key_facts)]
    return {y for t in texts for y in stated_years(_CITATION.sub(" ", t))}


def _says_every_fact(entry: Entry, answer: str) -> bool:
    """Does the answer say every critical key fact of the turn word for word, in any order
    ("Customer deposits"; "United States, EMEA, APAC, and LACC" for "United States EMEA APAC
    LACC")?"""
    facts = [kf.fact for kf in entry.key_facts if kf.critical]
    said = set(_WORD.findall(answer.lower()))
    return bool(facts) and all(
        (words := set(_WORD.findall(f.lower()))) and words <= said for f in facts
    )


def _years(years: set[int]) -> str:
    return ", ".join(str(y) for y in sorted(years))


@check("kept_context", group="conversation", rates=_follow_up)
def kept_context(ctx: CheckContext) -> Outcome:
    """A follow-up is answered in the context it carries: about the company of the turns it
    depends on and the period it means, not another (whether it is correct is answer_correct's)."""
    ref = ctx.entry.conversation
    if ref is None or not _follow_up(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    earlier = [t for t in (_turn(ctx, d) for d in ref.depends_on) if t is not None]
    memo = _entities(ctx)
    # a turn that names its company ("And Quillon?") is about it; else about the company of
    # the latest turn it depends on that names one (after a switch, the new company)
    theirs = list(_names_of(ctx, ctx.entry))
    for t in reversed(earlier):
        theirs = theirs or list(_names_of(ctx, t))
    proper = theirs if memo is None else memo.proper_of(theirs)
    if memo is not None:  # and the dataset's names of it: "Averix Technologies" of "AVX"
        proper = memo.related_to(proper)
    if memo is not None:
        theirs = memo.of(theirs)
    # names are read in the whole answer (a citation's "Granite State Bancorp 10-K" says whose
    # filing it quotes), years without its citations (their ids carry the filing's year)
    answer = ctx.answer or ""
    names_theirs = bool(proper) and _names_theirs(proper, answer)
    others = memo.others([*theirs, *proper]) if memo is not None and theirs else []
    named = _names_loosely(others, answer)
    if named and names_theirs:
        return Outcome(
            None, (f"names {', '.join(named)} beside {proper[0]}: cannot tell which it is about",)
        )
    if named:
        return Outcome(
            False,
            (
                f"about {', '.join(named)}, not {(proper or theirs)[0]} of "
                f"turn {', '.join(map(str, ref.depends_on))}",
            ),
        )
    said = read_figures(_CITATION.sub(" ", answer))
    own = _key_figures(ctx.entry) or [
        (ctx.entry.reference_answer or "", q)
        for q in read_figures(_CITATION.sub(" ", ctx.entry.reference_answer or ""))
    ]
    states_own = any(_states(q, said) for _, q in own)
    meant = _meant_years(ctx.entry)
    named_years = stated_years(_CITATION.sub(" ", answer))
    # an earlier turn's figure given again as the answer: every figure the answer states is
    # one, or it states one and none of this turn's own nor a year this turn means
    before = [(t, f, q) for t in earlier for f, q in _key_figures(t)]
    before = [(t, f, q) for t, f, q in before if not any(_states(q, [o]) for _, o in own)]
    only_before = bool(said) and all(any(_states(q, [x]) for _, _, q in before) for x in said)
    if not states_own and (only_before or (own and not named_years & meant)):
        for t, fact, fig in before:
            if _states(fig, said):
                n = t.conversation.turn if t.conversation else "?"
                return Outcome(
                    False,
                    (
                        f"states turn {n}'s figure {fig.text} ({fact[:80]}) again and none of "
                        f"this turn's: turn {n}'s answer, not this one's",
                    ),
                )
    if meant and named_years and not (named_years & meant):
        return Outcome(
            False,
            (f"names only fiscal {_years(named_years)}; the turn means {_years(meant)}",),
        )
    if (
        names_theirs
        or states_own
        or (named_years & meant)
        or _names_loosely([n for n in theirs if n not in proper], answer)
        or _says_every_fact(ctx.entry, answer)
    ):
        return Outcome(True)
    return Outcome(
        None,
        ("the answer names neither the company, nor a figure or year of the turn's gold",),
    )
