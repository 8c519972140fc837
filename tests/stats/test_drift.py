from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from assay.stats.drift import ks_two_sample


@pytest.mark.parametrize("seed", range(6))
def test_ks_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.0, size=int(rng.integers(5, 400)))
    b = rng.normal(float(rng.uniform(-0.5, 0.5)), 1.0, size=int(rng.integers(5, 400)))
    if seed % 2:  # ties
        a, b = np.round(a, 1), np.round(b, 1)
    ours = ks_two_sample(a, b)
    assert ours is not None
    # exact while n_a * n_b <= 1e6, as scipy computes it
    assert ours.method == ("exact" if a.size * b.size <= 1_000_000 else "asymptotic")
    ref = ks_2samp(a, b, method="exact" if ours.method == "exact" else "asymp")
    assert ours.statistic == pytest.approx(float(ref.statistic), abs=1e-12)
    assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)


def test_ks_is_exact_at_small_n() -> None:
    # n = 10 against 10: the asymptotic p-value is far from the exact one; ours is the exact one
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(200):
        a, b = rng.normal(size=10), rng.normal(0.7, 1.0, size=10)
        ours = ks_two_sample(a, b)
        assert ours is not None and ours.method == "exact"
        exact = float(ks_2samp(a, b, method="exact").pvalue)
        assert ours.pvalue == pytest.approx(exact, rel=1e-12, abs=1e-15)
        worst = max(worst, abs(float(ks_2samp(a, b, method="asymp").pvalue) - exact))
    assert worst > 0.05  # what the asymptotic method would have got wrong (measured 0.12)
    assert ks_two_sample(a, b).to_dict()["test"] == "two-sample Kolmogorov-Smirnov (exact)"  # type: ignore[union-attr]


def test_ks_large_samples_use_the_asymptotic_distribution() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=1200), rng.normal(size=900)
    ours = ks_two_sample(a, b)
    ref = ks_2samp(a, b, method="asymp")
    assert ours is not None and ours.method == "asymptotic"
    assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)


def test_ks_hand_case_and_empty() -> None:
    # F_a jumps to 1 at 1; F_b is 0 until 2: D = 1
    r = ks_two_sample([1.0, 1.0], [2.0, 3.0])
    assert r is not None and r.statistic == 1.0
    assert ks_two_sample([], [1.0]) is None
    assert ks_two_sample([np.nan], [1.0]) is None


_samples = st.lists(
    st.one_of(st.integers(-5, 5).map(float), st.floats(-1e6, 1e6, allow_nan=False)),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(a=_samples, b=_samples)
def test_ks_statistic_is_the_pooled_grid_supremum_on_any_samples(
    a: list[float], b: list[float]
) -> None:
    """Ties, one value, all equal, disjoint: D is |F_a - F_b| maximised over every pooled point
    (bit for bit), and scipy's statistic."""
    x, y = np.sort(np.array(a)), np.sort(np.array(b))
    grid = np.concatenate([x, y])
    pooled = float(
        np.max(
            np.abs(
                np.searchsorted(x, grid, side="right") / len(x)
                - np.searchsorted(y, grid, side="right") / len(y)
            )
        )
    )
    ours = ks_two_sample(a, b)
    assert ours is not None and ours.statistic == pooled
    with warnings.catch_warnings():  # scipy's asymptotic p warns at n = 1; D is the same
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = ks_2samp(a, b, method="asymp")
    assert ours.statistic == pytest.approx(float(ref.statistic), abs=1e-12)
