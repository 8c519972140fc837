"""The normal, chi-square (one degree) and Student's t functions and the root finder a gate
needs, from the standard library.

`scipy.special` clones numpy's namespace when first imported (numpy.testing, numpy.f2py and
numpy.ma come with it): 0.2 s of CPU on every `assay gate` (`bench/bench_stats_dist.py`), more
than a gate's statistics take.
These five are what the gate's path asks of scipy; the rest of assay's statistics still use it,
imported where they run. tests/stats/test_dist.py holds them to a 40-digit reference (mpmath)
and to scipy: relative 1e-13 from 1 to 10**7 degrees of freedom and probabilities from 1e-12 to
1 - 1e-12; the root finder to scipy's last bit.

* `norm_cdf`: `scipy.special.ndtr`'s formula (erf near 0, erfc in the tails);
* `norm_ppf`: `statistics.NormalDist.inv_cdf` (Wichura's AS241, 16 digits);
* `chi2_sf_1`: chi-square survival on one degree of freedom, ``erfc(sqrt(x / 2))``;
* `t_ppf`: Student's t quantile: the regularized incomplete beta by its continued fraction
  (modified Lentz), Gamma(a + 1/2) / Gamma(a) by Stirling's series past a = 10 (no difference of
  large log-gammas to lose digits), solved by Newton's method on the log of the mass beyond t
  (or, near the centre, between 0 and t) against log t, kept inside a bracket; started from
  Cornish-Fisher's expansion (Abramowitz and Stegun 26.7.5), which alone is used from 5,000
  degrees of freedom on (its error falls as df**-5: under 1e-14 there);
* `brentq`: Brent's method, step for step as `scipy.optimize.brentq`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

__all__ = ["brentq", "chi2_sf_1", "norm_cdf", "norm_ppf", "t_ppf"]

_SQRT1_2 = math.sqrt(0.5)
_STANDARD = NormalDist()
_EPS = 2.220446049250313e-16
_TINY = 1e-300
_LOG_SQRT_PI = 0.5 * math.log(math.pi)
# Stirling's series for log Gamma(x): B_2k / (2k (2k - 1)) for k = 1..7
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def norm_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z (`scipy.special.ndtr`)."""
    if math.isnan(x):
        return math.nan
    y = x * _SQRT1_2
    if abs(y) < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(y)
    half = 0.5 * math.erfc(abs(y))
    return 1.0 - half if y > 0 else half


def norm_ppf(p: float) -> float:
    """The standard normal quantile (`scipy.special.ndtri`): -inf at 0, inf at 1, NaN outside."""
    if not 0.0 < p < 1.0:
        return -math.inf if p == 0.0 else math.inf if p == 1.0 else math.nan
    return _STANDARD.inv_cdf(p)


def chi2_sf_1(x: float) -> float:
    """P(X > x) for X chi-square on one degree of freedom (`scipy.special.chdtrc(1, x)`)."""
    if math.isnan(x):
        return math.nan
    return 1.0 if x <= 0.0 else math.erfc(math.sqrt(0.5 * x))


def _stirling_tail(x: float) -> float:
    inv, inv2 = 1.0 / x, 1.0 / (x * x)
    total, power = 0.0, inv
    for c in _STIRLING:
        total += c * power
        power *= inv2
    return total


def _log_gamma_ratio(a: float) -> float:
    """log(Gamma(a + 1/2) / Gamma(a)), to the last digit or two for every a > 0."""
    if a < 10.0:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    # (a) log(a + 1/2) - (a - 1/2) log(a) - 1/2, each piece of order one
    return (
        0.5 * math.log(a)
        + (a * math.log1p(0.5 / a) - 0.5)
        + (_stirling_tail(a + 0.5) - _stirling_tail(a))
    )


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        m2 = 2.0 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) <= 2.0 * _EPS:
            return h
    raise ArithmeticError(
        f"incomplete beta: no convergence at a={a}, b={b}, x={x}"
    )  # pragma: no cover


def _t_masses(t: float, df: float, log_ratio: float) -> tuple[float, float]:
    """(P(0 < T < t), P(T > t)) for t > 0, each summing to 1/2: the one the continued fraction
    reaches fast computed, the other its complement (I_x(df/2, 1/2) and I_y(1/2, df/2) with
    x = df / (df + t^2), y = 1 - x, halved)."""
    a, t2 = 0.5 * df, t * t
    x, y = df / (df + t2), t2 / (df + t2)  # y = 1 - x without cancellation
    # log of x^a (1 - x)^(1/2) / B(a, 1/2); B(a, 1/2) = sqrt(pi) Gamma(a) / Gamma(a + 1/2)
    front = math.exp(
        -a * math.log1p(t2 / df) + math.log(t) - 0.5 * math.log(df + t2) - _LOG_SQRT_PI + log_ratio
    )
    if x < (a + 1.0) / (a + 2.5):
        upper = 0.5 * front * _beta_cf(a, 0.5, x) / a
        return 0.5 - upper, upper
    central = front * _beta_cf(0.5, a, y)
    return central, 0.5 - central


def _t_pdf(t: float, df: float, log_ratio: float) -> float:
    return math.exp(
        log_ratio - 0.5 * math.log(df) - _LOG_SQRT_PI - 0.5 * (df + 1.0) * math.log1p(t * t / df)
    )


_CORNISH_FISHER = (
    (1.0 / 4, (1.0, 1.0)),
    (1.0 / 96, (5.0, 16.0, 3.0)),
    (1.0 / 384, (3.0, 19.0, 17.0, -15.0)),
    (1.0 / 92160, (79.0, 776.0, 1482.0, -1920.0, -945.0)),
)


def _cornish_fisher(z: float, df: float) -> float:
    z2, total, power = z * z, z, 1.0
    for scale, coeffs in _CORNISH_FISHER:
        power /= df
        poly = 0.0
        for c in coeffs:  # in z^2, highest first, times z
            poly = poly * z2 + c
        total += scale * poly * z * power
    return total


def t_ppf(df: float, p: float) -> float:
    """Student's t quantile on ``df`` degrees of freedom (`scipy.special.stdtrit(df, p)`)."""
    if math.isnan(df) or math.isnan(p) or df <= 0.0 or not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.5:
        return 0.0
    if p in (0.0, 1.0):
        return math.inf if p else -math.inf
    # solve P(T > t) = q on the upper side; the lower quantile is its mirror, from p itself
    # (1 - p is exact for p >= 1/2, but would round a small p)
    return _t_upper(df, 1.0 - p) if p > 0.5 else -_t_upper(df, p)


def _t_upper(df: float, q: float) -> float:
    z = -norm_ppf(q)
    if math.isinf(df):
        return z
    if df == 1.0:
        t = 1.0 / math.tan(math.pi * q)
    elif df == 2.0:
        t = (1.0 - 2.0 * q) / math.sqrt(2.0 * q * (1.0 - q))
    else:
        t = _cornish_fisher(z, df)
        if df >= 5e3:  # A&S 26.7.5's error falls as df**-5: below 1e-14 from here on
            return t
        if not (t > 0.0 and math.isfinite(t)):
            t = z
    # Newton on g(w) = log S(e^w) - log s, where S is the mass above t (s = q) or, near the
    # centre, between 0 and t (s = 1/2 - q, exact from p): g is monotone, nearly linear in w in
    # the tails. Kept in the bracket the signs of g have shown; it stops when a step is within
    # rounding, or when steps stop shrinking (the masses' own rounding, ~1e-14, reached): the
    # iterate nearest s.
    central = q > 0.25
    log_ratio, log_s = _log_gamma_ratio(0.5 * df), math.log(0.5 - q if central else q)
    sign = 1.0 if central else -1.0  # g increasing in w for the central mass
    lo, hi = -math.inf, math.inf  # the root lies in (lo, hi)
    w = math.log(t)
    best_w, best_g, last_step = w, math.inf, math.inf
    for _ in range(200):
        t = math.exp(w)
        masses = _t_masses(t, df, log_ratio)
        mass = masses[0] if central else masses[1]
        if not mass > 0.0:  # past the last representable mass
            if central:
                lo = max(lo, w)
            else:
                hi = min(hi, w)
            w = 0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi) else w + 2.0 * sign
            continue
        g = math.log(mass) - log_s
        if abs(g) < best_g:
            best_w, best_g = w, abs(g)
        if g == 0.0:
            return t
        if sign * g < 0.0:
            lo = max(lo, w)
        else:
            hi = min(hi, w)
        slope = sign * t * _t_pdf(t, df, log_ratio) / mass  # g'(w)
        step = max(-2.0, min(2.0, -g / slope))
        if abs(step) <= 4.0 * _EPS * max(1.0, abs(w)):
            return math.exp(w + step)
        if abs(step) < 1e-11 * max(1.0, abs(w)) and abs(step) >= 0.5 * last_step:
            return math.exp(best_w)
        last_step = abs(step)
        nxt = w + step
        if not lo < nxt < hi:
            nxt = (
                0.5 * (lo + hi)
                if math.isfinite(lo) and math.isfinite(hi)
                else w + math.copysign(2.0, step)
            )
        w = nxt
    raise ArithmeticError(f"t quantile: no convergence at df={df}, q={q}")  # pragma: no cover


def brentq(
    f: Callable[[float], float],
    xa: float,
    xb: float,
    *,
    xtol: float = 2e-12,
    rtol: float = 4 * _EPS,
    maxiter: int = 100,
) -> float:
    """A root of ``f`` in [xa, xb], where ``f`` changes sign: Brent's method (Brent 1973, ch. 4),
    step for step as `scipy.optimize.brentq` takes it (inverse quadratic interpolation, the
    secant, or bisection; the same floats, so the same root to the last bit)."""
    xpre, xcur = float(xa), float(xb)
    fpre, fcur = f(xpre), f(xcur)
    if fpre == 0.0:
        return xpre
    if fcur == 0.0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    xblk = fblk = spre = scur = 0.0
    for _ in range(maxiter):
        if fpre != 0.0 and fcur != 0.0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate (secant)
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:  # extrapolate (inverse quadratic)
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):  # a good short step
                spre, scur = scur, stry
            else:
                spre = scur = sbis
        else:
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = f(xcur)
    raise ArithmeticError(f"root finding: no convergence in {maxiter} steps")
