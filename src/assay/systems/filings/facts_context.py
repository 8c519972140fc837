"""What the facts answerer and its question kinds share, below both of them.

The words of a line item (`ABBREVIATIONS` expanded, filler dropped: `_terms`), the context of one
question (`FactsContext`), an XBRL observation (`_Obs`) and how it is shown and cited
(`_exact_decimals`, `_cite_xbrl`), and the sources the kinds read (`FactsSources`): a protocol,
so that `assay.systems.filings.kinds` stands below `assay.systems.filings.facts_answer`, which
calls it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from assay._stopwords import FACT_QUERY_FILLER
from assay.systems.filings.index import tokenize

if TYPE_CHECKING:
    from assay.corpus import FiscalCalendar
    from assay.systems.filings.facts_route import FactsTable
    from assay.systems.filings.index import FilingsIndex

__all__ = ["ABBREVIATIONS", "FactsContext", "FactsSources"]

ABBREVIATIONS: tuple[tuple[str, str], ...] = (
    (r"\bnii\b", "net interest income"),
    (r"\bnim\b", "net interest margin"),
    (r"\brpo\b", "remaining performance obligations"),
    (r"\beps\b", "earnings per share"),
    (r"\bncos?\b", "net charge-offs"),
    (r"\bpcl\b", "provision for credit losses"),
    (r"\bop\.?\s+inc(?:ome)?\b", "operating income"),
    (r"\bnet\s+inc\b", "net income"),
    (r"\bni\b", "net income"),
    (r"\brev\b", "revenue"),
    (r"\bsubs?\b", "subscription"),
    (r"\bprof\b", "professional"),
    (r"\bperf\b", "performance"),
    (r"\bhfi\b", "held for investment"),
    (r"\bnonint\b", "noninterest"),
    (r"\bfee\s+income\b", "noninterest income"),
    (r"\btop\s*line\b", "total revenues"),
    (r"\bbottom\s+line\b", "net income"),
    (r"\bloan\s+book\b", "loans"),
    (r"\bcet1\b", "common equity tier 1 capital ratio"),
    (r"\bcapex\b", "capital expenditures"),
    (r"\bcogs\b", "cost of goods sold"),
    (r"\bd\s*&\s*a\b", "depreciation and amortization"),
    (r"\bsg\s*&\s*a\b", "selling general and administrative"),
    (r"\bgaap\b", ""),
)
"""Analysts' abbreviations of line items, expanded before a question is matched to a concept."""


def _terms(text: str) -> set[str]:
    low = text.lower()
    for pattern, repl in ABBREVIATIONS:
        low = re.sub(pattern, repl, low)
    return {t for t in tokenize(low) if t not in FACT_QUERY_FILLER and not t.isdigit()}


# ----------------------------------------------------------------------------- the context


@dataclass
class FactsContext:
    """What the facts answerer needs beyond the evidence: the question, its `as_of`, the index,
    the chunks visible at `as_of`, the company, and the filings the question is about."""

    query: str
    as_of: dt.date | None
    index: FilingsIndex
    visible: npt.NDArray[np.bool_]
    companies: tuple[str, ...]
    primary_docs: frozenset[int] = frozenset()

    @property
    def calendar(self) -> FiscalCalendar | None:
        keys = set(self.companies)
        return next((d.calendar for d in self.index.docs if d.company_key in keys), None)

    def company_name(self) -> str:
        keys = set(self.companies)
        return next((d.company for d in self.index.docs if d.company_key in keys and d.company), "")


@dataclass(frozen=True, slots=True)
class _Obs:
    concept: str
    label: str
    description: str
    unit: str
    value: float
    start: dt.date | None
    end: dt.date
    form: str
    filed: dt.date


def _exact_decimals(value: float) -> int:
    """Decimals needed to write `value` in millions exactly (at most three)."""
    m = abs(value) / 1e6
    for d in range(4):
        if abs(round(m, d) - m) < 1e-9 * max(1.0, m):
            return d
    return 3


def _cite_xbrl(ctx: FactsContext, o: _Obs) -> str | None:
    """The chunk of the filing that reported `o` (same form and filing date) printing it."""
    idx = ctx.index
    keys = set(ctx.companies)
    docs = [
        i
        for i, d in enumerate(idx.docs)
        if d.company_key in keys and d.accepted_at == o.filed and (d.form or "") == o.form
    ]
    if not docs:
        return None
    wanted: list[str] = []
    for scale in (1e6, 1e3, 1.0):
        v = abs(o.value) / scale
        if abs(v - round(v)) < 1e-9 and v >= 1:
            wanted.append(f"{round(v):,}")
    if abs(o.value) < 100:
        wanted.append(f"{abs(o.value):.2f}")
    label = re.compile(re.escape(o.label.split(",")[0]), re.I)
    best: tuple[int, int, str] | None = None
    for i in np.flatnonzero(np.isin(idx.doc_of, docs)):
        text = idx.chunks[int(i)].text
        if not any(re.search(rf"(?<![\d,.]){re.escape(w)}(?![\d,])", text) for w in wanted):
            continue
        key = (0 if label.search(text) else 1, int(i))
        if best is None or key < best[:2]:
            best = (*key, idx.ids[int(i)])
    return None if best is None else best[2]


# ----------------------------------------------------------------------------- the sources


class XbrlSource(Protocol):
    """SEC company facts, as the kinds read them (`assay.systems.filings.facts_answer.XbrlFacts`)."""

    def lookup(
        self, ctx: FactsContext, words: set[str], periods: Sequence[tuple[int, int | None]]
    ) -> tuple[_Obs, int, int | None] | None: ...


class TableSource(Protocol):
    """The statements' facts table (`assay.systems.filings.facts_answer.TableFacts`)."""

    @property
    def table(self) -> FactsTable: ...


class FactsSources(Protocol):
    """What the question kinds read of the facts answerer: its two sources of facts."""

    @property
    def xbrl(self) -> XbrlSource | None: ...

    @property
    def table(self) -> TableSource | None: ...
