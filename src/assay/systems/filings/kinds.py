"""Question kinds the facts answerer answers beyond one figure for one period.

Each reads only what a real system sees (the question, its `as_of`, the filings visible then,
their metadata and the structured facts) and returns an answer or None (not this kind):

- **refusals** (`unreported`, `not_applicable`): a question about a fiscal period no visible
  filing reports yet (results asked before they are filed), or a metric no filing of the company
  mentions at all (a bank metric asked of a software company), is declined with what is missing;
- **temporal** (`latest`): "the latest quarter", "last FYE", "just reported" resolve to the most
  recent period of the company's filings visible at `as_of`, then the figure of that period;
- **comparisons** (`comparison`, `reserve_build`): this year against last (one year named: the
  year before it; two: both), a quarter against the same quarter a year before, one company
  against another, and a provision against net charge-offs (a reserve build or release);
- **conflicts** (`conflict`): when documents give different values for the figure asked, the
  one from the higher authority (audited filing or governing agreement over management accounts,
  schedules and mail; an amendment over what it amends) is the answer, and the others are named
  with why they differ.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.systems.filings.answer import REFUSAL, Answer, _units
from assay.systems.filings.facts_context import (
    ABBREVIATIONS,
    FactsContext,
    FactsSources,
    _cite_xbrl,
    _exact_decimals,
    _terms,
)
from assay.systems.filings.index import tokenize
from assay.systems.filings.metrics import ITEMS, format_value

if TYPE_CHECKING:
    from assay.systems.filings.index import DocInfo
    from assay.systems.filings.query import QueryPlan

__all__ = [
    "Found",
    "comparison",
    "comparison_years",
    "conflict",
    "latest",
    "latest_kind",
    "not_applicable",
    "reserve_build",
    "unreported",
]

_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}

# words that say what kind of question it is, not which figure
_CUE_WORDS = frozenset(
    [
        "growth",
        "grow",
        "grew",
        "y",
        "yoy",
        "vs",
        "versus",
        "compar",
        "change",
        "chang",
        "expand",
        "contract",
        "increas",
        "decreas",
        "rise",
        "rose",
        "fell",
        "declin",
        "last",
        "latest",
        "recent",
        "just",
        "quarter",
        "quarterly",
        "qtr",
        "fye",
        "year-end",
        "yearend",
        "year",
        "end",
        "annual",
        "current",
        "came",
        "come",
        "right",
        "correct",
        "accur",
        "which",
        "management",
        "account",
        "10-k",
        "k",
        "credit",
        "agreement",
        "covenant",
        "max",
        "maximum",
        "exceed",
        "cannot",
        "can",
        "not",
        "under",
        "limit",
        "cap",
        "permit",
        "build",
        "built",
        "reserv",
        "releas",
        "origin",
        "first",
        "did",
        "do",
        "does",
        "prior",
        "previous",
        "period",
    ]
)

_COMPARE_RE = re.compile(
    r"\b(?:growth|grow(?:n|th|ing)?|grew|y/y|yoy|y-o-y|year[\s-]+over[\s-]+year|vs\.?|versus|"
    r"compared?\s+(?:with|to)|comparison|change[ds]?|expand(?:ed)?|contract(?:ed)?|"
    r"increase[ds]?|decrease[ds]?|r[io]se|fell|declined?)\b",
    re.I,
)
_YEAR_PAIR_RE = re.compile(
    r"(?<![\d$.,])(?:FY\s?|fiscal\s+)?'?(\d{4}|\d{2})\s*(?:vs\.?|versus|and|to|-|–)\s*"
    r"(?:FY\s?|fiscal\s+)?'?(\d{4}|\d{2})(?![\d%])",
    re.I,
)
_LATEST_RE = re.compile(
    r"\b(?:latest|last|most\s+recent(?:ly)?|just\s+(?:report(?:ed)?|announced|filed)|newest)\b",
    re.I,
)
_QUARTER_WORD_RE = re.compile(r"\b(?:qtr|quarter(?:ly)?|three\s+months)\b", re.I)
_YEAR_END_RE = re.compile(
    r"\b(?:fye|year[\s-]*end|fiscal\s+year|annual(?:ly)?|full[\s-]+year|10-k|year)\b", re.I
)
_RESERVE_RE = re.compile(
    r"\breserve\s+(?:build|release)|\bbuil[dt]\w*\s+(?:(?:its|their|the|credit)\s+)?"
    r"(?:reserves|allowance)|\breleas\w*\s+(?:(?:its|their|the)\s+)?(?:reserves|allowance)",
    re.I,
)
_FORWARD_RE = re.compile(
    r"\b(?:guidance|outlook|forecast\w*|expect\w*|project\w*|plan(?:s|ned)?|target\w*|"
    r"anticipat\w*|estimate[sd]?|will)\b",
    re.I,
)
_CONFLICT_RE = re.compile(
    r"\b(?:which|or)\b[^?]*\b(?:right|correct|accurate|true|valid)\b|\bconflict\w*|\bdiscrepan\w*"
    r"|\bdisagree\w*|\binconsisten\w*|\bcovenant\b|\bcredit\s+(?:agreement|facility)\b"
    r"|\b(?:not|never)\s+(?:to\s+)?exceed\b|\bmax(?:imum)?\s+(?:net\s+)?(?:leverage|ratio)",
    re.I,
)
_LIMIT_RE = re.compile(r"\b(?:max\w*|exceed\w*|permit\w*|cap\w*|limit\w*|not\s+to\s+be)\b", re.I)
_RATIO_TO_ONE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:to|:)\s*1(?:\.0+)?\b")
_NUMBER_RE = re.compile(r"(?<![\w.])\(?-?\$?\d[\d,]*(?:\.\d+)?\)?(?![\d])")

# authority of a source by document kind (lower ranks first): audited filings and the
# agreements that set their own terms over releases, minutes, internal accounts and mail
_AUTHORITY: dict[str, int] = {
    "10-K/A": 0,
    "10-K": 1,
    "20-F": 1,
    "credit_agreement": 1,
    "10-Q/A": 1,
    "10-Q": 2,
    "8-K": 3,
    "EARNINGS": 3,
    "board_minutes": 3,
    "management_accounts": 4,
    "covenant_compliance": 4,
    "memo": 4,
    "term_sheet": 4,
    "email": 5,
    "draft_8k": 5,
}
_KIND_NAMES = {
    "10-K/A": "amended 10-K (10-K/A)",
    "10-K": "audited 10-K",
    "credit_agreement": "credit agreement",
    "management_accounts": "management accounts",
    "covenant_compliance": "covenant compliance schedule",
    "board_minutes": "board minutes",
    "email": "email",
    "EARNINGS": "earnings release",
}


def _item_words(query: str, plan: QueryPlan, extra: str = "") -> set[str]:
    """The words of the figure asked: the question's terms less company, period and the words
    that say what kind of question it is."""
    scope = " ".join([*(e.text for e in plan.entities), *(p.text for p in plan.periods), extra])
    cues = {t for w in _CUE_WORDS for t in _terms(w)} | _CUE_WORDS
    return {t for t in _terms(query) - _terms(scope) if t not in cues and len(t) > 1}


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True, slots=True)
class Found:
    """One figure found for one period: its value in units, how to show it, and where."""

    value: float
    unit: str  # money | per_share | percent | number
    label: str
    fiscal_year: int
    quarter: int | None
    cite: str | None
    instant: bool = False

    def shown(self) -> str:
        if self.unit == "money":
            return format_value(
                self.value,
                "money",
                scale=1e6 if abs(self.value) >= 1e6 else None,
                decimals=_exact_decimals(self.value),
            )
        if self.unit == "per_share":
            return f"${self.value:,.2f}"
        if self.unit == "percent":
            return f"{self.value:,.2f}%"
        return f"{self.value:,g}"


def find_figure(
    answerer: FactsSources, ctx: FactsContext, words: set[str], fy: int, q: int | None
) -> Found | None:
    """The figure of the line item `words` name for fiscal year `fy` (quarter `q`): the XBRL
    company facts first, then the statement tables' rows (percentages included)."""
    if not words:
        return None
    row = _table_figure(answerer, ctx, words, fy, q)
    if answerer.xbrl is not None and ctx.calendar is not None:
        hit = answerer.xbrl.lookup(ctx, words, [(fy, q)])
        # a table row that names more of the words asked wins ("net interest margin" is not
        # the concept "net interest income")
        if hit is not None and (
            row is None or len(words & _terms(hit[0].label)) >= len(words & _terms(row.label))
        ):
            o = hit[0]
            unit = "number"
            value = o.value
            if o.unit == "USD":
                unit = "money"
            elif o.unit.startswith("USD/"):
                unit = "per_share"
            elif o.unit == "pure":
                unit, value = "percent", (o.value * 100 if abs(o.value) < 1 else o.value)
            return Found(value, unit, o.label, fy, q, _cite_xbrl(ctx, o), o.start is None)
    return row


def _table_figure(
    answerer: FactsSources, ctx: FactsContext, words: set[str], fy: int, q: int | None
) -> Found | None:
    """The statement-table row whose label best covers `words`, for `fy` (quarter `q`)."""
    if answerer.table is None:
        return None
    table = answerer.table.table
    index = ctx.index
    best: tuple[tuple[float, ...], Any] | None = None
    for key in ctx.companies:
        for i in table._by_company.get(key, []):
            f = table.facts[i]
            if f.fiscal_year != fy or f.fiscal_quarter != q or f.unit == "shares":
                continue
            pos = index.pos.get(f.chunk_id)
            if pos is None or not ctx.visible[pos]:
                continue
            terms = _terms(f.line_item)
            inter = len(words & terms)
            if not terms or not inter or inter / len(words) < 0.6:
                continue
            d = int(index.doc_of[pos])
            doc = index.docs[d]
            rank = (
                -inter / len(words),
                -inter / len(terms),
                0 if f.statement else 1,
                0 if d in ctx.primary_docs else 1,
                -(doc.fiscal_year or 0),
                float(pos),
            )
            if best is None or rank < best[0]:
                best = (rank, f)
    if best is None:
        return None
    f = best[1]
    if f.unit == "USD per share":
        return Found(f.value, "per_share", f.line_item, fy, q, f.chunk_id)
    if f.unit == "percent":
        return Found(f.value, "percent", f.line_item, fy, q, f.chunk_id)
    if f.unit == "USD":
        return Found(f.value * (f.scale or 1.0), "money", f.line_item, fy, q, f.chunk_id)
    return Found(f.value, "number", f.line_item, fy, q, f.chunk_id)


def _period_words(ctx: FactsContext, fy: int, q: int | None) -> str:
    cal = ctx.calendar
    if q is None:
        end = cal.year_end(fy) if cal is not None else None
        return f"fiscal {fy} (FY{fy}" + (f", ended {end.isoformat()})" if end else ")")
    end = cal.quarter_end(fy, q) if cal is not None else None
    return f"the {_ORDINAL[q]} quarter of fiscal {fy} (Q{q} FY{fy}" + (
        f", ended {end.isoformat()})" if end else ")"
    )


def _cites(*found: Found | None) -> list[str]:
    return list(dict.fromkeys(f.cite for f in found if f is not None and f.cite))


def _bracket(cites: Sequence[str]) -> str:
    return f" [{'; '.join(cites)}]" if cites else ""


# ----------------------------------------------------------------------------- refusals


def _company_docs(ctx: FactsContext) -> list[DocInfo]:
    keys = set(ctx.companies)
    return [
        d
        for d in ctx.index.docs
        if d.company_key in keys
        and (ctx.as_of is None or d.accepted_at is None or d.accepted_at <= ctx.as_of)
    ]


def _refusal(why: str, cites: Sequence[str] = ()) -> Answer:
    return Answer(f"{REFUSAL}: {why}", list(cites), refused=True, support=0.0)


def unreported(ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    """Decline a question about a fiscal period that no filing visible at `as_of` reports (the
    company's latest filing covers an earlier period): results are not known before they are
    filed. A question about guidance, an outlook or a plan for that period is not declined."""
    if _FORWARD_RE.search(ctx.query) or ctx.calendar is None:
        return None
    asked = [
        (p.fiscal_year, p.quarter)
        for p in plan.periods
        if p.fiscal_year is not None and not p.calendar and p.relative is None
    ]
    docs = [d for d in _company_docs(ctx) if d.fiscal_year is not None and d.form != "OTHER"]
    if not asked or not docs:
        return None
    latest = max(docs, key=lambda d: (d.fiscal_year or 0, d.fiscal_quarter or 4))
    fy, q = max(asked, key=lambda p: (p[0], p[1] or 4))
    # a whole year is declined only when no filing of it is out yet (a 10-Q of the year may
    # answer a question about it); a quarter, when no filing reaches it
    have = (latest.fiscal_year or 0, latest.fiscal_quarter or 4)
    if (q is None and fy <= have[0]) or (q is not None and (fy, q) <= have):
        return None
    when = f" as of {ctx.as_of.isoformat()}" if ctx.as_of else ""
    period = f"Q{q} FY{fy}" if q else f"fiscal {fy}"
    return _refusal(
        f"no filing of {ctx.company_name()}{when} reports {period} yet; the latest is its "
        f"{latest.label()}, filed {latest.accepted_at}. Results for {period} are not known "
        "before they are filed (any figure for it in the filings is guidance, not a result)."
    )


def not_applicable(answerer: FactsSources, ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    """Decline a question whose metric (a name or an analyst's abbreviation of it, expanded)
    appears in no filing of the company visible at `as_of`, not even with its words a few
    apart ("income from operations" meets "operating income"): the company does not report it,
    and no other figure should stand in for it."""
    low = ctx.query.lower()
    phrases: list[str] = []
    for pattern, expansion in ABBREVIATIONS:
        if not expansion or any(item.question.search(expansion) for item in ITEMS.values()):
            continue  # a line item the formulas read under its other names
        if re.search(pattern, low) or expansion in low:
            phrases.append(expansion)
    if not phrases or not ctx.companies:
        return None
    docs = {i for i, d in enumerate(ctx.index.docs) if d.company_key in set(ctx.companies)}
    rows = np.flatnonzero(ctx.visible & np.isin(ctx.index.doc_of, list(docs)))
    if rows.size == 0:
        return None
    for phrase in phrases:
        want = list(dict.fromkeys(tokenize(phrase)))
        if len(want) < 2:
            continue
        window = len(want) + 2
        if not any(_near(tokenize(ctx.index.chunks[int(i)].text), want, window) for i in rows):
            return _refusal(
                f"no filing of {ctx.company_name()} I searched reports "
                f"{phrase}: the company does not appear to disclose this metric, and no other "
                "figure stands in for it."
            )
    return None


def _near(tokens: list[str], want: list[str], window: int) -> bool:
    """Every token of `want` within `window` consecutive tokens somewhere in `tokens`."""
    first = want[0]
    rest = set(want[1:])
    for i, t in enumerate(tokens):
        if t == first or t in rest:
            span = set(tokens[max(0, i - window + 1) : i + window])
            if first in span and rest <= span:
                return True
    return False


# ----------------------------------------------------------------------------- temporal


def latest_kind(query: str, plan: QueryPlan) -> str | None:
    """ "quarter" or "year" when the question asks for the latest period, else None."""
    rel = next((p.relative for p in plan.periods if p.relative is not None), None)
    if rel is not None:
        return "quarter" if rel == "latest_quarter" else "year"
    if any(p.fiscal_year is not None or p.on_date is not None for p in plan.periods):
        return None
    if not _LATEST_RE.search(query):
        return None
    if _QUARTER_WORD_RE.search(query):
        return "quarter"
    if _YEAR_END_RE.search(query):
        return "year"
    return None


def latest(answerer: FactsSources, ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    """The figure of the most recent period the company had reported by `as_of`."""
    kind = latest_kind(ctx.query, plan)
    if kind is None:
        return None
    docs = [d for d in _company_docs(ctx) if d.fiscal_year is not None and d.form != "OTHER"]
    if kind == "quarter":
        periods = [
            (d, (d.fiscal_year or 0, d.fiscal_quarter or 4))
            for d in docs
            if d.fiscal_quarter is not None or (d.form or "").startswith("10-K")
        ]
    else:
        periods = [
            (d, (d.fiscal_year or 0, 4))
            for d in docs
            if (d.form or "").startswith("10-K") or d.fiscal_quarter == 4
        ]
    if not periods:
        return None
    doc, (fy, q) = max(periods, key=lambda p: (p[1], p[0].accepted_at or dt.date.min))
    words = _item_words(ctx.query, plan)
    quarter = q if kind == "quarter" else None
    found = find_figure(answerer, ctx, words, fy, quarter)
    if found is None:
        return None
    when = f"As of {ctx.as_of.isoformat()}" if ctx.as_of else "In the filings searched"
    name = ctx.company_name()
    if kind == "quarter":
        head = (
            f"{when}, the latest quarter {name} had reported was {_period_words(ctx, fy, q)}, "
            f"in its {doc.label()}"
        )
    else:
        end = ctx.calendar.year_end(fy).isoformat() if ctx.calendar is not None else f"FY{fy}"
        head = (
            f"{when}, the latest fiscal year end {name} had reported was {end} (FY{fy}, "
            f"its {doc.label()})"
        )
    text = f"{head}: {found.label.lower()} {'were' if found.label.endswith('s') else 'was'} "
    text += f"{found.shown()} for FY{fy}{'' if quarter is None else f' Q{quarter}'}"
    cites = _cites(found)
    return Answer(text + _bracket(cites) + ".", cites, f"FY{fy}" + (f" Q{q}" if quarter else ""))


# ----------------------------------------------------------------------------- comparisons


def comparison_years(query: str, plan: QueryPlan) -> list[tuple[int, int | None]] | None:
    """The two periods a comparison sets side by side, earlier first: two years named ("22 vs
    23", "FY2023 and FY2024"); one year named (that year against the year before); a quarter
    named (against the same quarter a year before). None when the question compares nothing."""
    if not _COMPARE_RE.search(query):
        return None
    m = _YEAR_PAIR_RE.search(query)
    if m:
        a, b = (int(g) + 2000 if len(g) == 2 else int(g) for g in m.groups())
        if 1990 <= a <= 2100 and 1990 <= b <= 2100 and a != b:
            return [(min(a, b), None), (max(a, b), None)]
    named = [
        (p.fiscal_year, p.quarter)
        for p in plan.periods
        if p.fiscal_year is not None and p.relative is None
    ]
    years = sorted(set(named), key=lambda p: (p[0], p[1] or 0))
    if len(years) >= 2:
        return [years[0], years[-1]]
    if len(years) == 1:
        fy, q = years[0]
        return [(fy - 1, q), (fy, q)]
    return None


def comparison(answerer: FactsSources, ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    """This period against the one before (or the two named), or one company against another
    in the same period: both figures, and the change."""
    if len(ctx.companies) >= 2:
        return _across_companies(answerer, ctx, plan)
    periods = comparison_years(ctx.query, plan)
    if periods is None:
        return None
    pair = _YEAR_PAIR_RE.search(ctx.query)
    words = _item_words(ctx.query, plan, pair.group(0) if pair else "")
    (y0, q0), (y1, q1) = periods
    old = find_figure(answerer, ctx, words, y0, q0)
    new = find_figure(answerer, ctx, words, y1, q1)
    if old is None or new is None:
        return None
    name = ctx.company_name()
    label = new.label.lower()
    p1 = f"Q{q1} FY{y1}" if q1 else f"fiscal {y1}"
    p0 = f"Q{q0} FY{y0}" if q0 else f"fiscal {y0}"
    if new.unit == "percent":
        bp = round((new.value - old.value) * 100)
        verb = "rose" if bp > 0 else "fell" if bp < 0 else "was unchanged"
        text = (
            f"{name}'s {label} {verb} from {old.shown()} in {p0} to {new.shown()} in {p1} "
            f"({bp:+d} basis points)"
        )
    else:
        change = (new.value - old.value) / abs(old.value) * 100 if old.value else float("nan")
        text = f"{name}'s {label} was {new.shown()} in {p1} versus {old.shown()} in {p0}"
        if np.isfinite(change):
            text += f", a change of {change:+.1f}%"
    cites = _cites(new, old)
    return Answer(text + _bracket(cites) + ".", cites, f"FY{y1}")


def _across_companies(answerer: FactsSources, ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    named = [
        (p.fiscal_year, p.quarter)
        for p in plan.periods
        if p.fiscal_year is not None and p.relative is None
    ]
    if len(set(named)) != 1:
        return None
    fy, q = named[0]
    words = _item_words(ctx.query, plan)
    parts: list[tuple[str, Found]] = []
    for key in ctx.companies:
        one = replace(ctx, companies=(key,))
        found = find_figure(answerer, one, words, fy, q)
        if found is None:
            return None
        parts.append((one.company_name(), found))
    period = f"Q{q} FY{fy}" if q else f"fiscal {fy}"
    said = "; ".join(f"{name}'s {f.label.lower()} was {f.shown()}" for name, f in parts)
    (na, a), (nb, b) = parts[0], parts[1]
    if a.value != b.value:
        hi, lo = (na, nb) if a.value > b.value else (nb, na)
        said += f": {hi}'s is the higher, {lo}'s the lower"
    cites = _cites(*(f for _, f in parts))
    return Answer(f"In {period}, {said}" + _bracket(cites) + ".", cites, f"FY{fy}")


def reserve_build(answerer: FactsSources, ctx: FactsContext, plan: QueryPlan) -> Answer | None:
    """Did a lender build or release credit reserves in a period: the provision for credit
    losses against net charge-offs (a provision above them builds the allowance)."""
    if not _RESERVE_RE.search(ctx.query):
        return None
    named = [
        (p.fiscal_year, p.quarter)
        for p in plan.periods
        if p.fiscal_year is not None and p.relative is None
    ]
    if not named:
        return None
    fy, q = named[-1]
    prov = find_figure(answerer, ctx, _terms("provision for credit losses"), fy, q)
    nco = find_figure(answerer, ctx, _terms("net charge-offs"), fy, q)
    if prov is None or nco is None:
        return None
    diff = abs(prov.value) - abs(nco.value)
    what = "a reserve build" if diff > 0 else "a reserve release" if diff < 0 else "no change"
    shown = replace(prov, value=abs(diff)).shown()
    text = (
        f"In {_period_words(ctx, fy, q)}, {ctx.company_name()}'s provision for credit losses "
        f"was {prov.shown()} against net charge-offs of {replace(nco, value=abs(nco.value)).shown()}"
        f", {what}" + (f" of {shown}" if diff else "")
    )
    cites = _cites(prov, nco)
    return Answer(text + _bracket(cites) + ".", cites, f"FY{fy}" + (f" Q{q}" if q else ""))


# ----------------------------------------------------------------------------- conflicts


@dataclass(frozen=True, slots=True)
class _Claim:
    value: float
    text: str
    chunk_id: str
    doc: DocInfo


def _kind(doc: DocInfo) -> str:
    return doc.doc_type or doc.form or "document"


def _rank(doc: DocInfo) -> int:
    return _AUTHORITY.get(_kind(doc), _AUTHORITY.get(doc.form or "", 3))


def _claims(
    ctx: FactsContext, plan: QueryPlan, evidence: Sequence[dict[str, Any]], words: set[str]
) -> list[_Claim]:
    """Statements of the figure `words` name in the evidence and in the company's visible
    documents that rank best for the question, one value per document (its first statement)."""
    index = ctx.index
    keys = set(ctx.companies)
    mask = ctx.visible & np.isin(
        index.doc_of, [i for i, d in enumerate(index.docs) if d.company_key in keys]
    )
    scores = index.bm25_scores(ctx.query, mask)
    top = [int(i) for i in np.argsort(-scores, kind="stable")[:12] if scores[i] > 0]
    ids = [str(e["chunk_id"]) for e in evidence if e.get("kind") != "fact"]
    ids += [index.ids[i] for i in top]
    # every chunk of the documents found: a sheet's title ("management accounts") and its
    # rows are often chunks apart
    found = {int(index.doc_of[index.pos[c]]) for c in ids if c in index.pos}
    ids += [index.ids[int(i)] for i in np.flatnonzero(mask & np.isin(index.doc_of, list(found)))]
    limit = bool(_LIMIT_RE.search(ctx.query))
    years = {p.fiscal_year for p in plan.periods if p.fiscal_year is not None}
    annual = bool(years) and all(p.quarter is None for p in plan.periods)
    out: dict[str, _Claim] = {}
    for cid in dict.fromkeys(ids):
        pos = index.pos.get(cid)
        if pos is None or not ctx.visible[pos]:
            continue
        doc = index.docs[int(index.doc_of[pos])]
        if doc.doc_id in out or (keys and doc.company_key not in keys):
            continue
        if years and doc.fiscal_year is not None and doc.fiscal_year not in years:
            continue
        if annual and doc.fiscal_quarter is not None:
            continue  # a quarter's figure is not the year's
        best: tuple[float, _Claim] | None = None
        for unit in _units(index.chunks[pos].text):
            terms = _terms(unit)
            if len(words & terms) < (len(words) if len(words) <= 3 else 0.6 * len(words)):
                continue
            if limit != bool(_LIMIT_RE.search(unit)):
                continue  # a limit answers "the maximum", not the figure tested against it
            value = _first_value(unit)
            if value is None:
                continue
            # the statement whose words before its figures say least besides the words asked
            # ("Net income 552" over "Net interest income 750,438")
            label = _terms(re.split(r"\d", unit, maxsplit=1)[0]) or terms
            precision = len(words & label) / len(label)
            if best is None or precision > best[0]:
                best = (precision, _Claim(value, unit, cid, doc))
        if best is not None:
            out[doc.doc_id] = best[1]
    return list(out.values())


def _first_value(unit: str) -> float | None:
    m = _RATIO_TO_ONE_RE.search(unit)
    if m:
        return float(m.group(1))
    for n in _NUMBER_RE.finditer(unit):
        raw = n.group(0).strip("()$").replace(",", "")
        try:
            v = float(raw)
        except ValueError:
            continue
        if raw.isdigit() and 1900 <= v <= 2100 and len(raw) == 4:
            continue  # a year
        return v
    return None


def _why(auth: DocInfo, other: DocInfo) -> str:
    a, o = _kind(auth), _kind(other)
    if a == "10-K/A" and o.startswith("10-K"):
        return "the 10-K/A restates the original 10-K (a restatement)"
    if a.startswith("10-K") and o in ("management_accounts", "board_minutes", "EARNINGS", "8-K"):
        return (
            f"the {_KIND_NAMES.get(o, o)} are unaudited and predate the year-end audit "
            "adjustments, which the audited 10-K reflects"
        )
    if a == "credit_agreement":
        return (
            f"the credit agreement sets the covenant; the {_KIND_NAMES.get(o, o)} misstates it "
            "(a different definition or a transcription error)"
        )
    return f"the {_KIND_NAMES.get(a, a)} ranks above the {_KIND_NAMES.get(o, o)} as a source"


def conflict(
    answerer: FactsSources,
    ctx: FactsContext,
    plan: QueryPlan,
    evidence: Sequence[dict[str, Any]],
) -> Answer | None:
    """The figure asked from the most authoritative document that states it, naming the other
    documents' different values and why they differ."""
    if not _CONFLICT_RE.search(ctx.query) or not ctx.companies:
        return None
    words = _item_words(ctx.query, plan)
    claims = _claims(ctx, plan, evidence, words)
    if not claims:
        return None
    claims.sort(key=lambda c: (_rank(c.doc), -(c.doc.accepted_at or dt.date.min).toordinal()))
    auth = claims[0]
    others = [c for c in claims[1:] if abs(c.value - auth.value) > 1e-9 * max(1, auth.value)]
    name = ctx.company_name()
    ratio = bool(_RATIO_TO_ONE_RE.search(auth.text))
    shown = f"{auth.value:,.2f} to 1.00" if ratio else f"{auth.value:,g}"
    kind = _KIND_NAMES.get(_kind(auth.doc), _kind(auth.doc))
    text = f'For {name}, {shown} per the {kind}: "{auth.text}"'
    cites = [auth.chunk_id]
    seen: set[float] = set()
    for c in others:
        if c.value in seen:
            continue
        seen.add(c.value)
        text += (
            f". The {_KIND_NAMES.get(_kind(c.doc), _kind(c.doc))} states {c.value:,g} instead "
            f"[{c.chunk_id}]: {_why(auth.doc, c.doc)}"
        )
        cites.append(c.chunk_id)
    text = text.replace(f'"{auth.text}"', f'"{auth.text}" [{auth.chunk_id}]', 1)
    return Answer(text + ".", cites, None)
