"""The facts route: a question that names a line item and a period is looked up in the facts table.

`FactsTable` holds the corpus' ``facts.jsonl`` (written by `assay corpus build`, see
`assay.corpus.facts`). `FactsTable.lookup(plan, index, mask, years)` returns, for each metric
of the query plan that has a line-item pattern here (`LINE_ITEMS`), and each fiscal year the
question names, the best fact among the filings the filters allow:

1. on a primary statement page of the statement the metric lives on, before any other table
   (the statement is where an analyst reads it; a summary table can round or restate);
2. from the filing of that fiscal year before a later filing's comparative column;
3. then in the order of the corpus (page order).

The filings pipeline (`RetrievalConfig.facts`) ranks the pages of those facts first and hands
each figure, with its unit, scale, period and source chunk, to the answerer as evidence
(`Fact.figure()`: "$1,577 million").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from assay._io import iter_jsonl
from assay.corpus import Fact
from assay.systems.filings.entities import company_key
from assay.systems.filings.query import METRICS, QueryPlan

if TYPE_CHECKING:
    from assay.systems.filings.index import FilingsIndex

__all__ = ["LINE_ITEMS", "FactHit", "FactsTable"]

_P = r"(?:\s*\(loss\))?"
#: metric (of `assay.systems.filings.query.METRICS`) -> pattern over a row's line item
LINE_ITEMS: Mapping[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "capex": r"^(?:purchases?|additions?|payments?\s+for|acquisitions?|expenditures?)\s+(?:of|to|for)\s+"
        r"(?:property|premises|fixed\s+assets|capital\s+assets)|^capital\s+expenditures?$",
        "revenue": r"^(?:total\s+)?(?:net\s+)?(?:revenues?|sales)(?:,\s*net)?$"
        r"|^(?:total\s+)?net\s+(?:revenues?|sales)$|^total\s+revenues?(?:\s+and\s+other\s+income)?$",
        "net_income": rf"^net\s+(?:income|earnings){_P}(?:\s+attributable\s+to\s+[\w\s.,&'’]+)?$",
        "operating_income": rf"^(?:total\s+)?operating\s+(?:income|profit){_P}$|^income{_P}\s+from\s+operations$",
        "cogs": r"^(?:total\s+)?cost\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold)$",
        "gross_margin": r"^gross\s+(?:profit|margin)$",
        "total_assets": r"^total\s+assets$",
        "ppe": r"^(?:property|premises),?\s+(?:plant\s+)?(?:and|&)\s+equipment,?\s*(?:[-—–]\s*)?net$"
        r"|^net\s+property(?:,\s*plant)?\s+and\s+equipment$",
        "inventory": r"^(?:merchandise\s+)?inventor(?:y|ies)(?:,\s*net)?$",
        "receivables": r"^(?:trade\s+)?(?:accounts\s+)?receivables?(?:,\s*net|\s+net)?$",
        "payables": r"^(?:trade\s+)?accounts\s+payable$",
        "operating_cash_flow": r"^net\s+cash\s+(?:provided\s+by|from|generated\s+(?:by|from))\s+"
        r"(?:\(used\s+(?:in|for)\)\s+)?operating\s+activities$",
        "depreciation": r"^depreciation(?:,?\s+(?:depletion\s+)?and\s+amortization)?$",
        "dividends": r"^(?:cash\s+)?dividends\s+paid|^dividends\s+paid",
        "interest_expense": r"^interest\s+expense(?:,\s*net)?$",
        "current": r"^total\s+current\s+(?:assets|liabilities)$",
        "equity_total": r"^total\s+(?:share|stock)holders['’]?\s+equity$|^total\s+equity$",
        "eps": r"diluted",
        "debt": r"^long[-\s]term\s+debt(?:,\s*net)?$",
    }.items()
}
_EPS_UNIT = "USD per share"


@dataclass(frozen=True, slots=True)
class FactHit:
    """A fact chosen for a query: which metric and fiscal year it answers."""

    metric: str
    fiscal_year: int
    fact: Fact

    def to_dict(self) -> dict[str, Any]:
        f = self.fact
        return {
            "metric": self.metric, "fiscal_year": self.fiscal_year, "line_item": f.line_item,
            "figure": f.figure(), "value": f.value, "unit": f.unit, "scale": f.scale,
            "statement": f.statement, "doc_id": f.doc_id, "page": f.page, "chunk_id": f.chunk_id,
        }  # fmt: skip

    def evidence_text(self) -> str:
        f = self.fact
        where = f"{f.statement} statement" if f.statement else "table"
        return f"{f.line_item}, fiscal {self.fiscal_year}: {f.figure()} ({where}, page {f.page})"


class FactsTable:
    """Facts by company key, read once."""

    def __init__(self, facts: Iterable[Fact]) -> None:
        self.facts = list(facts)
        self._by_company: dict[str, list[int]] = {}
        for i, f in enumerate(self.facts):
            self._by_company.setdefault(company_key(f.company or ""), []).append(i)

    def __len__(self) -> int:
        return len(self.facts)

    @classmethod
    def load(cls, corpus_dir: str | Path) -> FactsTable | None:
        """The corpus' ``facts.jsonl``, or None when the corpus has none (built before it)."""
        path = Path(corpus_dir) / "facts.jsonl"
        if not path.exists():
            return None
        return cls(Fact(**row) for _, row in iter_jsonl(path))

    def lookup(
        self,
        plan: QueryPlan,
        index: FilingsIndex,
        mask: npt.NDArray[np.bool_],
        years: Iterable[int],
    ) -> list[FactHit]:
        """The best fact per (metric, fiscal year) the plan asks for (see the module docs)."""
        metrics = [m for m in plan.metrics if m in LINE_ITEMS]
        wanted = sorted(set(years), reverse=True)
        if not metrics or not wanted or not plan.entities:
            return []
        statements = {m.name: m.statements for m in METRICS}
        rows = [i for key in dict.fromkeys(plan.entity_keys) for i in self._by_company.get(key, [])]
        hits: list[FactHit] = []
        for metric in metrics:
            pattern = LINE_ITEMS[metric]
            home = statements.get(metric, ())
            for year in wanted:
                best: tuple[tuple[int, int, int], Fact] | None = None
                for i in rows:
                    f = self.facts[i]
                    if f.fiscal_year != year or not pattern.search(f.line_item):
                        continue
                    if (metric == "eps") != (f.unit == _EPS_UNIT):
                        continue
                    pos = index.pos.get(f.chunk_id)
                    if pos is None or not mask[pos]:
                        continue
                    doc = index.docs[int(index.doc_of[pos])]
                    key = (
                        0 if f.statement is not None and f.statement in home else 1,
                        0 if doc.fiscal_year == year else 1,
                        pos,
                    )
                    if best is None or key < best[0]:
                        best = (key, f)
                if best is not None:
                    hits.append(FactHit(metric, year, best[1]))
        return hits
