"""Reading a key fact in an answer by meaning: lemmas, a finance synonym table, polarity, swaps.

`read_fact(fact, answer)` says whether an answer states a key fact (`present`), leaves it out
(`absent`) or states its opposite (`contradicted`, with the reason):

- **negation**: a negator ("not", "no", "never", "n't", "without", "neither", "nor", "cannot",
  "fail") flips the polarity of the words after it up to the end of its clause (a comma, a
  semicolon, a colon, a bracket, or a contrast: "but", "however", "although", "though",
  "whereas", "while", "yet"). "not only" and "not just" do not negate; "no longer" does.
- **antonyms**: the words of one axis of `AXES` are one concept with two polarities
  (increase/decrease, rise/fall, gain/loss, require/waive, approve/reject, appoint/resign,
  buy/sell, audited/unaudited, maximum/minimum, ...). "Revenue fell" states the concept of
  "revenue rose" with the opposite polarity; "did not rise" with the same as "fell".
- **swaps**: an answer that states the fact about another period (its years or quarter are
  none of the fact's), another entity (a proper name the fact, the question and the reference
  do not use, where the fact's name is missing), or with another unit (the fact's figure read
  at another scale, in another currency, or as a percent where the fact states basis points).
- **a different figure**: where the words of the fact are stated with a figure of the same
  kind that is not the fact's.

Words are compared as lemmas: lower case, accents folded ("Kč" -> "kc"), an irregular form
mapped to its base ("rose" -> "rise", "fell" -> "fall", "higher" -> "high"), then the Snowball
English stem ("required" -> "requir"). Then the synonym table `SYNONYMS` maps phrases to one
concept ("top line", "sales", "revenues" -> revenue; "net earnings", "net profit" -> net +
income; "stepped down" -> resign; "chief financial officer" -> CFO). A fact without figures is
present when the answer's best sentence states at least `COVERAGE` (80%) of its content
concepts, its periods included, with the same polarity.

Limits (what this does not read; the calibrated LLM judge, `assay judge run`, decides those):

- Synonyms outside the table, and paraphrases that restructure a fact ("the board must sign
  off on exceptions beforehand" for "exceptions require advance director approval" passes only
  because every word pair is in the table; "exceptions go to the board first" does not).
- Negation by implication ("the requirement was dropped", "failed to" is read but "was unable
  to" is not), scope beyond the clause, sarcasm, hedges ("may not") read as plain negation.
- Quantifier and degree changes ("some" vs "all", "slightly" vs "sharply") are not polarity.
- Entities are proper names by their capitals: a swap between two common nouns ("deposits"
  for "loans") is a missing concept, not a named swap, and is caught only through coverage.
- Periods are years and quarters; months, halves and dates other than years are not compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from assay._numfmt import fold_diacritics
from assay._stopwords import CONCEPT_STOPWORDS as _STOP
from assay.judge.numbers import Kind, Quantity, compare, extract_quantities
from assay.judge.numeric import stated_years

__all__ = [
    "AXES",
    "CONTRADICTION_COVERAGE",
    "COVERAGE",
    "SYNONYMS",
    "FactReading",
    "Term",
    "analyse",
    "contradicts",
    "lemma",
    "read_fact",
    "stated_answer",
    "yes_no",
]

COVERAGE = 0.8
"""Share of a fact's content concepts an answer sentence must state for the fact to be present."""

CONTRADICTION_COVERAGE = 0.6
"""Share of a fact's concepts (or of a reference sentence's) that must align with an answer
sentence before its polarity or names are compared: below it the sentence is about something
else."""

# ------------------------------------------------------------------------------- the tables

AXES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "direction": (
        ("increase", "rise", "grow", "growth", "climb", "go up", "up", "higher", "expand",
         "expansion", "improve", "improvement", "accelerate", "jump", "surge", "strengthen",
         "exceed", "above", "more", "rebound", "boost", "raise", "widen", "outpace"),
        ("decrease", "decline", "fall", "drop", "reduce", "reduction", "down", "go down",
         "lower", "contract", "contraction", "shrink", "worsen", "deteriorate", "deterioration",
         "decelerate", "slip", "weaken", "below", "less", "fewer", "cut", "narrow", "slow",
         "slowdown", "plunge", "tumble"),
    ),
    "result": (
        ("profit", "gain", "income", "earnings", "surplus", "profitable"),
        ("loss", "deficit", "unprofitable"),
    ),
    "obligation": (
        ("require", "requirement", "need", "mandate", "mandatory", "must", "oblige",
         "obligate", "compel", "force"),
        ("waive", "waiver", "exempt", "exemption", "optional", "excuse"),
    ),
    "approval": (
        ("approve", "approval", "authorize", "authorise", "authorization", "consent",
         "accept", "permit", "allow", "ratify", "sign off", "sign-off"),
        ("reject", "rejection", "deny", "denial", "refuse", "veto", "disapprove", "prohibit",
         "forbid"),
    ),
    "appointment": (
        ("appoint", "appointment", "hire", "elect", "name", "join", "promote"),
        ("resign", "resignation", "step down", "depart", "departure", "leave", "retire",
         "dismiss", "fire", "oust"),
    ),
    "transaction": (
        ("buy", "purchase", "acquire", "acquisition"),
        ("sell", "divest", "divestiture", "dispose", "disposal", "spin off", "spin-off"),
    ),
    "flow": (("inflow",), ("outflow",)),
    "reserve": (("reserve build", "build reserve"), ("reserve release", "release reserve")),
    "audit": (("audited",), ("unaudited",)),
    "inclusion": (("include", "including"), ("exclude", "excluding")),
    "favor": (
        ("favorable", "favourable", "positive", "beneficial", "benefit", "help", "strong",
         "strength"),
        ("unfavorable", "unfavourable", "adverse", "negative", "harm", "hurt", "damage", "weak",
         "weakness"),
    ),
    "concentration": (
        ("concentrated", "concentration", "focus", "focused"),
        ("diversified", "diversification"),
    ),
    "sufficiency": (("sufficient", "adequate", "enough"), ("insufficient", "inadequate")),
    "compliance": (
        ("comply", "compliance", "compliant"),
        ("breach", "violate", "violation", "noncompliance"),
    ),
    "availability": (("available",), ("unavailable",)),
    "certainty": (("certain",), ("uncertain",)),
    "security": (("secured",), ("unsecured",)),
    "recurrence": (("recurring",), ("nonrecurring", "non-recurring", "one-time")),
    "bound": (("maximum", "max", "cap", "ceiling", "at most"), ("minimum", "min", "floor",
                                                              "at least")),
    "answer": (("yes",), ("no",)),
}  # fmt: skip
"""Antonym axes: name -> (words of positive polarity, words of negative polarity)."""

SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("revenue", "revenues", "sales", "net sales", "turnover", "top line", "top-line"),
    ("net income", "net earnings", "net profit", "bottom line", "bottom-line"),
    ("operating income", "income from operations", "operating profit", "operating earnings"),
    ("operating loss", "loss from operations"),
    (
        "report",
        "post",
        "record",
        "announce",
        "disclose",
        "publish",
        "state",
        "say",
        "note",
        "cite",
        "call out",
        "flag",
        "identify",
        "describe",
        "show",
    ),
    ("company", "firm", "corporation"),
    ("director", "board member", "board", "board of directors"),
    ("advance", "prior", "in advance", "beforehand", "ahead of time", "upfront", "up front"),
    ("customer", "client"),
    ("employee", "staff", "headcount", "worker", "personnel"),
    ("expense", "cost", "expenditure", "spending", "spend"),
    ("capital expenditure", "capex", "capital spending"),
    ("cost of goods sold", "cost of sales", "cogs", "cost of revenue", "cost of revenues"),
    ("debt", "borrowing", "indebtedness"),
    ("shareholder", "stockholder", "shareowner"),
    ("buyback", "share repurchase", "stock repurchase", "repurchase"),
    ("cfo", "chief financial officer", "finance chief"),
    ("ceo", "chief executive officer", "chief executive"),
    ("quarter", "qtr"),
    ("rely", "depend", "count on"),
    ("expose", "subject"),
    ("limit", "restrict", "constrain", "curb"),
    (
        "significant",
        "substantial",
        "material",
        "major",
        "large",
        "considerable",
        "sizable",
        "meaningful",
        "much",
        "big",
    ),
    ("portion", "share", "part", "proportion", "fraction", "percentage"),
    ("rapid", "quick", "fast", "sharp", "steep", "swift", "sudden"),
    ("loan", "lend", "lending"),
    ("segment", "division", "business unit"),
    ("provider", "vendor", "supplier"),
    ("bookings", "orders"),
    ("regulation", "rule", "law", "legislation"),
    ("use", "utilize", "utilise", "employ"),
    ("guidance", "outlook", "forecast", "projection"),
    ("restate", "revise", "correct"),
    ("originally", "initially", "previously", "first"),
    ("latest", "most recent", "newest", "last", "current"),
    ("error", "mistake", "misstatement"),
    ("insurance", "insured", "insure"),
    ("compensation", "pay", "remuneration"),
    ("total", "overall", "aggregate", "combined"),
)
"""Groups of phrases with one meaning (each group's first phrase names the concept)."""

_NEGATORS = frozenset(["not", "no", "never", "n't", "without", "neither", "nor", "cannot",
                       "none", "nothing", "fail"])  # fmt: skip
_CONTRAST = frozenset(["but", "however", "although", "though", "whereas", "while", "yet"])
# words that open a reason or a consequence: a negation before them does not reach past them
# ("not a high-growth company as sales grew 1.3%": the sales did grow)
_SCOPE_END = frozenset(["because", "since", "due", "given", "thus", "therefore", "hence",
                        "which", "so", "as"])  # fmt: skip
# "as" opens a reason only before a clause: not "as of", "as well as", "not as high as"
_AS_KEEPS = frozenset(["of", "well", "a", "an", "much", "many", "long", "far", "such", "to",
                       "per", "part", "at", "in", "on"])  # fmt: skip
_CLAUSE_PUNCT = re.compile(r"(?<!\d)[,:](?!\d)|[,:](?=\s)|;")
_IRREGULAR = {
    "was": "be", "were": "be", "is": "be", "are": "be", "been": "be", "being": "be", "am": "be",
    "rose": "rise", "risen": "rise", "fell": "fall", "fallen": "fall", "grew": "grow",
    "grown": "grow", "paid": "pay", "sold": "sell", "bought": "buy", "lost": "loss",
    "lose": "loss", "losses": "loss", "made": "make", "took": "take", "taken": "take",
    "gave": "give", "given": "give", "left": "leave", "led": "lead", "spent": "spend",
    "brought": "bring", "held": "hold", "met": "meet", "saw": "see", "seen": "see",
    "went": "go", "gone": "go", "did": "do", "does": "do", "done": "do", "had": "have",
    "has": "have", "began": "begin", "begun": "begin", "won": "win", "sank": "sink",
    "sunk": "sink", "shrank": "shrink", "shrunk": "shrink", "drove": "drive",
    "driven": "drive", "kept": "keep", "ran": "run", "wrote": "write", "written": "write",
    "chose": "choose", "chosen": "choose", "found": "find", "told": "tell", "became": "become",
    "came": "come", "stood": "stand", "higher": "high", "highest": "high", "lower": "low",
    "lowest": "low", "greater": "great", "greatest": "great", "larger": "large",
    "largest": "large", "smaller": "small", "smallest": "small", "bigger": "big",
    "biggest": "big", "more": "more", "most": "more", "less": "less", "least": "less",
    "fewer": "less", "better": "good", "best": "good", "worse": "bad", "worst": "bad",
    "stepped": "step", "sought": "seek", "fought": "fight", "won't": "will", "can't": "can",
    "cannot": "cannot", "wider": "wide", "narrower": "narrow",
}  # fmt: skip
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d[\d,.]*", re.UNICODE)

_stemmer = None


def _stem(word: str) -> str:
    global _stemmer
    if _stemmer is None:
        import Stemmer

        _stemmer = Stemmer.Stemmer("english")
    return str(_stemmer.stemWord(word))


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """The comparable form of one word: lower case, accents folded, irregular forms to their
    base, then the Snowball English stem ("Required" -> "requir", "rose" -> "rise")."""
    w = fold_diacritics(word.lower()).replace("’", "'")
    w = _IRREGULAR.get(w, w)
    if w.endswith("'s"):
        w = w[:-2]
    return w if len(w) <= 2 else _stem(w)


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(lemma(w) for w in re.split(r"[\s-]+", text) if w)


def _tables() -> tuple[dict[tuple[str, ...], tuple[str, int]], int]:
    """Phrase (lemmas) -> (concept key, polarity); and the longest phrase length."""
    table: dict[tuple[str, ...], tuple[str, int]] = {}
    for axis, (pos, neg) in AXES.items():
        for words, sign in ((pos, 1), (neg, -1)):
            for w in words:
                table.setdefault(_phrase(w), (f"axis:{axis}", sign))
    for group in SYNONYMS:
        key = "syn:" + " ".join(_phrase(group[0]))
        for w in group:
            table.setdefault(_phrase(w), (key, 1))
    return table, max(len(p) for p in table)


_TABLE, _LONGEST = _tables()
# every start of a phrase of the table: a run of words that starts none is not read further
_PREFIXES = frozenset(p[:n] for p in _TABLE for n in range(1, len(p) + 1))
# phrases that expand to two concepts: "net income" is net + the result axis, so "net loss"
# stays its opposite
_EXPAND: dict[str, tuple[tuple[str, int], ...]] = {
    "syn:net incom": (("net", 1), ("axis:result", 1)),
    "syn:oper incom": (("oper", 1), ("axis:result", 1)),
    "syn:oper loss": (("oper", 1), ("axis:result", -1)),
}


# ------------------------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class Term:
    """One content concept of a text, where it stands and with which polarity.

    `key` is the concept (a synonym group, an antonym axis, or the lemma itself); `sign` is the
    word's own polarity on its axis (+1 off any axis); `negated` says whether a negator's scope
    covers it; `clause` numbers the clause it stands in; `proper` marks a word of a proper name.
    """

    key: str
    sign: int
    negated: bool
    clause: int
    start: int
    end: int
    text: str
    proper: bool = False
    capital: bool = False

    @property
    def polarity(self) -> int:
        return -self.sign if self.negated else self.sign

    @property
    def axis(self) -> bool:
        return self.key.startswith("axis:")


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    low: str
    lemma: str
    start: int
    end: int
    clause: int
    negator: bool
    capital: bool
    sentence_start: bool


@lru_cache(maxsize=65_536)
def _folded(word: str) -> str:
    """A word in lower case, accents folded, the typographic apostrophe made plain."""
    return fold_diacritics(word.lower()).replace("’", "'")


def _words(text: str) -> list[_Word]:
    """Words with their lemma and clause number; "doesn't" gives "does" and the negator."""
    out: list[_Word] = []
    sentence_ends = [e - 1 for e in _sentence_ends(text)]
    cuts = sorted([m.start() for m in _CLAUSE_PUNCT.finditer(text)] + sentence_ends)
    ci = 0
    clause = 0
    last_sentence = -1
    sent = 0  # the sentence ends before the word (both lists ascend, as the words do)
    for m in _WORD_RE.finditer(text):
        w = m.group(0)
        if w[0].isdigit():
            continue
        at = m.start()
        while ci < len(cuts) and cuts[ci] < at:
            ci += 1
            clause += 1
        while sent < len(sentence_ends) and sentence_ends[sent] < at:
            sent += 1
        first = sent != last_sentence
        last_sentence = sent
        low = _folded(w)
        parts: list[tuple[str, bool]]
        if low == "no" and text[m.end() : m.end() + 1] == ".":
            parts = [("number", False)]  # "Identification No. 85-..."
        elif low.endswith("n't"):
            base = {"can't": "can", "won't": "will"}.get(low, low[:-3])
            parts = [(base, False), ("n't", True)]
        else:
            parts = [(low, low in _NEGATORS or lemma(low) == "fail")]
        for part, neg in parts:
            if part in _CONTRAST:
                clause += 1
                continue
            out.append(
                _Word(
                    w, part, lemma(part), m.start(), m.end(), clause, neg, w[:1].isupper(),
                    first,
                )
            )  # fmt: skip
            first = False
    return out


def _negations(words: Sequence[_Word]) -> list[bool]:
    """Which words a negator's scope covers (to the end of the negator's clause)."""
    covered = [False] * len(words)
    for i, w in enumerate(words):
        if not w.negator:
            continue
        nxt = words[i + 1].low if i + 1 < len(words) else ""
        if w.low == "not" and nxt in ("only", "just", "merely"):
            continue
        if w.low == "no" and _answer_no(words, i):
            continue  # "No," answering a question: the answer axis, not a negator
        for j in range(i + 1, len(words)):
            if words[j].clause != w.clause or _ends_scope(words, i, j):
                break
            covered[j] = not covered[j]
    return covered


def _ends_scope(words: Sequence[_Word], neg: int, j: int) -> bool:
    """Word `j` opens a reason or consequence that the negator at `neg` does not reach."""
    low = words[j].low
    if low not in _SCOPE_END:
        return False
    if low == "so" and j + 1 < len(words) and words[j + 1].low in ("much", "many", "far"):
        return False
    if low != "as":
        return j > neg + 1
    nxt = words[j + 1].low if j + 1 < len(words) else ""
    return j > neg + 2 and words[j - 1].low not in ("such", "as", "so") and nxt not in _AS_KEEPS


def analyse(text: str) -> list[Term]:
    """The content concepts of `text` in order (stop words, negators and figures left out)."""
    return list(_analyse(text))


@lru_cache(maxsize=8192)
def _analyse(text: str) -> tuple[Term, ...]:
    words = _words(text)
    negated = _negations(words)
    lemmas = [w.lemma for w in words]
    terms: list[Term] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.negator and not (w.low == "no" and _answer_no(words, i)):
            i += 1
            continue
        # a capitalised word inside a name ("Summit Trail") is not "trail"
        hit = _phrase_at(words, lemmas, i, _proper(words, i) and not w.text.isupper())
        if hit is None:
            if w.low in _STOP or w.lemma in _STOP or len(w.lemma) < 2:
                i += 1
                continue
            n = 1
            concepts: tuple[tuple[str, int], ...] = ((w.lemma, 1),)
        else:
            n, (concept, polarity) = hit
            concepts = _EXPAND.get(concept, ((concept, polarity),))
        span = words[i : i + n]
        # a word of the vocabulary tables is vocabulary, not a name ("CFO", "Net Income")
        proper = hit is None and _proper(words, i)
        for key, sign in concepts:
            terms.append(
                Term(
                    key,
                    sign,
                    negated[i],
                    w.clause,
                    span[0].start,
                    span[-1].end,
                    text[span[0].start : span[-1].end],
                    proper,
                    w.capital,
                )
            )
        i += n
    return tuple(terms)


def _phrase_at(
    words: Sequence[_Word], lemmas: Sequence[str], i: int, name_word: bool
) -> tuple[int, tuple[str, int]] | None:
    """The longest phrase of the table (its length in words, its concept and polarity) that
    the words from `i` spell within one clause; a single word only when it is not `name_word`.
    The run is read word by word while it still starts some phrase of the table."""
    hit = None
    clause = words[i].clause
    for n in range(1, min(_LONGEST, len(words) - i) + 1):
        if words[i + n - 1].clause != clause:
            break
        phrase = tuple(lemmas[i : i + n])
        if phrase not in _PREFIXES:
            break
        if phrase in _TABLE and not (n == 1 and name_word):
            hit = (n, _TABLE[phrase])
    return hit


def _answer_no(words: Sequence[_Word], i: int) -> bool:
    """ "No" opening an answer ("No, ...") is the answer axis, not a negator."""
    return words[i].sentence_start and (
        i + 1 >= len(words) or words[i + 1].clause != words[i].clause
    )


def _proper(words: Sequence[_Word], i: int) -> bool:
    """A word of a proper name: capitalised, and not a lone capital opening a sentence (an
    all-capitals word such as a ticker counts anywhere)."""
    w = words[i]
    if not w.capital or w.low in _STOP:
        return False
    if w.text.isupper() and len(w.text) > 1:
        return True
    if not w.sentence_start:
        return True
    nxt = words[i + 1] if i + 1 < len(words) else None
    return nxt is not None and nxt.capital and nxt.clause == w.clause and nxt.low not in _STOP


# ------------------------------------------------------------------------------- periods

_QUARTER_RE = re.compile(
    r"\bQ([1-4])\b|\b([1-4])Q\b|\b(first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b"
    r"|\bquarter\s+([1-4])\b|\bQ([1-4])\s*(?:FY)?'?\d",
    re.IGNORECASE,
)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def _quarters(text: str) -> set[int]:
    out: set[int] = set()
    for m in _QUARTER_RE.finditer(text):
        g = next(x for x in m.groups() if x)
        out.add(_ORDINAL.get(g.lower(), 0) or int(g))
    return out


def _years(text: str) -> set[int]:
    return stated_years(text)


_FISCAL_RE = re.compile(r"\b(?:fiscal(?:\s+year)?|FYE?)\s*'?(\d{4}|\d{2})\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Periods:
    """The periods a text names: fiscal-year labels ("fiscal 2022", "FY22"), every year (dates
    too: "ended 2021-12-31") and quarters."""

    fiscal: frozenset[int] = frozenset()
    years: frozenset[int] = frozenset()
    quarters: frozenset[int] = frozenset()

    @classmethod
    def of(cls, text: str, *, default_years: Iterable[int] = ()) -> _Periods:
        fiscal = {int(y) + (2000 if len(y) == 2 else 0) for y in _FISCAL_RE.findall(text)}
        years = _years(text) or set(default_years)
        return cls(frozenset(fiscal), frozenset(years), frozenset(_quarters(text)))

    def __bool__(self) -> bool:
        return bool(self.years or self.quarters)

    def without(self, other: _Periods) -> _Periods:
        return _Periods(
            self.fiscal - other.fiscal, self.years - other.years, self.quarters - other.quarters
        )

    def __or__(self, other: _Periods) -> _Periods:
        return _Periods(
            self.fiscal | other.fiscal, self.years | other.years, self.quarters | other.quarters
        )


# ------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class FactReading:
    """How an answer relates to one key fact."""

    status: Literal["present", "absent", "contradicted"]
    reason: str = ""  # negation | antonym | entity | period | unit | figure | answer
    note: str = ""
    coverage: float = 0.0
    sentence: str = ""
    details: tuple[str, ...] = field(default_factory=tuple)

    @property
    def present(self) -> bool:
        return self.status == "present"

    @property
    def contradicted(self) -> bool:
        return self.status == "contradicted"


_ABBREVIATIONS = frozenset(
    [
        "inc",
        "corp",
        "co",
        "ltd",
        "llc",
        "plc",
        "no",
        "nos",
        "vs",
        "etc",
        "jr",
        "sr",
        "mr",
        "ms",
        "mrs",
        "dr",
        "st",
        "u.s",
        "e.g",
        "i.e",
        "approx",
        "fig",
    ]
)


def _sentence_ends(text: str) -> list[int]:
    """Positions just after each sentence end: ".", "!" or "?" before a space or the end (not
    after a digit, an abbreviation such as "Inc." or an initial), or a line break."""
    ends: list[int] = []
    for m in re.finditer(r"(?<!\d)[.!?](?=\s|$)|\n+", text):
        if m.group(0) == ".":
            word = re.search(r"([\w.]+)$", text[: m.start()])
            w = word.group(1).lower() if word else ""
            if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha()) or "." in w:
                continue
        ends.append(m.end())
    return ends


def _sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of `text` (see `_sentence_ends`)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end in _sentence_ends(text):
        if text[start:end].strip():
            spans.append((start, end))
        start = end
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _content(terms: Sequence[Term]) -> list[Term]:
    """The concepts of a text: every occurrence of an antonym axis (a fact may move two things,
    "a decline in deposits ... higher-cost funding"), one occurrence of every other concept."""
    seen: set[str] = set()
    out: list[Term] = []
    for t in terms:
        if t.axis or t.key not in seen:
            out.append(t)
        seen.add(t.key)
    return out


def _coverage(fact_terms: Sequence[Term], pairs: Sequence[tuple[Term, Term]]) -> float:
    keys = {f.key for f in fact_terms}
    return len({f.key for f, _ in pairs}) / len(keys) if keys else 1.0


def _align(fact_terms: Sequence[Term], ans_terms: Sequence[Term]) -> list[tuple[Term, Term]]:
    """The fact's concepts paired with their occurrences in the answer sentence.

    Occurrences are taken in (or nearest to) the clause where most of the fact's concepts stand
    together, so "X resigned; the board appointed Y" pairs "Y appointed" with the second clause;
    a concept the fact states several times is paired occurrence by occurrence, in order.
    """
    keys = {f.key for f in fact_terms}
    by_clause: dict[int, set[str]] = {}
    for t in ans_terms:
        if t.key in keys:
            by_clause.setdefault(t.clause, set()).add(t.key)
    if not by_clause:
        return []
    anchor = min(by_clause, key=lambda c: (-len(by_clause[c]), c))
    pairs: list[tuple[Term, Term]] = []
    for key in dict.fromkeys(f.key for f in fact_terms):
        fs = [f for f in fact_terms if f.key == key]
        occ = [t for t in ans_terms if t.key == key]
        if not occ:
            continue
        if len(occ) > len(fs):
            near = sorted(occ, key=lambda t: (abs(t.clause - anchor), t.start))[: len(fs)]
            occ = sorted(near, key=lambda t: t.start)
        pairs.extend(zip(fs, occ, strict=False))
    return pairs


def _names(terms: Sequence[Term]) -> list[set[str]]:
    """Proper names (runs of adjacent proper words) as sets of concept keys."""
    runs: list[set[str]] = []
    prev_end = -10
    prev_clause = -1
    for t in terms:
        if not t.proper:
            prev_end = -10
            continue
        if runs and t.clause == prev_clause and t.start - prev_end <= 2:
            runs[-1].add(t.key)
        else:
            runs.append({t.key})
        prev_end, prev_clause = t.end, t.clause
    return runs


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    start: int
    terms: list[Term]
    years: set[int]
    quarters: set[int]
    figures: list[Quantity]


def _split(answer: str) -> list[_Sentence]:
    out: list[_Sentence] = []
    for a, b in _sentences(answer):
        s = answer[a:b]
        figs = [q for q in extract_quantities(s) if not q.is_year]
        out.append(_Sentence(s, a, analyse(s), _years(s), _quarters(s), figs))
    return out


def read_fact(
    fact: str,
    answer: str,
    *,
    context: Iterable[str] = (),
    others: Iterable[str] = (),
    figures: Sequence[Quantity] | None = None,
    fact_figures: Sequence[Quantity] | None = None,
    years: Iterable[int] = (),
    coverage: float = COVERAGE,
) -> FactReading:
    """Does `answer` state `fact`, leave it out, or contradict it? (see the module docs)

    `context` texts (the question, the reference answer) name the entry's scope: a proper name
    from them in the answer is not another entity, unless one of the `others` (the entry's other
    key facts) names it (the CFO who left is a swap for the one appointed, although the
    reference names both). `figures` are the answer's figures as the checks read them (a bare
    figure with its cited table's unit); by default they are read from each sentence.
    `fact_figures` are the fact's figures as the checks read them (a bare figure at the scale
    the reference answer states it, `assay.judge.numeric.reference_figures`). `years` are the
    entry's years, the period of a fact that names none ("$9,620,000" of a question on FY2023).
    """
    fact_figs = (
        list(fact_figures)
        if fact_figures is not None
        else [q for q in extract_quantities(fact) if not q.is_year]
    )
    # a capitalised word opening the fact is a name when the context writes it as one
    # ("Analytics segment revenue ...": "reported Analytics segment revenue")
    written_as_names = {t.key for c in context for t in analyse(c) if t.proper}
    fact_terms = [
        replace(t, key=lemma(t.text), sign=1, proper=True)
        if t.capital and not t.proper and lemma(t.text) in written_as_names
        else t
        for t in _content(analyse(fact))
    ]
    named = _Periods.of(fact)
    fact_periods = _Periods.of(fact, default_years=years)
    taken = {k for o in others for n in _names(analyse(o)) for k in n}
    scope = {k for c in context for n in _names(analyse(c)) for k in n} - taken
    scope |= {t.key for t in fact_terms}
    sentences = _split(answer)
    if not sentences:
        return FactReading("absent", note="empty answer")
    if fact_figs:
        return _read_figure_fact(fact_figs, fact_terms, fact_periods, sentences, scope, figures)
    keys = {t.key for t in fact_terms}
    need = len(keys) + bool(named.years) + bool(named.quarters)
    if need == 0:
        return FactReading("present", coverage=1.0)
    best: tuple[float, _Sentence, list[tuple[Term, Term]]] | None = None
    for s in sentences:
        pairs = _align(fact_terms, s.terms)
        got = (
            len({f.key for f, _ in pairs})
            + (bool(named.years) and bool(s.years & named.years))
            + (bool(named.quarters) and bool(s.quarters & named.quarters))
        )
        cov = got / need
        if best is None or cov > best[0]:
            best = (cov, s, pairs)
    assert best is not None
    cov, s, pairs = best
    plain = [f for f in fact_terms if not f.proper]
    plain_cov = _coverage(plain, [(f, a) for f, a in pairs if not f.proper]) if plain else cov
    if max(cov, plain_cov) >= CONTRADICTION_COVERAGE:
        why = _polarity(pairs) or _period(
            fact_periods, _near_periods(s.text, [a for _, a in pairs])
        )
        if why is None and plain_cov >= coverage:
            why = _entity(fact_terms, s.terms, scope)
        if why is not None:
            return FactReading("contradicted", why[0], why[1], cov, s.text)
    if cov >= coverage:
        return FactReading("present", coverage=cov, sentence=s.text)
    return FactReading("absent", coverage=cov, sentence=s.text)


def _read_figure_fact(
    fact_figs: Sequence[Quantity],
    fact_terms: Sequence[Term],
    fact_periods: _Periods,
    sentences: Sequence[_Sentence],
    scope: set[str],
    figures: Sequence[Quantity] | None,
) -> FactReading:
    """A fact with figures: present when each figure is stated (in a sentence that neither
    negates the fact's words nor names another period or entity)."""
    found: list[tuple[_Sentence, Quantity]] = []
    for ref in fact_figs:
        hit: tuple[float, _Sentence, Quantity] | None = None
        for s in sentences:
            for c in s.figures if figures is None else _within(figures, s):
                if compare(ref, c).ok:
                    # the closest figure that agrees: "3.00%" is 3.00%, not the 3.10% before it
                    gap = abs(abs(c.value) - abs(ref.value)) / max(abs(ref.value), 1e-12)
                    if hit is None or gap < hit[0]:
                        hit = (gap, s, c)
        if hit is None:
            why = _unit_or_figure(ref, fact_terms, sentences, figures)
            if why is not None:
                return FactReading("contradicted", why[0], why[1])
            return FactReading("absent", note=f"{ref.text} not stated")
        found.append((hit[1], hit[2]))
    plain = [f for f in fact_terms if not f.proper]
    for s, fig in found:
        why = _polarity(_align(fact_terms, s.terms)) or _period(
            fact_periods, _local_periods(s, fig)
        )
        if why is None and (not plain or _coverage(plain, _align(plain, s.terms)) >= COVERAGE):
            why = _entity(fact_terms, s.terms, scope)
        if why is not None:
            return FactReading("contradicted", why[0], why[1], 1.0, s.text)
    return FactReading("present", coverage=1.0, sentence=found[0][0].text)


def _near_periods(text: str, terms: Sequence[Term]) -> _Periods:
    """The periods named nearest the answer's words for a fact: in the part of the sentence
    (cut at semicolons and commas) holding most of them, else in the nearest part naming one
    (earlier first; years and quarters each). An opening "As of <date>" is when the answer
    speaks, read only when no other part names a year: "As of 2022-09-27, the latest fiscal
    year end reported was 2021-06-30; remaining performance obligations were ..." names 2021."""
    cuts = [0, *(m.end() for m in re.finditer(r";|,(?=\s)", text)), len(text) + 1]
    parts = [text[cuts[i] : cuts[i + 1]] for i in range(len(cuts) - 1)]
    if not terms or len(parts) == 1:
        return _Periods.of(text)
    counts = [sum(1 for t in terms if cuts[i] <= t.start < cuts[i + 1]) for i in range(len(parts))]
    home = max(range(len(parts)), key=lambda i: (counts[i], -i))
    order = sorted(
        range(len(parts)),
        key=lambda i: (bool(re.match(r"\s*as\s+of\b", parts[i], re.I)), abs(i - home), i),
    )
    found = [_Periods.of(parts[i]) for i in order]
    years = next((p for p in found if p.years), _Periods())
    quarters = next((p.quarters for p in found if p.quarters), frozenset())
    return _Periods(years.fiscal, years.years, quarters)


def _within(figures: Sequence[Quantity], s: _Sentence) -> list[Quantity]:
    """The checks' reading of the answer's figures that fall in sentence `s` (by their text)."""
    return [q for q in figures if q.text and q.text in s.text] or [
        q for q in extract_quantities(s.text) if not q.is_year
    ]


_COMPARISON = re.compile(
    r"\b(?:versus|vs\.?|compared\s+(?:with|to)|against|while|whereas|from|than|previously"
    r"|prior|before)\b",
    re.IGNORECASE,
)
_PART_SPLIT = re.compile(
    r"(,(?!\d)|;|\b(?:versus|vs\.?|compared\s+(?:with|to)|against|while|whereas|from|than|to"
    r"|previously|prior|before)\b)",
    re.IGNORECASE,
)


def _local_periods(s: _Sentence, fig: Quantity) -> _Periods:
    """The periods that go with `fig` in its sentence: those of the part holding it (parts are
    cut at commas, semicolons and comparison words; a bracket stays with its part), else of
    the parts after it up to the next figure or comparison, else before it; else, when no other
    part of the sentence holds a figure, the sentence's periods. Empty sets when nothing names
    the figure's period ("$2,534 million, up 12.7% from fiscal 2022" names none for $2,534)."""
    text = s.text
    pos = text.find(fig.text) if fig.text else -1
    whole = _Periods.of(text)
    if pos < 0:
        return whole
    parts: list[tuple[str, bool, bool]] = []  # text, holds a figure, follows a comparison word
    after_cmp = False
    at = 0
    home = -1
    for piece in _PART_SPLIT.split(text):
        if not piece:
            continue
        start = text.find(piece, at)
        at = start + len(piece)
        if _PART_SPLIT.fullmatch(piece):
            after_cmp = bool(_COMPARISON.fullmatch(piece.strip()))
            continue
        if start <= pos < start + len(piece):
            home = len(parts)
        has_fig = any(not q.is_year for q in extract_quantities(piece))
        parts.append((piece, has_fig, after_cmp))
        after_cmp = False
    if home < 0:
        return whole
    own = _Periods.of(parts[home][0])
    if own:
        return own
    for step in (1, -1):
        j = home + step
        while 0 <= j < len(parts):
            piece, has_fig, cmp_ = parts[j]
            if has_fig or cmp_ or (step == -1 and parts[j + 1][2]):
                break
            near = _Periods.of(piece)
            if near:
                return near
            j += step
    if sum(1 for _, has_fig, _ in parts if has_fig) == 1 and not parts[home][2]:
        claimed = _Periods()
        for p, _, c in parts:
            if c:
                claimed = claimed | _Periods.of(p)
        return whole.without(claimed)
    return _Periods()


def _unit_or_figure(
    ref: Quantity,
    fact_terms: Sequence[Term],
    sentences: Sequence[_Sentence],
    figures: Sequence[Quantity] | None,
) -> tuple[str, str] | None:
    """The fact's figure is missing: is it stated in another unit, or is another figure stated
    where the fact's words are?"""
    for s in sentences:
        cands = s.figures if figures is None else _within(figures, s)
        for c in cands:
            r = compare(ref, c)
            if r.status == "scale_error":
                return "unit", f"{c.text} states {ref.text} at another scale"
            if "currency" in r.note:
                return "unit", f"{c.text}: {r.note}"
            if _same_digits(ref, c) and _unit_of(ref) != _unit_of(c):
                return "unit", f"{c.text} states the digits of {ref.text} in another unit"
    if not fact_terms:
        return None
    for s in sentences:
        if _coverage(fact_terms, _align(fact_terms, s.terms)) < COVERAGE:
            continue
        cands = s.figures if figures is None else _within(figures, s)
        same = [
            c
            for c in cands
            if ref.kind is Kind.number or c.kind is Kind.number or _unit_of(c) == _unit_of(ref)
        ]
        if same:
            return "figure", f"states {same[0].text} where the fact states {ref.text}"
    return None


def _unit_of(q: Quantity) -> str:
    if q.kind is Kind.currency:
        return f"currency:{q.currency or '?'}"
    if q.kind is Kind.points and "b" in q.text.lower():
        return "bp"
    return q.kind.value


def _same_digits(a: Quantity, b: Quantity) -> bool:
    """Both figures are written with the same significant digits (at least two of them)."""

    def digits(q: Quantity) -> str:
        return re.sub(r"\D", "", q.text).lstrip("0")

    da, db = digits(a), digits(b)
    return len(da) >= 2 and da == db


def _polarity(pairs: Sequence[tuple[Term, Term]]) -> tuple[str, str] | None:
    """A contradiction of polarity between aligned concepts: an antonym on one of the fact's
    axes, or a negation that flips the fact's words."""
    if not pairs:
        return None
    for f, a in pairs:
        if f.axis and f.polarity != a.polarity:
            if f.sign != a.sign and f.negated == a.negated:
                return "antonym", f"states {a.text!r} where the fact states {f.text!r}"
            return "negation", f"negates {f.text!r}"
    if any(f.axis and a.negated for f, a in pairs):
        return None  # "is not waived": the negation is the axis word's, and it agrees
    flipped = [a for f, a in pairs if f.polarity != a.polarity]
    if len(flipped) * 3 >= len(pairs):
        return "negation", f"negates {', '.join(repr(a.text) for a in flipped[:3])}"
    return None


def _period(fact: _Periods, ans: _Periods) -> tuple[str, str] | None:
    """Another period: the answer's years (its fiscal-year labels, when both name some: "fiscal
    2021 (ended 2021-12-31)" is not "fiscal 2022 (ended 2021-12-31)") or quarters are none of
    the fact's."""
    if fact.fiscal and ans.fiscal:
        mine, theirs = fact.fiscal, ans.fiscal
    else:
        mine, theirs = fact.years, ans.years
    if mine and theirs and not (mine & theirs):
        return "period", f"states {sorted(theirs)} where the fact states {sorted(mine)}"
    if fact.quarters and ans.quarters and not (fact.quarters & ans.quarters):
        return (
            "period",
            f"states Q{sorted(ans.quarters)[0]} where the fact states Q{sorted(fact.quarters)[0]}",
        )
    return None


# corporate suffixes: a name is the same without them ("Fernleaf Software" is "Fernleaf
# Software, Inc."); as lemmas
_SUFFIXES = frozenset(
    lemma(w)
    for w in [
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "llc",
        "plc",
        "lp",
        "holdings",
        "holding",
        "group",
    ]
)


def _entity(
    fact_terms: Sequence[Term], ans_terms: Sequence[Term], scope: set[str]
) -> tuple[str, str] | None:
    """The fact's proper name is missing and the sentence names another one instead. A name is
    present when every word of it (corporate suffixes aside) is."""
    have = {t.key for t in ans_terms}
    missing = [n for n in _names(list(fact_terms)) if not (n - _SUFFIXES) <= have]
    if not missing:
        return None
    foreign = [n for n in _names(list(ans_terms)) if not (n - _SUFFIXES) <= scope]
    if not foreign:
        return None
    shown = next(t.text for t in ans_terms if t.key in foreign[0])
    return "entity", f"names {shown!r} where the fact names another"


def contradicts(reference: str, answer: str) -> FactReading | None:
    """A sentence of the answer that states a sentence of the reference with the opposite
    polarity (negation, antonym, or the opposite yes/no), if one does.

    Only sentences that align (at least `CONTRADICTION_COVERAGE` of the reference sentence's
    concepts) are compared; names and periods are left to the key facts and the numeric check.
    A reference that opens with "Yes" or "No" is contradicted by an answer opening with the other.
    """
    ref_open = yes_no(reference)
    if ref_open is not None and yes_no(answer) == -ref_open:
        return FactReading("contradicted", "answer", "answers the yes/no question the other way")
    for a, b in _sentences(reference):
        ref_terms = _content(analyse(reference[a:b]))
        if not ref_terms:
            continue
        for s in _split(answer):
            pairs = _align(ref_terms, s.terms)
            if _coverage(ref_terms, pairs) < CONTRADICTION_COVERAGE:
                continue
            why = _polarity(pairs)
            if why is not None:
                return FactReading(
                    "contradicted", why[0], why[1], _coverage(ref_terms, pairs), s.text
                )
    return None


def yes_no(text: str) -> int | None:
    """+1 for a text opening with "Yes", -1 with "No" (the answer to a yes/no question), else
    None ("No longer ...", "No other ..." are not an answer)."""
    m = re.match(r"\s*(yes|no)\b(?!\s+(?:longer|one|more|other|change|later|less))", text, re.I)
    if m is None:
        return None
    return 1 if m.group(1).lower() == "yes" else -1


def stated_answer(reference: str, answer: str) -> int | None:
    """For a reference opening with Yes or No: +1 when the answer states the statement that
    follows it (its first sentence after the Yes/No), -1 when it states it the other way, None
    when it does neither (`read_fact`)."""
    m = re.match(r"\s*(?:yes|no)\b[\s,.;:!-]*", reference, re.I)
    if m is None:
        return None
    rest = reference[m.end() :]
    # its first sentence: up to a stop before a capital ("as of FY2022. Gross profit ..."),
    # which `_sentences` leaves whole after a figure
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", rest.strip(), maxsplit=1)[0]
    if not first:
        return None
    reading = read_fact(first, answer)
    if reading.contradicted and reading.reason in ("negation", "antonym", "answer"):
        return -1
    return 1 if reading.present else None
