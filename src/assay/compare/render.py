"""The formats a comparison, the gate and the leaderboard print alike: p-values, a delta with its
interval, how the intervals were drawn (`delta_ci_words`), the line on clustering
(`cluster_line`) and the line on a fresh sample's use. The reports themselves are the
`to_table`, `to_markdown` and `header_lines` of `assay.compare.comparison.Comparison`,
`assay.compare.gate.GateResult` and `assay.compare.leaderboard.Leaderboard`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from assay.report import Interval
from assay.report.interval import ONE_CLUSTER, fmt_end
from assay.stats.clusters import EXACT_CLUSTERS, FLOOR_MOVED, ClusterSummary

__all__ = [
    "P_TESTS",
    "ROUNDS_TO_ZERO",
    "cluster_line",
    "counts_line",
    "delta_ci_words",
    "zero_key",
]

ROUNDS_TO_ZERO = (
    "A delta's CI end shown as >0 or <0 excludes 0 but rounds to 0 at three decimals (the "
    "JSON has its value)."
)
"""The key to `assay.report.interval.fmt_end`'s ``>0``/``<0``."""

P_TESTS = "McNemar exact on binary metrics, Wilcoxon over moved entries on graded ones"
"""The tests that give an unclustered comparison's cells their p (a clustered one's:
`cluster_line`; counts': `counts_line`)."""


def zero_key(deltas: Iterable[Interval | Mapping[str, Any] | None]) -> list[str]:
    """``[ROUNDS_TO_ZERO]`` when one of ``deltas`` (intervals, or their `Interval.to_dict`)
    prints an end as ``>0`` or ``<0``, else ``[]``: the report's key says it once, where it
    is needed."""
    for d in deltas:
        ends = (d.get("low"), d.get("high")) if isinstance(d, Mapping) else (
            (None, None) if d is None else (d.low, d.high)
        )  # fmt: skip
        if any(x is not None and fmt_end(x) in (">0", "<0") for x in ends):
            return [ROUNDS_TO_ZERO]
    return []


def _fmt_p(p: float | None) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


def delta_ci_words(cmp: Mapping[str, Any]) -> str:
    """How a comparison's delta intervals were drawn, in words, from its `Comparison.to_dict`
    (``ci_method``, ``binary_ci``, ``n_resamples``, ``seed``, ``confidence``): what `assay
    compare` prints and the explorer's comparison page says."""
    clustering = cmp.get("clustering")
    if clustering:
        summary = ClusterSummary(**clustering)
        return (
            f"{cmp['confidence']:.0%} CI: Obuchowski's statistic inverted against t(K-1) over "
            "each cell's K clusters, its end at 0 set by the p of the cell's cluster-level test "
            f"(clustered McNemar on binary metrics, cluster sign-flip on graded ones; "
            f"{summary.words()})"
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


def cluster_line(c: ClusterSummary) -> str:
    """The report header's line on clustering: how many entries in how many clusters, which
    test gives each cell its p, with the rule `assay.stats.clusters.clustered_delta` applies
    (exact when at most `EXACT_CLUSTERS` clusters moved, whatever the clusters in all), and
    how its CI is drawn: Obuchowski's statistic inverted against t(K-1), its end at 0 set by p."""
    return (
        f"{c.words()[0].upper()}{c.words()[1:]} (largest {c.largest}): p of each cell from "
        "one cluster-level test, the clustered McNemar (Obuchowski's statistic) on binary "
        "metrics and the cluster sign-flip on graded ones, exact (every sign pattern) when at "
        f"most {EXACT_CLUSTERS} of a cell's clusters moved (changed between the runs; a "
        "cluster that did not move cannot change the test and is left out), else seeded Monte "
        "Carlo sign patterns; the CI is every shift Obuchowski's statistic does not reject "
        "against t(K-1), K the cell's clusters (never narrower than the score interval over "
        f"the clusters' mean changes when fewer than {FLOOR_MOVED} moved), its end at 0 set by "
        "p, so it excludes 0 exactly when p < 1 - its level (--cluster none: entries as "
        "independent)."
    )


def counts_line(counts: Iterable[str]) -> str:
    """The report's line on the test that gives the counts among the metrics their p."""
    return (
        f"Counts ({', '.join(counts)}): exact one-sided sign test, entries that moved the "
        "harmful way against those that moved the other way (a fall is never evidence of harm)."
    )


def _fmt_delta(d: Interval) -> str:
    """``+0.030 [-0.040, +0.105]``; ``-`` when undefined; the note for one cluster."""
    if d.value is None:
        return "-"
    if d.low is None or d.high is None:
        return f"{d.value:+.3f}"
    if d.note == ONE_CLUSTER:  # one draw: the whole range is no interval
        return f"{d.value:+.3f} ({ONE_CLUSTER})"
    return f"{d.value:+.3f} [{fmt_end(d.low)}, {fmt_end(d.high)}]"


def _fresh_line(fresh: dict[str, Any]) -> str:
    uses = fresh.get("uses", 0)
    name = fresh.get("name", "fresh sample")
    if uses <= 1:
        return f"Fresh sample {name}: first use (use 1), an honest held-out measurement."
    return (
        f"WARNING fresh sample {name}: use {uses}. It has been measured before; "
        "its p-values are no longer those of an untouched sample."
    )
