"""The smallest exact coverage of the rate interval (`rate_ci`) over every true rate in (0, 1).

    PYTHONPATH=src python bench/bench_rate_coverage.py [--n-min 8] [--n-max 1000]

For each n, coverage at a true rate p is the binomial probability of the counts whose interval
holds p. It is piecewise smooth in p and jumps at the interval bounds, so its infimum over
(0, 1) is approached just inside or outside a bound: it is evaluated at every bound +- 1e-9
(and at the middle of each piece). The figures in docs/statistics.md come from here.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import binom

from assay.stats.proportion import RateMethod, rate_ci


def min_coverage(
    n: int, method: RateMethod = "auto", confidence: float = 0.95
) -> tuple[float, float]:
    """(smallest coverage over p in (0, 1), the p where it occurs) at size n."""
    bounds = [rate_ci(k, n, confidence=confidence, method=method) for k in range(n + 1)]
    low = np.array([b.low for b in bounds], dtype=np.float64)
    high = np.array([b.high for b in bounds], dtype=np.float64)
    edges = np.unique(np.concatenate([low, high]))
    ps = np.concatenate([edges - 1e-9, edges + 1e-9, (edges[1:] + edges[:-1]) / 2])
    ps = ps[(ps > 0.0) & (ps < 1.0)]
    # the counts whose interval holds p form a run [k_lo, k_hi]: bounds rise with k
    k_lo = np.searchsorted(high, ps, side="left")  # first k with high >= p
    k_hi = np.searchsorted(low, ps, side="right") - 1  # last k with low <= p
    cover = binom.cdf(k_hi, n, ps) - binom.cdf(k_lo - 1, n, ps)
    i = int(np.argmin(cover))
    return float(cover[i]), float(ps[i])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-min", type=int, default=8)
    parser.add_argument("--n-max", type=int, default=1000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    for method in ("wilson", "auto"):
        worst = min((min_coverage(n, method), n) for n in range(args.n_min, args.n_max + 1))
        (cov, p), n = worst
        print(f"{method:>7}: smallest coverage {cov:.4f} at n = {n}, p = {p:.4f}")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
