"""Paired tests for two runs over the same entries.

* Binary outcomes (complete@k): `mcnemar_exact` on the discordant pairs. ``fixed`` counts entries
  that went 0 -> 1, ``broken`` those that went 1 -> 0; under no change each discordant pair is a
  fair coin, so the two-sided p-value is ``min(1, 2 * P[Binomial(fixed + broken, 1/2) <=
  min(fixed, broken)])``.
* Partial credit (recall@k): `wilcoxon_moved`, the Wilcoxon signed-rank test over the entries
  whose value moved (zero differences dropped, as in ``scipy.stats.wilcoxon(zero_method="wilcox")``),
  and `sign_flip_permutation`, a paired randomisation test on the mean difference.
* `paired_bootstrap_diff`: bootstrap CI of the mean paired difference ``candidate - baseline``.

All differences are ``b - a`` (candidate minus baseline), rounded to ``decimals`` places before
ranking or grouping so that values equal in exact arithmetic (``2/3 - 1/3`` and ``1/3``) are
treated as ties rather than ranked by floating-point noise.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.report import Interval
from assay.stats._dist import norm_cdf
from assay.stats.bootstrap import Method, bootstrap_ci

__all__ = [
    "DECIMALS",
    "Flips",
    "TestResult",
    "flip_totals",
    "flips",
    "mcnemar_exact",
    "paired_bootstrap_diff",
    "sign_flip_permutation",
    "wilcoxon_moved",
]

DECIMALS = 12
# Exact sign-flip enumeration when 2**moved <= this many sign patterns.
_MAX_EXACT_FLIP_PATTERNS = 1 << 16
_FLIP_BATCH_ROWS = 512


@dataclass(frozen=True, slots=True)
class TestResult:
    """One hypothesis test: its name, statistic, two-sided p-value and how many pairs it used."""

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    pvalue: float
    n: int
    method: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Flips:
    """Entries whose binary outcome changed between two runs, sorted by id."""

    fixed: tuple[str, ...]
    broken: tuple[str, ...]

    @property
    def n_fixed(self) -> int:
        return len(self.fixed)

    @property
    def n_broken(self) -> int:
        return len(self.broken)


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"paired arrays must be 1-D and the same length, got {x.shape} and {y.shape}"
        )
    if x.size and not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired values must be finite (no NaN or inf)")
    return x, y


def _diff(a: ArrayLike, b: ArrayLike, decimals: int) -> NDArray[np.float64]:
    x, y = _pair(a, b)
    return np.round(y - x, decimals)


def flips(ids: ArrayLike, a: ArrayLike, b: ArrayLike) -> Flips:
    """Which entries a binary outcome fixed (0 -> 1) and broke (1 -> 0) going from a to b."""
    x, y = _pair(a, b)
    names = np.asarray(ids, dtype=object)
    if names.shape != x.shape:
        raise ValueError("ids must align with the outcome arrays")
    xa, yb = x > 0.5, y > 0.5
    return Flips(
        fixed=tuple(sorted(str(i) for i in names[~xa & yb])),
        broken=tuple(sorted(str(i) for i in names[xa & ~yb])),
    )


_EXACT_TAILS_UP_TO = 20_000  # pairs: 28 ms at the most; beyond, scipy's routine


def binom_half(k: int, m: int, *, upper: bool = False) -> float:
    """``P[Binomial(m, 1/2) <= k]``, or ``> k`` with ``upper``.

    Up to 20,000 trials it is the exact sum of binomial coefficients over ``2**m`` in integers,
    rounded once to the nearest float (scipy's routine differs from it in the last bits for
    46% of the tails of up to 400 trials, by 3.6e-14 at the most: `bench/bench_stats_dist.py`),
    so a small test needs no scipy at all. Beyond, the value `scipy.stats.binom` gives (its own Boost routine, reached
    through `scipy.special`; `scipy.stats.binom` itself where that is missing).
    """
    if m <= _EXACT_TAILS_UP_TO:
        j = m - k - 1 if upper else k  # P[X > k] = P[X <= m - k - 1], X and m - X alike
        if j < 0 or j >= m:
            return 0.0 if j < 0 else 1.0
        # the shorter of the two sums of coefficients, the other as 2**m minus it: exact
        short = j + 1 if 2 * j < m else m - j
        total, c = 0, 1
        for i in range(short):
            total += c
            c = c * (m - i) // (i + 1)
        return (total if 2 * j < m else (1 << m) - total) / (1 << m)
    try:
        from scipy.special import _ufuncs

        f = _ufuncs._binom_sf if upper else _ufuncs._binom_cdf
    except (ImportError, AttributeError):  # another scipy release
        from scipy.stats import binom

        f = binom.sf if upper else binom.cdf
    return float(f(float(k), float(m), 0.5))


def mcnemar_exact(fixed: int, broken: int) -> TestResult:
    """Exact two-sided McNemar test: binomial test of ``fixed`` vs ``broken`` discordant pairs.

    >>> round(mcnemar_exact(6, 0).pvalue, 5)
    0.03125
    >>> round(mcnemar_exact(16, 10).pvalue, 3)
    0.327
    """
    if fixed < 0 or broken < 0:
        raise ValueError("fixed and broken must be non-negative counts")
    m = fixed + broken
    if m == 0:
        return TestResult("mcnemar_exact", 0.0, 1.0, 0, "exact binomial")
    k = min(fixed, broken)
    p = 1.0 if 2 * k == m else min(1.0, 2.0 * binom_half(k, m))
    return TestResult("mcnemar_exact", float(k), p, m, "exact binomial")


def _midranks(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Ranks from 1, ties given the mean of their ranks (``scipy.stats.rankdata``'s "average")."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.concatenate(([True], xs[1:] != xs[:-1]))
    dense = np.empty(x.size, dtype=np.intp)
    dense[order] = np.cumsum(new)
    starts = np.concatenate((np.flatnonzero(new), [x.size]))
    return np.asarray(0.5 * (starts[dense] + starts[dense - 1] + 1), dtype=np.float64)


def _signed_rank_null(doubled_ranks: NDArray[np.int64]) -> NDArray[np.float64]:
    """Exact null pmf of ``2 W+`` for the given doubled (mid)ranks.

    Under no effect each moved entry's sign is a fair coin, so ``W+`` is a sum of independent
    ``rank_i * Bernoulli(1/2)``. Midranks are multiples of 1/2, so doubling makes them integers
    and the distribution is a convolution over at most ``n (n + 1)`` integer values: exact with
    ties as well as without (the permutation distribution scipy's ``wilcoxon`` uses for small n).
    """
    top = int(doubled_ranks.sum())
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in doubled_ranks.tolist():
        counts[r:] = counts[r:] + counts[: top + 1 - r].copy()
    return np.asarray(counts / counts.sum(), dtype=np.float64)


def wilcoxon_moved(
    a: ArrayLike, b: ArrayLike, *, decimals: int = DECIMALS, exact_max_n: int = 50
) -> TestResult:
    """Wilcoxon signed-rank test over the entries that moved (``b - a != 0``).

    The statistic is ``min(W+, W-)`` over midranks of ``|b - a|``. With at most ``exact_max_n``
    moved entries the p-value is exact: the permutation distribution of ``W+`` over all sign
    patterns of the observed (mid)ranks, ties included (4 entries each moving +0.5 give
    p = 2/16 = 0.125). Beyond that it is the normal approximation with the tie correction and no
    continuity correction. This matches ``scipy.stats.wilcoxon`` on the non-zero differences
    (its default ``method="auto"``). No entry moved gives p = 1.
    """
    d = _diff(a, b, decimals)
    d = d[d != 0.0]
    n = d.size
    if n == 0:
        return TestResult("wilcoxon", 0.0, 1.0, 0, "no entry moved")
    ranks = _midranks(np.abs(d))
    w_plus = float(np.sum(ranks[d > 0]))
    w_minus = float(np.sum(ranks[d < 0]))
    stat = min(w_plus, w_minus)
    _, tie_counts = np.unique(np.abs(d), return_counts=True)
    tied = bool(np.any(tie_counts > 1))
    if n <= exact_max_n:
        doubled = np.rint(2.0 * ranks).astype(np.int64)
        pmf = _signed_rank_null(doubled)
        lo = round(2.0 * stat)
        # the null is symmetric about its mean, so P(W+ <= stat) is the one-sided tail
        p = min(1.0, 2.0 * float(pmf[: lo + 1].sum()))
        return TestResult("wilcoxon", stat, p, n, "exact (ties)" if tied else "exact")
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(tie_counts**3 - tie_counts)) / 48.0
    if var <= 0.0:
        return TestResult("wilcoxon", stat, 1.0, n, "normal approximation")
    z = (stat - mean) / np.sqrt(var)
    p = min(1.0, 2.0 * norm_cdf(-abs(z)))
    return TestResult("wilcoxon", stat, p, n, "normal approximation (tie-corrected)")


def sign_flip_permutation(
    a: ArrayLike,
    b: ArrayLike,
    *,
    rng: np.random.Generator,
    n_permutations: int = 10_000,
    decimals: int = DECIMALS,
) -> TestResult:
    """Paired randomisation (sign-flip) test of the mean difference ``mean(b - a)``, two-sided.

    Under no effect each paired difference is equally likely to have either sign. When the
    entries that moved allow at most 65,536 sign patterns, all are enumerated and the p-value is
    exact (``method="exact"``); otherwise ``n_permutations`` random patterns are drawn from
    ``rng`` and ``p = (1 + #{|T*| >= |T|}) / (1 + n_permutations)``, which never reports 0 and
    is a valid p-value. Differences that are zero cannot change sign and are left out. The
    draws: `flip_totals`.
    """
    if n_permutations < 1:
        raise ValueError("n_permutations must be >= 1")
    d = _diff(a, b, decimals)
    n_all = d.size
    d = d[d != 0.0]
    m = d.size
    if m == 0:
        return TestResult("sign_flip", 0.0, 1.0, 0, "no entry moved")
    observed = float(d.sum())
    target = abs(observed) - 1e-9 * float(np.abs(d).sum())
    stat = observed / n_all
    exact = m <= 16 and (1 << m) <= _MAX_EXACT_FLIP_PATTERNS
    totals = flip_totals(d, rng, n_permutations, exact=exact)
    hits = int(np.count_nonzero(np.abs(totals) >= target))
    if exact:
        return TestResult("sign_flip", stat, hits / totals.size, m, "exact")
    p = (1.0 + hits) / (1.0 + n_permutations)
    return TestResult("sign_flip", stat, p, m, f"monte carlo ({n_permutations} sign patterns)")


def flip_totals(
    d: NDArray[np.float64], rng: np.random.Generator | None, n_permutations: int, *, exact: bool
) -> NDArray[np.float64]:
    """``sum_i +-d_i`` over every sign pattern (``exact``) or over ``n_permutations`` random ones.

    The random draws are exact in distribution and vectorised: values are grouped by
    magnitude, and a group of ``c`` values of magnitude ``v`` contributes
    ``v * (2 * Binomial(c, 1/2) - c)``. With many distinct magnitudes, random sign bits are
    drawn in blocks and the total is a matrix-vector product. (Shared by the entry-level and the
    cluster-level sign-flip tests, `assay.stats.clusters`.)"""
    absd = np.abs(d)
    m = absd.size
    if exact:
        patterns = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1).astype(np.float64)
        return np.asarray((2.0 * patterns - 1.0) @ absd, dtype=np.float64)
    if rng is None:
        raise ValueError("a random generator is needed to draw sign patterns")
    if n_permutations < 1:
        raise ValueError("n_permutations must be >= 1")
    mags, counts = np.unique(absd, return_counts=True)
    if mags.size * 8 <= m or mags.size <= 64:
        draws = rng.binomial(counts, 0.5, size=(n_permutations, mags.size))
        return np.asarray((2.0 * draws - counts) @ mags, dtype=np.float64)
    out = np.empty(n_permutations)
    total_abs = float(absd.sum())
    for start in range(0, n_permutations, _FLIP_BATCH_ROWS):
        rows = min(_FLIP_BATCH_ROWS, n_permutations - start)
        raw = rng.integers(0, 256, size=(rows, (m + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=m)
        out[start : start + rows] = 2.0 * (bits.astype(np.float64) @ absd) - total_abs
    return out


def paired_bootstrap_diff(
    a: ArrayLike,
    b: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: Method = "percentile",
) -> Interval:
    """Bootstrap CI of ``mean(b - a)``, resampling entries (pairs) with replacement."""
    d = _diff(a, b, DECIMALS)
    return bootstrap_ci(d, rng=rng, n_resamples=n_resamples, confidence=confidence, method=method)
