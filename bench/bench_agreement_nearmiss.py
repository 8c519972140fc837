"""Candidate intervals of quadratic kappa where wrong grades are near misses.

    PYTHONPATH=src python bench/bench_agreement_nearmiss.py [--reps 400] [--n 30] [--raters 2 3]

The simulation is `bench_agreement_coverage.py`'s on three ordered grades 0 < 1 < 2 (numbers):
with ``--adjacent`` a wrong grade is one step off, a near miss (prevalence 0.9 and 0.95: the far
grade is rare), without it any other grade (prevalence 0.5-0.95, the main grid). Each
simulated label set's quadratic kappa gets every candidate, from the two raters' pooled table
(`agreement._pair_matrix`, items counted once) and kept around the coefficient's value as
`agreement` keeps it:

- ``score``: the weighted score interval alone (`_weighted_score_interval`, the default
  before);
- ``posterior``: the Dirichlet(1/2) posterior interval alone (`_posterior_interval`);
- ``union``: the union of the two, the default (`agreement`'s own interval, checked against
  the union of the two above);
- ``fisher-z``: the weighted kappa's delta-method variance at the observed table (Fleiss, Cohen
  and Everitt's, pooled margins), on the Fisher-z scale with a t(n - 1) quantile;
- ``floor``: the score inversion with the variance floored at the observed table's.

It prints, per candidate, the lowest coverage over the near-miss cells and over the main grid
(where it was met), the Monte-Carlo standard error, and the mean width over each grid. An
interval withheld counts as a miss. Seeded: the same command prints the same figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_agreement_coverage as cov

from assay.stats import agreement as ag

KEY = "cohen_kappa_quadratic"
CANDIDATES = ("score", "posterior", "union", "fisher-z", "floor")
Bounds = tuple[float, float] | None


@dataclass
class Tally:
    covered: int = 0
    runs: int = 0
    width: float = 0.0
    shown: int = 0

    def add(self, iv: Bounds, truth: float) -> None:
        self.runs += 1
        if iv is None:
            return
        self.shown += 1
        self.width += iv[1] - iv[0]
        self.covered += iv[0] <= truth <= iv[1]


def _floored_score(table: np.ndarray, w: np.ndarray, confidence: float, dof: int) -> Bounds:
    """The weighted score inversion with ``max(V(T(k)), V(observed))`` for the variance."""
    n = float(table.sum())
    p = table / n
    pi = (p.sum(axis=0) + p.sum(axis=1)) / 2.0
    d_e = float(pi @ w @ pi)
    if not d_e > 1e-12:
        return None
    centre = 1.0 - float((w * p).sum()) / d_e
    observed = ag._weighted_variance(p, w)
    crit = float(stdtrit(dof, 0.5 + confidence / 2.0)) ** 2
    base = np.outer(pi, pi)

    def excess(k: float) -> float:
        model = ag._weighted_variance(base + k * (np.diag(pi) - base), w)
        return (centre - k) ** 2 - crit * max(model, observed) / n

    used = pi[pi > 1e-12]
    floor = float(np.max(-used / (1.0 - used)))
    return ag._bisect_edge(excess, floor, centre), ag._bisect_edge(excess, 1.0, centre)


def candidates(labels: np.ndarray, seed: int, confidence: float = 0.95) -> dict[str, Bounds]:
    """Every candidate interval of quadratic kappa on one label set (items x raters, grades
    0-2)."""
    res = ag.agreement(
        cov._records(labels, 3, True), categories=cov.scale(3, True), rng=seed, n_resamples=20
    )
    iv = res.statistics[KEY]
    if iv.value is None or iv.low is None or iv.high is None:
        return dict.fromkeys(CANDIDATES)
    v = iv.value
    table = ag._pair_matrix(labels.astype(np.int64), 3)
    w = ag._disagreement_weights(3)[KEY]
    n = round(float(table.sum()))
    dof = max(n - 1, 1)

    def around(b: Bounds) -> Bounds:
        return None if b is None else (min(b[0], v), max(b[1], v))

    score = around(ag._weighted_score_interval(table, w, confidence, t_dof=dof))
    post_seed = int(np.random.default_rng(seed).spawn(1)[0].integers(2**63))
    posterior = around(ag._posterior_interval(table, w, confidence, post_seed, full_scale=True))
    union = (iv.low, iv.high)
    if score is not None and posterior is not None:
        expected = (min(score[0], posterior[0]), max(score[1], posterior[1]))
        assert np.allclose(union, expected, atol=1e-9), (union, expected)
    p = table / table.sum()
    var = ag._weighted_variance(p, w)
    se = math.sqrt(var / n) if np.isfinite(var) else None
    fisher = ag._z_interval(v, se, n, (-1.0, 1.0), confidence)
    return {
        "score": score,
        "posterior": posterior,
        "union": union,
        "fisher-z": fisher,
        "floor": around(_floored_score(table, w, confidence, dof)),
    }


def cell(
    n: int, raters: int, prev: float, acc: float, adjacent: bool, reps: int, seed: int
) -> dict[str, Tally]:
    truth = cov.true_values(prev, acc, raters, 3, True, adjacent)[KEY]
    rng = np.random.default_rng(seed)
    out = {c: Tally() for c in CANDIDATES}
    memo: dict[tuple[int, ...], dict[str, Bounds]] = {}
    weights = 3 ** np.arange(raters)
    for r in range(reps):
        labels = cov.simulate_labels(rng, n, prev, acc, raters, 3, adjacent)
        patterns = tuple(np.bincount(labels @ weights, minlength=3**raters).tolist())
        if patterns not in memo:
            memo[patterns] = candidates(labels, seed * 100_003 + r)
        for c, iv in memo[patterns].items():
            out[c].add(iv, truth)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--n", type=int, nargs="+", default=[30])
    parser.add_argument("--raters", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--accuracy", type=float, nargs="+", default=[0.8, 0.9, 0.95])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    grids: dict[str, tuple[bool, tuple[float, ...]]] = {
        "near misses": (True, (0.9, 0.95)),
        "main grid": (False, (0.5, 0.7, 0.9, 0.95)),
    }
    mc = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"quadratic kappa, 95% intervals, {args.reps} label sets a cell (MC se {mc:.4f})")
    t0 = time.perf_counter()
    worst: dict[tuple[str, str], tuple[float, str]] = {}
    width: dict[tuple[str, str], list[float]] = {}
    for grid, (adjacent, prevalences) in grids.items():
        for n in args.n:
            for raters in args.raters:
                for prev in prevalences:
                    for acc in args.accuracy:
                        res = cell(n, raters, prev, acc, adjacent, args.reps, args.seed)
                        here = f"n={n} raters={raters} prev={prev} acc={acc}"
                        for c, t in res.items():
                            key = (grid, c)
                            worst[key] = min(worst.get(key, (1.0, "")), (t.covered / t.runs, here))
                            width.setdefault(key, []).append(
                                t.width / t.shown if t.shown else math.nan
                            )

    def fmt(grid: str, c: str) -> str:
        low, where = worst[(grid, c)]
        return f"{low:.3f} ({where}; mean width {np.nanmean(width[(grid, c)]):.3f})"

    for c in CANDIDATES:
        print(f"{c:>10}: near misses {fmt('near misses', c)}; main grid {fmt('main grid', c)}")
    print(f"lowest coverage over each grid's cells; MC se {mc:.4f} a cell")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
