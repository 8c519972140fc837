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

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.compare._reading import same_room
from assay.compare.comparison import (
    CategoryComparison,
    Comparison,
    MetricComparison,
    too_few_note,
)
from assay.compare.options import CompareOptions, RunsOptions
from assay.compare.series import (
    OVERALL,
    RunSeries,
    Series,
    SeriesInfo,
    describe,
    series_from_scores,
)
from assay.errors import DataError
from assay.metrics import DEFAULT_PAIR, parse, parse_list
from assay.report import Interval, undefined
from assay.stats.bootstrap import group_generator
from assay.stats.bounded import GradedMethod, score_mean_interval, score_mean_test
from assay.stats.clusters import (
    Clustering,
    clustered_delta,
    describe_clusters,
    zero_end_follows,
)
from assay.stats.counts import sign_test_worse
from assay.stats.multiple import holm_family
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
    from assay.score import RetrievalScores

__all__ = [
    "DEFAULT_METRICS",
    "compare_arrays",
    "compare_scores",
    "compare_series",
    "is_binary_metric",
]

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


def _values(v: ArrayLike | Series, ids: Sequence[str]) -> NDArray[np.float64]:
    if isinstance(v, Series):
        return v.aligned(ids)
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
    id_strs = [str(i) for i in id_arr.tolist()]  # as a `Series` holds them
    infos = {m: _info_of(m, base.get(m), (kinds or {}).get(m)) for m in names}
    arrays: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    for m in names:
        if m not in base or m not in cand:
            raise ValueError(f"metric {m!r} is missing from one of the runs")
        b = _values(base[m], id_strs)
        c = _values(cand[m], id_strs)
        if b.shape != (n,) or c.shape != (n,):
            raise ValueError(f"metric {m!r}: expected {n} values per run")
        arrays[m] = (b, c)
    cat_names = sorted(set(cat_arr.tolist()))
    # each cluster label as an integer code (first appearance first): the cluster statistics
    # read labels only through `cluster_codes`, which numbers integers as it numbers the labels
    # they stand for, without sorting strings for every row and series
    cl_arr = None if clusters is None else _label_codes(clusters.labels(id_strs))
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
        k = None if cl_arr is None else int(np.unique(cl_arr[mask]).size)
        note = too_few_note(size, alpha, family, clusters=k)
        return CategoryComparison(row, size, mcs, bool(note), note, k)

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
        clustering=(
            None
            if clusters is None or cl_arr is None
            else describe_clusters(clusters.field, cl_arr)
        ),
    )


def _label_codes(labels: list[str]) -> NDArray[np.int64]:
    """``labels`` as integer codes, 0 for the first label seen, 1 for the next new one, ..."""
    code = {label: i for i, label in enumerate(dict.fromkeys(labels))}
    return np.fromiter(map(code.__getitem__, labels), dtype=np.int64, count=len(labels))


def compare_scores(
    base: RetrievalScores,
    cand: RetrievalScores,
    *,
    clusters: Clustering | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Comparison:
    """Compare two runs' `RetrievalScores` on the same dataset (entries matched by id): the
    ``metrics`` of the options (default `DEFAULT_METRICS`) at the scores' k."""
    opts = CompareOptions.of(options, given)
    if set(base.ids) != set(cand.ids):
        only_b = sorted(set(base.ids) - set(cand.ids))
        only_c = sorted(set(cand.ids) - set(base.ids))
        raise DataError(
            f"runs scored different entries (only baseline: {only_b[:10]}, "
            f"only candidate: {only_c[:10]})",
            file=cand.run_hash or "<candidate>",
            field="id",
        )
    if base.k != cand.k:
        raise ValueError(f"scores use different k ({base.k} vs {cand.k})")
    same_room(base, cand)
    if base.by != cand.by:
        raise ValueError(f"scores group by different keys ({base.by} vs {cand.by})")
    names = [m.name for m in parse_list(opts.metrics or DEFAULT_METRICS, k=base.k)]
    missing = [m for m in names if m not in base.per_entry or m not in cand.per_entry]
    if missing:
        raise ValueError(f"unknown metric(s) {missing}; scored: {sorted(base.per_entry)}")
    return compare_series(
        series_from_scores(base, metrics=names),
        series_from_scores(cand, metrics=names),
        clusters=clusters,
        options=replace(opts, metrics=names),
    )


def compare_series(
    base: RunSeries,
    cand: RunSeries,
    *,
    clusters: Clustering | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Comparison:
    """Compare two runs' series (`assay.compare.series.series_for`, `series_from_scores`) on
    the same dataset: every named series (default: every one in both) with the test its kind
    calls for, rows by the baseline's grouping, one Holm family across rows x series.

    Entries are matched by id. A retrieval metric is scored on the answerable entries of both
    runs; a check covers every entry and abstains where it does not apply. The options
    (`CompareOptions`): ``metrics`` and the statistics of `compare_arrays`; ``clusters`` as there.
    """
    opts = CompareOptions.of(options, given)
    metrics = opts.metrics
    names = list(metrics) if metrics is not None else [m for m in base.series if m in cand.series]
    for m in names:
        if m not in base.series or m not in cand.series:
            have = sorted(set(base.series) & set(cand.series))
            raise ValueError(f"series {m!r} is missing from one of the runs (have {have})")
    # the entries: every id of any compared series, in the baseline's order, then the
    # candidate's (the two agree when both were computed on one dataset)
    id_lists = [run.series[m].ids for run in (base, cand) for m in names]
    first = id_lists[0] if id_lists else ()
    if all(x is first or x == first for x in id_lists):
        ids = list(first)  # one order (the common case): a series' ids are unique
    else:
        order: dict[str, None] = {}
        for one in id_lists:
            order.update(dict.fromkeys(one))
        ids = list(order)
    # runs of one comparison share their rows (`series_for`'s ``rows``): nothing to merge
    groups = base.groups if cand.groups is base.groups else {**cand.groups, **base.groups}
    cats = [groups.get(i, "(none)") for i in ids]
    cmp = compare_arrays(
        ids,
        cats,
        {m: base.series[m] for m in names},
        {m: cand.series[m] for m in names},
        metrics=names,
        k=base.k,
        clusters=clusters,
        seed=opts.seed,
        n_resamples=opts.n_resamples,
        n_permutations=opts.n_permutations,
        confidence=opts.confidence,
        ci_method=opts.ci_method,
        alpha=opts.alpha,
        binary_ci=opts.binary_ci,
    )
    cmp.dataset_version = base.dataset_version
    cmp.base_run = base.run_hash
    cmp.cand_run = cand.run_hash
    cmp.index_version = base.index_version
    cmp.by = base.by
    return cmp
