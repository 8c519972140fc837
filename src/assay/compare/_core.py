"""Compare two runs over the same entries: per category, which entries flipped and is it noise.

For every category and overall, and for each compared metric:

* both runs' rates and the paired difference ``candidate - baseline`` with its interval: on
  binary metrics Tango's score interval for a paired difference of proportions (it covers at small
  n and rare flips, and is never a single point when the truth is uncertain; ``binary_ci``
  chooses ``"newcombe"`` or the old ``"bootstrap"``), on graded metrics the same score interval
  extended to differences in [-1, 1] (`assay.stats.bounded`; ``ci_method`` ``"percentile"`` or
  ``"bca"`` for a paired bootstrap instead). A score interval inverts a score test of the mean
  difference, reported as ``tests["score"]``: the interval excludes 0 exactly when that p is
  below ``1 - confidence``, and a cell where it and the primary test disagree says so;
* on binary metrics (``complete@k``, ``hit@k``; binary-ness is declared by the metric's family in
  `assay.metrics`): the ids of the entries ``fixed`` (0 -> 1) and ``broken``
  (1 -> 0) and the exact McNemar p-value on those discordant pairs;
* on graded metrics (``recall@k``, ``ndcg@k``, ``mrr``, ``precision@k``): the ids that moved up or down, the
  Wilcoxon signed-rank p-value over the entries that moved, and a paired sign-flip permutation
  p-value as a second opinion;
* the Holm-adjusted p-value. The family is every row (each category and overall) x every
  compared metric, the primary test of each (McNemar on binary, Wilcoxon on graded), so the
  comparison as a whole spends alpha once. Sign-flip p-values are reported, not adjusted.
* when the comparison is recorded in the dataset's ledger (`record_in_ledger`), its number ``t``
  in the dataset's history and the ledger-corrected p-value ``min(1, p_holm * t * (t + 1))``.
  The same comparison (dataset version and hash, the two runs, metrics, k, level and grouping)
  recorded again keeps its number: rendering it twice, or re-running it, is not a new look at
  the data; the same runs grouped another way (``by``) are.

Randomness: one integer ``seed``. Every (row, metric, purpose) draws from its own stream derived
from the seed and its name, so a category's interval does not change when another category is
added, and the same seed gives bit-identical output (across machines, for the same numpy version).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._io import gc_paused
from assay.compare._reading import (
    Reading,
    RunsOptions,
    check_corpora,
    compare_in_use,
    open_inputs,
    run_tables,
    same_room,
)
from assay.compare.clustering import clustering_for
from assay.compare.series import (
    RunSeries,
    Series,
    SeriesInfo,
    describe,
    series_from_scores,
)
from assay.errors import DataError, Problem
from assay.metrics import DEFAULT_PAIR, parse, parse_list
from assay.report import Interval, ReportMixin, Tabular, undefined
from assay.stats.bootstrap import group_generator
from assay.stats.bounded import GradedMethod, score_mean_interval, score_mean_test
from assay.stats.clusters import (
    EXACT_CLUSTERS,
    Clustering,
    ClusterSummary,
    clustered_delta,
    zero_end_follows,
)
from assay.stats.counts import sign_test_worse
from assay.stats.multiple import holm_family, ledger_factor
from assay.stats.paired import (
    DECIMALS,
    TestResult,
    mcnemar_exact,
    paired_bootstrap_diff,
    sign_flip_permutation,
    wilcoxon_moved,
)
from assay.stats.proportion import newcombe_paired, tango_paired

if TYPE_CHECKING:
    from assay.corpus.chunks import ChunkTable
    from assay.dataset.fresh import FreshSession
    from assay.dataset.io import Dataset
    from assay.runs import Run
    from assay.runs.corpus import RunTable
    from assay.score.retrieval import RetrievalScores

__all__ = [
    "CategoryComparison",
    "Comparison",
    "MetricComparison",
    "compare_arrays",
    "compare_files",
    "compare_runs",
    "compare_scores",
    "compare_series",
    "delta_ci_words",
    "is_binary_metric",
    "min_entries_for_conclusion",
    "record_in_ledger",
    "too_few_note",
]

OVERALL = "overall"
DEFAULT_METRICS = DEFAULT_PAIR
"""What a comparison compares when no metrics are named (each at the comparison's k): the one
default pair, `assay.metrics.DEFAULT_PAIR`."""

BINARY_CI = ("tango", "newcombe", "bootstrap")
MIN_MOVED = 10
_TEST_NAMES = {
    "mcnemar_exact": "exact McNemar",
    "clustered_mcnemar": "the clustered McNemar",
    "cluster_sign_flip": "the cluster sign-flip",
    "wilcoxon": "Wilcoxon",
    "sign_test_worse": "the sign test",
}
"""Below this many moved entries a graded delta's interval says it rests on the bounds."""


def is_binary_metric(name: str) -> bool:
    """Whether the registered metric ``name`` is binary (0/1 per entry: McNemar on the flips) or
    graded (Wilcoxon over the entries that moved). Unknown names raise `MetricError`."""
    return parse(name, k=1).binary


def min_entries_for_conclusion(alpha: float, family: int = 1) -> int:
    """Smallest n whose most extreme paired outcome (all n flip one way) can reach significance.

    With n discordant pairs all in one direction the exact McNemar p is ``2 * 0.5**n``; below
    this n no result, however lopsided, is significant at ``alpha / family`` (Bonferroni bound
    on the first Holm step).
    """
    return max(1, math.ceil(math.log2(2.0 * family / alpha)))


def too_few_note(size: int, alpha: float, family: int = 1, factor: int = 1) -> str:
    """The note of a row whose best possible result cannot be significant after the correction
    ('' when it can): with ``size`` entries all moving one way a paired two-sided test gives
    ``p = 2 * 0.5**size``, and Holm over ``family`` tests (its first step) and the ledger's
    ``factor`` multiply it. (Holm could still pass it were every other test of the family more
    significant; the note speaks of the row as it stands among the others.)"""
    if size < 1:
        return ""
    best = mcnemar_exact(size, 0).pvalue
    if best * family * factor <= alpha:
        return ""
    how = f"{family} tests (Holm)" if family > 1 else "one test"
    if factor > 1:
        how += f" and the ledger's factor {factor}"
    return (
        f"too few entries to conclude: even {size} of {size} moving one way gives "
        f"p = {best:.3g}, above alpha {alpha:g} once corrected for {how}"
    )


def _fmt_p(p: float | None) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


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


def delta_ci_words(cmp: Mapping[str, Any]) -> str:
    """How a comparison's delta intervals were drawn, in words, from its `Comparison.to_dict`
    (``ci_method``, ``binary_ci``, ``n_resamples``, ``seed``, ``confidence``): what `assay
    compare` prints and the explorer's comparison page says."""
    clustering = cmp.get("clustering")
    if clustering:
        summary = ClusterSummary(**clustering)
        return (
            f"{cmp['confidence']:.0%} CI: inverting each cell's cluster-level test (clustered "
            f"McNemar on binary metrics, cluster sign-flip on graded ones; {summary.words()})"
        )
    method = "percentile" if cmp["ci_method"] == "score" else cmp["ci_method"]
    boot = f"paired bootstrap ({method}, {cmp['n_resamples']} resamples, seed {cmp['seed']})"
    binary = {"tango": "Tango score", "newcombe": "Newcombe"}.get(cmp["binary_ci"], boot)
    graded = (
        "the score interval of the mean difference (Tango's, extended to graded values)"
        if cmp["ci_method"] == "score"
        else boot
    )
    return f"{cmp['confidence']:.0%} CI: {binary} on binary metrics, {graded} on graded ones"


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
            f"{cis}; p: McNemar exact on binary metrics, Wilcoxon over moved entries on graded ones"
            if self.clustering is None
            else f"{cis}; p: the same test"
        )
        lines += [
            f"dataset {self.dataset_version or '-'} · baseline run {self.base_run or '-'} · "
            f"candidate run {self.cand_run or '-'}" + (f" · k={self.k}" if self.k else ""),
            f"{tests}; Holm across categories and overall x metrics.",
        ]
        if self.clustering is None and (self.binary_ci == "tango" or self.ci_method == "score"):
            lines.append(
                f"One verdict per cell: a delta's CI excludes 0 exactly when its p < "
                f"{1 - self.confidence:.2g} (the p column's test decides the CI's end at 0; the "
                "CI's far end is the score interval's, JSON tests.score)."
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
            lines.append(
                f"Counts ({', '.join(counts)}): exact one-sided sign test, entries that moved "
                "the harmful way against those that moved the other way (a fall is never "
                "evidence of harm)."
            )
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


def cluster_line(c: ClusterSummary) -> str:
    """The report header's line on clustering: how many entries in how many clusters, and
    which test gives each cell its p and CI."""
    return (
        f"{c.words()[0].upper()}{c.words()[1:]} (largest {c.largest}): p and CI of each cell "
        "from one cluster-level test, the clustered McNemar (Obuchowski's statistic) on binary "
        "metrics and the cluster sign-flip on graded ones, exact with at most "
        f"{EXACT_CLUSTERS} clusters, else seeded Monte Carlo; the CI inverts the same test "
        "(--cluster none: entries as independent)."
    )


def _fmt_delta(d: Interval) -> str:
    """``+0.030 [-0.040, +0.105]``; ``-`` when undefined."""
    if d.value is None:
        return "-"
    if d.low is None or d.high is None:
        return f"{d.value:+.3f}"
    return f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"


def _delta_interval(
    name: str,
    binary: bool,
    base: NDArray[np.float64],
    cand: NDArray[np.float64],
    d: NDArray[np.float64],
    *,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    ci_method: GradedMethod,
    binary_ci: str,
    kind: str = "",
) -> Interval:
    """The interval of ``mean(cand - base)``: Tango/Newcombe on binary metrics; on graded ones
    the score interval of a mean difference in [-1, 1] (`assay.stats.bounded`, Tango's extended)
    or, as asked, a paired bootstrap; a bootstrap on counts."""
    n = int(base.size)
    if binary and binary_ci != "bootstrap":
        b1, c1 = base > 0.5, cand > 0.5
        fixed, broken = int(np.sum(~b1 & c1)), int(np.sum(b1 & ~c1))
        if binary_ci == "newcombe":
            both = int(np.sum(b1 & c1))
            return newcombe_paired(
                both, fixed, broken, n - both - fixed - broken, confidence=confidence
            )
        return tango_paired(fixed, broken, n, confidence=confidence)
    bounded = kind != "count" and bool(np.all(np.abs(d) <= 1.0))
    if bounded and not binary and (ci_method == "score" or np.all(d == d[0])):
        iv = score_mean_interval(d, lower=-1.0, upper=1.0, confidence=confidence)
        moved = int(np.count_nonzero(d))
        notes = (
            []
            if ci_method == "score"
            else [
                f"no variation in the differences on {name}: a bootstrap would be a single point; "
                "the score interval instead"
            ]
        )
        if moved == 0:
            notes.append(
                f"no entry moved on {name}: the interval is what {n} unchanged entries allow "
                "for a mean difference in [-1, 1] (Tango's with nothing flipped)"
            )
        elif moved < MIN_MOVED:
            notes.append(
                f"only {moved} entries moved on {name}: the interval rests mostly on how far an "
                "unseen move could go (up to 1 either way), not on the moves seen"
            )
        elif iv.note:
            notes.append(iv.note)
        return replace(iv, note="; ".join(notes) or None)
    return paired_bootstrap_diff(
        base,
        cand,
        rng=rng,
        n_resamples=n_resamples,
        confidence=confidence,
        method="bca" if ci_method == "bca" else "percentile",
    )


def _follow_primary(
    delta: Interval, p: float, score: TestResult, primary: str, confidence: float
) -> Interval:
    """One verdict per cell: the interval's end on 0's side follows the p column (the test the
    gate uses), so the interval excludes 0 exactly when ``p < 1 - confidence``. The bounds away
    from 0 are the score interval's; where its own score test leaned the other way, the note
    says so."""
    if delta.low is None or delta.high is None or delta.value is None or math.isnan(p):
        return delta
    low, high, moved = zero_end_follows(delta.low, delta.high, delta.value, p, 1.0 - confidence)
    if not moved:
        return delta
    why = (
        f"its end at 0 follows {primary} (p = {p:.3g}); the score test of the mean change "
        f"gave p = {score.pvalue:.3g}"
    )
    return replace(delta, low=low, high=high, note="; ".join(x for x in (delta.note, why) if x))


def _fresh_line(fresh: dict[str, Any]) -> str:
    uses = fresh.get("uses", 0)
    name = fresh.get("name", "fresh sample")
    if uses <= 1:
        return f"Fresh sample {name}: first use (use 1), an honest held-out measurement."
    return (
        f"WARNING fresh sample {name}: use {uses}. It has been measured before; "
        "its p-values are no longer those of an untouched sample."
    )


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


def _metric_row(
    info: SeriesInfo,
    ids: NDArray[Any],
    base: NDArray[np.float64],
    cand: NDArray[np.float64],
    *,
    row: str,
    seed: int,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    ci_method: GradedMethod,
    binary_ci: str = "tango",
    clusters: NDArray[Any] | None = None,
) -> MetricComparison:
    name, binary, kind, better = info.name, info.binary, info.kind, info.higher_is_better
    abstained: tuple[str, ...] | None = None
    own: dict[str, Any] = {}
    if kind == "count":
        seen = ~np.isnan(cand)
        own = {
            "cand_total": float(cand[seen].sum()),
            "cand_decided": int(seen.sum()),
            "cand_positive": tuple(sorted(str(i) for i in ids[seen & (np.nan_to_num(cand) > 0)])),
        }
    skip = np.isnan(base) | np.isnan(cand)
    if info.source != "metric" or skip.any():
        abstained = tuple(sorted(str(i) for i in ids[skip]))
        ids, base, cand = ids[~skip], base[~skip], cand[~skip]
        clusters = None if clusters is None else clusters[~skip]
    n = int(base.size)
    d = np.round(cand - base, DECIMALS)
    up = tuple(sorted(str(i) for i in ids[(d > 0) if better else (d < 0)]))
    down = tuple(sorted(str(i) for i in ids[(d < 0) if better else (d > 0)]))
    extra = {"kind": kind, "higher_is_better": better, "abstained": abstained, **own}
    if n == 0:
        nan = float("nan")
        why = "no entries" if not abstained else "every entry abstained"
        ci = undefined(why, level=confidence)
        return MetricComparison(name, binary, 0, nan, nan, ci, (), (), {}, nan, **extra)
    if clusters is not None and kind != "count":
        cd = clustered_delta(
            base,
            cand,
            clusters,
            confidence=confidence,
            rng=group_generator(seed, f"{row}\x1f{name}\x1fcluster"),
            n_permutations=n_permutations,
            test="clustered_mcnemar" if binary else "cluster_sign_flip",
        )
        return MetricComparison(
            name, binary, n, float(base.mean()), float(cand.mean()), cd.interval, up, down,
            {cd.test.test: cd.test}, cd.test.pvalue, **extra,
        )  # fmt: skip
    delta = _delta_interval(
        name,
        binary,
        base,
        cand,
        d,
        rng=group_generator(seed, f"{row}\x1f{name}\x1fbootstrap"),
        n_resamples=n_resamples,
        confidence=confidence,
        ci_method=ci_method,
        binary_ci=binary_ci,
        kind=kind,
    )
    tests: dict[str, TestResult]
    if binary:
        mc = mcnemar_exact(len(up), len(down))
        tests = {"mcnemar_exact": mc}
        p = mc.pvalue
    elif kind == "count":
        st = sign_test_worse(len(down), len(up))
        tests = {"sign_test_worse": st}
        p = st.pvalue
    else:
        wx = wilcoxon_moved(base, cand)
        sf = sign_flip_permutation(
            base,
            cand,
            rng=group_generator(seed, f"{row}\x1f{name}\x1fsignflip"),
            n_permutations=n_permutations,
        )
        tests = {"wilcoxon": wx, "sign_flip": sf}
        p = wx.pvalue
    if delta.method in ("score", "tango"):
        # the test the interval inverts: it excludes 0 exactly when this p < 1 - confidence
        tests["score"] = score_mean_test(d, 0.0, lower=-1.0, upper=1.0)
        primary = _TEST_NAMES.get(next(iter(tests)), next(iter(tests)))
        delta = _follow_primary(delta, p, tests["score"], primary, confidence)
    return MetricComparison(
        name,
        binary,
        n,
        float(base.mean()),
        float(cand.mean()),
        delta,
        up,
        down,
        tests,
        p,
        **extra,
    )


def _info_of(name: str, given: Any, kind: SeriesInfo | str | None) -> SeriesInfo:
    """The kind and direction of the series ``name``: as given, from a `Series`, or from the
    registries (a bare cutoff family is read at k=1 only to learn its kind)."""
    if isinstance(kind, SeriesInfo):
        return kind if kind.name == name else replace(kind, name=name)
    if isinstance(kind, str):
        return SeriesInfo(name, _kind(name, kind), True, "given")
    if isinstance(given, Series):
        return replace(given.info, name=name)
    return replace(describe(name, k=1), name=name)


def _kind(name: str, kind: str) -> Any:
    if kind not in ("binary", "graded", "count"):
        raise ValueError(f"series {name!r}: unknown kind {kind!r}")
    return kind


def _values(v: ArrayLike | Series, ids: NDArray[Any]) -> NDArray[np.float64]:
    if isinstance(v, Series):
        return v.aligned([str(i) for i in ids.tolist()])
    return np.asarray(v, dtype=np.float64)


def compare_arrays(
    ids: Sequence[str],
    categories: Sequence[str],
    base: Mapping[str, ArrayLike | Series],
    cand: Mapping[str, ArrayLike | Series],
    *,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    ci_method: GradedMethod = "score",
    alpha: float = 0.05,
    k: int | None = None,
    binary_ci: str = "tango",
    kinds: Mapping[str, SeriesInfo | str] | None = None,
    clusters: Clustering | None = None,
) -> Comparison:
    """Compare per-entry series of two runs, aligned with ``ids`` and ``categories``.

    ``base`` and ``cand`` map series names to one value per entry (an array aligned with
    ``ids``, or a `Series`, aligned by its ids); NaN (None in a `Series`) is an abstention, and
    an entry on which either run abstained is left out of that series' pairs and counted.
    ``metrics`` defaults to every series present in both, in ``base``'s order. A series' kind
    (the test it gets) comes from ``kinds`` (a `SeriesInfo`, or just the kind), else from the
    `Series`, else from its name: a registered retrieval metric or answer check
    (`assay.compare.series.describe`). Binary series get McNemar, graded ones Wilcoxon over the
    moved entries, counts the one-sided sign test; all of them, in every row, are one Holm
    family. ``ci_method`` is the interval of a graded series' delta: ``"score"`` (default; the
    score interval of a mean difference in [-1, 1], consistent with ``tests["score"]``) or a
    paired bootstrap (``"percentile"``, ``"bca"``); ``binary_ci`` the interval of a binary
    metric's delta: ``"tango"`` (default), ``"newcombe"`` or ``"bootstrap"``.

    ``clusters`` (`assay.stats.clusters.Clustering`): entries in one cluster (questions on one
    document) are not independent; each binary or graded cell's p-value and interval then come
    from one cluster-level test (`assay.stats.clusters.clustered_delta`), and Holm and the
    ledger work on those p-values. Counts keep their sign test.
    """
    if binary_ci not in BINARY_CI:
        raise ValueError(f"binary_ci must be one of {', '.join(BINARY_CI)}, not {binary_ci!r}")
    id_arr = np.asarray(list(ids), dtype=object)
    cat_arr = np.asarray(list(categories), dtype=object)
    n = id_arr.size
    if cat_arr.size != n:
        raise ValueError("ids and categories must have the same length")
    if len(set(id_arr.tolist())) != n:
        raise ValueError("ids must be unique")
    names = list(metrics) if metrics is not None else [m for m in base if m in cand]
    if not names:
        raise ValueError("no metric to compare")
    infos = {m: _info_of(m, base.get(m), (kinds or {}).get(m)) for m in names}
    arrays: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    for m in names:
        if m not in base or m not in cand:
            raise ValueError(f"metric {m!r} is missing from one of the runs")
        b = _values(base[m], id_arr)
        c = _values(cand[m], id_arr)
        if b.shape != (n,) or c.shape != (n,):
            raise ValueError(f"metric {m!r}: expected {n} values per run")
        arrays[m] = (b, c)
    cat_names = sorted(set(cat_arr.tolist()))
    cl_arr = None if clusters is None else np.asarray(clusters.labels([str(i) for i in id_arr]))
    # Holm's family: every row (the groups and overall) x every series
    family = (len(cat_names) + 1) * len(names)

    def build(row: str, mask: NDArray[np.bool_]) -> CategoryComparison:
        mcs = {
            m: _metric_row(
                infos[m],
                id_arr[mask],
                b[mask],
                c[mask],
                row=row,
                seed=seed,
                n_resamples=n_resamples,
                n_permutations=n_permutations,
                confidence=confidence,
                ci_method=ci_method,
                binary_ci=binary_ci,
                clusters=None if cl_arr is None else cl_arr[mask],
            )
            for m, (b, c) in arrays.items()
        }
        size = int(mask.sum())
        note = too_few_note(size, alpha, family)
        return CategoryComparison(row, size, mcs, bool(note), note)

    cats = {c: build(c, cat_arr == c) for c in cat_names}
    overall = build(OVERALL, np.ones(n, dtype=bool))
    # Holm: every row (categories and overall) x metrics is one family, so one comparison spends
    # alpha once; the ledger then divides alpha across comparisons (alpha / (t (t + 1))).
    rows = [list(row.metrics.values()) for row in [*cats.values(), overall]]
    adjusted = holm_family([[mc.p for mc in row] for row in rows])
    for row_mcs, row_adj in zip(rows, adjusted, strict=True):
        for mc, adj in zip(row_mcs, row_adj, strict=True):
            mc.p_holm = float(adj)
    return Comparison(
        metrics=names,
        categories=cats,
        overall=overall,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        ci_method=ci_method,
        alpha=alpha,
        k=k,
        binary_ci=binary_ci,
        family=family,
        clustering=None if clusters is None else clusters.summary([str(i) for i in id_arr]),
    )


def compare_scores(
    base: RetrievalScores,
    cand: RetrievalScores,
    *,
    metrics: Sequence[str] | None = None,
    **kwargs: Any,
) -> Comparison:
    """Compare two runs' `RetrievalScores` on the same dataset (entries matched by id)."""
    if set(base.ids) != set(cand.ids):
        only_b = sorted(set(base.ids) - set(cand.ids))
        only_c = sorted(set(cand.ids) - set(base.ids))
        raise DataError(
            Problem(
                cand.run_hash or "<candidate>",
                None,
                "id",
                f"runs scored different entries (only baseline: {only_b[:10]}, "
                f"only candidate: {only_c[:10]})",
            )
        )
    if base.k != cand.k:
        raise ValueError(f"scores use different k ({base.k} vs {cand.k})")
    same_room(base, cand)
    if base.by != cand.by:
        raise ValueError(f"scores group by different keys ({base.by} vs {cand.by})")
    names = [m.name for m in parse_list(metrics or DEFAULT_METRICS, k=base.k)]
    missing = [m for m in names if m not in base.per_entry or m not in cand.per_entry]
    if missing:
        raise ValueError(f"unknown metric(s) {missing}; scored: {sorted(base.per_entry)}")
    return compare_series(
        series_from_scores(base, metrics=names),
        series_from_scores(cand, metrics=names),
        metrics=names,
        **kwargs,
    )


def compare_series(
    base: RunSeries,
    cand: RunSeries,
    *,
    metrics: Sequence[str] | None = None,
    **kwargs: Any,
) -> Comparison:
    """Compare two runs' series (`assay.compare.series.series_for`, `series_from_scores`) on
    the same dataset: every named series (default: every one in both) with the test its kind
    calls for, rows by the baseline's grouping, one Holm family across rows x series.

    Entries are matched by id. A retrieval metric is scored on the answerable entries of both
    runs; a check covers every entry and abstains where it does not apply. Options are
    `compare_arrays`'s.
    """
    names = list(metrics) if metrics is not None else [m for m in base.series if m in cand.series]
    for m in names:
        if m not in base.series or m not in cand.series:
            have = sorted(set(base.series) & set(cand.series))
            raise ValueError(f"series {m!r} is missing from one of the runs (have {have})")
    # the entries: every id of any compared series, in the baseline's order, then the
    # candidate's (the two agree when both were computed on one dataset)
    order: dict[str, None] = {}
    for run in (base, cand):
        for m in names:
            order.update(dict.fromkeys(run.series[m].ids))
    ids = list(order)
    groups = {**cand.groups, **base.groups}
    cats = [groups.get(i, "(none)") for i in ids]
    cmp = compare_arrays(
        ids,
        cats,
        {m: base.series[m] for m in names},
        {m: cand.series[m] for m in names},
        metrics=names,
        k=base.k,
        **kwargs,
    )
    cmp.dataset_version = base.dataset_version
    cmp.base_run = base.run_hash
    cmp.cand_run = cand.run_hash
    cmp.index_version = base.index_version
    cmp.by = base.by
    return cmp


def compare_runs(
    dataset: Dataset,
    base_run: Run,
    cand_run: Run,
    *,
    cand_chunks: ChunkTable | str | Path | None = None,
    session: FreshSession | None = None,
    **options: Unpack[RunsOptions],
) -> Comparison:
    """Score both runs on ``dataset`` and compare them (the options: `RunsOptions`).

    Each run's gold is resolved against that run's own chunk table (`assay.runs.corpus.
    chunk_table_for`): ``base_chunks`` / ``cand_chunks`` when given, else the table the run
    recorded, else the shared ``chunks``. So two chunkings of the same documents compare at
    chunk level (each through its own table's alignment of the anchors) and at page level.
    A run whose hits its table does not know, beyond ``max_unknown_share`` (default
    `assay.runs.corpus.UNKNOWN_SHARE`), was made on another index: the comparison stops (a
    `DataError`, before anything is recorded).

    ``skip_stale`` leaves out entries whose gold does not resolve on the chunk table (named in
    the notes), as `assay score --skip-missing` does; ``allow_changed_entries`` compares rows
    whose entry changed since the run was made (refused otherwise: `assay.runs.binding`).

    Runs made on different corpora (their ``corpus_hash`` in the run metadata differs) are
    refused unless each was read against its own chunk table, or ``allow_corpus_change``: the
    same chunk id can mean another text in another index, so the flips would compare different
    things. Said in the comparison's notes; ``tables`` records each run's table and binding.

    On a sealed fresh sample the whole comparison is one use of it (refused a second time
    unless ``allow_reuse``; `assay.dataset.fresh.using`), recorded in ``fresh``; or part of the
    use the caller opened (``session``: `assay.compare.open_inputs`), which the caller records.
    """
    reading, rest = Reading.split(options)
    if "clusters" not in rest:
        rest["clusters"] = clustering_for(
            dataset.entries, reading.cluster, file=dataset.path or "<dataset>"
        )
    labels = ["baseline", "candidate"]
    runs = [base_run, cand_run]
    tables = run_tables(runs, [reading.base_chunks, cand_chunks], labels, reading)
    corpus_notes = check_corpora(runs, tables, labels, reading)
    cmp, series, use = compare_in_use(
        dataset,
        runs,
        tables,
        reading,
        lambda series, names: compare_series(series[0], series[1], metrics=names, **rest),
        session,
    )
    cmp.dataset_path = dataset.path
    cmp.notes.extend(dataset.tier_notes())
    cmp.tiers = None if dataset.tiers is None else dataset.tiers.to_dict()
    cmp.notes.extend(reading_notes(series))
    cmp.notes.extend(table_notes(runs, tables, labels))
    cmp.notes.extend(corpus_notes)
    cmp.tables = {lb: t.to_dict() for lb, t in zip(labels, tables, strict=True)}
    if use is not None:
        cmp.fresh = use.to_dict()
    return cmp


def table_notes(
    runs: Sequence[Run], tables: Sequence[RunTable], labels: Sequence[str]
) -> list[str]:
    """What a comparison says about the chunk tables its runs were read against: each its own
    when they differ, a run unbound or read against another table as asked, a table without
    content hashes, and a run that names no index and has no table (nothing checked it)."""
    out: list[str] = []
    prints = {t.table.fingerprint for t in tables if t.table is not None}
    if len(prints) > 1:
        out.append(
            "Each run's gold was resolved against its own chunk table: "
            + "; ".join(f"{lb} {t.describe()}" for lb, t in zip(labels, tables, strict=True))
            + " (chunk ids are matched within each run's table)."
        )
    for run, table, label in zip(runs, tables, labels, strict=True):
        for note in table.notes(run, label):
            if note not in out:
                out.append(note)
        if table.table is None and not run.meta.get("corpus_hash"):
            out.append(
                f"The {label} run does not say which index it was made on and no chunk table "
                "was given for it: its hits could not be checked against its index "
                "(--chunks, --base-chunks / --cand-chunks, or assay run --corpus-id)."
            )
    return out


def reading_notes(computed: Sequence[RunSeries]) -> list[str]:
    """What a comparison must say about how its runs' gold was read: entries left out because
    their gold does not resolve (--skip-missing), rows scored although their entry changed
    (--allow-changed-entries)."""
    from assay.gold.resolve import skipped_note
    from assay.runs.binding import changed_note

    out: list[str] = []
    excluded: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for one in computed:
        if one.scores is not None:
            excluded.update(one.scores.excluded)
            kinds.update(one.scores.excluded_kinds)
    if excluded:
        out.append(skipped_note(excluded, kinds))
    for one in computed:
        if one.scores is not None and one.scores.changed:
            out.append(changed_note(list(one.scores.changed), one.run_path))
    return out


def record_in_ledger(
    cmp: Comparison,
    dataset_path: str | Path,
    *,
    command: str,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Record the comparison in the dataset's ledger and apply the history correction to it.

    A comparison already in the ledger (the same dataset version and hash, runs, metrics, k,
    level and grouping ``cmp.by``: see `assay.compare.ledger.comparison_key`; a regrouped view is
    a new set of hypotheses and a new comparison) keeps its number and is not appended again;
    the returned record's ``"repeat"`` says which happened. ``extra`` may carry
    ``dataset_hash``, ``level`` and ``tiers``, which are part of the key, and ``run_identities`` (each
    run's `assay.runs.Run.identity`, which leaves measured wall time out) to key the runs by
    what they returned rather than by their file hashes.
    """
    from assay._version import __version__
    from assay.compare.ledger import append_ledger, comparison_key

    more = dict(extra or {})
    key = comparison_key(
        dataset_version=cmp.dataset_version,
        dataset_hash=more.get("dataset_hash"),
        runs=more.get("run_identities") or [cmp.base_run, cmp.cand_run],
        metrics=cmp.metrics,
        k=cmp.k,
        level=more.get("level"),
        by=cmp.by,
        tiers=more.get("tiers"),
    )

    def build(t: int) -> dict[str, Any]:
        cmp.apply_ledger(t)
        rec: dict[str, Any] = {
            "command": command,
            "dataset_version": cmp.dataset_version,
            "base_run": cmp.base_run,
            "cand_run": cmp.cand_run,
            "k": cmp.k,
            "metrics": cmp.metrics,
            "by": cmp.by,
            "tests": sorted(
                {name for row in cmp.rows for mc in row.metrics.values() for name in mc.tests}
            ),
            "seed": cmp.seed,
            "pvalues": cmp.pvalues(),
            "correction": {"method": "alpha-spending 1/(t(t+1))", "factor": ledger_factor(t)},
            "assay_version": __version__,
        }
        if cmp.tables:  # which table each run was read against, and whether it is its own
            rec["chunk_tables"] = cmp.tables
        return rec | more

    stored = append_ledger(dataset_path, build, key=key, content_hash=more.get("dataset_hash"))
    if stored["repeat"]:
        cmp.apply_ledger(int(stored["t"]), repeat=True)
    void = stored.get("voided")
    if void:
        cmp.notes.append(
            f"Comparison #{stored['t']} was voided in the ledger on {void.get('when')}: "
            f"{void.get('reason')} (assay ledger show)."
        )
    return stored


def _record_comparison(
    cmp: Comparison,
    ds: Dataset,
    b: Run,
    c: Run,
    dataset: str | Path,
    *,
    command: str,
    record: bool,
    level: str,
    record_switch: str,
) -> None:
    """The ledger line of a completed comparison.

    (The use of a sealed fresh sample was recorded when the comparison completed, whatever
    ``record`` says: a look at a sealed sample is a look.) The ledger records the comparison
    unless ``record`` is False (the note names the switch as the caller's user wrote it,
    ``record_switch``) or both runs are the same run (a run compared with itself tests nothing).
    """
    if not record:
        cmp.notes.append(
            f"Not recorded in the ledger ({record_switch}): an exploratory look, its p-values "
            "not corrected for the dataset's history."
        )
        return
    if b.identity == c.identity:
        cmp.notes.append("Not recorded in the ledger: both runs returned the same results.")
        return
    record_in_ledger(
        cmp,
        dataset,
        command=command,
        extra={
            "dataset_hash": ds.content_hash,
            "level": level,
            "run_identities": [b.identity, c.identity],
        }
        | ({} if ds.tiers is None or ds.tiers.untiered else {"tiers": list(ds.tiers.tiers)}),
    )


def compare_files(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    k: int = 5,
    chunks: str | Path | None = None,
    level: str = "chunk",
    metrics: Sequence[str] | None = None,
    command: str = "compare",
    reuse: bool = False,
    strict_fresh: bool = False,
    record: bool = True,
    record_switch: str = "record=False",
    tiers: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> Comparison:
    """Load a dataset and two run files, compare them, and record the comparison.

    On a sealed fresh sample the comparison is one use of it, refused a second time unless
    ``reuse`` (the files are opened once, and the use guarded once, by `open_inputs`;
    ``strict_fresh`` is kept for callers and changes nothing: every path is strict). The comparison is recorded in the dataset's ledger once per
    distinct comparison (``record=False``: not in the ledger, for exploration; the comparison's
    note names that switch as ``record_switch``, the command line's ``"--no-record"``). Nothing
    is recorded when loading, scoring or comparing fails.
    """
    with gc_paused(), open_inputs(
        dataset, [base, cand], chunks=chunks, level=level, tiers=tiers, command=command,
        allow_reuse=reuse,
    ) as inputs:  # fmt: skip
        ds, (b, c) = inputs.dataset, inputs.runs
        cmp = compare_runs(
            ds, b, c, k=k, chunks=inputs.chunks, level=level, metrics=metrics,
            allow_reuse=reuse, command=command, session=inputs.session, **kwargs,
        )  # fmt: skip
    if inputs.session.use is not None:
        cmp.fresh = inputs.session.use.to_dict()
    _record_comparison(
        cmp, ds, b, c, dataset, command=command, record=record, level=level,
        record_switch=record_switch,
    )  # fmt: skip
    return cmp


def _decided(mc: MetricComparison) -> str:
    """ "decided n of N": the pairs a check decided in both runs, of the entries it was run on."""
    left = len(mc.abstained or ())
    return f"decided {mc.n} of {mc.n + left}"
