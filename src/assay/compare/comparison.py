"""The result of comparing two runs: per row (a category, or overall) and per series, both
runs' values, the paired delta with its interval, the entries that moved, the tests and the
corrected p-values (`MetricComparison`, `CategoryComparison`, `Comparison`). What builds them is
`assay.compare.paired`; how they read, `assay.compare.render`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.compare import render
from assay.report import Interval, ReportMixin, Tabular
from assay.stats.clusters import ClusterSummary
from assay.stats.multiple import ledger_factor

if TYPE_CHECKING:
    from assay.stats.paired import TestResult

__all__ = ["CategoryComparison", "Comparison", "MetricComparison"]


@dataclass
class MetricComparison:
    """One series in one row: both runs, the paired delta with its CI, flips and tests.

    ``up`` holds the entries that moved the better way (fixed, for a binary series), ``down``
    those that moved the worse way (broken); for a series where lower is better
    (``higher_is_better`` False: an error rate, a count of leaks) that is a fall and a rise.
    ``n`` counts the pairs tested; ``abstained`` the entries left out because either run
    abstained (None for a retrieval metric, which never abstains).
    """

    metric: str
    binary: bool
    n: int
    base: float
    cand: float
    delta: Interval
    up: tuple[str, ...]
    down: tuple[str, ...]
    tests: dict[str, TestResult]
    p: float
    p_holm: float = float("nan")
    p_ledger: float | None = None
    kind: str = ""
    higher_is_better: bool = True
    abstained: tuple[str, ...] | None = None
    # a count: the candidate's own total over every entry it did not abstain on (paired or
    # not: a harm is never dropped with its pair), how many entries that is, and which are > 0
    cand_total: float | None = None
    cand_decided: int = 0
    cand_positive: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.kind:
            self.kind = "binary" if self.binary else "graded"

    @property
    def fixed(self) -> tuple[str, ...]:
        return self.up

    @property
    def broken(self) -> tuple[str, ...]:
        return self.down

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "metric": self.metric,
            "kind": self.kind,
            "n": self.n,
            "base": _num(self.base),
            "cand": _num(self.cand),
            "delta": self.delta.to_dict(),
        }
        if self.binary:
            d |= {
                "fixed": len(self.up),
                "broken": len(self.down),
                "fixed_ids": list(self.up),
                "broken_ids": list(self.down),
            }
        else:
            d |= {
                "improved": len(self.up),
                "worsened": len(self.down),
                "improved_ids": list(self.up),
                "worsened_ids": list(self.down),
            }
        if not self.higher_is_better:
            d["higher_is_better"] = False
        if self.cand_total is not None:
            d["cand_total"] = _num(self.cand_total)
            d["cand_decided"] = self.cand_decided
            d["cand_positive_ids"] = list(self.cand_positive)
        if self.abstained is not None:
            d["abstained"] = len(self.abstained)
            d["abstained_ids"] = list(self.abstained)
        d["tests"] = {k: v.to_dict() for k, v in self.tests.items()}
        d["p"] = _num(self.p)
        d["p_holm"] = _num(self.p_holm)
        d["p_ledger"] = None if self.p_ledger is None else _num(self.p_ledger)
        return d


def _num(x: float | None) -> float | None:
    """A JSON number at full precision (tables round for people); NaN and infinities are None."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


@dataclass
class CategoryComparison:
    category: str
    n: int
    metrics: dict[str, MetricComparison]
    small_n: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "n": self.n,
            "small_n": self.small_n,
            "note": self.note,
            "metrics": {m: mc.to_dict() for m, mc in self.metrics.items()},
        }


@dataclass
class Comparison(ReportMixin):
    """Two runs compared per category and overall. Format with to_table/to_json/to_markdown,
    or take it into a notebook with to_pandas."""

    metrics: list[str]
    categories: dict[str, CategoryComparison]
    overall: CategoryComparison
    seed: int
    n_resamples: int
    n_permutations: int
    confidence: float
    ci_method: str
    alpha: float
    k: int | None = None
    binary_ci: str = "tango"
    dataset_version: str | None = None
    dataset_path: str | None = None
    base_run: str | None = None
    cand_run: str | None = None
    index_version: str | None = None
    by: str = "category"  # what the rows group by (category, format, messiness, ...)
    ledger_t: int | None = None
    ledger_repeat: bool = False
    fresh: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    family: int = 0  # how many tests Holm adjusted together (0: not known)
    # each run's chunk table and how it is bound (`assay.runs.corpus.RunTable.to_dict`)
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the label tiers the entries were selected by (`assay.dataset.tiers.TierReport.to_dict`)
    tiers: dict[str, Any] | None = None
    # how entries were clustered (`assay.stats.clusters.ClusterSummary`); None: independent
    clustering: ClusterSummary | None = None

    @property
    def rows(self) -> list[CategoryComparison]:
        return [*self.categories.values(), self.overall]

    def mark_too_few(self, family: int | None = None) -> None:
        """Re-mark the rows whose best possible result cannot reach significance after Holm
        over ``family`` tests (default: this comparison's) and, once recorded, the ledger."""
        if family is not None:
            self.family = family
        if not self.family:
            return
        from assay.compare.paired import too_few_note  # it builds these objects

        factor = 1 if self.ledger_t is None else ledger_factor(self.ledger_t)
        for row in self.rows:
            row.note = too_few_note(row.n, self.alpha, self.family, factor)
            row.small_n = bool(row.note)

    def apply_ledger(self, t: int, *, repeat: bool = False) -> None:
        """Set the comparison's number in the dataset's history and the corrected p-values.

        ``repeat``: the ledger already held this comparison under number ``t``."""
        factor = ledger_factor(t)
        self.ledger_t = t
        self.ledger_repeat = repeat
        for row in self.rows:
            for mc in row.metrics.values():
                mc.p_ledger = min(1.0, mc.p_holm * factor) if not math.isnan(mc.p_holm) else None
        self.mark_too_few()

    def pvalues(self) -> dict[str, dict[str, dict[str, float | None]]]:
        """{category: {metric: {test: p, "holm": p, "ledger": p}}} -- what the ledger stores."""
        out: dict[str, dict[str, dict[str, float | None]]] = {}
        for row in self.rows:
            out[row.category] = {
                m: {name: _num(r.pvalue) for name, r in mc.tests.items()}
                | {"holm": _num(mc.p_holm), "ledger": mc.p_ledger}
                for m, mc in row.metrics.items()
            }
        return out

    def header_lines(self) -> list[str]:
        return render.header_lines(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.comparison/1",
            "k": self.k,
            "metrics": self.metrics,
            "dataset_version": self.dataset_version,
            "index_version": self.index_version,
            "base_run": self.base_run,
            "cand_run": self.cand_run,
            "seed": self.seed,
            "n_resamples": self.n_resamples,
            "n_permutations": self.n_permutations,
            "confidence": self.confidence,
            "ci_method": self.ci_method,
            "binary_ci": self.binary_ci,
            "alpha": self.alpha,
            "ledger": None
            if self.ledger_t is None
            else {
                "t": self.ledger_t,
                "previous_comparisons": self.ledger_t - 1,
                "repeat": self.ledger_repeat,
                "factor": ledger_factor(self.ledger_t),
                "method": "alpha-spending, gamma_t = 1/(t(t+1))",
            },
            "fresh": self.fresh,
            "tiers": self.tiers,
            "clustering": None if self.clustering is None else self.clustering.to_dict(),
            "categories": {c: r.to_dict() for c, r in self.categories.items()},
            "overall": self.overall.to_dict(),
            "notes": self.notes,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def tabular(self) -> Tabular:
        return render.tabular(self)

    def to_markdown(self, *, max_ids: int = 20) -> str:
        return render.to_markdown(self, max_ids=max_ids)

    def to_table(self) -> Any:
        """A rich Table (print with rich.console.Console)."""
        return render.to_table(self)
