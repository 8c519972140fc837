"""A score interval and test for the mean of a bounded variable: Wilson and Tango, generalised.

Graded metrics (recall@k, ndcg@k, mrr) lie in ``[0, 1]``, and a paired difference of two runs'
graded values in ``[-1, 1]``. Their means need intervals that behave at small n, on skewed data
(an mrr column that is mostly 0, a delta where 85% of entries did not move) and on data that show
no variation at all, where a bootstrap collapses to a point. For 0/1 data the answer is known:
Wilson's score interval for a rate, Tango's for a paired difference of rates. Both invert a
*score test*: the statistic ``(mean - mu) / sqrt(var_0(mu) / n)`` with the variance evaluated
under the null, at the distribution closest to the data whose mean is ``mu``.

This module does the same for any bounded values. Under ``H0: E[X] = mu`` the distribution
closest to the data (maximum likelihood over distributions on the observed values and the two
bounds ``lower`` and ``upper``) reweights the observed values, ``p_j = w_j / (1 + lam (v_j -
mu))`` (the empirical-likelihood weights, ``w_j`` the observed shares), and puts mass on a bound
only when ``mu`` cannot be reached otherwise: the data say nothing against a value they never
showed, exactly as Wilson lets 30 passes out of 30 stand with a true rate of 0.9. The interval is
every ``mu`` whose score statistic is within ``z_{1 - alpha/2}``; the test of ``mu0`` (``0`` for
"no change") is the same statistic, so **the interval excludes ``mu0`` exactly when the test's
p-value is below ``1 - confidence``**, cell by cell.

* On 0/1 values it is Wilson's interval; on paired differences in ``{-1, 0, 1}`` it is Tango's
  (both checked to 1e-9 in the tests).
* It is never a single point: ``n`` equal values ``c`` give ``[c - W (c - lower), c + W (upper -
  c)]`` with ``W`` Wilson's upper bound for 0 events in ``n`` (six recall values of 0.5:
  [0.30, 0.70]; four paired deltas of +0.5: [-0.23, +0.74]).
* Few observations mostly report the bounds: with four entries the data cannot exclude that a
  fifth would move by the full range, and the interval says so.

The statistic is computed for many samples at once (`score_mean_bounds`) over a shared support,
which is how the coverage simulations in ``tests/stats/test_coverage.py`` run.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.report import Interval, undefined
from assay.stats._dist import brentq, norm_cdf
from assay.stats.paired import DECIMALS, TestResult
from assay.stats.proportion import RateMethod, _z, rate_interval

__all__ = [
    "EXACT_METHOD",
    "FEW_OFF_MODE",
    "METHOD",
    "GradedMethod",
    "graded_mean_interval",
    "off_mode_interval",
    "score_mean_bounds",
    "score_mean_interval",
    "score_mean_test",
    "score_statistic",
]

METHOD = "score"
GradedMethod = Literal["score", "percentile", "bca"]
"""How a graded cell or delta gets its interval: this module's score interval, or a bootstrap."""
_NEWTON_STEPS = 100

FloatArray = NDArray[np.float64]


def _null_variance(
    v: FloatArray,
    w: FloatArray,
    mu: FloatArray,
    lower: float,
    upper: float,
    lam0: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The variance about ``mu`` of the distribution closest to the data with mean ``mu``.

    ``v`` (K,) is the support, ``w`` (R, K) each sample's shares on it (rows sum to 1), ``mu``
    (R,) strictly inside ``(lower, upper)``. Maximum likelihood over distributions on the support
    and the two bounds, subject to mean ``mu``: ``p_j = w_j / (1 + lam x_j)`` with ``x_j = v_j -
    mu`` and ``lam`` the root of ``g(lam) = sum_j w_j x_j / (1 + lam x_j)`` (decreasing) in
    ``[-1 / (upper - mu), 1 / (mu - lower)]``, where every weight stays non-negative. When the
    root lies beyond that range the bound on that side is unobserved and takes the missing mass.
    Returns the variance and ``lam`` (a warm start for a nearby ``mu``).
    """
    x = v[None, :] - mu[:, None]
    x_lo = lower - mu
    x_hi = upper - mu
    lam_min = -1.0 / x_hi
    lam_max = -1.0 / x_lo
    seen = w > 0.0
    wx = w * x
    wxx = wx * x

    def g_at(lam: FloatArray) -> FloatArray:
        den = 1.0 + lam[:, None] * x
        with np.errstate(divide="ignore", invalid="ignore"):
            total = np.where(seen, wx / den, 0.0).sum(axis=1)
            blocked = np.any(seen & (den <= 0.0), axis=1)
        return np.where(blocked, np.nan, total)

    g_max = g_at(lam_max)  # NaN: the lower bound is observed, g -> -inf there
    g_min = g_at(lam_min)  # NaN: the upper bound is observed, g -> +inf there
    at_max = ~np.isnan(g_max) & (g_max >= 0.0)
    at_min = ~at_max & ~np.isnan(g_min) & (g_min <= 0.0)

    lo_b = lam_min.copy()
    hi_b = lam_max.copy()
    lam = np.zeros_like(mu) if lam0 is None else np.clip(lam0, lam_min, lam_max)
    lam = np.where((lam > lo_b) & (lam < hi_b), lam, 0.0)
    active = ~(at_max | at_min)
    for _ in range(_NEWTON_STEPS):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        la = lam[idx]
        inv = 1.0 / (1.0 + la[:, None] * x[idx])
        gv = (wx[idx] * inv).sum(axis=1)
        dg = -(wxx[idx] * inv * inv).sum(axis=1)
        lo = np.where(gv > 0.0, la, lo_b[idx])
        hi = np.where(gv > 0.0, hi_b[idx], la)
        lo_b[idx], hi_b[idx] = lo, hi
        with np.errstate(divide="ignore", invalid="ignore"):
            step = la - gv / dg
        ok = np.isfinite(step) & (((step > lo) & (step < hi)) | (step == la))
        new = np.where(gv == 0.0, la, np.where(ok, step, 0.5 * (lo + hi)))
        lam[idx] = new
        done = np.abs(new - la) <= 1e-15 * (1.0 + np.abs(la))
        active[idx[done]] = False
    lam = np.where(at_max, lam_max, np.where(at_min, lam_min, lam))
    den = 1.0 + lam[:, None] * x
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(seen, w / den, 0.0)
    rest = np.clip(1.0 - p.sum(axis=1), 0.0, 1.0)
    var = (p * x * x).sum(axis=1)
    var = (
        var + np.where(at_max, rest * x_lo * x_lo, 0.0) + np.where(at_min, rest * x_hi * x_hi, 0.0)
    )
    return np.asarray(var, dtype=np.float64), lam


def _statistic(
    v: FloatArray,
    w: FloatArray,
    n: FloatArray,
    mean: FloatArray,
    mu: FloatArray,
    lower: float,
    upper: float,
    lam0: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    var, lam = _null_variance(v, w, mu, lower, upper, lam0)
    diff = mean - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff * np.sqrt(n) / np.sqrt(var)
    z = np.where(var > 0.0, z, np.where(diff == 0.0, 0.0, np.copysign(np.inf, diff)))
    return np.asarray(z, dtype=np.float64), lam


def _prepare(
    support: ArrayLike, counts: ArrayLike, lower: float, upper: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"need finite bounds lower < upper, got {lower} and {upper}")
    v = np.asarray(support, dtype=np.float64).reshape(-1)
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    if c.shape[1] != v.size:
        raise ValueError(f"counts have {c.shape[1]} columns for a support of {v.size} values")
    if np.any(c < 0.0):
        raise ValueError("counts must be non-negative")
    if v.size and (np.any(v < lower) or np.any(v > upper)):
        raise ValueError(f"values must lie in [{lower:g}, {upper:g}]")
    n = c.sum(axis=1)
    if np.any(n <= 0.0):
        raise ValueError("every sample needs at least one value")
    w = c / n[:, None]
    mean = (w * v[None, :]).sum(axis=1)
    return v, w, n, mean


def score_mean_bounds(
    support: ArrayLike,
    counts: ArrayLike,
    *,
    lower: float = 0.0,
    upper: float = 1.0,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Means and score-interval bounds of many samples at once: ``(mean, low, high)``.

    ``support`` (K,) lists values in ``[lower, upper]``; ``counts`` (R, K) how often each sample
    took each value. Each bound is where the (monotone) score statistic crosses
    ``+-z_{1 - alpha/2}``, found by the Illinois variant of regula falsi inside a bracket until
    the bracket is narrower than ``(upper - lower) * 1e-13``, and reported on its accepted side;
    a bound the statistic never reaches is the parameter's bound.
    """
    z = _z(confidence)
    v, w, n, mean = _prepare(support, counts, lower, upper)
    span = upper - lower
    eps = span * 1e-12
    tol = span * 1e-13
    out: list[FloatArray] = []
    for side in (-1.0, 1.0):
        # f(mu) = side * z(mu) + z_crit ... written so that f > 0 where mu is rejected
        edge = np.full_like(mean, lower + eps if side < 0 else upper - eps)
        edge_z, _ = _statistic(v, w, n, mean, edge, lower, upper)
        f_edge = (edge_z - z) if side < 0 else (-edge_z - z)
        on_edge = (mean <= lower + eps) if side < 0 else (mean >= upper - eps)
        reach = (f_edge > 0.0) & ~on_edge
        bound = np.full_like(mean, lower if side < 0 else upper)
        idx = np.flatnonzero(reach)
        if idx.size:
            # bracket: r (rejected, f > 0) at the edge, a (accepted, f = -z < 0) at the mean
            r, fr = edge[idx], f_edge[idx]
            # the statistic is 0 at the mean (kept off the parameter's bounds)
            a, fa = np.clip(mean[idx], lower + eps, upper - eps), np.full(idx.size, -z)
            vv, ww, nn, mm = v, w[idx], n[idx], mean[idx]
            lam: FloatArray | None = None
            last = np.zeros(idx.size, dtype=np.int8)
            live = np.ones(idx.size, dtype=bool)
            for _ in range(200):
                live &= np.abs(a - r) > tol
                if not live.any():
                    break
                c = np.where(live, a - fa * (a - r) / (fa - fr), a)
                bad = ~np.isfinite(c) | (c <= np.minimum(a, r)) | (c >= np.maximum(a, r))
                c = np.where(bad & live, 0.5 * (a + r), c)
                zc, lam = _statistic(vv, ww, nn, mm, c, lower, upper, lam)
                fc = (zc - z) if side < 0 else (-zc - z)
                rejected = live & (fc > 0.0)
                accepted = live & ~rejected
                # Illinois: halve the stale end's value when the same end moves twice
                fa = np.where(rejected & (last == 1), 0.5 * fa, fa)
                fr = np.where(accepted & (last == -1), 0.5 * fr, fr)
                r = np.where(rejected, c, r)
                fr = np.where(rejected, fc, fr)
                a = np.where(accepted, c, a)
                fa = np.where(accepted, fc, fa)
                last = np.where(rejected, 1, np.where(accepted, -1, last)).astype(np.int8)
            bound[idx] = a
        out.append(bound)
    return mean, out[0], out[1]


def _scalar_z(
    v: FloatArray, w: FloatArray, n: float, mean: float, mu: float, lower: float, upper: float
) -> float:
    """`_statistic` for one sample (observed support ``v`` with shares ``w > 0``), lean."""
    x = v - mu
    x_lo, x_hi = lower - mu, upper - mu
    lam_min, lam_max = -1.0 / x_hi, -1.0 / x_lo
    wx = w * x

    def g(lam: float) -> float:
        return float(np.sum(wx / (1.0 + lam * x)))

    edge = 0.0
    if not np.any(1.0 + lam_max * x <= 0.0) and g(lam_max) >= 0.0:
        lam, edge = lam_max, x_lo
    elif not np.any(1.0 + lam_min * x <= 0.0) and g(lam_min) <= 0.0:
        lam, edge = lam_min, x_hi
    else:
        lo_b, hi_b, lam = lam_min, lam_max, 0.0
        wxx = wx * x
        for _ in range(_NEWTON_STEPS):
            inv = 1.0 / (1.0 + lam * x)
            gv = float(np.sum(wx * inv))
            if gv == 0.0:
                break
            if gv > 0.0:
                lo_b = lam
            else:
                hi_b = lam
            dg = -float(np.sum(wxx * inv * inv))
            step = lam - gv / dg if dg < 0.0 else math.nan
            new = step if (lo_b < step < hi_b or step == lam) else 0.5 * (lo_b + hi_b)
            if abs(new - lam) <= 1e-15 * (1.0 + abs(lam)):
                lam = new
                break
            lam = new
    p = w / (1.0 + lam * x)
    var = float(np.sum(p * x * x))
    if edge:
        var += max(0.0, 1.0 - float(p.sum())) * edge * edge
    diff = mean - mu
    if var <= 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff * math.sqrt(n) / math.sqrt(var)


def _scalar_bounds(
    support: FloatArray, counts: FloatArray, lower: float, upper: float, z: float
) -> tuple[float, float, float]:
    n = float(counts.sum())
    w = counts / n
    mean = float(np.sum(w * support))
    span = upper - lower
    eps = span * 1e-12

    def f(mu: float) -> float:
        return _scalar_z(support, w, n, mean, mu, lower, upper)

    low, high = lower, upper
    # the statistic is 0 at the mean; each bound lies between the mean and a parameter bound
    inner = min(max(mean, lower + eps), upper - eps)
    if mean > lower + eps and f(lower + eps) > z:
        low = float(brentq(lambda m: f(m) - z, lower + eps, inner, xtol=span * 1e-14))
    if mean < upper - eps and f(upper - eps) < -z:
        high = float(brentq(lambda m: f(m) + z, inner, upper - eps, xtol=span * 1e-14))
    return mean, low, high


def _one(values: ArrayLike, decimals: int) -> tuple[FloatArray, FloatArray]:
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size and not np.all(np.isfinite(x)):
        raise ValueError("values must be finite (no NaN or inf)")
    x = np.round(x, decimals)
    support, counts = np.unique(x, return_counts=True)
    return support, counts.astype(np.float64)


def score_statistic(
    values: ArrayLike, mu: float, *, lower: float = 0.0, upper: float = 1.0
) -> float:
    """The score statistic ``(mean - mu) sqrt(n) / sd_0(mu)`` of H0 ``E[X] = mu``."""
    support, counts = _one(values, DECIMALS)
    if counts.size == 0:
        raise ValueError("no values")
    if not lower < mu < upper:
        raise ValueError(f"mu must lie strictly inside ({lower:g}, {upper:g})")
    v, w, n, mean = _prepare(support, counts[None, :], lower, upper)
    return _scalar_z(v, w[0], float(n[0]), float(mean[0]), mu, lower, upper)


def score_mean_test(
    values: ArrayLike, mu0: float = 0.0, *, lower: float = 0.0, upper: float = 1.0
) -> TestResult:
    """Two-sided score test of ``E[X] = mu0``: the test `score_mean_interval` inverts.

    ``p = 2 Phi(-|z|)``; the interval at ``confidence`` excludes ``mu0`` exactly when
    ``p < 1 - confidence``. No values: p = 1.
    """
    _support, counts = _one(values, DECIMALS)
    if counts.size == 0:
        return TestResult("score", 0.0, 1.0, 0, "no values")
    z = score_statistic(values, mu0, lower=lower, upper=upper)
    p = 1.0 if z == 0.0 else min(1.0, 2.0 * norm_cdf(-abs(z)))
    return TestResult("score", z, p, int(counts.sum()), "score test of the mean (normal)")


def score_mean_interval(
    values: ArrayLike,
    *,
    lower: float = 0.0,
    upper: float = 1.0,
    confidence: float = 0.95,
    decimals: int = DECIMALS,
) -> Interval:
    """Score interval for the mean of values bounded by ``[lower, upper]``.

    Wilson's interval on 0/1 values, Tango's on paired differences in ``{-1, 0, 1}``; see the
    module docstring. Values are rounded to ``decimals`` places first (``2/3 - 1/3`` and ``1/3``
    are one value). No values: undefined.

    >>> score_mean_interval([0.5] * 6).fmt()
    '0.500 [0.30, 0.70]'
    """
    _z(confidence)
    support, counts = _one(values, decimals)
    if counts.size == 0:
        return undefined("no values", level=confidence, method=METHOD)
    _prepare(support, counts[None, :], lower, upper)  # validates
    mean, low, high = _scalar_bounds(support, counts, lower, upper, _z(confidence))
    n = int(counts.sum())
    note = None
    if support.size == 1:
        note = (
            f"all {n} values equal {support[0]:g}: no variation was observed; the interval is "
            f"what {n} identical values allow for a mean in [{lower:g}, {upper:g}]"
        )
    return Interval(mean, low, high, confidence, METHOD, note)


#: Fewer values than this away from a cell's most common value: `graded_mean_interval` is exact.
FEW_OFF_MODE = 4
EXACT_METHOD = "exact (off-mode count)"


def off_mode_interval(
    values: ArrayLike,
    *,
    lower: float = 0.0,
    upper: float = 1.0,
    confidence: float = 0.95,
    decimals: int = DECIMALS,
) -> Interval:
    """Exact interval for the mean of bounded values that almost all equal one value.

    Write ``v`` for the most common value (the larger on a tie), ``r`` for how many of the
    ``n`` values differ from it and ``q`` for the chance that a value does. Whatever the other
    values are, the mean is ``v + q c`` with ``c`` in ``[lower - v, upper - v]``, so every mean
    with ``q`` at most Clopper-Pearson's one-sided upper bound ``q_U`` for ``r`` of ``n`` (at
    ``confidence``) lies in ``[v - q_U (v - lower), v + q_U (upper - v)]``, which therefore
    covers the mean at least as often as ``q_U`` covers ``q``. It is what a cell of graded
    values with a few values off the usual one gets (a recall of 0.9 with the odd 0): their
    score interval leans on a variance the few off values cannot estimate (coverage 0.83 on
    two-valued cells, ``tests/stats/test_off_mode.py``). No values: undefined."""
    from scipy.stats import beta

    _z(confidence)
    support, counts = _one(values, decimals)
    if counts.size == 0:
        return undefined("no values", level=confidence, method=EXACT_METHOD)
    _prepare(support, counts[None, :], lower, upper)  # validates
    n = float(counts.sum())
    top = int(np.flatnonzero(counts == counts.max())[-1])
    v = float(support[top])
    r = n - float(counts[top])
    q_u = 1.0 if r >= n else float(beta.ppf(confidence, r + 1.0, n - r))
    mean = float(np.sum(support * counts) / n)
    low = min(mean, v - q_u * (v - lower))
    high = max(mean, v + q_u * (upper - v))
    note = (
        f"{int(r)} of {int(n)} values differ from {v:g}: exact bound {q_u:.3g} on how often "
        f"a value does (Clopper-Pearson), any value in [{lower:g}, {upper:g}]"
    )
    return Interval(mean, low, high, confidence, EXACT_METHOD, note)


def graded_mean_interval(
    values: ArrayLike,
    *,
    lower: float = 0.0,
    upper: float = 1.0,
    confidence: float = 0.95,
    rate_method: RateMethod = "auto",
) -> Interval:
    """The interval of a graded cell's mean, routed as `assay score` and `assay check` route a
    cell: values all 0 or 1 (in [0, 1]) are a rate, whatever the metric's declared kind, and get
    `rate_interval` by ``rate_method`` (``"auto"``: Wilson, Clopper-Pearson below 4 passes or
    fails); otherwise, when fewer than `FEW_OFF_MODE` values differ from the most common one,
    the exact `off_mode_interval` (widened to the score interval where that is wider), else the
    score interval (`score_mean_interval`). Coverage on two-valued cells is computed exactly in
    ``tests/stats/test_off_mode.py``."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if lower == 0.0 and upper == 1.0 and x.size and bool(np.all((x == 0.0) | (x == 1.0))):
        return rate_interval(x, confidence=confidence, method=rate_method)
    score = score_mean_interval(values, lower=lower, upper=upper, confidence=confidence)
    _support, counts = _one(values, DECIMALS)
    if not counts.size or float(counts.sum() - counts.max()) >= FEW_OFF_MODE:
        return score
    exact = off_mode_interval(values, lower=lower, upper=upper, confidence=confidence)
    assert exact.low is not None and exact.high is not None
    assert score.low is not None and score.high is not None
    # never narrower than the score interval: the exact bound is what is added
    return Interval(
        exact.value, min(exact.low, score.low), max(exact.high, score.high), confidence,
        EXACT_METHOD, exact.note,
    )  # fmt: skip
