"""The standard-library distribution functions and root finder of a gate (assay.stats._dist),
held to a 40-digit reference (mpmath) and to scipy's routines."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from tests.conftest import python_in_child

from assay.stats._dist import brentq, chi2_sf_1, norm_cdf, norm_ppf, t_ppf

REL = 1e-13


def _t_reference(df: float, p: float) -> float:
    """Student's t quantile to 40 digits: the regularized incomplete beta solved by mpmath."""
    if p == 0.5:
        return 0.0
    with mp.workdps(40):
        nu, pm, half = mp.mpf(df), mp.mpf(p), mp.mpf(1) / 2
        side = 1 if pm > half else -1
        tail = 1 - pm if side > 0 else pm  # the mass beyond |t|, from p itself

        if tail > mp.mpf(1) / 4:  # near the centre: the mass between 0 and |t|

            def f(lt: mp.mpf) -> mp.mpf:
                t = mp.e**lt
                mass = mp.betainc(half, nu / 2, 0, t * t / (nu + t * t), regularized=True) / 2
                return mp.log(mass) - mp.log(half - tail)
        else:

            def f(lt: mp.mpf) -> mp.mpf:
                t = mp.e**lt
                beyond = mp.betainc(nu / 2, half, 0, nu / (nu + t * t), regularized=True) / 2
                return mp.log(beyond) - mp.log(tail)

        start = abs(float(special.stdtrit(df, p)))
        return side * float(mp.e ** mp.findroot(f, mp.log(start)))


DFS = [1, 2, 3, 4, 5, 7, 10, 33, 100, 375, 1_000, 2_999, 4_999, 5_000, 43_245, 1_000_000]
PS = [0.5000001, 0.51, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1 - 1e-6, 1 - 1e-12]


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_to_a_forty_digit_reference(df: int) -> None:
    for p in PS:
        want = _t_reference(df, p)
        got = t_ppf(df, p)
        assert abs(got - want) <= REL * abs(want), (df, p, got, want)
        assert t_ppf(df, 1.0 - p) == -got  # the mirror, 1 - p exact for p >= 1/2


def test_t_quantile_near_the_centre_where_scipy_is_not_exact() -> None:
    # 4 degrees, p = 0.5000001: scipy.special.stdtrit gives 2.66560e-07, 4e-4 off; the reference
    # and assay give 2.66667e-07
    want = _t_reference(4, 0.5000001)
    assert abs(t_ppf(4, 0.5000001) - want) <= REL * want
    assert abs(float(special.stdtrit(4, 0.5000001)) - want) > 1e-4 * want


@settings(max_examples=400, deadline=None)
@given(
    df=st.one_of(st.integers(1, 10_000_000), st.floats(1.0, 1e7)),
    p=st.floats(1e-12, 1 - 1e-12),
)
@example(df=1, p=0.49950314973448684)  # scipy's stdtr there: 2.4e-15 off p - 1/2
@example(df=4, p=0.501)
def test_t_quantile_matches_scipy(df: float, p: float) -> None:
    # scipy's quantile within 1e-13 where it is itself that exact (|p - 1/2| >= 0.05); nearer
    # the centre scipy's stdtrit is off the reference by up to 1e-10 (and its stdtr cannot
    # check a quantile there either), so the 40-digit reference judges
    t = t_ppf(df, p)
    assert math.isfinite(t)
    want = float(special.stdtrit(df, p)) if abs(p - 0.5) >= 0.05 else _t_reference(df, p)
    assert abs(t - want) <= REL * abs(want), (df, p, t, want)


@settings(max_examples=300, deadline=None)
@given(df=st.integers(1, 10_000_000), conf=st.floats(0.5, 0.999999))
def test_t_quantile_matches_scipy_in_the_tails_a_gate_asks(df: int, conf: float) -> None:
    p = 0.5 + conf / 2.0
    want = float(special.stdtrit(df, p))
    assert abs(t_ppf(df, p) - want) <= REL * abs(want)


def test_t_quantile_edges() -> None:
    assert t_ppf(5, 0.5) == 0.0
    assert t_ppf(5, 1.0) == math.inf and t_ppf(5, 0.0) == -math.inf
    for df, p in [(0, 0.9), (-1, 0.9), (math.nan, 0.9), (5, math.nan), (5, 1.5), (5, -0.1)]:
        assert math.isnan(t_ppf(df, p))
    assert t_ppf(math.inf, 0.975) == norm_ppf(0.975)
    # the lower quantile comes from p itself, not from 1 - p (which would round 1e-9)
    want = _t_reference(3, 1e-9)
    assert abs(t_ppf(3, 1e-9) - want) <= REL * abs(want)


@settings(max_examples=500, deadline=None)
@given(x=st.floats(-37.0, 38.0))  # scipy flushes ndtr(-38)'s subnormal 2.9e-316 to 0
def test_normal_cdf_is_scipys(x: float) -> None:
    want = float(special.ndtr(x))
    assert abs(norm_cdf(x) - want) <= REL * want


@settings(max_examples=500, deadline=None)
@given(p=st.one_of(st.floats(1e-300, 1 - 1e-16), st.floats(0.0, 1.0)))
def test_normal_quantile_is_scipys(p: float) -> None:
    want = float(special.ndtri(p))
    got = norm_ppf(p)
    assert got == want or abs(got - want) <= REL * abs(want)


def test_normal_edges() -> None:
    assert norm_ppf(0.0) == -math.inf and norm_ppf(1.0) == math.inf
    assert math.isnan(norm_ppf(1.5)) and math.isnan(norm_ppf(math.nan))
    assert math.isnan(norm_cdf(math.nan)) and norm_cdf(0.0) == 0.5


@settings(max_examples=500, deadline=None)
@given(x=st.one_of(st.floats(0.0, 200.0), st.floats(1e-12, 1e-3)))
def test_chi_square_tail_on_one_degree_is_scipys(x: float) -> None:
    want = float(special.chdtrc(1, x))
    assert abs(chi2_sf_1(x) - want) <= REL * want


def test_chi_square_edges() -> None:
    assert chi2_sf_1(0.0) == 1.0 and chi2_sf_1(-3.0) == 1.0 and math.isnan(chi2_sf_1(math.nan))


def test_brent_takes_scipys_steps_to_the_last_bit() -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for i in range(600):
        c = rng.normal(size=3)
        r = float(rng.uniform(-2, 2))
        fs = [
            lambda x, c=c, r=r: (x - r) * (1 + c[0] ** 2) + c[1] * (x - r) ** 3,
            lambda x, c=c, r=r: math.exp(c[0] * x) - math.exp(c[0] * r) + (x - r) * 1e-3,
            lambda x, c=c, r=r: math.tanh(5 * (x - r)) + c[2] * (x - r) ** 2 * 0.1,
        ]
        f = fs[i % 3]
        if f(-3.0) * f(3.0) > 0:
            continue
        for xtol in (2e-12, 1e-13, 1e-6):
            assert brentq(f, -3.0, 3.0, xtol=xtol) == optimize.brentq(f, -3.0, 3.0, xtol=xtol)
            checked += 1
    assert checked > 1_000
    assert brentq(lambda x: x, 0.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, -1.0, 1.0)


def test_the_gate_statistics_load_no_scipy() -> None:
    # importing the cluster statistics and asking them for an interval loads no scipy module
    probe = (
        "import sys, numpy as np; from assay.stats.clusters import clustered_mcnemar, _t_quantile;"
        " from assay.stats.proportion import tango_paired; _t_quantile(0.95, 40);"
        " tango_paired(3, 1, 20); clustered_mcnemar(np.array([1, 0, 2]), np.array([0, 1, 0]),"
        " np.array([2, 2, 3]));"
        " print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    assert python_in_child(probe).strip() == "[]"
