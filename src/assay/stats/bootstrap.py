"""Bootstrap confidence intervals over entries, vectorised and reproducible from an explicit generator.

Entries are resampled with replacement (the unit of evaluation is the question, so the question is
the unit of resampling). Two interval methods are offered:

* ``"percentile"``: the alpha/2 and 1 - alpha/2 quantiles of the bootstrap distribution
  (``numpy.quantile``, linear interpolation).
* ``"bca"``: bias-corrected and accelerated (Efron 1987); bias from the share of bootstrap
  statistics below the estimate, acceleration from the jackknife. Where BCa is undefined (every
  bootstrap statistic on one side of the estimate, or a zero-variance jackknife) the percentile
  interval is returned and ``method`` says ``"percentile"``.

Speed without approximation: for the default statistic (the mean) the resample mean depends only
on how many times each *distinct* value was drawn, so when the data have few distinct values
(binary outcomes, recall fractions) the resample counts are drawn from the exact multinomial over
the distinct values instead of drawing ``n`` indices per resample. The two are the same
distribution; the multinomial costs ``O(distinct)`` per resample instead of ``O(n)``.

Reproducibility: given the same generator state and the same data, every function here returns
bit-identical results from run to run, and across machines running the same numpy version
(numpy's PCG64 stream is platform independent and every reduction runs in a fixed order). `bootstrap_by_group` derives one stream per group from the group
name, so adding or removing a category never changes another category's interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.report import Interval, undefined
from assay.stats._dist import norm_cdf, norm_ppf

__all__ = [
    "Method",
    "Statistic",
    "bootstrap_by_group",
    "bootstrap_ci",
    "bootstrap_distribution",
    "group_generator",
]

Statistic = Callable[..., Any]
"""A reduction ``f(x, axis=-1) -> array`` such as ``numpy.mean`` or ``numpy.median``."""

Method = Literal["percentile", "bca"]

# Use the distinct-value multinomial when it draws fewer numbers than plain index resampling.
_MAX_DISTINCT = 512
# Elements per resampling batch (bounds memory to a few tens of MB).
_BATCH_ELEMENTS = 2_000_000


def _as_1d(values: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D array of per-entry values, got shape {arr.shape}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError("per-entry values must be finite (no NaN or inf)")
    return arr


def _check(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be strictly between 0 and 1")


def bootstrap_distribution(
    values: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 10_000,
    statistic: Statistic | None = None,
) -> NDArray[np.float64]:
    """The statistic on ``n_resamples`` resamples (with replacement) of ``values``.

    ``statistic=None`` means the mean and enables the exact distinct-value fast path.
    """
    x = _as_1d(values)
    n = x.size
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if statistic is None:
        uniq, counts = np.unique(x, return_counts=True)
        if uniq.size == 1:
            return np.full(n_resamples, uniq[0])
        if uniq.size <= _MAX_DISTINCT and uniq.size * 4 < n:
            draws = rng.multinomial(n, counts / n, size=n_resamples)
            return np.asarray((draws @ uniq) / n, dtype=np.float64)
    out = np.empty(n_resamples, dtype=np.float64)
    batch = max(1, _BATCH_ELEMENTS // n)
    for start in range(0, n_resamples, batch):
        stop = min(n_resamples, start + batch)
        # native-width indices: numpy gathers with intp without a conversion pass
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.intp)
        sample = x[idx]
        if statistic is None:
            out[start:stop] = sample.mean(axis=1)
        else:
            out[start:stop] = np.asarray(statistic(sample, axis=-1), dtype=np.float64)
    return out


def _jackknife(x: NDArray[np.float64], statistic: Statistic | None) -> NDArray[np.float64]:
    n = x.size
    if statistic is None:
        return np.asarray((x.sum() - x) / (n - 1), dtype=np.float64)
    out = np.empty(n, dtype=np.float64)
    batch = max(1, _BATCH_ELEMENTS // max(1, n - 1))
    full = np.arange(n)
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        rows = np.stack([np.delete(full, i) for i in range(start, stop)])
        out[start:stop] = np.asarray(statistic(x[rows], axis=-1), dtype=np.float64)
    return out


def _bca_bounds(
    estimate: float,
    dist: NDArray[np.float64],
    jack: NDArray[np.float64],
    confidence: float,
    *,
    midrank: bool = False,
) -> tuple[float, float] | None:
    """BCa quantile levels mapped onto ``dist``; None where BCa is undefined. ``midrank``
    counts bootstrap values equal to the estimate as half below (for statistics with a
    discrete bootstrap distribution, where ties at the estimate are common and counting them
    all above biases the interval downward)."""
    if midrank:  # equal up to rounding (a resample's sums are added in another order)
        tie = np.abs(dist - estimate) <= 1e-9 * max(1.0, abs(estimate))
        below = float(np.mean((dist < estimate) & ~tie)) + 0.5 * float(np.mean(tie))
    else:
        below = float(np.mean(dist < estimate))
    if below <= 0.0 or below >= 1.0:
        return None
    z0 = norm_ppf(below)
    dev = jack.mean() - jack
    denom = float(np.sum(dev**2)) ** 1.5
    if denom == 0.0:
        return None
    accel = float(np.sum(dev**3)) / (6.0 * denom)
    alpha = 1.0 - confidence
    levels = []
    for z_a in (norm_ppf(alpha / 2), norm_ppf(1 - alpha / 2)):
        num = z0 + z_a
        den = 1.0 - accel * num
        if den <= 0.0:
            return None
        levels.append(norm_cdf(z0 + num / den))
    lo, hi = np.quantile(dist, levels)
    return float(lo), float(hi)


def bootstrap_ci(
    values: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: Method = "percentile",
    statistic: Statistic | None = None,
) -> Interval:
    """Bootstrap CI of ``statistic`` (default: the mean) over per-entry ``values``.

    Returns an `Interval` whose ``method`` is ``"percentile"`` or ``"bca"`` (the one used). An
    empty sample is undefined (value None, with a note). When every value is equal the bootstrap
    sees no variation and the interval is a single point; the note says so (for 0/1 data use
    `assay.stats.proportion.wilson`, which does not collapse).
    """
    _check(n_resamples, confidence)
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', not {method!r}")
    x = _as_1d(values)
    n = x.size
    if n == 0:
        return undefined("no values to resample", level=confidence, method=method)
    estimate = float(x.mean()) if statistic is None else float(statistic(x, axis=-1))
    dist = bootstrap_distribution(x, rng=rng, n_resamples=n_resamples, statistic=statistic)
    used: str = method
    bounds: tuple[float, float] | None = None
    if method == "bca" and n > 1:
        bounds = _bca_bounds(estimate, dist, _jackknife(x, statistic), confidence)
    if bounds is None:
        used = "percentile"
        alpha = 1.0 - confidence
        lo, hi = np.quantile(dist, [alpha / 2, 1 - alpha / 2])
        bounds = (float(lo), float(hi))
    note = None
    if bool(np.all(x == x[0])):
        note = (
            f"all {n} values are equal: the bootstrap sees no variation and the interval is a "
            "single point"
        )
    return Interval(estimate, bounds[0], bounds[1], confidence, used, note)


def group_generator(base: int, name: str) -> np.random.Generator:
    """A generator for one named group, derived from the integer ``base`` and the name only."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([base, *words]))


def bootstrap_by_group(
    values: Mapping[str, ArrayLike],
    *,
    rng: np.random.Generator,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: Method = "percentile",
    statistic: Statistic | None = None,
) -> dict[str, Interval]:
    """One bootstrap CI per group (e.g. per category), each from its own derived stream.

    One number is drawn from ``rng``; each group's stream is seeded from that number and the group
    name, so a group's interval depends only on the seed, its name and its own values.
    """
    base = int(rng.integers(0, 2**63 - 1))
    return {
        name: bootstrap_ci(
            vals,
            rng=group_generator(base, name),
            n_resamples=n_resamples,
            confidence=confidence,
            method=method,
            statistic=statistic,
        )
        for name, vals in sorted(values.items())
    }
