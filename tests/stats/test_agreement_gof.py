"""The goodness-of-fit interval of kappa and alpha on a binary scale (the default).

References: Pearson's chi-square from scipy (`scipy.stats.chisquare`) inverted by brute force on
a grid of kappas; the centre against statsmodels' Fleiss' kappa; alpha's relation to the
intraclass kappa against the `krippendorff` package; exact coverage summed over every table
(`bench/bench_agreement_exact.py`) and a seeded simulation (`bench/bench_agreement_coverage.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import krippendorff
import numpy as np
import pytest
from scipy.stats import chisquare
from scipy.stats import t as student
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from assay.stats.agreement import agreement

from .test_agreement_score import KAPPAS, rows_of


def brute_force(n00: float, nd: float, n11: float, crit: float) -> tuple[float, float]:
    """The kappas on a fine grid whose Pearson chi-square (scipy) is at most `crit`."""
    n = n00 + nd + n11
    pi = (2 * n11 + nd) / (2 * n)
    v = pi * (1 - pi)
    floor = max(-(1 - pi) / pi, -pi / (1 - pi))
    k = np.linspace(floor, 1.0, 40_001)[1:-1]
    exp = n * np.stack([(1 - pi) ** 2 + k * v, 2 * v * (1 - k), pi**2 + k * v], axis=1)
    obs = np.broadcast_to(np.array([n00, nd, n11], dtype=float), exp.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = chisquare(obs, exp, axis=1, sum_check=False).statistic
    accepted = k[stat <= crit]
    step = (1.0 - floor) / 40_000
    low, high = float(accepted.min()), float(accepted.max())
    # an end within one step of the range's end is that end
    return (floor if low - floor < 1.5 * step else low), (1.0 if 1.0 - high < 1.5 * step else high)


@pytest.mark.parametrize(
    ("n00", "nd", "n11"),
    [(20, 5, 5), (27, 2, 1), (10, 10, 10), (28, 0, 2), (5, 3, 22), (40, 7, 3)],
)
def test_two_raters_invert_pearsons_chi_square(n00: int, nd: int, n11: int) -> None:
    half = nd // 2
    rows = rows_of(
        [
            ((False, False), n00),
            ((True, False), half),
            ((False, True), nd - half),
            ((True, True), n11),
        ]
    )
    res = agreement(rows, n_resamples=20)
    n = n00 + nd + n11
    crit = student.ppf(0.975, n - 1) ** 2
    low, high = brute_force(n00, nd, n11, crit)
    # the centre, where the chi-square is 0, is Fleiss' kappa (Scott's pi) of statsmodels
    centre = sm_fleiss(_counts(n00, nd, n11))
    e = res.statistics["fleiss_kappa"]
    assert e.method == "goodness-of-fit"
    assert e.value == pytest.approx(centre, abs=1e-12)
    step = 2.0 / 40_000
    assert e.low == pytest.approx(low, abs=step) and e.high == pytest.approx(high, abs=step)
    for key in ("cohen_kappa", "alpha_nominal", "alpha_ordinal"):
        assert res.statistics[key].method == "goodness-of-fit", key
    # the pair's Cohen's kappa gets its own table's interval: the same one for two raters
    pair = res.pairs[0].cohen_kappa
    assert (pair.low, pair.high) == (
        res.statistics["cohen_kappa"].low,
        res.statistics["cohen_kappa"].high,
    )


def _counts(n00: int, nd: int, n11: int) -> np.ndarray:
    """Items x categories counts (negative, positive) for statsmodels' fleiss_kappa."""
    return np.array([[2, 0]] * n00 + [[1, 1]] * nd + [[0, 2]] * n11)


def test_cohen_and_alpha_keep_their_own_value_inside() -> None:
    # unequal margins: Cohen's kappa is above the intraclass kappa the interval is centred on,
    # and alpha is the intraclass kappa with the small-sample factor (2n - 1) / 2n
    rows = rows_of(
        [((False, False), 14), ((True, False), 9), ((False, True), 0), ((True, True), 7)]
    )
    res = agreement(rows, n_resamples=20)
    cohen, fleiss, alpha = (res.statistics[k] for k in KAPPAS)
    assert fleiss.value is not None and cohen.value is not None and alpha.value is not None
    assert cohen.value > fleiss.value
    n = 30
    data = np.array(
        [[0] * 14 + [1] * 9 + [0] * 0 + [1] * 7, [0] * 14 + [0] * 9 + [1] * 0 + [1] * 7], float
    )
    ref_alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert alpha.value == pytest.approx(ref_alpha, abs=1e-12)
    assert ref_alpha == pytest.approx(1 - (1 - fleiss.value) * (2 * n - 1) / (2 * n), abs=1e-12)
    for e in (cohen, alpha):
        assert e.method == "goodness-of-fit"
        assert e.low == fleiss.low
        assert e.high == max(fleiss.high or 0.0, e.value or 0.0)
        assert e.low is not None and e.high is not None and e.value is not None
        assert e.low <= e.value <= e.high


def test_three_raters_count_items_not_pairs() -> None:
    # three raters on 30 items; each item's three rater pairs share one unit: patterns with
    # y positives of 3 give (3-y)(2-y)/6, 2y(3-y)/6, y(y-1)/6 to the three cells
    T, F = True, False
    pats = [((F, F, F), 18), ((T, F, F), 4), ((T, T, F), 3), ((T, T, T), 5)]
    res = agreement(rows_of(pats), n_resamples=20)
    n00 = 18 + 4 * (2 * 1 / 6)  # y = 1: one of three pairs both negative
    nd = 4 * (4 / 6) + 3 * (4 / 6)
    n11 = 3 * (2 / 6) + 5
    assert n00 + nd + n11 == pytest.approx(30)
    low, high = brute_force(n00, nd, n11, student.ppf(0.975, 29) ** 2)
    e = res.statistics["fleiss_kappa"]
    assert e.method == "goodness-of-fit"
    step = 2.0 / 40_000
    assert e.low == pytest.approx(low, abs=step)
    assert e.high == pytest.approx(max(high, e.value or 0.0), abs=step)
    counts = np.array([[3, 0]] * 18 + [[2, 1]] * 4 + [[1, 2]] * 3 + [[0, 3]] * 5)
    assert e.value == pytest.approx(sm_fleiss(counts), abs=1e-12)


def test_other_coefficients_keep_the_jackknife() -> None:
    # a scale of three labels gets the score interval (tests/stats/test_agreement_score.py)
    three = rows_of([((1, 1), 8), ((2, 2), 8), ((3, 3), 6), ((1, 2), 4), ((2, 3), 4)])
    res = agreement(three, n_resamples=20)
    for key in KAPPAS:
        assert res.statistics[key].method == "score", key
    for key in ("raw_agreement", "pabak", "gwet_ac1"):
        assert res.statistics[key].method == "jackknife", key
    # the weighted kappas and ordered alphas get the weighted score interval, the
    # squared-distance ones with the posterior interval (tests/stats/test_agreement_weighted.py,
    # tests/stats/test_agreement_posterior.py)
    for key in ("cohen_kappa_linear", "alpha_ordinal"):
        assert res.statistics[key].method == "weighted score", key
    for key in ("cohen_kappa_quadratic", "alpha_interval"):
        assert res.statistics[key].method == "weighted score + posterior", key
    binary = agreement(
        rows_of([((False, False), 12), ((True, False), 3), ((True, True), 15)]), n_resamples=20
    )
    for key in ("raw_agreement", "pabak", "gwet_ac1", "positive_agreement"):
        assert binary.statistics[key].method == "jackknife", key
    # the old default on request
    old = agreement(
        rows_of([((False, False), 12), ((True, False), 3), ((True, True), 15)]),
        n_resamples=20,
        interval="jackknife",
    )
    assert old.statistics["fleiss_kappa"].method == "jackknife"


def test_exact_coverage_two_raters(bench_script: Callable[[str], ModuleType]) -> None:
    # summed over every table: the default (t(n - 1)^2 critical value) covers at least 0.94 on
    # the grid at n = 20 and 30 (0.941 at worst up to n = 100 on the bench); the published
    # chi-square(1) value falls to 0.918 at n = 20, prevalence 0.9, accuracy 0.95
    bench = bench_script("bench_agreement_exact")
    for n in (20, 30):
        table = bench.tables(n, "t")
        for prev in bench.PREVALENCE:
            for acc in bench.ACCURACY:
                cov = bench.exact_coverage(n, prev, acc, table)
                assert cov >= 0.94, (n, prev, acc, cov)
    chi2 = bench.exact_coverage(20, 0.9, 0.95, bench.tables(20, "chi2"))
    assert chi2 < 0.93
    # a broken interval (centred right, half the width) is caught by the same sum
    t, iv = bench.tables(30, "t")
    mid = iv.mean(axis=1, keepdims=True)
    halved = (t, mid + (iv - mid) / 2)
    assert bench.exact_coverage(30, 0.9, 0.9, halved) < 0.85


def test_default_covers_where_the_jackknife_did_not(
    bench_script: Callable[[str], ModuleType],
) -> None:
    # 30 items, prevalence 0.95, accuracy 0.95: the rare label is given about 6 times; the
    # jackknife covered 0.765-0.79 on the bench's 200 label sets, the goodness-of-fit interval 0.935
    bench = bench_script("bench_agreement_coverage")
    reps = 120
    mc = math.sqrt(0.95 * 0.05 / reps)
    for raters in (2, 3):
        res = bench.coverage(
            30,
            0.95,
            0.95,
            raters=raters,
            reps=reps,
            n_resamples=20,
            seed=5,
            keys=KAPPAS,
            methods=("jackknife", "gof"),
        )
        for k in KAPPAS:
            old, new = res[("jackknife", k)], res[("gof", k)]
            print(
                f"{raters} raters {k}: jackknife {old.coverage:.3f}, gof {new.coverage:.3f} (MC se {mc:.3f})"
            )
            assert old.coverage < 0.87 and new.coverage >= 0.92, (raters, k)
