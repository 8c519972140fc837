"""Reading figures in answers against a reference: the rules the deterministic checks share.

`check_numeric` decides whether an answer states the reference figure(s) (see `assay.checks.answer`
for the check built on it, and `assay.judge.numbers` for how one figure is read and compared).
`asks_for_figure` decides whether a question asks for a figure at all; `fact_present` whether a key
fact is stated; `not_disclosed_claim` whether an answer asserts non-disclosure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from assay._stopwords import FACT_STOPWORDS as _STOP
from assay.judge.numbers import (
    Kind,
    MatchResult,
    Quantity,
    apply_hint,
    compare,
    compare_range,
    extract_quantities,
    find_match,
    scale_hint,
    table_rows,
)
from assay.judge.refusal import detect_refusal, split_sentences

__all__ = [
    "PROSE_WORDS",
    "TERSE_WORDS",
    "FigureReader",
    "NumericVerdict",
    "asks_for_figure",
    "check_numeric",
    "conclusion_figures",
    "fact_present",
    "figure_in_spans",
    "not_disclosed_claim",
    "read_figures",
    "reference_figures",
    "scaled_like",
    "stated_years",
]

PROSE_WORDS = 30
"""A reference answer longer than this many words is prose: its figures are not the answer."""

_WORD_RE = re.compile(r"[a-z][a-z'&-]+")
_YEAR_RE = re.compile(
    r"(?:\bFYE?\s?'?|\bCY\s?'?|\bfiscal(?: year)?\s+'?|\b[1-4]Q\s?'?|\b[QH][1-4]\s*')(\d{4}|\d{2})\b"
    r"|\b(19\d{2}|20\d{2})\b",
    re.I,
)
_NOT_DISCLOSED_RE = re.compile(
    r"\b(?:(?:is|are|was|were) not (?:publicly )?(?:disclosed|reported|published|made public)|"
    r"(?:does|do|did) not (?:publicly )?(?:disclose|report|publish|break out)|"
    r"(?:has|have) not (?:been )?(?:disclosed|reported)|undisclosed|not (?:publicly )?available)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class NumericVerdict:
    """Numeric correctness of one answer: pass, fail or abstain, and why."""

    status: Literal["pass", "fail", "abstain"]
    reason: str
    reference: tuple[str, ...] = ()
    answer_figure: str | None = None
    note: str = ""

    @property
    def value(self) -> bool | None:
        return None if self.status == "abstain" else self.status == "pass"


_FIGURE_Q_RE = re.compile(
    r"\b(?:how much|how many|what (?:is|was|are|were|will be|would be)\b(?! the (?:nature|reason|"
    r"purpose|main|primary|key|largest|biggest))"
    r"|what(?:'s| is| was)? (?:the )?(?:percentage|percent|proportion|share|portion|fraction)\b"
    r"|^\s*(?:calculate|compute|estimate)\b)",
    re.IGNORECASE | re.MULTILINE,
)
_YESNO_Q_RE = re.compile(
    r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|which|who|whom|"
    r"where|why)\b",
    re.IGNORECASE,
)


# a period an analyst names: FY2022, FY22, fiscal '23, 3Q23, Q2 FY24, H1 2023, FYE23, 2022
_PERIOD_RE = re.compile(
    r"\b(?:FYE?\s?'?\d{2,4}|CY\s?'?\d{2,4}|fiscal(?: year)?\s+'?\d{2,4}|[1-4]Q\s?'?\d{2,4}"
    r"|[QH][1-4]\b|(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
# words that ask for something other than a figure
_NOT_FIGURE_RE = re.compile(
    r"\b(?:who|whom|whose|why|which|whether|describe|explain|discuss|list|summari[sz]e|name|"
    r"names|risks?|auditor|ticker|symbol|address|headquarter(?:s|ed)?|policy|strategy|"
    r"replaced|resigned|appointed|left)\b",
    re.IGNORECASE,
)
TERSE_WORDS = 12
"""A question of at most this many words, without a question mark, may be an analyst's
shorthand ("Ironwood NII 2022")."""


def _terse_figure_question(question: str) -> bool:
    """Analyst shorthand for a figure: a short phrase naming a period and nothing but a metric
    ("Ironwood NII 2022", "subs revenue FY2022", "GRAN FY23 net income", "NI 3Q23 AVER")."""
    text = question.strip()
    if not text or "?" in text or len(text.split()) > TERSE_WORDS:
        return False
    if _YESNO_Q_RE.match(text) or _NOT_FIGURE_RE.search(text):
        return False
    return bool(_PERIOD_RE.search(text))


def asks_for_figure(question: str) -> bool:
    """The question asks for a figure ("what is ... ratio", "how much", "Ironwood NII 2022"),
    not yes/no or which/who.

    The question clause is the sentence holding the question mark (else the whole text); a
    yes/no or which/who clause is not a figure question even when its reference cites figures.
    A short phrase without a question mark that names a period and no other kind of request
    (at most `TERSE_WORDS` words) is an analyst's shorthand for a figure.
    """
    sents = split_sentences(question.replace(":", ". "))
    clause = next((s for s in sents if "?" in s), question).strip()
    if _YESNO_Q_RE.match(clause) and not _FIGURE_Q_RE.search(clause):
        return False
    return bool(_FIGURE_Q_RE.search(question)) or _terse_figure_question(question)


FigureReader = Callable[[str], list[Quantity]]
"""Reads the figures of a text (years, dates and identifiers left out)."""


def read_figures(text: str) -> list[Quantity]:
    """The figures of a text, as an answer states them: years, dates and identifiers are not."""
    return [q for q in extract_quantities(text) if not q.is_year]


def reference_figures(
    reference: str, *, question: str | None = None, scale_source: str | None = None
) -> list[Quantity]:
    """Non-year figures of a reference, with the unit the question asks for where unstated.

    With `scale_source` (the reference answer a key fact abbreviates), a bare figure takes the
    scale and currency the source states for the same digits: the key fact "FY2023: 2,534" of
    the reference "$2,534 million in fiscal 2023" is $2,534 million.
    """
    kind, scale = scale_hint(question) if question else (None, None)
    qs = [q for q in extract_quantities(reference) if not q.is_year]
    source = [q for q in extract_quantities(scale_source) if not q.is_year] if scale_source else []
    if kind is Kind.percent:
        qs = [_fraction_as_percent(q) for q in qs]
    return [apply_hint(scaled_like(q, source), kind=kind, scale=scale) for q in qs]


def _fraction_as_percent(q: Quantity) -> Quantity:
    """A bare reference below one, written to three or more decimals, where the question asks
    for a percentage, is the fraction ("0.004" for 0.4%): read as the percentage, to the
    digits it was written with."""
    if q.kind is not Kind.number or q.scale_stated or not 0 < abs(q.value) < 1:
        return q
    if q.written_decimals < 3:
        return q
    return replace(
        q,
        value=q.value * 100.0,
        kind=Kind.percent,
        decimals=max(q.decimals - 2, 0),
        written_decimals=q.written_decimals - 2,
    )


def scaled_like(bare: Quantity, stated: Sequence[Quantity]) -> Quantity:
    """`bare` (a figure without a scale word) read at the scale, kind and currency that the
    figures `stated` give the same digits, when they agree on one; else `bare` unchanged."""
    if bare.scale_stated or bare.kind not in (Kind.number, Kind.currency):
        return bare
    found = {
        (s.scale, s.kind, s.currency)
        for s in stated
        if s.scale_stated
        and s.kind in (Kind.number, Kind.currency)
        and s.written_decimals == bare.written_decimals
        and abs(abs(s.value) / s.scale - abs(bare.value)) <= 1e-9 * max(1.0, abs(bare.value))
    }
    if len(found) != 1:
        return bare
    scale, kind, currency = found.pop()
    q = apply_hint(bare, kind=kind, scale=scale)
    return q if q.currency or not currency else replace(q, currency=currency)


# a sentence that supports or itemises the figure stated before it, rather than stating one:
# "This is calculated as ...", "This is evident from ...", "This figure is taken from ...",
# "This includes ... and ...", "Note: ...", "(Source: ...)"
_SUPPORT_RE = re.compile(
    r"^\W*(?:"
    r"(?:this|these|that)(?:\s+(?:figure|figures|amount|amounts|number|numbers|value|values|"
    r"result|calculation|information|data|total|ratio|estimate|answer|percentage))?\s+"
    r"(?:(?:is|are|was|were|can\s+be|could\s+be|has\s+been|have\s+been)\s+)?"
    r"(?:calculated|computed|derived|based|evident|found|obtained|taken|sourced|reported|shown|"
    r"stated|listed|located|presented|extracted|determined|arrived|because|due|includes?|"
    r"included|consists?|comprises?|comes?|came|made\s+up)\b"
    r"|(?:note|notes|source|sources|calculation|calculations|explanation|working|reference)\s*:"
    r")",
    re.IGNORECASE,
)


def _comparable(reference: Quantity, fig: Quantity) -> bool:
    """`fig` could state `reference`: a percent is not a currency amount, nor a multiple one."""
    if reference.kind in (Kind.percent, Kind.points):
        return fig.kind is not Kind.currency
    if reference.kind is Kind.currency:
        return fig.kind is Kind.currency or (
            fig.kind is Kind.number and not fig.text.lower().rstrip(")").endswith(("x", "times"))
        )
    return True


def _year_span(years: set[int]) -> set[int]:
    """The years a question asks about, with those between its first and last ("FY2019 -
    FY2021 average" asks about 2020 too)."""
    return set(range(min(years), max(years) + 1)) if years else set()


def conclusion_figures(
    answer: str,
    *,
    read: FigureReader = read_figures,
    reference: Quantity | None = None,
    years: set[int] | frozenset[int] = frozenset(),
) -> list[Quantity]:
    """Figures of the answer's conclusion: its last sentence that states a figure, passing over
    trailing sentences that only support it.

    Passed over, when an earlier sentence states a figure: a sentence that shows its sources or
    itemises the figure ("This is calculated as ...", "This includes $4.2 billion under ...",
    "Note: ..."), one whose figures cannot state the `reference` (only percentages after a
    currency reference: "This represents a 15% increase"; only currency amounts after a percent
    reference), one that names only years other than the asked `years` ("In FY2018 it was
    $10,073 million" after the FY2019 figure), and one that restates the figure before it more
    coarsely ("The ratio is 3.46. ... about 3.5 times"). So the answer's own statement is read, and a
    trailing comparison neither fails a right answer nor passes a wrong one.
    """
    return _conclusion(answer, read=read, reference=reference, years=years)[1]


def _conclusion(
    answer: str,
    *,
    read: FigureReader = read_figures,
    reference: Quantity | None = None,
    years: set[int] | frozenset[int] = frozenset(),
) -> tuple[str, list[Quantity]]:
    """The conclusion sentence and its figures (see `conclusion_figures`)."""
    stating = [(s, qs) for s in split_sentences(answer) if (qs := read(s))]
    if not stating:
        return "", []
    wanted = _year_span(set(years))
    for k in range(len(stating) - 1, 0, -1):
        sent, qs = stating[k]
        if _SUPPORT_RE.match(sent):
            continue
        if reference is not None and not any(_comparable(reference, q) for q in qs):
            continue
        named = stated_years(sent)
        if wanted and named and not (named & wanted):
            continue
        if _restates(qs, stating[k - 1][1]):
            continue
        return sent, qs
    return stating[0]


# "between 0.3% and 0.5%", "in the range of $1.5 to $1.6 billion", "0.4-0.5%", "0.4%–0.5%"
_RANGE_OPEN_RE = re.compile(
    r"\b(?:between|range of|ranging from|ranges from|range from|anywhere from)\s*$", re.IGNORECASE
)
_RANGE_JOIN_RE = re.compile(r"\s*(?:and|to)\s*", re.IGNORECASE)
_DASHES = ("-", "–", "—", "‐")
_DASH_CHARS = "".join(_DASHES)


def _ranges(
    sent: str, figs: Sequence[Quantity]
) -> tuple[list[Quantity], list[tuple[Quantity, Quantity]]]:
    """Split the figures of a sentence into single figures and ranges (low, high).

    A range is two figures joined by "and"/"to" after "between", "range of", "ranging from", or
    joined by a dash with no space ("0.4-0.5%", "10.2%–10.4%"; "1,577 - 1,373" with spaces is a
    subtraction); the end that leaves out the unit takes the other's ("0.4-0.5%", "$1.5 to $1.6
    billion").
    """
    singles: list[Quantity] = []
    ranges: list[tuple[Quantity, Quantity]] = []
    i = 0
    while i < len(figs):
        a = figs[i]
        b = figs[i + 1] if i + 1 < len(figs) else None
        if b is not None and _is_range(sent, a, b):
            ranges.append((_unit_from(a, b), b))
            i += 2
            continue
        singles.append(a)
        i += 1
    return singles, ranges


def _is_range(sent: str, a: Quantity, b: Quantity) -> bool:
    gap = sent[a.end : b.start]
    if _RANGE_JOIN_RE.fullmatch(gap) and _RANGE_OPEN_RE.search(sent[: a.start]):
        return True
    glued = gap == "" and b.text[:1] in _DASHES and a.value >= 0
    return glued or (gap in _DASHES and a.value >= 0 and b.value >= 0)


def _unit_from(low: Quantity, high: Quantity) -> Quantity:
    """`low` with the unit and scale `high` states, where `low` leaves them out ("0.4-0.5%")."""
    kind = high.kind if low.kind is Kind.number and high.kind is not Kind.number else None
    scale = high.scale if high.scale_stated and not low.scale_stated else None
    return apply_hint(low, kind=kind, scale=scale)


def _restates(coarse: Sequence[Quantity], before: Sequence[Quantity]) -> bool:
    """Every figure of `coarse` rounds a figure stated just before it to fewer digits: "The
    ratio is 3.46. Nike sold its inventory about 3.5 times." restates 3.46, so the precise
    statement is the answer's."""
    return bool(coarse) and all(
        any(
            c.kind is b.kind
            and c.written_decimals < b.written_decimals
            and c.scale == b.scale
            and abs(abs(c.value) - abs(b.value)) <= c.written_half_ulp * (1 + 1e-9)
            for b in before
        )
        for c in coarse
    )


def _words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text.lower()) if w not in _STOP]


def check_numeric(
    reference: str | Sequence[str],
    answer: str | None,
    *,
    question: str | None = None,
    evidence: Sequence[str] = (),
    ledger: Mapping[str, Any] | None = None,
    period: str | None = None,
    prose_words: int = PROSE_WORDS,
    read: FigureReader = read_figures,
    scale_source: str | None = None,
) -> NumericVerdict:
    """Does the answer state the reference figure(s)? See `assay.checks.answer` for the rule.

    `reference` is a reference answer, or a list of key-fact texts (each must be stated).
    `evidence` texts (gold or cited chunks) and `ledger` ({period: figure}) let a wrong figure be
    recognised as another period's; `period` names the asked period in the ledger. `read` reads
    the answer's figures (the checks pass one that gives a bare figure the unit its cited table
    states). `scale_source` gives a bare key-fact figure its scale (`reference_figures`).
    """
    if question is not None and not asks_for_figure(question):
        return NumericVerdict("abstain", "not_a_figure_question")
    if isinstance(reference, str):
        if len(reference.split()) > prose_words:
            return NumericVerdict("abstain", "prose_reference")
        refs = reference_figures(reference, question=question)
    else:
        refs = [
            q
            for fact in reference
            for q in reference_figures(fact, question=question, scale_source=scale_source)
        ]
    if not refs:
        return NumericVerdict("abstain", "no_reference_figure")
    ref_texts = tuple(q.text for q in refs)
    refusal = detect_refusal(answer)
    if refusal.refused or answer is None:
        return NumericVerdict("fail", "refusal", ref_texts, None, refusal.cue)
    if len(refs) == 1:
        years = _asked_years(question, period)
        sent, cands = _conclusion(answer, read=read, reference=refs[0], years=years)
        if not cands:
            return NumericVerdict("fail", "no_answer_figure", ref_texts)
        cands, ranges = _ranges(sent, cands)
        for low, high in ranges:
            res = compare_range(refs[0], low, high)
            if res.ok:
                return NumericVerdict("pass", "match", ref_texts, _txt(res), res.note)
        res = find_match(refs[0], cands)
        if res.ok:
            return NumericVerdict("pass", "match", ref_texts, _txt(res), res.note)
        printed = _as_printed(refs[0], res, sent)
        if printed is not None:
            return NumericVerdict("pass", "match", ref_texts, printed, "read in thousands")
        if ranges and not cands:
            shown = f"{ranges[0][0].text} to {ranges[0][1].text.lstrip(_DASH_CHARS)}"
            return NumericVerdict(
                "fail", "mismatch", ref_texts, shown, "the range does not state it"
            )
        return _explain_miss(refs[0], refs, res, ref_texts, evidence, ledger, period)
    all_figs = read(answer)
    for ref in refs:
        res = find_match(ref, all_figs)
        if not res.ok:
            return _explain_miss(ref, refs, res, ref_texts, evidence, ledger, period, missing=True)
    return NumericVerdict("pass", "match", ref_texts)


_SCALE_WORD_RE = re.compile(r"\b(?:thousands?|millions?|billions?|mn|bn)\b", re.I)


def _as_printed(ref: Quantity, res: MatchResult, sent: str) -> str | None:
    """An answer that copies the statement's figure as printed in thousands ("$5,466,312" for
    $5,466 million, the table's "(in thousands)" left out) states the reference: a whole figure
    with thousands separators, a thousandth of the reference at face value, that in thousands
    agrees with it to the reference's digits, in a sentence `sent` naming no scale (one that
    says "in USD millions" states the scale error outright)."""
    a = res.answer
    if res.status != "scale_error" or a is None or a.scale_stated or a.written_decimals:
        return None
    if _SCALE_WORD_RE.search(sent):
        return None
    if "," not in a.text or a.kind not in (Kind.number, Kind.currency):
        return None
    if ref.scale < 1e6 or not ref.scale_stated:
        return None
    return a.text if compare(ref, apply_hint(a, kind=None, scale=1e3)).ok else None


def _asked_years(question: str | None, period: str | None) -> set[int]:
    """The years asked about: the entry's period, else the years its question names."""
    if period is not None:
        want = stated_years(f"FY{period}") or stated_years(str(period))
        if want:
            return want
    return stated_years(question) if question else set()


def _txt(res: MatchResult) -> str | None:
    return res.answer.text if res.answer is not None else None


def _explain_miss(
    ref: Quantity,
    all_refs: Sequence[Quantity],
    res: MatchResult,
    ref_texts: tuple[str, ...],
    evidence: Sequence[str],
    ledger: Mapping[str, Any] | None,
    period: str | None,
    *,
    missing: bool = False,
) -> NumericVerdict:
    if res.status == "scale_error":
        return NumericVerdict("fail", "scale_error", ref_texts, _txt(res), res.note)
    # an answer figure that states one of the reference figures is not another period's
    stated = [a for a in res.candidates if not any(compare(r, a).ok for r in all_refs)]
    prior = _other_period(ref, stated, evidence, ledger, period)
    if prior is not None:
        return NumericVerdict("fail", "prior_period", ref_texts, prior[0], prior[1])
    if missing:
        return NumericVerdict("fail", "missing_figure", ref_texts, None, f"{ref.text} not stated")
    shown = stated[0].text if stated else None
    return NumericVerdict("fail", "mismatch", ref_texts, shown)


def _other_period(
    ref: Quantity,
    stated: Sequence[Quantity],
    evidence: Sequence[str],
    ledger: Mapping[str, Any] | None,
    period: str | None,
) -> tuple[str, str] | None:
    """An answer figure that is another period's value of the same line item, if one is."""
    if ledger:
        for key, val in ledger.items():
            if period is not None and str(key) == str(period):
                continue
            figs = extract_quantities(str(val))
            for lf in figs:
                lf_h = apply_hint(lf, kind=None, scale=ref.scale if not lf.scale_stated else None)
                for a in stated:
                    if compare(lf_h, a).ok and not compare(ref, a).ok:
                        return a.text, f"matches the ledger's {key} figure: likely prior period"
    for text in evidence:
        for line in _rows(text):
            figs = [q for q in extract_quantities(line) if not q.is_year]
            if not any(compare(apply_hint(f, kind=None, scale=ref.scale), ref).ok for f in figs):
                continue
            others = [
                f for f in figs if not compare(apply_hint(f, kind=None, scale=ref.scale), ref).ok
            ]
            for o in others:
                o_h = apply_hint(o, kind=None, scale=ref.scale)
                for a in stated:
                    if compare(o_h, a).ok:
                        return (
                            a.text,
                            "matches another column of the reference figure's table row: "
                            "likely prior-period figure",
                        )
    return None


def _rows(text: str) -> list[str]:
    """Table rows of an evidence text, one label and its figures each (`numbers.table_rows`):
    the cells of a row split over lines are joined, and rows run together on one line (chunk
    text joined with spaces) are split apart."""
    return [text[a:b] for a, b in table_rows(text)]


def figure_in_spans(fig: Quantity, span_figs: Sequence[Quantity]) -> bool:
    """The figure appears among span figures; a bare span figure may carry any scale, because
    tables state their unit in a header ("(Millions)")."""
    for s in span_figs:
        if compare(s, fig).ok or compare(fig, s).ok:
            return True
        if not s.scale_stated and s.kind in (Kind.number, Kind.currency):
            for scale in (1e3, 1e6, 1e9):
                if compare(apply_hint(s, kind=None, scale=scale), fig).ok:
                    return True
    return False


def fact_present(fact: str, answer: str, *, read: FigureReader = read_figures) -> bool:
    """A key fact is present: each of its figures is stated, or 80% of its content words are."""
    figs = read_figures(fact)
    if figs:
        ans = read(answer)
        return all(find_match(f, ans).ok for f in figs)
    words = set(_words(fact))
    if not words:
        return True
    have = set(_words(answer))
    return len(words & have) / len(words) >= 0.8


def not_disclosed_claim(answer: str | None) -> bool:
    """The answer asserts non-disclosure (rather than 'could not find in the filings searched')."""
    return bool(answer) and bool(_NOT_DISCLOSED_RE.search(answer or ""))


def stated_years(text: str) -> set[int]:
    """The years a text names ("FY2022", "fiscal 22", "2021")."""
    return set(_stated_years(text))


@lru_cache(maxsize=8192)
def _stated_years(text: str) -> frozenset[int]:
    """`stated_years`, read once per text (the checks of an entry ask it of the same answer,
    sentence and question several times); each caller gets a set of its own."""
    out: set[int] = set()
    for m in _YEAR_RE.finditer(text):
        y = m.group(1) or m.group(2)
        n = int(y)
        out.add(n + 2000 if n < 100 else n)
    return frozenset(out)
