"""The documented smallest coverage of the rate interval ("auto": Wilson, Clopper-Pearson below
4 events or non-events), by exact binomial sums: 91.9% (n = 36, p = 0.098), not 92.1%."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from scipy.stats import binom

from assay.stats.proportion import rate_ci


def _min_coverage(n: int) -> tuple[float, float]:
    iv = [rate_ci(x, n) for x in range(n + 1)]
    lo = np.array([i.low for i in iv], dtype=float)
    hi = np.array([i.high for i in iv], dtype=float)
    ends = np.concatenate([lo, hi])
    ps = np.concatenate([ends - 1e-10, ends + 1e-10])
    ps = ps[(ps > 0) & (ps < 1)]
    pmf = binom.pmf(np.arange(n + 1)[None, :], n, ps[:, None])
    inside = (lo[None, :] <= ps[:, None]) & (ps[:, None] <= hi[None, :])
    cov = (pmf * inside).sum(axis=1)
    return float(cov.min()), float(ps[cov.argmin()])


def test_smallest_coverage_of_the_rate_interval_is_the_documented_one() -> None:
    worst = min(((*_min_coverage(n), n) for n in range(8, 61)), key=lambda t: t[0])
    cov, p, n = worst
    print(f"smallest coverage, n = 8..60: {cov:.4f} at n = {n}, p = {p:.4f}")
    assert n == 36 and round(cov, 3) == 0.919 and round(p, 3) == 0.098
    doc = (Path(__file__).parents[2] / "src/assay/stats/proportion.py").read_text()
    assert "91.9% at n = 36" in doc
    assert not re.search(r"smallest coverage[^.]*92\\.1%", doc)
