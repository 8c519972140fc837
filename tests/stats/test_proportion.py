"""Intervals for rates and paired differences: reference values, coverage, and their use."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from assay.compare import compare_arrays
from assay.report import Interval
from assay.stats.bootstrap import bootstrap_ci
from assay.stats.proportion import (
    clopper_pearson,
    newcombe_paired,
    paired_proportion_diff,
    rate_interval,
    tango_paired,
    wilson,
)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 100, 1000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_and_clopper_pearson_match_statsmodels(n: int, confidence: float) -> None:
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        if not 0 <= k <= n:
            continue
        for ours, method in ((wilson, "wilson"), (clopper_pearson, "beta")):
            iv = ours(k, n, confidence=confidence)
            lo, hi = proportion_confint(k, n, alpha=1 - confidence, method=method)
            assert iv.low == pytest.approx(lo, abs=1e-12), (k, n, method)
            assert iv.high == pytest.approx(hi, abs=1e-12), (k, n, method)
            assert iv.value == k / n and iv.level == confidence


def test_paired_intervals_match_the_published_worked_example() -> None:
    # Fagerland, Lydersen & Laake (2017), the paired 2x2 table of Cavo et al. (2012): 59 both,
    # 6 first only, 16 second only, 80 neither (difference first - second = -10/161)
    tango = tango_paired(6, 16, 161)
    assert tango.value == pytest.approx(-0.0621, abs=5e-5)
    assert (round(tango.low or 0, 4), round(tango.high or 0, 4)) == (-0.1240, -0.0054)
    newc = newcombe_paired(59, 6, 16, 80)
    assert (round(newc.low or 0, 4), round(newc.high or 0, 4)) == (-0.1186, -0.0046)
    # symmetric: swapping the runs mirrors the interval
    mirror = tango_paired(16, 6, 161)
    assert mirror.low == pytest.approx(-(tango.high or 0), abs=1e-9)
    assert mirror.high == pytest.approx(-(tango.low or 0), abs=1e-9)


def test_tango_inverts_its_score_test() -> None:
    # at each bound the score statistic equals the normal quantile
    from scipy.stats import norm

    from assay.stats.proportion import _tango_stat

    z = float(norm.ppf(0.975))
    for f, g, n in ((3, 1, 30), (0, 0, 30), (12, 2, 200), (40, 35, 120)):
        iv = tango_paired(f, g, n)
        assert iv.low is not None and iv.high is not None
        if iv.low > -1:
            assert _tango_stat(f, g, n, iv.low) == pytest.approx(z, abs=1e-6)
        if iv.high < 1:
            assert _tango_stat(f, g, n, iv.high) == pytest.approx(-z, abs=1e-6)


def test_no_single_point_when_the_truth_is_uncertain() -> None:
    for iv in (wilson(30, 30), wilson(0, 30), clopper_pearson(30, 30), tango_paired(0, 0, 30)):
        assert iv.width is not None and iv.width > 0.1, iv
    assert wilson(30, 30).fmt() == "1.000 [0.89, 1.00]"
    assert tango_paired(0, 0, 30).high == pytest.approx(wilson(0, 30).high, abs=1e-9)
    assert rate_interval([1.0] * 30, method="wilson").method == "wilson"
    # the default switches to Clopper-Pearson when fewer than 4 entries failed (or passed)
    assert rate_interval([1.0] * 30).method == "clopper-pearson"
    assert rate_interval([1.0] * 26 + [0.0] * 4).method == "wilson"
    assert paired_proportion_diff([1, 0, 1], [1, 0, 1]).width


def test_bad_inputs() -> None:
    with pytest.raises(ValueError):
        wilson(5, 3)
    with pytest.raises(ValueError):
        tango_paired(3, 3, 5)
    with pytest.raises(ValueError):
        rate_interval([0.5, 1.0])
    assert wilson(0, 0).value is None and wilson(0, 0).note == "no entries"


# ------------------------------------------------------------------------------------------
# Coverage by simulation (seeded). Each interval depends on the data only through the counts,
# so it is computed once per distinct count; the counts themselves are drawn.
# ------------------------------------------------------------------------------------------

REPS = 20_000  # Monte Carlo standard error of a 95% coverage: 0.0015


def _rate_coverage(
    make: Callable[[int, int], Interval], n: int, p: float, rng: np.random.Generator
) -> float:
    ks = rng.binomial(n, p, size=REPS)
    covered = {}
    for k in np.unique(ks).tolist():
        iv = make(k, n)
        assert iv.low is not None and iv.high is not None
        covered[k] = iv.low <= p <= iv.high
    return float(np.mean([covered[k] for k in ks.tolist()]))


def _paired_coverage(n: int, p_fixed: float, p_broken: float, rng: np.random.Generator) -> float:
    draws = rng.multinomial(n, [p_fixed, p_broken, 1 - p_fixed - p_broken], size=REPS)
    truth = p_fixed - p_broken
    covered: dict[tuple[int, int], bool] = {}
    hits = 0
    for f, g, _ in draws.tolist():
        if (f, g) not in covered:
            iv = tango_paired(f, g, n)
            assert iv.low is not None and iv.high is not None
            covered[(f, g)] = iv.low - 1e-12 <= truth <= iv.high + 1e-12
        hits += covered[(f, g)]
    return hits / REPS


@pytest.mark.parametrize("n", [30, 100])
@pytest.mark.parametrize("p", [0.05, 0.12, 0.5, 0.88])
def test_wilson_covers_at_small_n(n: int, p: float) -> None:
    rng = np.random.default_rng([n, int(p * 100)])
    cov = _rate_coverage(lambda k, m: wilson(k, m), n, p, rng)
    assert 0.93 <= cov <= 0.97, cov


def test_percentile_bootstrap_of_a_rate_does_not_cover_at_small_n() -> None:
    # why rates moved off the bootstrap: at n = 30, p = 0.05 it covers about 78%
    rng = np.random.default_rng(1)

    def boot(k: int, n: int) -> Interval:
        x = np.r_[np.ones(k), np.zeros(n - k)]
        return bootstrap_ci(x, rng=np.random.default_rng(k), n_resamples=2000)

    assert _rate_coverage(boot, 30, 0.05, rng) < 0.85


@pytest.mark.parametrize(
    ("n", "p_fixed", "p_broken"),
    [
        (30, 0.10, 0.10),
        (30, 0.20, 0.05),
        (100, 0.03, 0.01),  # rare flips
        (100, 0.01, 0.03),
        (100, 0.05, 0.02),
        (100, 0.20, 0.05),
        (200, 0.03, 0.01),
        (400, 0.03, 0.01),
    ],
)
def test_tango_covers_paired_differences(n: int, p_fixed: float, p_broken: float) -> None:
    rng = np.random.default_rng([n, int(p_fixed * 100), int(p_broken * 100)])
    cov = _paired_coverage(n, p_fixed, p_broken, rng)
    assert 0.93 <= cov <= 0.97, cov


def test_tango_rare_flips_at_n_30_covers_conservatively() -> None:
    # 30 entries with 3% fixed and 1% broken: 29% of samples show no flip at all. Any interval
    # that is honest there must hold +0.02 (0.02 fixed, 0 broken gives "nothing flipped" 55% of
    # the time), so no interval can sit at 95% at this point of the grid: Tango over-covers,
    # the bootstrap (a single point at 0 on those samples) under-covers.
    rng = np.random.default_rng(30)
    assert _paired_coverage(30, 0.03, 0.01, rng) >= 0.93


def test_compare_uses_tango_for_binary_and_never_a_point_on_all_equal_data() -> None:
    rng = np.random.default_rng(4)
    n = 80
    ids = [f"e{i}" for i in range(n)]
    base = (rng.random(n) < 0.6).astype(float)
    cand = np.where(rng.random(n) < 0.15, 1 - base, base)
    cmp = compare_arrays(
        ids,
        ["x"] * n,
        {"complete@5": base, "recall@5": base},
        {"complete@5": cand, "recall@5": cand},
        n_resamples=200,
        n_permutations=200,
    )
    mc = cmp.overall.metrics["complete@5"]
    ref = tango_paired(len(mc.fixed), len(mc.broken), n)
    assert mc.delta == ref and mc.delta.method == "tango"
    # recall moved the same way: a graded delta gets the score interval, here exactly Tango's
    rd = cmp.overall.metrics["recall@5"].delta
    assert rd.method == "score" and rd.low == pytest.approx(ref.low, abs=1e-9)
    assert rd.high == pytest.approx(ref.high, abs=1e-9)
    assert "Tango score on binary metrics" in cmp.to_markdown()
    # nothing moved: the truth is still uncertain, on the binary and on the graded metric
    same = compare_arrays(
        ids,
        ["x"] * n,
        {"complete@5": base, "recall@5": base / 2},
        {"complete@5": base, "recall@5": base / 2},
        n_resamples=200,
        n_permutations=200,
    )
    for m in ("complete@5", "recall@5"):
        d = same.overall.metrics[m].delta
        assert d.value == 0.0 and d.low is not None and d.high is not None
        assert d.low < -0.03 and d.high > 0.03, (m, d)
    assert "no entry moved" in (same.overall.metrics["recall@5"].delta.note or "")
    newc = compare_arrays(
        ids,
        ["x"] * n,
        {"complete@5": base},
        {"complete@5": cand},
        binary_ci="newcombe",
        n_resamples=50,
    )
    assert newc.overall.metrics["complete@5"].delta.method == "newcombe"
    with pytest.raises(ValueError, match="binary_ci"):
        compare_arrays(ids, ["x"] * n, {"complete@5": base}, {"complete@5": cand}, binary_ci="x")
