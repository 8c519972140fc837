"""The score interval of a bounded mean: Wilson and Tango on 0/1 data, never a point, and the
interval and its test agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from assay.stats.bounded import (
    score_mean_bounds,
    score_mean_interval,
    score_mean_test,
    score_statistic,
)
from assay.stats.proportion import tango_paired

THIRDS = np.arange(0, 4) / 3


def test_zero_one_values_give_wilson() -> None:
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(1, 120))
        k = int(rng.integers(0, n + 1))
        iv = score_mean_interval([1.0] * k + [0.0] * (n - k))
        lo, hi = proportion_confint(k, n, method="wilson")
        assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-11), (k, n)


def test_paired_differences_in_minus_one_zero_one_give_tango() -> None:
    # Fagerland, Lydersen and Laake (2017), Cavo et al.: 6 and 16 discordant of 161
    iv = score_mean_interval([1.0] * 6 + [-1.0] * 16 + [0.0] * 139, lower=-1.0, upper=1.0)
    assert (round(iv.low, 4), round(iv.high, 4)) == (-0.1240, -0.0054)
    rng = np.random.default_rng(2)
    for _ in range(150):
        n = int(rng.integers(1, 90))
        f = int(rng.integers(0, n + 1))
        b = int(rng.integers(0, n - f + 1))
        iv = score_mean_interval([1.0] * f + [-1.0] * b + [0.0] * (n - f - b), lower=-1, upper=1)
        ref = tango_paired(f, b, n)
        assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high), abs=1e-10), (f, b, n)


def test_equal_values_give_an_interval_not_a_point() -> None:
    # six equal recall values: not 0.500 [0.50, 0.50]
    iv = score_mean_interval([0.5] * 6)
    assert iv.fmt() == "0.500 [0.30, 0.70]"
    assert iv.note and "no variation" in iv.note
    # the bound is Wilson's for 0 events in n, scaled to the room left on each side
    w = proportion_confint(0, 6, method="wilson")[1]
    assert iv.low == pytest.approx(0.5 - w * 0.5, abs=1e-10)
    assert iv.high == pytest.approx(0.5 + w * 0.5, abs=1e-10)
    # four paired deltas of +0.5: not [0.50, 0.50] next to p = 0.125; the test agrees
    d = score_mean_interval([0.5] * 4, lower=-1.0, upper=1.0)
    assert d.low is not None and d.high is not None
    assert d.low < 0.0 < 0.5 < d.high
    assert score_mean_test([0.5] * 4, lower=-1.0, upper=1.0).pvalue > 0.05
    # one value: still an interval
    one = score_mean_interval([1.0], lower=-1.0, upper=1.0)
    assert one.low is not None and one.low < 0.0 and one.high == 1.0


def _random_sample(rng: np.random.Generator, lower: float) -> np.ndarray:
    n = int(rng.integers(1, 60))
    support = THIRDS if lower == 0.0 else np.arange(-6, 7) / 6
    p = rng.dirichlet(np.full(support.size, 0.3))
    return rng.choice(support, size=n, p=p)


def test_interval_and_test_agree_on_random_samples() -> None:
    rng = np.random.default_rng(3)
    checked = 0
    for i in range(400):
        lower = 0.0 if i % 2 else -1.0
        x = _random_sample(rng, lower)
        iv = score_mean_interval(x, lower=lower, upper=1.0)
        assert iv.low is not None and iv.high is not None
        assert iv.low <= iv.value <= iv.high and iv.high > iv.low
        mu0 = float(rng.uniform(lower + 0.05, 0.95))
        p = score_mean_test(x, mu0, lower=lower, upper=1.0).pvalue
        excluded = mu0 < iv.low or mu0 > iv.high
        if abs(p - 0.05) > 1e-9:  # a tie at exactly alpha has measure zero
            assert excluded == (p < 0.05), (x.tolist(), mu0, p, iv)
            checked += 1
    assert checked == 400


def test_statistic_is_monotone_so_the_accepted_set_is_an_interval() -> None:
    rng = np.random.default_rng(4)
    for _ in range(60):
        x = _random_sample(rng, -1.0)
        grid = np.linspace(-0.99, 0.99, 199)
        z = [score_statistic(x, float(m), lower=-1.0, upper=1.0) for m in grid]
        assert np.all(np.diff(z) <= 1e-9), x.tolist()


def test_the_batch_matches_one_sample_at_a_time() -> None:
    rng = np.random.default_rng(5)
    support = np.arange(-6, 7) / 6
    counts = rng.multinomial(25, rng.dirichlet(np.ones(13)), size=40)
    mean, low, high = score_mean_bounds(support, counts, lower=-1.0, upper=1.0)
    for row, m, lo, hi in zip(counts, mean, low, high, strict=True):
        iv = score_mean_interval(np.repeat(support, row), lower=-1.0, upper=1.0)
        assert (iv.value, iv.low, iv.high) == pytest.approx((m, lo, hi), abs=1e-11)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=40))
def test_never_a_point_always_inside_the_bounds(values: list[float]) -> None:
    iv = score_mean_interval(values)
    assert iv.low is not None and iv.high is not None
    assert 0.0 <= iv.low <= iv.value <= iv.high <= 1.0
    assert iv.high - iv.low > 0.0


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="lie in"):
        score_mean_interval([1.5])
    with pytest.raises(ValueError, match="finite"):
        score_mean_interval([np.nan])
    with pytest.raises(ValueError, match="bounds"):
        score_mean_interval([0.5], lower=1.0, upper=0.0)
    assert score_mean_interval([]).value is None
    assert score_mean_test([]).pvalue == 1.0
