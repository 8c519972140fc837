"""The planner's n reaches its stated power under the family compare and gate really test.

A comparison of 6 categories on two metrics is a Holm family of (6 + overall) x 2 = 14 tests. The
simulation draws every category's paired flips (one category changed by ``delta``, the rest
not, the same discordance everywhere), tests each row and metric with the exact McNemar test as
compare does, the overall row on the pooled flips, adjusts all 14 with Holm and counts how often
the changed category's complete@k comes out significant. Seeded; 4,000 simulated comparisons, so
the Monte-Carlo standard error of a power near 0.8 is 0.0063.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from assay.stats.plan import plan_mcnemar

DELTA, PSI, CATS = 0.04, 0.10, 6


def _mcnemar(fixed: NDArray[np.int64], broken: NDArray[np.int64]) -> NDArray[np.float64]:
    m = fixed + broken
    k = np.minimum(fixed, broken)
    p = np.minimum(1.0, 2.0 * binom.cdf(k, m, 0.5))
    return np.where((m == 0) | (2 * k == m), 1.0, p)


def _holm(p: NDArray[np.float64]) -> NDArray[np.float64]:
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1) * (m - np.arange(m))
    adjusted = np.minimum(1.0, np.maximum.accumulate(ranked, axis=1))
    out = np.empty_like(p)
    np.put_along_axis(out, order, adjusted, axis=1)
    return out


def _power_in_the_family(n: int, reps: int, seed: int, alpha: float = 0.05) -> float:
    rng = np.random.default_rng(seed)
    changed = [(PSI + DELTA) / 2, (PSI - DELTA) / 2, 1 - PSI]
    unchanged = [PSI / 2, PSI / 2, 1 - PSI]
    columns = []
    for metric in range(2):  # complete@k changes in category 0; the second metric does not
        counts = np.stack(
            [
                rng.multinomial(n, changed if (metric == 0 and c == 0) else unchanged, size=reps)
                for c in range(CATS)
            ],
            axis=1,
        )  # reps x categories x (fixed, broken, same)
        cats = _mcnemar(counts[..., 0], counts[..., 1])
        pooled = counts.sum(axis=1)
        columns += [cats, _mcnemar(pooled[:, 0], pooled[:, 1])[:, None]]
    p = np.concatenate(columns, axis=1)  # (6 categories + overall) x 2 metrics = 14 tests
    assert p.shape[1] == (CATS + 1) * 2
    return float(np.mean(_holm(p)[:, 0] <= alpha))


def test_the_planned_n_reaches_its_power_under_the_real_family() -> None:
    plan = plan_mcnemar(delta=DELTA, discordant=PSI, categories=CATS, metrics=2, power=0.8)
    assert plan.family == 14 and plan.n == 898  # the figure for this family
    reps = 4_000
    se = math.sqrt(0.8 * 0.2 / reps)
    power = _power_in_the_family(plan.n, reps, seed=7)
    # Holm is at least as powerful as the Bonferroni level the plan used
    assert power >= plan.power - 3 * se, (power, plan.power)
    # the old plan split alpha by the categories alone: 778 entries, power ~0.71 here
    old = plan_mcnemar(delta=DELTA, discordant=PSI, categories=5, metrics=1)  # alpha / 6
    assert old.n == 778
    short = _power_in_the_family(old.n, reps, seed=8)
    assert short < 0.8 - 3 * se, short


def test_lifetime_comparisons_plan_for_the_ledger_level() -> None:
    base = plan_mcnemar(delta=DELTA, discordant=PSI, categories=CATS)
    third = plan_mcnemar(delta=DELTA, discordant=PSI, categories=CATS, lifetime_comparisons=3)
    assert third.alpha_per_test == base.alpha_per_test / 12 and third.n > base.n
    # the 9 of 9 case: a category of 9 can never reach alpha / 14, and the planner knows it
    assert base.min_conclusive_n == 10 and 2 * 0.5**9 * 14 > 0.05
