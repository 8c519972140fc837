"""Coverage and width of the corrected pass rates (labels alone, Rogan-Gladen, PPI, PPI++) on a
grid of true pass rate, judge TPR and TNR, and number of labelled items.

    PYTHONPATH=src python bench/bench_calibration_coverage.py [--reps 1000] [--unlabelled 5000]
        [--seed 1] [--labelled 50 100 200]

Each simulated calibration draws `n` labelled items (human label, judge verdict) and N
unlabelled judge verdicts from the same population, and runs `corrected_pass_rate`. An interval
withheld or undefined counts as a miss for that method. Monte-Carlo standard error at 95%:
sqrt(0.95 * 0.05 / reps).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

from assay.stats.calibration import corrected_pass_rate

METHODS = ("labels_only", "rogan_gladen", "ppi", "ppi++")

#: The grid: true pass rate, TPR, TNR, labelled items.
PREVALENCE = (0.5, 0.8, 0.9, 0.97)
TPR = (0.9, 0.99)
TNR = (0.5, 0.8, 0.95)
LABELLED = (50, 100, 200)


def coverage(
    pi: float, tpr: float, tnr: float, n: int, big_n: int, reps: int, seed: int
) -> dict[str, tuple[float, float]]:
    """method -> (coverage, mean width of the intervals shown)."""
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(METHODS, 0)
    width = dict.fromkeys(METHODS, 0.0)
    shown = dict.fromkeys(METHODS, 0)
    for _ in range(reps):
        h = rng.random(n) < pi
        j = np.where(h, rng.random(n) < tpr, rng.random(n) > tnr)
        hu = rng.random(big_n) < pi
        ju = np.where(hu, rng.random(big_n) < tpr, rng.random(big_n) > tnr)
        c = corrected_pass_rate(h, j, ju)
        for m in (c.labels_only, c.rogan_gladen, c.ppi, c.ppi_plus_plus):
            iv = m.estimate
            if iv.low is None or iv.high is None:
                continue
            shown[m.method] += 1
            width[m.method] += iv.high - iv.low
            hits[m.method] += iv.low <= pi <= iv.high
    return {m: (hits[m] / reps, width[m] / shown[m] if shown[m] else math.nan) for m in METHODS}


def grid(
    reps: int, big_n: int, seed: int = 1, labelled: tuple[int, ...] = LABELLED
) -> dict[tuple[float, float, float, int], dict[str, tuple[float, float]]]:
    return {
        (pi, tpr, tnr, n): coverage(pi, tpr, tnr, n, big_n, reps, seed)
        for pi, tpr, tnr, n in itertools.product(PREVALENCE, TPR, TNR, labelled)
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--unlabelled", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--labelled", type=int, nargs="+", default=list(LABELLED))
    args = parser.parse_args()
    t0 = time.perf_counter()
    mc = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"coverage (mean width) of 95% intervals, {args.reps} calibrations each, MC se {mc:.4f}")
    print(f"{'pi':>5} {'TPR':>5} {'TNR':>5} {'n':>4}  " + "  ".join(f"{m:>15}" for m in METHODS))
    worst = dict.fromkeys(METHODS, 1.0)
    table = grid(args.reps, args.unlabelled, args.seed, tuple(args.labelled))
    for key, res in table.items():
        pi, tpr, tnr, n = key
        cells = [f"{res[m][0]:.3f} ({res[m][1]:.3f})" for m in METHODS]
        for m in METHODS:
            worst[m] = min(worst[m], res[m][0])
        print(f"{pi:>5} {tpr:>5} {tnr:>5} {n:>4}  " + "  ".join(f"{c:>15}" for c in cells))
    print("lowest coverage: " + ", ".join(f"{m} {worst[m]:.3f}" for m in METHODS))
    low = min((min(res[m][0] for m in ("ppi", "ppi++")), key) for key, res in table.items())
    print(f"lowest PPI / PPI++ cell: {low[0]:.3f} at (pi, TPR, TNR, n) = {low[1]}")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
