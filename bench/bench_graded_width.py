"""Graded intervals: coverage and width against the t-interval and the exact permutation interval.

On the coverage grid of ``tests/stats/test_coverage.py`` (n = 8, 12, 20, 30, 50; paired graded
deltas in sixths of [-1, 1]: "balanced", "skewed", "skewed, null"; one run's graded cells:
recall balanced, recall mostly 1, mrr with 80% and 92% zeros), ``R`` seeded samples per point,
and for each sample three 95% intervals of the mean:

* **score**: the interval compare, gate and ``score --ci`` print for a graded cell
  (`assay.stats.bounded.score_mean_bounds`; one run's cells go through
  `graded_mean_interval`, exact when fewer than 4 values differ from the most common one);
* **t**: ``mean +- t_{n-1} sd / sqrt(n)``, clipped to the variable's bounds;
* **perm**: the exact permutation interval, every ``mu`` the two-sided sign-flip test of
  ``x - mu`` does not reject at 5% (all ``2**n`` sign patterns up to n = 12, else 4,000 seeded
  ones, shared by every ``mu``), found by bisection. For one run's cells it assumes a
  distribution symmetric about its mean, which mrr-like cells are not.

Printed per point: coverage of each (Monte-Carlo error ``sqrt(c (1 - c) / R)``), mean width,
and the score interval's width over the t-interval's and over the permutation interval's.

Run: python bench/bench_graded_width.py [R]     (default R = 1,000: about a minute)
"""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
from numpy.typing import NDArray
from scipy.stats import t as student_t

from assay.stats.bounded import graded_mean_interval, score_mean_bounds

GRID = (8, 12, 20, 30, 50)
SIXTHS = np.arange(-6, 7) / 6.0
MOVES = np.array([1 / 3, 1 / 2, 2 / 3, 1.0])
MRR = np.array([0.0] + [1.0 / r for r in range(1, 11)])
MRR_TAIL = np.array([0.4, 0.2, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.02])
ONE_RUN = {
    "recall, balanced": (np.arange(4) / 3, np.array([0.2, 0.3, 0.3, 0.2])),
    "recall, mostly 1": (np.arange(4) / 3, np.array([0.03, 0.04, 0.08, 0.85])),
    "mrr, 80% zeros": (MRR, np.concatenate([[0.80], 0.20 * MRR_TAIL])),
    "mrr, 92% zeros": (MRR, np.concatenate([[0.92], 0.08 * MRR_TAIL])),
}
FloatArray = NDArray[np.float64]


def paired(kind: str) -> FloatArray:
    """The distribution of a paired graded difference over SIXTHS (as the coverage grid)."""
    p = np.zeros(SIXTHS.size)

    def put(value: float, mass: float) -> None:
        p[round(value * 6) + 6] += mass

    if kind == "balanced":
        put(0.0, 0.5)
        for v, up, down in ((1 / 3, 0.14, 0.12), (1 / 2, 0.05, 0.03), (2 / 3, 0.06, 0.05)):
            put(v, up)
            put(-v, down)
        put(1.0, 0.03)
        put(-1.0, 0.02)
    else:
        up = 0.10 if kind == "skewed" else 0.075
        put(0.0, 0.85)
        for v in MOVES:
            put(v, up / MOVES.size)
            put(-v, (0.15 - up) / MOVES.size)
    return p


def patterns(n: int, rng: np.random.Generator) -> FloatArray:
    if n <= 12:
        return np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    return rng.choice((-1.0, 1.0), size=(4000, n))


def perm_interval(
    x: FloatArray, signs: FloatArray, lower: float, upper: float
) -> tuple[float, float]:
    """Every mu the sign-flip test of x - mu does not reject at 5% (bisection on each side)."""
    n = x.size
    u, v = signs @ x, signs.sum(axis=1)
    total, mean = float(x.sum()), float(x.mean())

    def accepted(mu: float) -> bool:
        t = abs(total - n * mu)
        return float(np.mean(np.abs(u - mu * v) >= t - 1e-9 * (1.0 + t))) > 0.05

    out = []
    for edge in (lower, upper):
        if accepted(edge):
            out.append(edge)
            continue
        inside, outside = mean, edge
        for _ in range(40):
            mid = 0.5 * (inside + outside)
            inside, outside = (mid, outside) if accepted(mid) else (inside, mid)
        out.append(inside)
    return out[0], out[1]


def t_bounds(x: FloatArray, lower: float, upper: float) -> tuple[float, float]:
    n = x.size
    half = float(student_t.ppf(0.975, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    m = float(x.mean())
    return max(lower, m - half), min(upper, m + half)


def point(
    support: FloatArray, p: FloatArray, n: int, reps: int, rng: np.random.Generator,
    lower: float, cell: bool,
) -> dict[str, tuple[float, float]]:  # fmt: skip
    """{interval: (coverage, mean width)} at one grid point."""
    truth = float(support @ p)
    counts = rng.multinomial(n, p, size=reps)
    distinct, inverse = np.unique(counts, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    signs = patterns(n, rng)
    bounds: dict[str, list[tuple[float, float]]] = {"score": [], "t": [], "perm": []}
    if not cell:
        keep = distinct.sum(axis=0) > 0
        _, lo, hi = score_mean_bounds(support[keep], distinct[:, keep], lower=lower, upper=1.0)
        bounds["score"] = list(zip(lo.tolist(), hi.tolist(), strict=True))
    for row in distinct:
        x = np.repeat(support, row)
        if cell:
            iv = graded_mean_interval(x, lower=lower, upper=1.0)
            assert iv.low is not None and iv.high is not None
            bounds["score"].append((iv.low, iv.high))
        bounds["t"].append(t_bounds(x, lower, 1.0))
        bounds["perm"].append(perm_interval(x, signs, lower, 1.0))
    out = {}
    for name, b in bounds.items():
        arr = np.asarray(b)[inverse]
        cover = float(np.mean((arr[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= arr[:, 1])))
        out[name] = (cover, float(np.mean(arr[:, 1] - arr[:, 0])))
    return out


def main(
    reps: int = 1000, seed: int = 2026
) -> list[tuple[str, int, dict[str, tuple[float, float]]]]:
    rng = np.random.default_rng(seed)
    rows = []
    cells = [(f"paired delta, {k}", SIXTHS, paired(k), -1.0, False)
             for k in ("balanced", "skewed", "skewed, null")]  # fmt: skip
    cells += [(f"one run, {k}", s, p, 0.0, True) for k, (s, p) in ONE_RUN.items()]
    se = math.sqrt(0.95 * 0.05 / reps)
    print(f"R = {reps} samples per point (Monte-Carlo error of a coverage near 0.95: {se:.4f})")
    print(f"{'cell':<28} {'n':>3} | {'coverage score':>14} {'t':>6} {'perm':>6} | "
          f"{'width score':>11} {'t':>6} {'perm':>6} | {'score/t':>7} {'score/perm':>10}")  # fmt: skip
    for label, support, p, lower, cell in cells:
        for n in GRID:
            r = point(support, p, n, reps, rng, lower, cell)
            (cs, ws), (ct, wt), (cp, wp) = r["score"], r["t"], r["perm"]
            print(f"{label:<28} {n:>3} | {cs:>14.3f} {ct:>6.3f} {cp:>6.3f} | {ws:>11.3f} "
                  f"{wt:>6.3f} {wp:>6.3f} | {ws / wt:>7.2f} {ws / wp:>10.2f}")  # fmt: skip
            rows.append((label, n, r))
    return rows


if __name__ == "__main__":
    main(int(sys.argv[1]) if sys.argv[1:] else 1000)
