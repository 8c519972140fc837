"""Intervals for a rate and for a paired difference of rates that cover at small n and rare events.

A binary metric (complete@k: did the top k hold every required piece?) averaged over entries is a
proportion, and a proportion has intervals with known small-sample behaviour. The bootstrap of a
proportion does not: on 30 entries with a true rate of 0.05 its percentile interval covers about
78% of the time, and on all-equal data (every entry passed) it is a single point although the
truth is plainly uncertain. So binary metrics get:

* a rate: the **Wilson** score interval, or **Clopper-Pearson** (exact, conservative), and by
  default (``"auto"``) Wilson with Clopper-Pearson for rare events: when fewer than
  `RARE_EVENTS` (4) entries passed, or fewer than 4 failed. Wilson inverts the score test; at
  n = 30 its coverage is 93.9% at p = 0.05 and 95.6% at p = 0.12 (exact binomial sums), but just
  below the lower bound Wilson gives one success (p = 0.0059 at n = 30) it covers only 84%: its
  lower bound for 1, 2 or 3 events is too high. Over every p in (0, 1) and n from 8 to 1000, the
  smallest coverage (exact binomial sums, `bench/bench_rate_coverage.py`) is 83.4% for Wilson
  and 91.9% with Clopper-Pearson below 4 events (n = 36, p = 0.0975); what remains is Wilson's
  oscillation, shared by every interval that is not conservative. The threshold 4 is where the
  rare-event dip stops being the worst one.
* a paired difference (candidate minus baseline on the same entries): the **Tango** (1998) score
  interval (default), which inverts the score test of ``p_fixed - p_broken = delta`` with the
  constrained maximum-likelihood estimate of ``p_broken`` in closed form; or **Newcombe**'s (1998)
  square-and-add "method 10", built from the two marginal Wilson intervals with a correlation
  correction. Tango depends only on the numbers fixed and broken and on n.

Checked against statsmodels' ``proportion_confint`` (Wilson, Clopper-Pearson) and the worked
examples of Fagerland, Lydersen and Laake (2017, the paired 2x2 table of Cavo et al.: 59 both, 6
first only, 16 second only, 80 neither: Tango -0.1240 to -0.0054, Newcombe -0.1186 to -0.0046);
coverage by simulation in ``tests/stats/test_proportion.py``.

No interval here has zero width when the truth is uncertain: 30 of 30 passing gives Wilson
[0.886, 1]; nothing moving among 30 paired entries gives Tango [-0.114, +0.114].
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from assay.report import Interval, undefined
from assay.stats._dist import brentq, norm_ppf

__all__ = [
    "RARE_EVENTS",
    "PairedMethod",
    "RateMethod",
    "clopper_pearson",
    "newcombe_paired",
    "paired_proportion_diff",
    "rate_ci",
    "rate_interval",
    "tango_paired",
    "wilson",
]

RateMethod = Literal["auto", "wilson", "clopper-pearson"]
RATE_METHODS: tuple[str, ...] = ("auto", "wilson", "clopper-pearson")

#: Below this many events (passes) or non-events (fails), ``"auto"`` uses Clopper-Pearson.
RARE_EVENTS = 4
PairedMethod = Literal["tango", "newcombe"]


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be strictly between 0 and 1")
    return norm_ppf(0.5 + confidence / 2.0)


def _counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")


def _wilson_bounds(successes: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's bounds; counts may be real (an effective sample size, `assay.stats.clusters`)."""
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    # exact at the boundaries (0 successes -> low 0, all -> high 1), free of rounding
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def wilson(successes: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a rate ``successes / n``.

    >>> wilson(0, 30).fmt()
    '0.000 [0.00, 0.11]'
    """
    _counts(successes, n)
    z = _z(confidence)
    if n == 0:
        return undefined("no entries", level=confidence, method="wilson")
    low, high = _wilson_bounds(successes, n, z)
    return Interval(successes / n, low, high, confidence, "wilson")


def clopper_pearson(successes: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Clopper-Pearson ("exact") interval for a rate: never below nominal coverage, often above."""
    _counts(successes, n)
    _z(confidence)
    if n == 0:
        return undefined("no entries", level=confidence, method="clopper-pearson")
    from scipy.stats import beta  # scipy.stats: import on first use

    a = 1.0 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(a / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - a / 2, successes + 1, n - successes))
    return Interval(successes / n, low, high, confidence, "clopper-pearson")


def rate_ci(
    successes: int, n: int, *, confidence: float = 0.95, method: RateMethod = "auto"
) -> Interval:
    """The interval of a rate ``successes / n`` by ``method``.

    ``"auto"`` (default): Wilson, except when fewer than `RARE_EVENTS` entries passed or fewer
    than `RARE_EVENTS` failed, where Wilson under-covers and Clopper-Pearson is used (the
    interval's ``method`` and ``note`` say so). 1 of 30: Wilson [0.006, 0.167] would cover a true
    rate of 0.005 never; Clopper-Pearson gives [0.001, 0.172].
    """
    if method == "wilson":
        return wilson(successes, n, confidence=confidence)
    if method == "clopper-pearson":
        return clopper_pearson(successes, n, confidence=confidence)
    if method != "auto":
        raise ValueError(f"unknown rate interval {method!r}: use {', '.join(RATE_METHODS)}")
    _counts(successes, n)
    if n and min(successes, n - successes) < RARE_EVENTS:
        iv = clopper_pearson(successes, n, confidence=confidence)
        note = (
            f"{successes} of {n}: fewer than {RARE_EVENTS} on one side, so Clopper-Pearson's "
            "exact interval (Wilson's under-covers rare events)"
        )
        return Interval(iv.value, iv.low, iv.high, confidence, iv.method, note)
    return wilson(successes, n, confidence=confidence)


def rate_interval(
    values: ArrayLike, *, confidence: float = 0.95, method: RateMethod = "auto"
) -> Interval:
    """The interval of the mean of 0/1 values (a rate) by ``method`` (see `rate_ci`)."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.size and not np.all((x == 0.0) | (x == 1.0)):
        raise ValueError("a rate interval needs 0/1 values")
    return rate_ci(int(x.sum()), int(x.size), confidence=confidence, method=method)


def _tango_stat(fixed: int, broken: int, n: int, delta: float) -> float:
    """Tango's score statistic for H0: p_fixed - p_broken = delta (decreasing in delta)."""
    # constrained MLE of p_broken: the positive root of
    #   2n q^2 - [f(1 + d) + g(1 - d) - 2n d] q - g d (1 - d) = 0
    b = fixed * (1.0 + delta) + broken * (1.0 - delta) - 2.0 * n * delta
    disc = b * b + 8.0 * n * broken * delta * (1.0 - delta)
    q = (b + math.sqrt(max(0.0, disc))) / (4.0 * n)
    var = n * (2.0 * q + delta - delta * delta)
    num = fixed - broken - n * delta
    if var <= 0.0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_paired(fixed: int, broken: int, n: int, *, confidence: float = 0.95) -> Interval:
    """Tango's score interval for ``(fixed - broken) / n``, the paired difference of two rates.

    ``fixed`` entries went 0 -> 1, ``broken`` went 1 -> 0, of ``n`` paired entries. The interval
    is every ``delta`` the score test does not reject at ``1 - confidence``; its bounds are
    found by root finding (to 1e-12).
    """
    if n < 0 or fixed < 0 or broken < 0 or fixed + broken > n:
        raise ValueError(f"need fixed + broken <= n, got {fixed} + {broken} of {n}")
    z = _z(confidence)
    if n == 0:
        return undefined("no entries", level=confidence, method="tango")
    est = (fixed - broken) / n
    eps = 1e-12

    def stat(d: float) -> float:
        return _tango_stat(fixed, broken, n, d)

    if est <= -1.0 + eps or stat(-1.0 + eps) <= z:
        low = -1.0
    else:
        low = float(brentq(lambda d: stat(d) - z, -1.0 + eps, est, xtol=1e-13))
    if est >= 1.0 - eps or stat(1.0 - eps) >= -z:
        high = 1.0
    else:
        high = float(brentq(lambda d: stat(d) + z, est, 1.0 - eps, xtol=1e-13))
    return Interval(est, low, high, confidence, "tango")


def newcombe_paired(
    both: int, fixed: int, broken: int, neither: int, *, confidence: float = 0.95
) -> Interval:
    """Newcombe's (1998) square-and-add interval ("method 10") for a paired difference of rates.

    The cells: ``both`` entries pass in both runs, ``fixed`` only in the candidate, ``broken``
    only in the baseline, ``neither`` in neither. The difference is candidate minus baseline.
    """
    cells = (both, fixed, broken, neither)
    if min(cells) < 0:
        raise ValueError("cell counts must be non-negative")
    z = _z(confidence)
    n = sum(cells)
    if n == 0:
        return undefined("no entries", level=confidence, method="newcombe")
    cand, base = both + fixed, both + broken
    p1, p2 = cand / n, base / n
    l1, u1 = _wilson_bounds(cand, n, z)
    l2, u2 = _wilson_bounds(base, n, z)
    if min(cand, n - cand, base, n - base) == 0:
        phi = 0.0
    else:
        prod = float(cand) * (n - cand) * base * (n - base)
        a = both * neither - fixed * broken
        # Newcombe's continuity-corrected correlation of the two margins
        phi = (
            (a - n / 2) / math.sqrt(prod) if a > n / 2 else (0.0 if a >= 0 else a / math.sqrt(prod))
        )
    est = p1 - p2
    low = est - math.sqrt(
        max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2))
    )
    high = est + math.sqrt(
        max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1))
    )
    return Interval(est, max(-1.0, low), min(1.0, high), confidence, "newcombe")


def paired_proportion_diff(
    base: ArrayLike, cand: ArrayLike, *, confidence: float = 0.95, method: PairedMethod = "tango"
) -> Interval:
    """Interval of ``mean(cand) - mean(base)`` for paired 0/1 outcomes, by ``method``."""
    a = np.asarray(base, dtype=np.float64).reshape(-1)
    b = np.asarray(cand, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in length: {a.size} and {b.size}")
    for x in (a, b):
        if x.size and not np.all((x == 0.0) | (x == 1.0)):
            raise ValueError("a paired proportion interval needs 0/1 values")
    ab, bb = a > 0.5, b > 0.5
    both = int(np.sum(ab & bb))
    fixed = int(np.sum(~ab & bb))
    broken = int(np.sum(ab & ~bb))
    neither = int(a.size) - both - fixed - broken
    if method == "tango":
        return tango_paired(fixed, broken, int(a.size), confidence=confidence)
    if method == "newcombe":
        return newcombe_paired(both, fixed, broken, neither, confidence=confidence)
    raise ValueError(f"unknown paired interval {method!r}: use tango or newcombe")
