"""The facts answerer: a numeric question answered by a lookup of structured facts, not by reading.

The route the Filing Desk describes for numeric questions ("a plain lookup against the XBRL
financial data"), in two sources:

- **XBRL company facts** (`XbrlFacts`: the SEC's ``companyfacts`` JSON, as the synthetic room
  writes it under ``xbrl/``): a question naming a line item and a period is matched to the
  concept whose label and description cover its words (analysts' abbreviations expanded:
  `ABBREVIATIONS`), and to the observation for that fiscal period (read from the observation's
  start and end dates with the company's fiscal calendar) filed by the question's `as_of` (the
  latest such filing: a restatement replaces what it restates). The answer cites the chunk of
  the filing that reported it (same form and filing date) that prints the figure.
- **Statement facts** (`TableFacts`: ``facts.jsonl`` written by ``assay corpus build``, figures
  of the statements' tables per fiscal-year column): the line items and formulas of
  `assay.systems.filings.metrics` (ratios, margins, growth, turnover, days, per-share), each
  figure taken from its own statement first and from the filing the question is about first,
  among the filings visible at `as_of`. The answer states the value as the question asks for
  it (unit, scale, decimals), how it was computed, and cites the pages of every figure read.

A question neither source can answer goes to the `fallback` answerer (extractive by default).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._io import json_loads
from assay.systems.filings.answer import Answer, Answerer, ExtractiveAnswerer
from assay.systems.filings.entities import company_key
from assay.systems.filings.facts_context import (
    ABBREVIATIONS,
    FactsContext,
    _cite_xbrl,
    _exact_decimals,
    _Obs,
    _terms,
)
from assay.systems.filings.metrics import (
    HEALTHY_RATIO,
    ITEMS,
    Figure,
    MetricResult,
    evaluate,
    format_value,
    judge_metric,
    parse_judgement,
    parse_metric_question,
)
from assay.systems.filings.query import QueryPlan

if TYPE_CHECKING:
    from assay.corpus import Fact, FiscalCalendar
    from assay.systems.filings.facts_route import FactsTable
    from assay.systems.filings.index import FilingsIndex

__all__ = [
    "ABBREVIATIONS",
    "FactsAnswerer",
    "FactsContext",
    "TableFacts",
    "XbrlFacts",
    "facts_context",
]

FALLBACK_COVERAGE = 0.25
"""The extractive fallback of the facts answerer quotes the best passage of an in-scope filing
(the question's company and years) when it covers at least a quarter of the question's content
words (the extractive answerer alone asks for half): declining is for questions whose filings
say nothing close, and the checks, not the answerer, grade what it quotes."""

# ----------------------------------------------------------------------------- sources


class TableFacts:
    """Line items from the corpus' facts table (`assay.corpus.build` writes ``facts.jsonl``)."""

    def __init__(self, table: FactsTable) -> None:
        self.table = table

    def getter(self, ctx: FactsContext) -> Any:
        idx = self.table
        rows = [i for key in ctx.companies for i in idx._by_company.get(key, [])]
        facts = [idx.facts[i] for i in rows]
        index = ctx.index
        scale_of_page: dict[tuple[str, int | None], float] = {}
        for f in facts:
            if f.scale is not None:
                scale_of_page.setdefault((f.doc_id, f.page), f.scale)
        primary_years = {
            index.docs[i].fiscal_year for i in ctx.primary_docs if index.docs[i].fiscal_year
        }

        def get(item: str, year: int) -> Figure | None:
            spec = ITEMS[item]
            best: tuple[tuple[int, ...], Fact] | None = None
            for f in facts:
                if f.fiscal_year != year or not spec.pattern.search(f.line_item.strip()):
                    continue
                per_share = f.unit == "USD per share"
                if (spec.unit == "per_share") != per_share or f.unit in ("percent", "shares"):
                    continue
                pos = index.pos.get(f.chunk_id)
                if pos is None or not ctx.visible[pos]:
                    continue
                d = int(index.doc_of[pos])
                doc = index.docs[d]
                key = (
                    0 if f.statement in spec.statements else 1 if f.statement else 2,
                    0 if d in ctx.primary_docs else 1,
                    0 if doc.fiscal_quarter is None else 1,
                    0 if doc.fiscal_year in primary_years else 1,
                    -(doc.fiscal_year or 0),
                    pos,
                    f.column,
                )
                if best is None or key < best[0]:
                    best = (key, f)
            if best is None:
                return None
            f = best[1]
            scale = f.scale if f.scale is not None else scale_of_page.get((f.doc_id, f.page))
            value = f.value * (scale or 1.0) if spec.unit == "money" else f.value
            return Figure(
                item, year, value, f.line_item, None, f.chunk_id, f.doc_id, f.page, f.statement
            )

        return get

    def by_label(self, ctx: FactsContext, words: set[str], year: int) -> Fact | None:
        """The fact of `year` whose printed line item best covers the question's `words` (at
        least 60% of them; then the most specific label, a primary statement, the question's
        filing, page order): "Analytics segment rev FY23" finds the row "Analytics revenue"."""
        idx = self.table
        index = ctx.index
        best: tuple[tuple[float, ...], Fact] | None = None
        for key in ctx.companies:
            for i in idx._by_company.get(key, []):
                f = idx.facts[i]
                if f.fiscal_year != year or f.unit in ("percent", "shares"):
                    continue
                pos = index.pos.get(f.chunk_id)
                if pos is None or not ctx.visible[pos]:
                    continue
                terms = _terms(f.line_item)
                inter = len(words & terms)
                if not inter or inter / len(words) < 0.6:
                    continue
                d = int(index.doc_of[pos])
                rank = (
                    -inter / len(words),
                    -inter / len(terms),
                    0 if f.statement else 1,
                    0 if d in ctx.primary_docs else 1,
                    0 if index.docs[d].fiscal_quarter is None else 1,
                    float(pos),
                )
                if best is None or rank < best[0]:
                    best = (rank, f)
        return None if best is None else best[1]


@dataclass
class XbrlFacts:
    """SEC company facts (``companyfacts-*.json``), by company key."""

    by_company: dict[str, list[_Obs]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: str | Path) -> XbrlFacts:
        """Every ``*.json`` company-facts file of `folder` (the room's ``xbrl/``)."""
        out: dict[str, list[_Obs]] = {}
        for path in sorted(Path(folder).glob("*.json")):
            data = json_loads(path.read_text(encoding="utf-8"), path)
            name = str(data.get("entityName", ""))
            obs: list[_Obs] = []
            for concepts in (data.get("facts") or {}).values():
                for concept, node in concepts.items():
                    for unit, rows in (node.get("units") or {}).items():
                        for o in rows:
                            obs.append(
                                _Obs(
                                    concept,
                                    str(node.get("label", concept)),
                                    str(node.get("description", "")),
                                    unit,
                                    float(o["val"]),
                                    dt.date.fromisoformat(o["start"]) if o.get("start") else None,
                                    dt.date.fromisoformat(o["end"]),
                                    str(o.get("form", "")),
                                    dt.date.fromisoformat(o["filed"]),
                                )
                            )
            out.setdefault(company_key(name), []).extend(obs)
        return cls(out)

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_company.values())

    def lookup(
        self, ctx: FactsContext, words: set[str], periods: Sequence[tuple[int, int | None]]
    ) -> tuple[_Obs, int, int | None] | None:
        """The observation of the concept that best covers `words`, for the first of `periods`
        (fiscal year, quarter or None) that has one, filed by `as_of` (the latest such)."""
        cal = ctx.calendar
        if cal is None or not words:
            return None
        obs = [o for key in ctx.companies for o in self.by_company.get(key, [])]
        if not obs:
            return None
        concepts: dict[str, set[str]] = {}
        for o in obs:
            if o.concept not in concepts:
                concepts[o.concept] = _terms(f"{o.label} {o.description}")
        scored = []
        for concept, terms in concepts.items():
            inter = len(words & terms)
            if not inter:
                continue
            cover, precision = inter / len(words), inter / len(terms)
            scored.append((cover, precision, concept))
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        if not scored or scored[0][0] < 0.6:
            return None
        concept = scored[0][2]
        for fy, q in periods:
            found: list[_Obs] = []
            for o in obs:
                if o.concept != concept or (ctx.as_of is not None and o.filed > ctx.as_of):
                    continue
                period = _period_of(o, cal)
                if period is None:
                    continue
                if period == (fy, q if q is not None else 4) and (
                    o.start is None or (q is None) == ((o.end - o.start).days > 200)
                ):
                    found.append(o)
            if found:
                return max(found, key=lambda o: (o.filed, o.form)), fy, q
        return None


def _period_of(o: _Obs, cal: FiscalCalendar) -> tuple[int, int] | None:
    if o.start is not None:
        days = (o.end - o.start).days
        if not (75 <= days <= 100 or 350 <= days <= 380):
            return None  # a year-to-date figure: not one period
    return cal.period_ending(o.end)


# ----------------------------------------------------------------------------- the answerer


class FactsAnswerer:
    """Answer numeric questions from structured facts (see the module docs); anything else
    goes to `fallback`."""

    def __init__(
        self,
        *,
        table: FactsTable | None = None,
        xbrl: XbrlFacts | None = None,
        fallback: Answerer | None = None,
    ) -> None:
        self.table = None if table is None else TableFacts(table)
        self.xbrl = xbrl
        self.fallback: Answerer = (
            fallback if fallback is not None else ExtractiveAnswerer(min_coverage=FALLBACK_COVERAGE)
        )

    def identity(self) -> dict[str, Any]:
        return {
            "answerer": "facts",
            "table": 0 if self.table is None else len(self.table.table),
            "xbrl": 0 if self.xbrl is None else len(self.xbrl),
            "fallback": type(self.fallback).__name__,
        }

    def answer(self, plan: QueryPlan, evidence: Sequence[dict[str, Any]]) -> Answer:
        """Without a facts context (`answer_in`), the fallback's answer."""
        return self.fallback.answer(plan, evidence)

    def answer_in(
        self, ctx: FactsContext, plan: QueryPlan, evidence: Sequence[dict[str, Any]]
    ) -> tuple[Answer, dict[str, Any] | None]:
        """The answer and, when computed from facts, how (`{"route", "formula", "figures"}`)."""
        if ctx.companies:
            special = self._kinds(ctx, plan, evidence)
            if special is not None:
                return special
            got = (
                self._xbrl(ctx, plan)
                or self._metric(ctx)
                or self._judgement(ctx)
                or self._label(ctx, plan)
            )
            if got is not None:  # a fact of the metric, company and period asked: full support
                answer, info = got
                return (
                    answer if answer.support is not None else replace(answer, support=1.0)
                ), info
        return self.fallback.answer(plan, evidence), None

    def _kinds(
        self, ctx: FactsContext, plan: QueryPlan, evidence: Sequence[dict[str, Any]]
    ) -> tuple[Answer, dict[str, Any] | None] | None:
        """Conflicts, refusals, the latest period, comparisons (`assay.systems.filings.kinds`),
        in that order; None when the question is none of them."""
        from assay.systems.filings import kinds

        routes: tuple[tuple[str, Any], ...] = (
            ("conflict", lambda: kinds.conflict(self, ctx, plan, evidence)),
            ("unreported", lambda: kinds.unreported(ctx, plan)),
            ("not_applicable", lambda: kinds.not_applicable(self, ctx, plan)),
            ("reserve_build", lambda: kinds.reserve_build(self, ctx, plan)),
            ("latest", lambda: kinds.latest(self, ctx, plan)),
            # a question the formulas read ("what is the FY2019 - FY2021 change in ...") is
            # theirs: they compute what it asks (a change, a CAGR, a margin's change)
            (
                "comparison",
                lambda: (
                    None
                    if parse_metric_question(ctx.query) or parse_judgement(ctx.query)
                    else kinds.comparison(self, ctx, plan)
                ),
            ),
        )
        for route, run in routes:
            got = run()
            if got is not None:
                return got, {"route": route}
        return None

    # -- XBRL ---------------------------------------------------------------------------------

    def _xbrl(self, ctx: FactsContext, plan: QueryPlan) -> tuple[Answer, dict[str, Any]] | None:
        if self.xbrl is None or ctx.calendar is None:
            return None
        scope = " ".join([*(e.text for e in plan.entities), *(p.text for p in plan.periods)])
        words = _terms(ctx.query) - _terms(scope)
        periods: list[tuple[int, int | None]] = []
        cal = ctx.calendar
        for ref in plan.periods:
            if ref.fiscal_year is not None or ref.on_date is not None:
                for fy, q in ref.fiscal_quarters(cal):
                    periods.append((fy, q if ref.quarter is not None else None))
        if not periods:
            return None
        hit = self.xbrl.lookup(ctx, words, list(dict.fromkeys(periods)))
        if hit is None:
            return None
        o, fy, q = hit
        per_share = o.unit.startswith("USD/")
        if o.unit == "USD":
            value = format_value(o.value, "money", scale=1e6 if abs(o.value) >= 1e6 else None,
                                 decimals=_exact_decimals(o.value))  # fmt: skip
        elif per_share:
            value = f"${o.value:,.2f}"
        elif o.unit == "pure" and abs(o.value) < 1:
            value = f"{o.value * 100:.2f}%"
        else:
            value = f"{o.value:,g}"
        period = f"fiscal {fy}" if q is None else f"the {_ORDINAL[q]} quarter of fiscal {fy}"
        if o.start is None:
            period = f"the end of {period}"
        cite = _cite_xbrl(ctx, o)
        name = ctx.company_name()
        text = f"{name} reported {o.description or o.label} of {value} for {period}"
        if cite:
            text += f" [{cite}]"
        info = {"route": "xbrl", "concept": o.concept, "filed": o.filed.isoformat(),
                "form": o.form, "value": o.value}  # fmt: skip
        return Answer(text + ".", [cite] if cite else [], f"FY{fy}" + (f" Q{q}" if q else "")), info

    # -- statement facts and formulas ----------------------------------------------------------

    def _metric(self, ctx: FactsContext) -> tuple[Answer, dict[str, Any]] | None:
        if self.table is None:
            return None
        q = parse_metric_question(ctx.query)
        if q is None or q.quarter is not None:
            return None
        res = evaluate(q, self.table.getter(ctx))
        if res is None:
            return None
        return _metric_answer(ctx, res)

    def _judgement(self, ctx: FactsContext) -> tuple[Answer, dict[str, Any]] | None:
        """A yes/no question that turns on one metric: the verdict and the values it rests on."""
        if self.table is None:
            return None
        jq = parse_judgement(ctx.query)
        if jq is None:
            return None
        res = judge_metric(jq, self.table.getter(ctx))
        if res is None:
            return None
        unit = jq.metric.target_unit
        shown = ", ".join(f"{format_value(v, unit)} in FY{y}" for y, v in res.values)
        rule = ""
        if jq.kind == "healthy":
            rule = (
                f" ({'at or above' if res.verdict else 'below'} {HEALTHY_RATIO:.1f}, the usual "
                "threshold)"
                if unit == "ratio"
                else ""
            )
        cites = list(dict.fromkeys(f.chunk_id for f in res.figures if f.chunk_id))
        text = (
            f"{'Yes' if res.verdict else 'No'}. {ctx.company_name()}'s {res.label} was {shown}"
            f"{rule}"
        )
        if cites:
            text += " [" + "; ".join(cites) + "]"
        info = {"route": "judgement", "kind": jq.kind, "metric": jq.metric.target,
                "verdict": res.verdict, "values": [list(v) for v in res.values]}  # fmt: skip
        return Answer(text + ".", cites, f"FY{jq.metric.years[-1]}"), info

    def _label(self, ctx: FactsContext, plan: QueryPlan) -> tuple[Answer, dict[str, Any]] | None:
        """A short figure question answered by the table row whose label it names."""
        if self.table is None or not _figure_request(ctx.query):
            return None
        scope = " ".join([*(e.text for e in plan.entities), *(p.text for p in plan.periods)])
        words = _terms(ctx.query) - _terms(scope)
        cal = ctx.calendar
        years = [
            fy
            for ref in plan.periods
            if cal is not None and ref.fiscal_year is not None and ref.quarter is None
            for fy, _ in ref.fiscal_quarters(cal)
        ]
        if not words or len(set(years)) != 1:
            return None
        f = self.table.by_label(ctx, words, years[0])
        if f is None:
            return None
        scale = f.scale or 1.0
        if f.unit == "USD per share":
            value = f"${f.value:,.2f}"
        else:
            amount = f.value * scale
            value = format_value(amount, "money", decimals=_exact_decimals(amount))
        text = (
            f"{ctx.company_name()} reported {f.line_item} of {value} for fiscal {f.fiscal_year} "
            f"[{f.chunk_id}]."
        )
        info = {"route": "table_row", "line_item": f.line_item, "value": f.value * scale,
                "chunk_id": f.chunk_id, "page": f.page}  # fmt: skip
        return Answer(text, [f.chunk_id], f"FY{f.fiscal_year}"), info


_FIGURE_REQUEST = re.compile(r"^\s*(?:what|how\s+much|how\s+many)\b", re.I)
_NOT_FIGURE = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|has|have|can|could|will|would|should|which|who|why)\b"
    r"|\b(?:describe|explain|discuss|list|summari[sz]e|why|whether)\b",
    re.I,
)


def _figure_request(question: str) -> bool:
    """A short request for one figure ("KEST FY23 Payments segment rev", "what was X's ..."),
    not a yes/no, which/who or explanation question, nor a long prompt."""
    if _NOT_FIGURE.search(question) or len(question.split()) > 16:
        return False
    return "?" not in question or bool(_FIGURE_REQUEST.search(question))


_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def _metric_answer(ctx: FactsContext, res: MetricResult) -> tuple[Answer, dict[str, Any]]:
    q = res.query
    ratio_as_percent = q.percent and res.unit == "ratio" and q.target in ("roa", "roe")
    value = format_value(
        res.value, res.unit, scale=q.scale, decimals=q.decimals, percent_ratio=ratio_as_percent
    )
    years = q.years
    if q.shape in ("change", "cagr"):
        period = f"from FY{years[0]} to FY{years[1]}"
    elif q.shape == "average":
        period = f"over FY{years[0]} - FY{years[-1]}"
    else:
        period = f"in FY{years[0]}"
    name = ctx.company_name()
    cites = list(dict.fromkeys(f.chunk_id for f in res.figures if f.chunk_id))
    used = "; ".join(
        f"{f.label} FY{f.fiscal_year}: {_plain(f.value, ITEMS[f.item].unit)}"
        f" ({f.statement or 'table'}, p. {f.page})"
        for f in res.figures
    )
    text = f"{name}'s {res.label} {period} is {value}"
    if cites:
        text += " [" + "; ".join(cites) + "]"
    text += f". Calculation: {res.formula}, from {used}."
    info = {
        "route": "statements",
        "formula": q.target if q.is_formula else None,
        "item": None if q.is_formula else q.target,
        "shape": q.shape,
        "value": res.value,
        "figures": [
            {
                "item": f.item,
                "fiscal_year": f.fiscal_year,
                "value": f.value,
                "chunk_id": f.chunk_id,
                "page": f.page,
                "statement": f.statement,
            }
            for f in res.figures
        ],
    }
    return Answer(text, cites, f"FY{years[-1]}"), info


def _plain(value: float, unit: str) -> str:
    if unit == "money":
        return f"{value / 1e6:,.1f} million" if abs(value) >= 1e6 else f"{value:,.2f}"
    return f"{value:,.2f}"


def facts_context(
    index: FilingsIndex,
    plan: QueryPlan,
    query: str,
    as_of: dt.date | None,
    *,
    primary: Iterable[int] | None = None,
) -> FactsContext:
    """The context of one question (see `FactsContext`)."""
    return FactsContext(
        query=query,
        as_of=as_of,
        index=index,
        visible=index.visible_mask(as_of),
        companies=tuple(dict.fromkeys(plan.entity_keys)),
        primary_docs=frozenset(primary or ()),
    )
