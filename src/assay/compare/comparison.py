"""The result of comparing two runs: per row (a category, or overall) and per series, both
runs' values, the paired delta with its interval, the entries that moved, the tests and the
corrected p-values (`MetricComparison`, `CategoryComparison`, `Comparison`). What builds them is
`assay.compare.paired`. Each reads as a table, Markdown or JSON; `too_few_note` says when a row
is too small for any result to be significant after the corrections."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.compare.render import (
    P_TESTS,
    _fmt_delta,
    _fmt_p,
    _fresh_line,
    cluster_line,
    counts_line,
    delta_ci_words,
    zero_key,
)
from assay.report import Interval, ReportMixin, Tabular
from assay.stats.clusters import ClusterSummary
from assay.stats.multiple import ledger_factor

if TYPE_CHECKING:
    from assay.stats.paired import TestResult

__all__ = [
    "CategoryComparison",
    "Comparison",
    "MetricComparison",
    "min_entries_for_conclusion",
    "too_few_note",
]


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
    clusters: int | None = None  # how many clusters the row's entries fall in (None: unclustered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "n": self.n,
            **({} if self.clusters is None else {"clusters": self.clusters}),
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
        factor = 1 if self.ledger_t is None else ledger_factor(self.ledger_t)
        for row in self.rows:
            row.note = too_few_note(row.n, self.alpha, self.family, factor, row.clusters)
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

    def header_lines(self, shown: Sequence[str] | None = None) -> list[str]:
        """The lines under the table; ``shown``: the metrics whose deltas the table prints (all
        by default), for the key to an end shown as ``>0``/``<0``."""
        cis = delta_ci_words(
            {
                "ci_method": self.ci_method,
                "binary_ci": self.binary_ci,
                "n_resamples": self.n_resamples,
                "seed": self.seed,
                "confidence": self.confidence,
                "clustering": None if self.clustering is None else self.clustering.to_dict(),
            }
        )
        lines = [] if self.clustering is None else [cluster_line(self.clustering)]
        tests = (
            f"{cis}; p: {P_TESTS}"
            if self.clustering is None
            else f"{cis}; p: that cluster-level test"
        )
        lines += [
            f"dataset {self.dataset_version or '-'} · baseline run {self.base_run or '-'} · "
            f"candidate run {self.cand_run or '-'}" + (f" · k={self.k}" if self.k else ""),
            f"{tests}; Holm across categories and overall x metrics.",
        ]
        kinds = {mc.kind for row in self.rows for mc in row.metrics.values()}
        # an interval asked for by name (Newcombe, the bootstrap) is not the p column's test
        others: list[str] = []
        if "binary" in kinds and self.binary_ci != "tango":
            others.append("Newcombe" if self.binary_ci == "newcombe" else "paired bootstrap")
        if "graded" in kinds and self.ci_method != "score":
            others.append("paired bootstrap")
        others = list(dict.fromkeys(others))
        if self.clustering is None and others:
            lines.append(
                f"Two tests per cell: the {' and '.join(others)} CI"
                f"{'s are' if len(others) > 1 else ' is'} not the p column's test, so "
                f"{'they' if len(others) > 1 else 'it'} can "
                f"exclude 0 where p >= {1 - self.confidence:.2g} or hold 0 where p < "
                f"{1 - self.confidence:.2g}; the gate uses p (--binary-ci tango and --ci-method "
                "score give one verdict per cell)."
            )
        elif self.clustering is None and kinds & {"binary", "graded"}:
            lines.append(
                f"One verdict per cell: a delta's CI excludes 0 exactly when its p < "
                f"{1 - self.confidence:.2g} (the p column's test decides the CI's end at 0; the "
                "CI's far end is the score interval's, JSON tests.score)."
            )
        lines += zero_key(
            mc.delta
            for row in self.rows
            for m, mc in row.metrics.items()
            if shown is None or m in shown
        )
        lines.append(
            f"What each column controls: a delta's CI is per cell (its own {self.confidence:.0%}, not corrected "
            "for the other cells); p is the cell's own test; p Holm is Holm-corrected across "
            "the comparison's family"
            + (", p ledger also for the dataset's earlier comparisons" if self.ledger_t else "")
            + "; the gate judges significance on the corrected p."
        )
        overall = self.overall.metrics
        counts = [m for m, mc in overall.items() if mc.kind == "count"]
        if counts:
            lines.append(counts_line(counts))
        worse_down = [m for m, mc in overall.items() if not mc.higher_is_better]
        if worse_down:
            lines.append(f"Lower is better on {', '.join(worse_down)}: +/- count falls/rises.")
        for m, mc in overall.items():
            if mc.abstained:
                lines.append(
                    f"{m}: {_decided(mc)} ({len(mc.abstained)} entries left out: abstained in "
                    f"either run); {mc.n} pairs tested."
                )
        if self.ledger_t is not None:
            again = (
                ", seen again (the same runs, metrics, k and grouping are one comparison, "
                "counted once)"
                if self.ledger_repeat
                else ""
            )
            lines.append(
                f"Comparison #{self.ledger_t} recorded against this dataset "
                f"({self.ledger_t - 1} before it){again}: ledger-corrected p = min(1, p_holm x "
                f"{ledger_factor(self.ledger_t)}) (alpha-spending, docs/statistics.md)."
            )
        if self.fresh is not None:
            lines.append(_fresh_line(self.fresh))
        lines.extend(self.notes)
        return lines

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

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        header = [self.by, "n", "metric", "base", "cand", "delta [CI]", "+/-", "p", "p Holm"]
        if self.ledger_t is not None:
            header.append("p ledger")
        header.append("note")
        body: list[list[str]] = []
        for row in self.rows:
            for i, (m, mc) in enumerate(row.metrics.items()):
                d = mc.delta
                cells = [
                    row.category if i == 0 else "",
                    str(row.n) if i == 0 else "",
                    m,
                    f"{mc.base:.3f}",
                    f"{mc.cand:.3f}",
                    _fmt_delta(d),
                    f"+{len(mc.up)} -{len(mc.down)}",
                    _fmt_p(mc.p),
                    _fmt_p(mc.p_holm),
                ]
                if self.ledger_t is not None:
                    cells.append(_fmt_p(mc.p_ledger))
                note = [row.note] if i == 0 and row.note else []
                if mc.abstained is not None:  # a check: how many it decided leads its row
                    note.insert(0, _decided(mc))
                if mc.abstained:
                    note.append(f"{len(mc.abstained)} abstained")
                cells.append("; ".join(note))
                body.append(cells)
        return header, body

    def tabular(self) -> Tabular:
        header, body = self._cells()
        return Tabular(
            "Paired comparison: candidate vs baseline", header, body, self.header_lines()
        )

    def to_markdown(self, *, max_ids: int = 20) -> str:
        header, body = self._cells()
        out = ["| " + " | ".join(header) + " |"]
        out.append(
            "|"
            + "|".join("---" if h in (self.by, "metric", "note") else "---:" for h in header)
            + "|"
        )
        out.extend("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body)
        out.append("")
        out.append("`+/-`: entries fixed/broken (binary) or improved/worsened (graded).")
        out.append("")
        out.extend(f"{line}  " for line in self.header_lines())
        flips = _flip_lines(self, max_ids=max_ids)
        if flips:
            out.append("")
            out.append("<details><summary>Entries that flipped</summary>")
            out.append("")
            out.extend(flips)
            out.append("")
            out.append("</details>")
        return "\n".join(out) + "\n"

    def to_table(self) -> Any:
        """A rich Table (print with rich.console.Console)."""
        from rich.table import Table

        header, body = self._cells()
        t = Table(title="Paired comparison: candidate vs baseline", title_justify="left")
        for h in header:
            t.add_column(h, justify="left" if h in ("category", "metric", "note") else "right")
        n_metrics = len(self.metrics)
        for i, r in enumerate(body):
            last_of_row = (i + 1) % n_metrics == 0
            t.add_row(
                *r, end_section=last_of_row, style="bold" if i >= len(body) - n_metrics else None
            )
        flips = _flip_lines(self, max_ids=20)
        caption = self.header_lines()
        if flips:
            caption += ["Entries that flipped:", *flips]
        t.caption = "\n".join(caption)
        t.caption_justify = "left"
        return t


def min_entries_for_conclusion(alpha: float, family: int = 1) -> int:
    """Smallest n whose most extreme paired outcome (all n flip one way) can reach significance.

    With n discordant pairs all in one direction the exact McNemar p is ``2 * 0.5**n``; below
    this n no result, however lopsided, is significant at ``alpha / family`` (Bonferroni bound
    on the first Holm step).
    """
    return max(1, math.ceil(math.log2(2.0 * family / alpha)))


def too_few_note(
    size: int, alpha: float, family: int = 1, factor: int = 1, clusters: int | None = None
) -> str:
    """The note of a row whose best possible result cannot be significant after the correction
    ('' when it can): with ``size`` entries all moving one way a paired two-sided test gives
    ``p = 2 * 0.5**size``, and Holm over ``family`` tests (its first step) and the ledger's
    ``factor`` multiply it. Clustered (``clusters``: the row's), the test is over clusters and
    its best is ``2 * 0.5**clusters``. (Holm could still pass it were every other test of the
    family more significant; the note speaks of the row as it stands among the others.)"""
    draws = size if clusters is None else clusters
    if size < 1 or draws < 1:
        return ""
    best = min(1.0, math.ldexp(1.0, 1 - draws))  # mcnemar_exact(draws, 0): 2 * 0.5**draws, exact
    if best * family * factor <= alpha:
        return ""
    how = f"{family} tests (Holm)" if family > 1 else "one test"
    if factor > 1:
        how += f" and the ledger's factor {factor}"
    if clusters == 1:
        one = row_size(size, 1)
        return f"too few clusters to conclude: {one} is one draw (one cluster: no interval)"
    if clusters is not None:
        return (
            f"too few clusters to conclude: {row_size(size, clusters)} is too small, even all "
            f"{draws} moving one way give p = {best:.3g}, above alpha {alpha:g} once "
            f"corrected for {how}"
        )
    return (
        f"too few entries to conclude: even {size} of {size} moving one way gives "
        f"p = {best:.3g}, above alpha {alpha:g} once corrected for {how}"
    )


def row_size(n: int, clusters: int | None) -> str:
    """``n=12``, or clustered ``n=12 in 3 clusters`` (the clustered tests' draws)."""
    if clusters is None:
        return f"n={n}"
    return f"n={n} in {'one cluster' if clusters == 1 else f'{clusters} clusters'}"


def _flip_lines(cmp: Comparison, *, max_ids: int) -> list[str]:
    lines: list[str] = []
    for row in cmp.categories.values():
        for m, mc in row.metrics.items():
            if mc.kind == "graded" or not (mc.up or mc.down):
                continue
            labels = ("fixed", "broken") if mc.binary else ("improved", "worsened")
            for label, ids in zip(labels, (mc.up, mc.down), strict=True):
                if ids:
                    shown = ", ".join(ids[:max_ids]) + (
                        f" ... (+{len(ids) - max_ids})" if len(ids) > max_ids else ""
                    )
                    lines.append(f"- {row.category} {m} {label} ({len(ids)}): {shown}")
    return lines


def _decided(mc: MetricComparison) -> str:
    """ "decided n of N": the pairs a check decided in both runs, of the entries it was run on."""
    left = len(mc.abstained or ())
    return f"decided {mc.n} of {mc.n + left}"
