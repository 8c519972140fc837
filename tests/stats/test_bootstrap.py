"""Bootstrap intervals: coverage by simulation, reproducibility, BCa, grouped streams."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from assay.stats.bootstrap import (
    bootstrap_by_group,
    bootstrap_ci,
    bootstrap_distribution,
)


def _coverage(method: str, draw, truth: float, reps: int, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        x = draw(rng, n)
        ci = bootstrap_ci(x, rng=rng, n_resamples=1000, method=method)  # type: ignore[arg-type]
        hits += ci.low <= truth <= ci.high
    return hits / reps


def test_percentile_coverage_binary() -> None:
    # complete@k-like: Bernoulli(0.7), n=200. 95% intervals cover the truth 93-97% of the time.
    cov = _coverage("percentile", lambda r, n: (r.random(n) < 0.7).astype(float), 0.7, 600, 200, 1)
    assert 0.93 <= cov <= 0.97


def test_percentile_coverage_partial_credit() -> None:
    # recall@k-like: uniform on {0, 1/3, 2/3, 1}, mean 0.5, n=300.
    cov = _coverage("percentile", lambda r, n: r.integers(0, 4, n) / 3, 0.5, 600, 300, 2)
    assert 0.93 <= cov <= 0.97


def test_bca_coverage_skewed() -> None:
    # Skewed counts: Poisson(0.6) capped at 6 (mean computed exactly), n=200.
    truth = float(sum(min(k, 6) * sps.poisson.pmf(k, 0.6) for k in range(60)))
    draw = lambda r, n: np.minimum(r.poisson(0.6, n), 6).astype(float)  # noqa: E731
    cov = _coverage("bca", draw, truth, 600, 200, 3)
    assert 0.93 <= cov <= 0.97


def test_bca_close_to_scipy() -> None:
    rng = np.random.default_rng(4)
    x = rng.exponential(1.0, 60)
    ours = bootstrap_ci(x, rng=np.random.default_rng(1), n_resamples=20_000, method="bca")
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=20_000, method="BCa", random_state=np.random.default_rng(1)
    ).confidence_interval
    assert ours.method == "bca"
    assert ours.low == pytest.approx(ref.low, abs=0.02)
    assert ours.high == pytest.approx(ref.high, abs=0.02)


def test_percentile_close_to_scipy_with_median_statistic() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, 80)
    ours = bootstrap_ci(x, rng=np.random.default_rng(2), n_resamples=5000, statistic=np.median)
    ref = sps.bootstrap(
        (x,),
        np.median,
        n_resamples=5000,
        method="percentile",
        random_state=np.random.default_rng(2),
    ).confidence_interval
    assert ours.value == pytest.approx(np.median(x))
    assert ours.low == pytest.approx(ref.low, abs=0.06)
    assert ours.high == pytest.approx(ref.high, abs=0.06)


def test_fast_path_same_distribution_as_index_path() -> None:
    rng = np.random.default_rng(6)
    x = rng.integers(0, 4, 2000) / 3
    fast = bootstrap_distribution(x, rng=np.random.default_rng(1), n_resamples=8000)
    slow = bootstrap_distribution(
        x, rng=np.random.default_rng(1), n_resamples=8000, statistic=np.mean
    )
    assert abs(fast.mean() - slow.mean()) < 0.002
    assert fast.std() == pytest.approx(slow.std(), rel=0.05)
    assert sps.ks_2samp(fast, slow).pvalue > 0.001


def test_identical_seed_identical_output() -> None:
    x = np.random.default_rng(7).random(500)
    a = bootstrap_ci(x, rng=np.random.default_rng(123), method="bca")
    b = bootstrap_ci(x, rng=np.random.default_rng(123), method="bca")
    assert a == b
    c = bootstrap_ci(x, rng=np.random.default_rng(124), method="bca")
    assert c != a


def test_edge_cases() -> None:
    empty = bootstrap_ci([], rng=np.random.default_rng(0))
    assert empty.value is None and not empty.defined and empty.note
    one = bootstrap_ci([0.4], rng=np.random.default_rng(0), method="bca")
    assert (one.low, one.value, one.high) == (0.4, 0.4, 0.4)
    assert one.note and "single point" in one.note
    const = bootstrap_ci([1.0] * 30, rng=np.random.default_rng(0), method="bca")
    assert const.method == "percentile" and const.low == const.high == 1.0
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, float("nan")], rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], rng=np.random.default_rng(0), confidence=1.0)


def test_groups_independent_of_other_groups() -> None:
    rng = np.random.default_rng(8)
    groups = {g: (rng.random(50) < 0.6).astype(float) for g in ("a", "b", "c")}
    full = bootstrap_by_group(groups, rng=np.random.default_rng(1), n_resamples=500)
    part = bootstrap_by_group({"b": groups["b"]}, rng=np.random.default_rng(1), n_resamples=500)
    assert full["b"] == part["b"]
    assert list(full) == ["a", "b", "c"]
