"""Shared machinery for the agreement and calibration statistics.

Every figure is an `assay.report.Interval`: a point value with its confidence interval and
an optional note. A statistic that is undefined on the data at hand (kappa when both raters gave
one label only, TPR with no human passes) has `value=None` and a note that says why: never a
silent NaN.

Bootstrap intervals are percentile intervals over resamples of items. Resamples on which the
statistic is undefined are dropped and counted; when more than half are dropped the interval is
withheld (`low=high=None`) with a note. So is an interval every resample agrees on (perfect
agreement among 8 items gives alpha 1 on every resample): a single point there would claim a
certainty the items cannot give.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.stats._errors import StatsInputError
from assay.stats.bootstrap import _bca_bounds

__all__ = ["PERCENTILE", "as_bool_array", "make_rng", "percentile_interval"]

FloatArray = NDArray[np.float64]


#: `Interval.method` of the percentile bootstrap intervals of agreement and calibration.
PERCENTILE = "percentile"
#: ... and of the agreement intervals: bias-corrected and accelerated.
BCA = "bca"


def package_version() -> str | None:
    """The installed assay's version, for stamping reports (stats imports nothing of assay)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assay")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return None


def make_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A Generator from a Generator, a seed, or None (None means seed 0: results are reproducible)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def check_confidence(confidence: float, n_resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise StatsInputError("confidence", f"must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise StatsInputError("n_resamples", f"must be >= 1, got {n_resamples}")


def as_bool_array(values: ArrayLike, name: str) -> NDArray[np.bool_]:
    """A 1-D bool array from bools or 0/1 numbers; anything else is a StatsInputError naming `name`."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise StatsInputError(name, f"expected a 1-D sequence, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=bool)
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind in "iuf":
        ok = (arr == 0) | (arr == 1)
        if not bool(np.all(ok)):
            bad = int(np.flatnonzero(~ok)[0])
            raise StatsInputError(f"{name}[{bad}]", f"expected a boolean or 0/1, got {arr[bad]!r}")
        return arr.astype(bool)
    raise StatsInputError(name, f"expected booleans, got dtype {arr.dtype}")


def percentile_interval(
    samples: FloatArray, confidence: float, *, what: str = "statistic"
) -> tuple[float | None, float | None, str | None]:
    """Percentile interval of bootstrap replicates; NaN replicates (undefined) are dropped.

    Returns (low, high, note). With more than half the replicates undefined the interval is None.
    """
    finite = samples[np.isfinite(samples)]
    dropped = samples.size - finite.size
    if samples.size == 0 or finite.size * 2 < samples.size:
        return (
            None,
            None,
            (
                f"no interval: {what} is undefined on {dropped} of {samples.size} bootstrap resamples"
            ),
        )
    if float(finite.max()) == float(finite.min()):
        # every resample gives one value (8 items in perfect agreement: alpha 1 each time): the
        # bootstrap has no variation to measure, which does not make the value certain
        return (
            None,
            None,
            (
                f"no interval: every bootstrap resample gives {what} = {float(finite[0]):.3g}; "
                "the items show no variation for the bootstrap to measure, and that does not "
                "make the value certain"
            ),
        )
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    note = None
    if dropped:
        note = (
            f"interval from the {finite.size} of {samples.size} resamples where {what} is defined"
        )
    return float(low), float(high), note


def bca_or_percentile(
    samples: FloatArray,
    estimate: float,
    jackknife: FloatArray,
    confidence: float,
    *,
    what: str = "statistic",
) -> tuple[float | None, float | None, str | None, str]:
    """BCa interval (`assay.stats.bootstrap`'s, acceleration from the leave-one-out values
    `jackknife`) of bootstrap replicates, the percentile interval where BCa is undefined (every
    replicate on one side of the estimate, a constant jackknife). Undefined replicates are
    dropped and withheld intervals returned as `percentile_interval` does.

    Returns (low, high, note, method): method is ``"bca"`` or ``"percentile"``, the one used.
    """
    low, high, note = percentile_interval(samples, confidence, what=what)
    if low is None or high is None:
        return low, high, note, PERCENTILE
    jack = jackknife[np.isfinite(jackknife)]
    # mid-rank ties: agreement statistics on a few dozen items take few distinct values
    bounds = _bca_bounds(estimate, samples[np.isfinite(samples)], jack, confidence, midrank=True)
    if bounds is None or jack.size < 2:
        return low, high, note, PERCENTILE
    return bounds[0], bounds[1], note, BCA


def join_notes(*notes: str | None) -> str | None:
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None


def clean(value: float) -> float | None:
    """None for NaN/inf, the float otherwise."""
    return value if math.isfinite(value) else None


def safe_ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den with NaN where den == 0 (no warnings)."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out
