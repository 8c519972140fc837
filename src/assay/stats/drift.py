"""Distribution drift between two periods: the two-sample Kolmogorov-Smirnov test.

`ks_two_sample(a, b)` gives Smirnov's statistic D = sup |F_a(x) - F_b(x)| over the two empirical
distribution functions and its two-sided p-value by the asymptotic method (the Kolmogorov
distribution of D at the effective size n = n_a n_b / (n_a + n_b), rounded), as
``scipy.stats.ks_2samp(a, b, method="asymp")`` computes them. D is computed exactly by merging
the sorted samples, so ties are handled the way scipy handles them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import kstwo

__all__ = ["KSResult", "ks_two_sample"]


@dataclass(frozen=True, slots=True)
class KSResult:
    statistic: float
    pvalue: float
    n_a: int
    n_b: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "two-sample Kolmogorov-Smirnov (asymptotic)",
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "n_a": self.n_a,
            "n_b": self.n_b,
        }


def ks_two_sample(a: npt.ArrayLike, b: npt.ArrayLike) -> KSResult | None:
    """Two-sample KS test of `a` against `b` (NaNs dropped); None when either sample is empty."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = np.sort(x[~np.isnan(x)])
    y = np.sort(y[~np.isnan(y)])
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return None
    grid = np.concatenate([x, y])
    cdf1 = np.searchsorted(x, grid, side="right") / n1
    cdf2 = np.searchsorted(y, grid, side="right") / n2
    d = float(np.max(np.abs(cdf1 - cdf2)))
    m, n = sorted([float(n1), float(n2)], reverse=True)
    en = m * n / (m + n)
    p = float(np.clip(kstwo.sf(d, np.round(en)), 0.0, 1.0))
    return KSResult(d, p, n1, n2)
