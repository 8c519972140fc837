"""`bench/bench_graded_width.py`: its t and exact permutation intervals are what they say, and a
small run of its grid shows the score interval's coverage and width beside them."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest
from scipy.stats import ttest_1samp


def test_the_permutation_interval_is_the_set_the_test_accepts(
    bench_script: Callable[[str], ModuleType],
) -> None:
    bench = bench_script("bench_graded_width")
    x = np.array([0.0, 0.0, 0.0, 1 / 3, 1 / 2, 2 / 3, 1.0, -1 / 3])
    signs = bench.patterns(x.size, np.random.default_rng(0))
    assert signs.shape == (256, 8)
    low, high = bench.perm_interval(x, signs, -1.0, 1.0)

    def p_brute(mu: float) -> float:  # every sign pattern, one at a time
        r = x - mu
        t = abs(r.sum())
        hits = sum(
            abs(float(np.dot(s, np.abs(r)))) >= t - 1e-12
            for s in itertools.product((-1.0, 1.0), repeat=x.size)
        )
        return hits / 2**x.size

    assert p_brute(low + 1e-6) > 0.05 and p_brute(high - 1e-6) > 0.05
    assert p_brute(low - 1e-3) <= 0.05 and p_brute(high + 1e-3) <= 0.05
    # the t-interval is scipy's
    ref = ttest_1samp(x, 0.0).confidence_interval(0.95)
    assert bench.t_bounds(x, -1.0, 1.0) == pytest.approx((ref.low, ref.high))


def test_a_small_run_of_the_grid(bench_script: Callable[[str], ModuleType]) -> None:
    bench = bench_script("bench_graded_width")
    rng = np.random.default_rng(1)
    r = bench.point(bench.SIXTHS, bench.paired("skewed"), 12, 200, rng, -1.0, False)
    (cs, ws), (ct, wt), (cp, wp) = r["score"], r["t"], r["perm"]
    print(f"skewed delta, n=12: coverage {cs:.3f} / {ct:.3f} / {cp:.3f}, widths {ws:.3f} / "
          f"{wt:.3f} / {wp:.3f}")  # fmt: skip
    # the score interval covers where the permutation interval does not, and is wider for it
    assert cs >= 0.95 and cp < 0.9 and ws > wp and ws > wt
