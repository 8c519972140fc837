"""How many entries per category to detect a change in complete@k with a paired McNemar test.

Model. Each entry is a pair (baseline outcome, candidate outcome). Let ``p10`` be the chance an
entry is fixed (0 -> 1) and ``p01`` that it is broken (1 -> 0). The change in rate is
``delta = p10 - p01`` and the discordance rate is ``psi = p10 + p01``. With ``n`` entries the
number of discordant pairs is ``D ~ Binomial(n, psi)`` and, given ``D = d``, the fixed count is
``Binomial(d, (psi + delta) / (2 psi))``. The exact two-sided McNemar test at level ``alpha``
rejects when the fixed count is at most ``c(d)`` or at least ``d - c(d)``, where ``c(d)`` is the
largest ``x`` with ``2 * P[Binomial(d, 1/2) <= x] <= alpha``. The power at ``n`` is summed
exactly over ``d``; `plan_mcnemar` returns the smallest ``n`` (by bisection from Connor's 1987
normal approximation) whose exact power reaches the target. Exact power is sawtoothed in ``n``
(the test is discrete), so the neighbourhood of the answer is scanned downward too.

The discordance rate matters more than the change itself: the same +3 points needs far fewer
entries when the two systems disagree on 6% of entries than on 20%. Without an assumed ``psi``,
`independence_discordance` gives the value when outcomes are independent given the rates, which
is an upper bound for most system changes (real runs agree more) and so a conservative plan.
The plan is for the family `assay compare` and `assay gate` actually test: Holm over every row
(the ``categories`` and the overall row) times every compared metric (``metrics``, two by
default: complete@k and recall@k), so each test is planned at ``alpha / ((categories + 1) *
metrics)``, the first Holm step (a Bonferroni bound): the plan holds whichever category shows
the change, and Holm can only do better. With ``lifetime_comparisons = N`` the plan is for the
dataset's ``N``-th comparison, whose p-values the ledger multiplies by ``N (N + 1)``
(`assay.stats.multiple.ledger_factor`). `min_conclusive_n` is the smallest category in which
even every entry flipping one way could reach that level.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom, norm

__all__ = [
    "PlanResult",
    "family_size",
    "independence_discordance",
    "mcnemar_power",
    "min_conclusive_n",
    "observed_discordance",
    "plan_mcnemar",
]


@dataclass(frozen=True)
class PlanResult:
    n: int
    power: float
    target_power: float
    alpha: float
    alpha_per_test: float
    delta: float
    discordant: float
    n_normal_approx: int
    expected_discordant_pairs: float
    rate: float | None = None
    categories: int = 1
    metrics: int = 1
    lifetime_comparisons: int | None = None
    family: int = 1  # tests adjusted together: (categories + 1) x metrics
    min_conclusive_n: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(delta: float, discordant: float, rate: float | None) -> None:
    if not 0 < discordant <= 1:
        raise ValueError("discordance rate must be in (0, 1]")
    if delta == 0:
        raise ValueError("delta must be non-zero (the change to detect)")
    if abs(delta) > discordant:
        raise ValueError(
            f"a change of {delta:+g} needs at least {abs(delta):g} of entries to flip; "
            f"discordance {discordant:g} is too small"
        )
    if rate is not None:
        if not 0 <= rate <= 1 or not 0 <= rate + delta <= 1:
            raise ValueError("rate and rate + delta must lie in [0, 1]")
        p10, p01 = (discordant + delta) / 2, (discordant - delta) / 2
        if p10 > 1 - rate + 1e-12 or p01 > rate + 1e-12:
            raise ValueError(
                f"discordance {discordant:g} is impossible at rate {rate:g}: at most "
                f"{1 - rate:g} of entries can be fixed and {rate:g} broken"
            )


def independence_discordance(rate: float, delta: float) -> float:
    """Discordance when baseline and candidate outcomes are independent: p1(1-p2) + p2(1-p1)."""
    p2 = rate + delta
    return rate * (1 - p2) + p2 * (1 - rate)


def mcnemar_power(n: int, *, delta: float, discordant: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test with ``n`` paired entries."""
    _check(delta, discordant, None)
    if n <= 0:
        return 0.0
    # the number of discordant pairs lies in [lo, hi] with probability > 1 - 2e-14
    lo = int(max(0, binom.ppf(1e-14, n, discordant) - 1))
    hi = int(min(n, binom.isf(1e-14, n, discordant) + 1))
    d = np.arange(lo, hi + 1)
    # c(d): largest x with 2 * cdf(x; d, 1/2) <= alpha, or -1 when none
    q = binom.ppf(alpha / 2, d, 0.5)
    q = np.where(np.isnan(q), 0, q).astype(np.int64)
    c = np.where(2 * binom.cdf(q, d, 0.5) <= alpha + 1e-15, q, q - 1)
    pi = (discordant + delta) / (2 * discordant)
    p_reject = np.where(c >= 0, binom.cdf(c, d, pi) + binom.sf(d - c - 1, d, pi), 0.0)
    weights = binom.pmf(d, n, discordant)
    return float(min(1.0, np.sum(weights * p_reject)))


def family_size(categories: int, metrics: int = 2) -> int:
    """How many tests Holm adjusts together in a comparison: (categories + overall) x metrics."""
    if categories < 1 or metrics < 1:
        raise ValueError("categories and metrics must be >= 1")
    return (categories + 1) * metrics


def min_conclusive_n(alpha_per_test: float) -> int:
    """Smallest n whose most lopsided paired result (all n moving one way, two-sided p =
    ``2 * 0.5**n``) reaches ``alpha_per_test``; below it no result in the cell can be significant."""
    if not 0 < alpha_per_test < 1:
        raise ValueError("alpha_per_test must lie in (0, 1)")
    n = max(1, math.ceil(math.log2(2.0 / alpha_per_test)))
    while n > 1 and 2.0 * 0.5 ** (n - 1) <= alpha_per_test:
        n -= 1
    while 2.0 * 0.5**n > alpha_per_test:
        n += 1
    return n


def _connor(delta: float, discordant: float, alpha: float, power: float) -> int:
    za, zb = float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))
    n = (za * math.sqrt(discordant) + zb * math.sqrt(discordant - delta**2)) ** 2 / delta**2
    return max(1, math.ceil(n))


def plan_mcnemar(
    *,
    delta: float,
    discordant: float | None = None,
    rate: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    categories: int = 1,
    metrics: int = 2,
    lifetime_comparisons: int | None = None,
    max_n: int = 1_000_000,
) -> PlanResult:
    """Entries per category for the exact McNemar test to detect ``delta`` with ``power``, at
    the level compare and gate apply to it: ``alpha / ((categories + 1) * metrics)``, and
    divided by ``N (N + 1)`` more for the dataset's ``N = lifetime_comparisons``-th comparison."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must lie in (0, 1)")
    family = family_size(categories, metrics)
    if lifetime_comparisons is not None and lifetime_comparisons < 1:
        raise ValueError("lifetime_comparisons must be >= 1")
    factor = (
        1 if lifetime_comparisons is None else lifetime_comparisons * (lifetime_comparisons + 1)
    )
    if discordant is None:
        if rate is None:
            raise ValueError(
                "give the discordance rate, or the baseline rate to assume independence"
            )
        discordant = independence_discordance(rate, delta)
    _check(delta, discordant, rate)
    a = alpha / (family * factor)
    approx = _connor(delta, discordant, a, power)

    def ok(n: int) -> bool:
        return mcnemar_power(n, delta=delta, discordant=discordant, alpha=a) >= power

    lo, hi = max(1, approx // 2), max(2, approx * 2)
    if ok(lo):
        lo, hi = 0, lo
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > max_n:
            raise ValueError(f"more than {max_n} entries would be needed")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    n = hi
    for m in range(hi - 1, max(0, hi - 40), -1):  # sawtooth: an earlier n may already suffice
        if ok(m):
            n = m
    achieved = mcnemar_power(n, delta=delta, discordant=discordant, alpha=a)
    return PlanResult(
        n=n,
        power=achieved,
        target_power=power,
        alpha=alpha,
        alpha_per_test=a,
        delta=delta,
        discordant=discordant,
        n_normal_approx=approx,
        expected_discordant_pairs=n * discordant,
        rate=rate,
        categories=categories,
        metrics=metrics,
        lifetime_comparisons=lifetime_comparisons,
        family=family,
        min_conclusive_n=min_conclusive_n(a),
    )


def observed_discordance(base: ArrayLike, cand: ArrayLike) -> tuple[float, float]:
    """(discordance rate, change in rate) observed between two runs' binary outcomes."""
    b = np.asarray(base, dtype=np.float64) > 0.5
    c = np.asarray(cand, dtype=np.float64) > 0.5
    if b.shape != c.shape or b.size == 0:
        raise ValueError("need two non-empty aligned outcome arrays")
    fixed = float(np.mean(~b & c))
    broken = float(np.mean(b & ~c))
    return fixed + broken, fixed - broken
