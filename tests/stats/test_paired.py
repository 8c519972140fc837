"""Paired tests checked against scipy and statsmodels on randomised inputs."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from assay.stats.paired import (
    flips,
    mcnemar_exact,
    paired_bootstrap_diff,
    sign_flip_permutation,
    wilcoxon_moved,
)


def test_worked_mcnemar_numbers() -> None:
    # Same net change (+6), different conclusions.
    assert mcnemar_exact(6, 0).pvalue == pytest.approx(0.03125, abs=1e-12)
    assert mcnemar_exact(16, 10).pvalue == pytest.approx(0.3269, abs=5e-4)
    assert mcnemar_exact(0, 0).pvalue == 1.0
    assert mcnemar_exact(5, 5).pvalue == 1.0


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_matches_binomtest_and_statsmodels(fixed: int, broken: int) -> None:
    ours = mcnemar_exact(fixed, broken)
    assert ours.n == fixed + broken
    if fixed + broken == 0:
        return
    ref = sps.binomtest(fixed, fixed + broken, 0.5).pvalue
    sm = sm_mcnemar([[10, broken], [fixed, 10]], exact=True).pvalue
    assert ours.pvalue == pytest.approx(ref, rel=1e-9, abs=1e-300)
    assert ours.pvalue == pytest.approx(sm, rel=1e-9, abs=1e-300)


def test_flips_ids_and_directions() -> None:
    ids = ["a", "b", "c", "d", "e"]
    base = [0, 1, 1, 0, 1]
    cand = [1, 0, 1, 1, 1]
    f = flips(ids, base, cand)
    assert f.fixed == ("a", "d") and f.broken == ("b",)
    assert (f.n_fixed, f.n_broken) == (2, 1)


def _scipy_wilcoxon_moved(a: np.ndarray, b: np.ndarray, seed: int) -> tuple[float, float, float]:
    """scipy's Wilcoxon on the moved entries: (statistic, p, tolerance on p).

    scipy's default is exact without ties (n <= 50) and an exact permutation test with ties
    (n <= 13); between 14 and 50 tied differences it falls back to the normal approximation,
    where ours stays exact, so there the reference is a Monte Carlo of random sign patterns
    (200,000 draws: 4 standard errors are under 0.005).
    """
    d = np.round(b - a, 12)
    d = d[d != 0]
    tied = len(np.unique(np.abs(d))) < d.size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if tied and 13 < d.size <= 50:
            ranks = sps.rankdata(np.abs(d))
            stat = min(ranks[d > 0].sum(), ranks[d < 0].sum())
            signs = np.random.default_rng(seed).integers(0, 2, (200_000, d.size))
            w_plus = signs @ ranks
            p = float(np.mean(np.minimum(w_plus, ranks.sum() - w_plus) <= stat + 1e-9))
            return float(stat), p, 0.005
        res = sps.wilcoxon(d, method="asymptotic") if d.size > 50 else sps.wilcoxon(d)
    return float(res.statistic), float(res.pvalue), 1e-9 * float(res.pvalue)


@pytest.mark.parametrize("seed", range(40))
def test_wilcoxon_matches_scipy_random(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 120))
    if seed % 2:
        # continuous scores, no ties: exact path for n <= 50
        a = rng.random(n)
        b = np.clip(a + rng.normal(0.05, 0.2, n), 0, 1)
        same = rng.random(n) < 0.3
        b[same] = a[same]  # entries that did not move
    else:
        # recall fractions: many ties and zeros
        a = rng.integers(0, 4, n) / 3
        b = rng.integers(0, 4, n) / 3
    ours = wilcoxon_moved(a, b)
    moved = np.round(b - a, 12) != 0
    if moved.sum() == 0:
        assert ours.pvalue == 1.0
        return
    stat, p, tol = _scipy_wilcoxon_moved(a, b, seed)
    assert ours.statistic == pytest.approx(stat)
    assert ours.pvalue == pytest.approx(p, abs=tol)
    assert ours.n == int(moved.sum())


def test_wilcoxon_exact_path_used_without_ties() -> None:
    d = np.array([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75], dtype=float)
    res = wilcoxon_moved(np.zeros_like(d), d)
    assert res.method == "exact"
    assert res.statistic == 24.0
    assert res.pvalue == pytest.approx(0.041259765625)


def test_wilcoxon_exact_with_ties_few_moved() -> None:
    # 4 entries each moving +0.5: every sign pattern is equally likely under no effect, and only
    # all-plus or all-minus is as extreme, so p = 2/16 (the normal approximation said 0.0455).
    res = wilcoxon_moved(np.zeros(4), np.full(4, 0.5))
    assert res.pvalue == pytest.approx(0.125, abs=1e-12)
    assert res.method == "exact (ties)"
    assert res.pvalue == pytest.approx(float(sps.wilcoxon(np.full(4, 0.5)).pvalue), abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_wilcoxon_ties_match_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(2, 12))
    d = rng.integers(-3, 4, n) / 3
    d = d[d != 0]
    if d.size == 0:
        return
    ranks = sps.rankdata(np.abs(d))
    observed = min(ranks[d > 0].sum(), ranks[d < 0].sum())
    hits = 0
    for signs in itertools.product([0, 1], repeat=d.size):
        w_plus = float(np.dot(signs, ranks))
        hits += min(w_plus, ranks.sum() - w_plus) <= observed + 1e-9
    ours = wilcoxon_moved(np.zeros(d.size), d)
    assert ours.pvalue == pytest.approx(min(1.0, hits / 2**d.size), abs=1e-12)


def _brute_sign_flip(d: np.ndarray) -> float:
    d = d[d != 0]
    obs = abs(d.sum())
    hits = total = 0
    for signs in itertools.product([-1, 1], repeat=d.size):
        total += 1
        hits += abs(np.dot(signs, np.abs(d))) >= obs - 1e-9
    return hits / total


@pytest.mark.parametrize("seed", range(8))
def test_sign_flip_exact_enumeration(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 14))
    a = rng.integers(0, 3, n) / 2
    b = rng.integers(0, 3, n) / 2
    res = sign_flip_permutation(a, b, rng=np.random.default_rng(0))
    d = np.round(b - a, 12)
    if not np.any(d):
        assert res.pvalue == 1.0
        return
    assert res.method == "exact"
    assert res.pvalue == pytest.approx(_brute_sign_flip(d))


@pytest.mark.parametrize("distinct", ["few", "many"])
def test_sign_flip_monte_carlo_close_to_normal_theory(distinct: str) -> None:
    # Large m: the randomisation distribution of sum(s_i |d_i|) is ~ N(0, sum d_i^2).
    rng = np.random.default_rng(5)
    n = 400
    a = rng.random(n) if distinct == "many" else rng.integers(0, 4, n) / 3
    b = (
        np.clip(a + rng.normal(0.03, 0.25, n), 0, 1)
        if distinct == "many"
        else rng.integers(0, 4, n) / 3
    )
    d = np.round(b - a, 12)
    res = sign_flip_permutation(a, b, rng=np.random.default_rng(1), n_permutations=20_000)
    z = d.sum() / np.sqrt(np.sum(d**2))
    approx = 2 * sps.norm.sf(abs(z))
    assert res.pvalue == pytest.approx(approx, abs=0.02)
    assert res.statistic == pytest.approx(d.mean())


def test_sign_flip_is_seed_reproducible_and_valid() -> None:
    rng = np.random.default_rng(9)
    a = rng.random(300)
    b = a + rng.normal(0, 0.1, 300)
    r1 = sign_flip_permutation(a, b, rng=np.random.default_rng(42), n_permutations=999)
    r2 = sign_flip_permutation(a, b, rng=np.random.default_rng(42), n_permutations=999)
    assert r1 == r2
    assert 1 / 1000 <= r1.pvalue <= 1.0


def test_sign_flip_type_one_error_under_null() -> None:
    # Null: the sign of each difference is a coin flip; rejections at 0.05 near 5%.
    rng = np.random.default_rng(11)
    rejections = 0
    reps = 300
    for _ in range(reps):
        d = rng.integers(1, 4, 40) / 3 * rng.choice([-1, 1], 40)
        res = sign_flip_permutation(np.zeros(40), d, rng=rng, n_permutations=500)
        rejections += res.pvalue <= 0.05
    assert 0.02 <= rejections / reps <= 0.08


def test_paired_bootstrap_diff_is_bootstrap_of_differences() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 500).astype(float)
    b = np.where(rng.random(500) < 0.1, 1 - a, a)
    ci = paired_bootstrap_diff(a, b, rng=np.random.default_rng(8), n_resamples=4000)
    assert ci.value == pytest.approx((b - a).mean())
    assert ci.low <= ci.value <= ci.high
    again = paired_bootstrap_diff(a, b, rng=np.random.default_rng(8), n_resamples=4000)
    assert again == ci


def test_mismatched_lengths_rejected() -> None:
    with pytest.raises(ValueError, match="same length"):
        wilcoxon_moved([1.0, 2.0], [1.0])


def _exact_cdfs(m: int, ks: Iterable[int]) -> dict[int, float]:
    # P[Binomial(m, 1/2) <= k] for each k as a fraction, rounded once (float(Fraction) is
    # correctly rounded), the coefficients summed as k grows
    from fractions import Fraction

    want, out, total, i, coef = sorted(set(ks)), {}, 0, 0, 1  # coef = C(m, i)
    for k in want:
        while i <= k:
            total += coef
            coef = coef * (m - i) // (i + 1)
            i += 1
        out[k] = float(Fraction(total, 2**m))
    assert coef == (math.comb(m, i) if i <= m else 0)
    return out


def _exact_cdf(k: int, m: int) -> float:
    return _exact_cdfs(m, [k])[k]


def test_mcnemar_and_the_sign_test_are_the_exact_binomial_tails() -> None:
    # up to 20,000 pairs the p-values are the exact tails rounded once (scipy.stats.binom is off
    # in the last bits for about half of them: 0.11846923828124999 for 1941/16384 at 4 of 15),
    # and within 1e-13 of scipy's; beyond, scipy's own bits (its Boost routine)
    from assay.stats.counts import sign_test_worse

    sizes = [*range(1, 401), 1_000, 4_999, 20_000, 20_001, 100_001]
    for m in sizes:
        ks = range(m + 1) if m <= 400 else (0, 1, m // 3, m // 2 - 7, m // 2, m - 1, m)
        exact = (
            _exact_cdfs(m, ks if m <= 400 else (1, m // 3, m - 1, m - m // 3))
            if m <= 20_000
            else {}
        )
        for k in ks:
            mc = mcnemar_exact(k, m - k).pvalue
            worse = sign_test_worse(k, m - k).pvalue
            lo = min(k, m - k)
            ref_mc = 1.0 if 2 * lo == m else min(1.0, 2.0 * float(sps.binom.cdf(lo, m, 0.5)))
            ref_worse = min(1.0, float(sps.binom.sf(k - 1, m, 0.5)))
            assert abs(mc - ref_mc) <= 1e-13 * ref_mc, (k, m)
            assert abs(worse - ref_worse) <= 1e-13 * ref_worse, (k, m)
            if m > 20_000:
                assert (mc, worse) == (ref_mc, ref_worse), (k, m)
            elif m <= 400 or k in (1, m // 3):
                want = 1.0 if 2 * lo == m else min(1.0, 2.0 * exact[lo])
                assert mc == want, (k, m)
                want = 1.0 if k == 0 else exact[m - k]  # P[X >= k] = P[X <= m - k]
                assert worse == want, (k, m)


def test_the_exact_binomial_tails_need_no_scipy() -> None:
    # a small gate's tests load no scipy at all: the exact tails are integers and one division
    from tests.conftest import python_in_child

    probe = (
        "import sys; from assay.stats.paired import binom_half, mcnemar_exact; "
        "from assay.stats.counts import sign_test_worse; "
        "print(mcnemar_exact(16, 10).pvalue, sign_test_worse(9, 3).pvalue, binom_half(4, 15), "
        "any(m.startswith('scipy') for m in sys.modules))"
    )
    mc, worse, cdf, scipy_loaded = python_in_child(probe).split()
    assert float(mc) == 2.0 * _exact_cdf(10, 26)
    assert float(worse) == _exact_cdf(3, 12)
    assert float(cdf) == 1941 / 32768
    assert scipy_loaded == "False"


def test_wilcoxon_midranks_are_scipy_rankdata() -> None:
    from assay.stats.paired import _midranks

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 7, 60, 2_000):
        for _ in range(50):
            x = np.round(rng.random(n) * int(rng.integers(1, 9)), int(rng.integers(0, 3)))
            assert _midranks(x).tobytes() == sps.rankdata(x).tobytes()


def test_the_binomial_tails_fall_back_to_scipy_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    # past 20,000 pairs, a scipy release without the private routine: scipy.stats.binom itself,
    # the same values
    import types

    import scipy.special

    from assay.stats.paired import binom_half

    sps.binom.cdf(1, 2, 0.5)  # scipy.stats has bound scipy's own routines
    monkeypatch.setattr(scipy.special, "_ufuncs", types.ModuleType("_ufuncs"))
    assert binom_half(10_003, 20_050) == float(sps.binom.cdf(10_003, 20_050, 0.5))
    assert binom_half(10_013, 20_050, upper=True) == float(sps.binom.sf(10_013, 20_050, 0.5))
    want = min(1.0, 2.0 * float(sps.binom.cdf(10_010, 20_030, 0.5)))
    assert mcnemar_exact(10_020, 10_010).pvalue == want
