"""Inference when entries come in clusters: several questions asked of one document.

Golden sets are not drawn one independent question at a time. FinanceBench asks several
questions of each filing, the demo room asks three of each fact, and teams write a handful per
document. Questions on one document share its layout, its tables and its parser's mistakes, so
when a change helps one of them it tends to help the others: treating them as independent
overstates the evidence. With 4 questions per document and no real difference between two runs,
the entry-level tests of one comparison rejected 8.5% of the time over its 14 tests (11% for the
overall Wilcoxon at alpha 0.05), and with 8 per document 24% (21%).

The remedy used here is the cluster as the unit of randomisation. Write ``s_k`` for the sum of the
paired differences ``cand - base`` over the entries of cluster ``k`` and ``m_k`` for its size.
Under "no difference between the runs" each cluster's pair of runs is exchangeable, so ``s_k``
is as likely to be ``+|s_k|`` as ``-|s_k|``, *whatever the correlation inside the cluster*; the
**cluster sign-flip test** compares ``T = sum_k s_k`` (the total change; the mean change times
``n``) with its distribution over every sign pattern of the clusters:

* exact (every one of the ``2**K'`` patterns) when at most `EXACT_CLUSTERS` clusters *moved*
  (``s_k != 0``; a cluster whose total is 0 cannot change ``T`` and is left out of the patterns,
  so ``K'`` is the number that moved, however many clusters there are in all),
* else ``n_permutations`` random patterns from a seeded ``numpy`` Generator, with
  ``p = (1 + hits) / (1 + n_permutations)`` (a valid p-value, never 0). Clusters that share
  ``(s_k, m_k)`` are flipped in one binomial draw, which is exact in distribution and makes
  10,000 entries in 2,500 clusters cost milliseconds.

On binary metrics this *is* the clustered McNemar test: ``s_k = fixed_k - broken_k`` and
Obuchowski's (1998) statistic ``X2 = (K-1)/K * (sum_k s_k)**2 / sum_k s_k**2`` is a monotone
function of ``|T|`` over the sign patterns (``sum_k s_k**2`` does not change when signs flip),
so its permutation p-value is the sign-flip p-value. `clustered_mcnemar` also gives the
asymptotic chi-square p-values of Obuchowski's and Durkalski et al.'s (2003) statistics, checked
against Obuchowski's worked example (21 patients, PET against SPECT: X2 = 2.857, p = 0.0910).

**One verdict per cell.** The interval of the mean change is the set of shifts ``delta`` the same
test does not reject: the test of ``delta`` flips the signs of ``r_k = s_k - delta * m_k`` with
the same sign patterns, so every shift costs one pass over the patterns (``T*(delta) = u - delta
* v`` with ``u`` and ``v`` computed once). The bounds are found by bisection started on the side
where 0 lies, so the interval excludes 0 exactly when the p-value shown is below
``1 - confidence``.

For one run's rate, `cluster_rate_interval` is Wilson's interval (Clopper-Pearson's below 4
events or non-events) at the effective sample size ``n / deff``, with the design effect ``deff``
estimated from the cluster totals (the ratio estimator's variance over the binomial variance,
at least 1) and Korn and Graubard's (1998) degrees-of-freedom factor ``(z / t_{K-1})**2``.

Coverage and size are measured in ``tests/stats/test_clusters.py`` (a seeded fast grid always,
a larger one marked slow).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.report import Interval, undefined
from assay.report.interval import ONE_CLUSTER
from assay.stats._dist import chi2_sf_1, norm_ppf, t_ppf
from assay.stats.bounded import graded_mean_interval, score_mean_interval
from assay.stats.paired import DECIMALS, TestResult, flip_totals
from assay.stats.proportion import RARE_EVENTS, _wilson_bounds, tango_paired

__all__ = [
    "EXACT_CLUSTERS",
    "ClusterSummary",
    "ClusteredDelta",
    "Clustering",
    "cluster_codes",
    "cluster_mean_interval",
    "cluster_rate_interval",
    "cluster_sign_flip",
    "clustered_delta",
    "clustered_mcnemar",
    "describe_clusters",
    "icc_oneway",
    "zero_end_follows",
]

#: At most this many clusters moved (changed between the runs): every sign pattern of them is
#: enumerated (2**14 = 16,384); the clusters that did not move are left out.
EXACT_CLUSTERS = 14
#: Below this many clusters that moved, the interval is at least the entry-level score interval.
FLOOR_MOVED = 10
FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Clustering:
    """Which cluster each entry is in: the ``field`` clustered by and {entry id: label}. An id
    it does not name is a cluster of its own."""

    field: str
    of: Mapping[str, str]

    def labels(self, ids: Sequence[str]) -> list[str]:
        got = list(map(self.of.get, ids))  # a label is text: None marks an id not named
        if None not in got:
            return cast("list[str]", got)
        return [f"entry:{i}" if g is None else g for i, g in zip(ids, got, strict=True)]

    def summary(self, ids: Sequence[str]) -> ClusterSummary:
        return describe_clusters(self.field, self.labels(ids))


@dataclass(frozen=True, slots=True)
class ClusterSummary:
    """How entries fall into clusters: ``field`` they were clustered by, how many entries and
    clusters, and the largest cluster."""

    field: str
    entries: int
    clusters: int
    largest: int

    def to_dict(self) -> dict[str, object]:
        return {"field": self.field, "entries": self.entries, "clusters": self.clusters,
                "largest": self.largest}  # fmt: skip

    def words(self) -> str:
        """``clustered by document: 59 entries in 31 clusters``."""
        what = {"doc": "document", "company": "company"}.get(self.field, self.field)
        entries = f"{self.entries} {'entry' if self.entries == 1 else 'entries'}"
        clusters = f"{self.clusters} {'cluster' if self.clusters == 1 else 'clusters'}"
        return f"clustered by {what}: {entries} in {clusters}"


def cluster_codes(clusters: Sequence[object] | ArrayLike) -> tuple[NDArray[np.int64], int]:
    """Integer codes ``0..K-1`` for the cluster labels (in order of first appearance) and ``K``."""
    labels = np.asarray(clusters)
    if labels.ndim != 1:
        raise ValueError("cluster labels must be 1-D")
    if labels.dtype.kind not in "biuUS":  # mixed or object labels: compare them as text
        labels = labels.astype(str)
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    # renumber by first appearance so that codes do not depend on how labels sort
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[codes].astype(np.int64), int(first.size)


def describe_clusters(field: str, clusters: Sequence[object] | ArrayLike) -> ClusterSummary:
    codes, k = cluster_codes(clusters)
    largest = int(np.bincount(codes).max()) if codes.size else 0
    return ClusterSummary(field, int(codes.size), k, largest)


def _sums(d: FloatArray, clusters: Sequence[object] | ArrayLike) -> tuple[FloatArray, FloatArray]:
    codes, k = cluster_codes(clusters)
    if codes.size != d.size:
        raise ValueError(f"{d.size} values but {codes.size} cluster labels")
    s = np.bincount(codes, weights=d, minlength=k)
    m = np.bincount(codes, minlength=k).astype(np.float64)
    return np.round(s, DECIMALS), m


@dataclass(frozen=True, slots=True)
class _Flips:
    """``u``: the total ``sum_k +-s_k`` over the sign patterns, every one (``exact``) or
    ``draws`` random ones."""

    u: FloatArray
    exact: bool
    draws: int

    def pvalue(self, total: float) -> float:
        """Two-sided p of the observed total ``T``: how often ``|T*| >= |T|``."""
        tol = 1e-9 * (abs(total) + 1.0)
        hits = int(np.count_nonzero(np.abs(self.u) >= abs(total) - tol))
        if self.exact:
            return hits / self.u.size
        return (1.0 + hits) / (1.0 + self.draws)


def _flips(s: FloatArray, rng: np.random.Generator | None, n_permutations: int) -> _Flips:
    exact = s.size <= EXACT_CLUSTERS
    if not exact and rng is None:
        raise ValueError(
            f"{s.size} clusters are more than {EXACT_CLUSTERS}: a random generator is needed"
        )
    u = flip_totals(s, rng, n_permutations, exact=exact)
    return _Flips(u, exact, u.size if exact else n_permutations)


def _method(f: _Flips, k: int) -> str:
    moved = f"{k} {'cluster' if k == 1 else 'clusters'} that moved"
    if f.exact:
        return f"exact ({f.draws} sign patterns of the {moved})"
    return f"monte carlo ({f.draws} sign patterns of the {moved})"


def cluster_sign_flip(
    a: ArrayLike,
    b: ArrayLike,
    clusters: Sequence[object] | ArrayLike,
    *,
    rng: np.random.Generator | None = None,
    n_permutations: int = 10_000,
) -> TestResult:
    """Cluster-level sign-flip test of ``mean(b - a) = 0``, two-sided (see the module).

    The statistic reported is the mean difference over entries; ``n`` is the number of
    clusters. Exact when at most `EXACT_CLUSTERS` clusters moved (``rng`` may then be None)."""
    d = _diff(a, b)
    if d.size == 0:
        return TestResult("cluster_sign_flip", 0.0, 1.0, 0, "no entries")
    s, _ = _sums(d, clusters)
    moved = s != 0.0
    if not moved.any():
        return TestResult("cluster_sign_flip", 0.0, 1.0, int(s.size), "no cluster moved")
    # clusters whose total is 0 cannot change T: leave them out of the patterns
    f = _flips(s[moved], rng, n_permutations)
    p = f.pvalue(float(s.sum()))
    return TestResult(
        "cluster_sign_flip", float(d.mean()), p, int(s.size), _method(f, int(moved.sum()))
    )


def _diff(a: ArrayLike, b: ArrayLike) -> FloatArray:
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"paired arrays differ in length: {x.size} and {y.size}")
    if x.size and not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired values must be finite (no NaN or inf)")
    return np.asarray(np.round(y - x, DECIMALS), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class ClusteredDelta:
    """The mean paired change with its interval and the p-value of the one test behind both."""

    interval: Interval
    test: TestResult


def _t_quantile(confidence: float, df: int) -> float:
    """The two-sided ``confidence`` quantile of Student's t on ``df`` degrees of freedom
    (`assay.stats._dist.t_ppf`, held to a 40-digit reference)."""
    return t_ppf(df, 0.5 + confidence / 2.0)


def _t2(confidence: float, k: int) -> float:
    return _t_quantile(confidence, max(1, k - 1)) ** 2


def _obuchowski_bounds(
    s: FloatArray, m: FloatArray, confidence: float
) -> tuple[float, float] | None:
    """Every shift ``delta`` with ``(T - delta M)**2 <= t2 K/(K-1) sum_k (s_k - delta m_k)**2``:
    Obuchowski's statistic of the shifted totals against t(K-1). A quadratic inequality; None
    when it holds on no bounded set (the bounds are then the variable's)."""
    k = s.size
    q = _t2(confidence, k) * k / (k - 1)
    total, size = float(s.sum()), float(m.sum())
    a = size * size - q * float(np.sum(m * m))
    b = total * size - q * float(np.sum(s * m))
    c = total * total - q * float(np.sum(s * s))
    if a <= 0.0:
        return None
    disc = max(0.0, b * b - a * c)
    root = math.sqrt(disc)
    return (b - root) / a, (b + root) / a


def clustered_delta(
    a: ArrayLike,
    b: ArrayLike,
    clusters: Sequence[object] | ArrayLike,
    *,
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
    n_permutations: int = 10_000,
    lower: float = -1.0,
    upper: float = 1.0,
    test: str = "cluster_sign_flip",
) -> ClusteredDelta:
    """Interval and p-value of ``mean(b - a)`` from one clustered test (one verdict per cell).

    The p-value is the cluster sign-flip test of ``sum_k s_k`` (exact when at most
    `EXACT_CLUSTERS` clusters moved, else ``n_permutations`` seeded patterns). Its statistic,
    Obuchowski's ``X2 = (K-1)/K (sum s_k)**2 / sum s_k**2``, has a permutation distribution that
    is close to chi-square with the t(K-1) correction; the interval is every shift ``delta`` in
    ``[lower, upper]`` whose shifted statistic stays within that reference (closed form). The
    end on 0's side is decided by the p-value shown: where the approximation and the
    permutation disagree about 0, that bound is put at 0 (and the note says so), so the interval
    excludes 0 exactly when ``p < 1 - confidence``. ``test`` names the result
    (``"clustered_mcnemar"`` on binary metrics)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be strictly between 0 and 1")
    d = _diff(a, b)
    if d.size == 0:
        return ClusteredDelta(
            undefined("no entries", level=confidence, method="cluster sign-flip"),
            TestResult(test, 0.0, 1.0, 0, "no entries"),
        )
    s, m = _sums(d, clusters)
    k = int(s.size)
    total, size = float(s.sum()), float(m.sum())
    alpha = 1.0 - confidence
    est = total / size
    moved = s != 0.0
    if k < 2:  # one draw, whatever moved inside it: as the rate's, no interval
        return ClusteredDelta(
            Interval(est, lower, upper, confidence, "cluster sign-flip", ONE_CLUSTER),
            TestResult(test, 0.0 if test == "clustered_mcnemar" else est, 1.0, k, "one cluster"),
        )
    ss = float(np.sum(s * s))
    x2 = 0.0 if ss == 0.0 or k < 2 else (k - 1) / k * total * total / ss
    if not moved.any():
        p, method = 1.0, "no cluster moved"
        exact_floor = 0.0
    else:
        f = _flips(s[moved], rng, n_permutations)
        p = f.pvalue(total)
        method = _method(f, int(moved.sum()))
        exact_floor = 2.0 / f.draws if f.exact else 0.0
    bounds = _obuchowski_bounds(s, m, confidence) if k >= 2 else None
    low, high = (lower, upper) if bounds is None else bounds
    if bounds is None or int(moved.sum()) < FLOOR_MOVED:
        # few clusters, or few that moved: their spread says little about how far others could
        # move, so never narrower than the bounded score interval over the clusters' mean
        # changes, each cluster one observation (with nothing moved: Tango's for K pairs)
        means = s / m
        if lower == -1.0 and upper == 1.0 and np.all(np.abs(means) == np.round(np.abs(means))):
            # whole-cluster moves of 0/1 outcomes: the score interval is Tango's, closed form
            flat = tango_paired(
                int(np.sum(means > 0)), int(np.sum(means < 0)), k, confidence=confidence
            )
        else:
            flat = score_mean_interval(means, lower=lower, upper=upper, confidence=confidence)
        if flat.low is not None and flat.high is not None:
            if bounds is None:
                low, high = flat.low, flat.high
            else:
                low, high = min(low, flat.low), max(high, flat.high)
    low, high = max(lower, min(low, est)), min(upper, max(high, est))
    notes: list[str] = []
    low, high, moved_end = zero_end_follows(low, high, est, p, alpha)
    if moved_end:
        notes.append(
            "the interval's end at 0 follows the permutation p-value (its t approximation "
            "leaned the other way)"
        )
    if moved.any() and exact_floor >= alpha:
        notes.append(
            f"only {int(moved.sum())} clusters moved: even all of them moving one way gives "
            f"p = {exact_floor:.3g}, so no change can be told from noise at {alpha:g}"
        )
    iv = Interval(est, low, high, confidence, "cluster sign-flip", "; ".join(notes) or None)
    stat = x2 if test == "clustered_mcnemar" else float(d.mean())
    return ClusteredDelta(iv, TestResult(test, stat, p, k, method))


def cluster_mean_interval(
    values: ArrayLike,
    clusters: Sequence[object] | ArrayLike,
    *,
    confidence: float = 0.95,
    lower: float = 0.0,
    upper: float = 1.0,
) -> Interval:
    """Interval of the mean of bounded graded values (recall, nDCG) when entries come in
    clusters: the bounded score interval over the clusters' means (each cluster one
    observation), never narrower than the entry-level score interval and always holding the
    entry-weighted mean. 0/1 values: `cluster_rate_interval`."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size == 0:
        return undefined("no entries", level=confidence, method="cluster score")
    if np.all((x == 0.0) | (x == 1.0)):
        return cluster_rate_interval(x, clusters, confidence=confidence)
    y, m = _sums(x, clusters)
    est = float(x.mean())
    if y.size < 2:  # one draw: as `cluster_rate_interval`, no interval
        return Interval(est, lower, upper, confidence, "cluster score", ONE_CLUSTER)
    # the cluster means are the draws: a cell with few of them off the usual one gets the exact
    # interval over them, as a cell of entries does (`graded_mean_interval`)
    per_cluster = graded_mean_interval(y / m, lower=lower, upper=upper, confidence=confidence)
    flat = graded_mean_interval(x, lower=lower, upper=upper, confidence=confidence)
    lows = [v for v in (per_cluster.low, flat.low) if v is not None]
    highs = [v for v in (per_cluster.high, flat.high) if v is not None]
    low = min([*lows, est]) if lows else lower
    high = max([*highs, est]) if highs else upper
    note = f"{x.size} entries in {y.size} clusters: the score interval over the cluster means"
    return Interval(est, low, high, confidence, "cluster score", note)


def icc_oneway(values: ArrayLike, clusters: Sequence[object] | ArrayLike) -> float:
    """The intraclass correlation of ``values`` within clusters, one-way ANOVA estimator
    ``(MSB - MSW) / (MSB + (m0 - 1) MSW)`` with ``m0`` the size-adjusted mean cluster size,
    clipped to [0, 1] (0 when there is no within-cluster spread to compare against: fewer than
    2 clusters or no cluster with 2 entries)."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    codes, k = cluster_codes(clusters)
    if codes.size != x.size:
        raise ValueError(f"{x.size} values but {codes.size} cluster labels")
    n = x.size
    m = np.bincount(codes, minlength=k).astype(np.float64)
    if k < 2 or n - k < 1:
        return 0.0
    means = np.bincount(codes, weights=x, minlength=k) / m
    grand = float(x.mean())
    msb = float(np.sum(m * (means - grand) ** 2)) / (k - 1)
    msw = float(np.sum((x - means[codes]) ** 2)) / (n - k)
    m0 = (n - float(np.sum(m * m)) / n) / (k - 1)
    denom = msb + (m0 - 1.0) * msw
    if denom <= 0.0:
        return 0.0
    return float(min(1.0, max(0.0, (msb - msw) / denom)))


def zero_end_follows(
    low: float, high: float, est: float, p: float, alpha: float
) -> tuple[float, float, bool]:
    """Bounds whose verdict on 0 is the p-value's: an interval excludes 0 exactly when
    ``p < alpha``. Where the interval's own test leaned the other way, its end on 0's side is
    moved to 0 (just past 0 when ``p`` rejects); the third value says whether that happened."""
    rejects = p < alpha
    if (low > 0.0 or high < 0.0) == rejects:
        return low, high, False
    if rejects:
        tiny = math.ulp(0.0)
        return (max(low, tiny), high, True) if est > 0 else (low, min(high, -tiny), True)
    return min(low, 0.0), max(high, 0.0), True


def clustered_mcnemar(
    fixed: ArrayLike, broken: ArrayLike, sizes: ArrayLike | None = None
) -> dict[str, TestResult]:
    """Asymptotic clustered McNemar tests from per-cluster discordant counts.

    ``fixed[k]``, ``broken[k]``: entries of cluster ``k`` that went 0 -> 1 and 1 -> 0; ``sizes``
    the cluster sizes (Durkalski's statistic needs them). Returns Obuchowski's (1998)
    ``X2 = (K-1)/K (sum d_k)^2 / sum d_k^2`` and Durkalski et al.'s (2003)
    ``X2 = (sum d_k / n_k)^2 / sum (d_k / n_k)^2`` with ``d_k = fixed_k - broken_k``, each with
    its chi-square(1) p-value. (The compare table uses the permutation p-value of Obuchowski's
    statistic, exact with few clusters: `clustered_delta`.)"""
    f = np.asarray(fixed, dtype=np.float64).reshape(-1)
    g = np.asarray(broken, dtype=np.float64).reshape(-1)
    if f.shape != g.shape:
        raise ValueError("fixed and broken need one count per cluster")
    k = int(f.size)
    d = f - g
    out: dict[str, TestResult] = {}
    ss = float(np.sum(d * d))
    x2 = 0.0 if ss == 0.0 or k < 2 else (k - 1) / k * float(d.sum()) ** 2 / ss
    out["obuchowski"] = TestResult(
        "clustered_mcnemar", x2, chi2_sf_1(x2) if ss else 1.0, k, "Obuchowski chi-square"
    )
    if sizes is not None:
        n = np.asarray(sizes, dtype=np.float64).reshape(-1)
        if n.shape != f.shape or np.any(n <= 0):
            raise ValueError("sizes need one positive count per cluster")
        r = d / n
        rr = float(np.sum(r * r))
        x2d = 0.0 if rr == 0.0 else float(r.sum()) ** 2 / rr
        out["durkalski"] = TestResult(
            "clustered_mcnemar", x2d, chi2_sf_1(x2d) if rr else 1.0, k,
            "Durkalski chi-square",
        )  # fmt: skip
    return out


def cluster_rate_interval(
    values: ArrayLike,
    clusters: Sequence[object] | ArrayLike,
    *,
    confidence: float = 0.95,
) -> Interval:
    """Interval of a rate (the mean of 0/1 values) when entries come in clusters.

    Wilson's interval at the effective sample size ``n_eff = n / deff * (z / t_{K-1})**2``
    (Korn and Graubard's), Clopper-Pearson's (with non-integer counts) when fewer than
    `RARE_EVENTS` effective events or non-events. ``deff`` is the ratio estimator's variance
    over the binomial one, at least 1; when every value is equal the data cannot estimate it,
    and the worst case (every cluster one draw, ``deff = sum m_k**2 / n``) is used."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size and not np.all((x == 0.0) | (x == 1.0)):
        raise ValueError("a rate interval needs 0/1 values")
    n = int(x.size)
    if n == 0:
        return undefined("no entries", level=confidence, method="cluster wilson")
    y, m = _sums(x, clusters)
    k = int(y.size)
    p = float(x.mean())
    if k < 2:
        return Interval(p, 0.0, 1.0, confidence, "cluster wilson", ONE_CLUSTER)
    if 0.0 < p < 1.0:
        var_cl = k / (k - 1) * float(np.sum((y - p * m) ** 2)) / (n * n)
        deff = max(1.0, var_cl / (p * (1.0 - p) / n))
    else:
        deff = float(np.sum(m * m)) / n
    z = norm_ppf(0.5 + confidence / 2.0)
    t = _t_quantile(confidence, k - 1)
    n_eff = min(float(n), n / deff * (z / t) ** 2)
    events = p * n_eff
    if min(events, n_eff - events) < RARE_EVENTS:
        from scipy.stats import beta  # scipy.stats: import on first use

        a = 1.0 - confidence
        low = 0.0 if p == 0.0 else float(beta.ppf(a / 2, events, n_eff - events + 1))
        high = 1.0 if p == 1.0 else float(beta.ppf(1 - a / 2, events + 1, n_eff - events))
        method = "cluster clopper-pearson"
    else:
        low, high = _wilson_bounds(events, n_eff, z)
        method = "cluster wilson"
    note = f"{n} entries in {k} clusters: effective size {n_eff:.1f} (design effect {deff:.2f})"
    return Interval(p, low, high, confidence, method, note)
