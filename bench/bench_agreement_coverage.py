"""Coverage and width of the agreement intervals on a grid of prevalence and agreement.

    PYTHONPATH=src python bench/bench_agreement_coverage.py [--reps 400] [--n 30 50] [--raters 2 3]

Data: each item is truly positive with probability ``prevalence``; each rater gives the true
label with probability ``accuracy`` (independently). With ``--categories 3`` (or more) the true
label is the first with probability ``prevalence``, else one of the others, and a rater's wrong
label is any other one ("c0" < "c1" < ... for the ordered coefficients, passed as
``categories``). The true coefficient is its value on
400,000 simulated items. An interval counts as covering when it contains the true value; an
interval withheld or undefined (every item labelled alike, every resample alike) counts as a
miss, so coverage is unconditional. Monte-Carlo standard error: sqrt(0.95 * 0.05 / reps).
Each cell prints, for the percentile bootstrap, BCa, the delta-method interval, the jackknife
interval and the default (``gof``: goodness-of-fit on a binary scale, score on a longer one,
weighted score for the weighted kappas and ordered alphas of a longer ordered one, the
jackknife for the other coefficients; `agreement(..., interval=...)`), coverage
and mean width of the intervals shown; then the lowest coverage of each method and where it was
met, how many label sets showed no disagreement, and how many intervals of each kind each method
gave ("undefined": no value, every label alike). ``--methods`` picks the methods, ``--keys`` the coefficients (e.g.
``cohen_kappa_quadratic alpha_ordinal``), ``--numeric`` labels 0, 1, ... (interval and ratio
alpha need numbers), ``--adjacent`` wrong labels one grade off (near misses on an ordered
scale).
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.report import Interval
from assay.stats import agreement as ag

#: The coefficients whose coverage is measured (binary labels).
KEYS = ("raw_agreement", "cohen_kappa", "fleiss_kappa", "alpha_nominal", "pabak", "gwet_ac1")
METHODS = ("percentile", "bca", "delta", "jackknife", "gof")
#: `Interval.method`s that draw no bootstrap resample (the same labels, the same interval; the
#: posterior interval's draws are seeded by the table, and its seed's share only moves its ends
#: by Monte-Carlo error, so it is reused too).
DETERMINISTIC = frozenset(
    {
        ag.GOF,
        ag.SCORE,
        ag.WEIGHTED_SCORE,
        ag.WEIGHTED_SCORE_POSTERIOR,
        ag.JACKKNIFE,
        ag.DELTA,
        ag.NO_DISAGREEMENT,
    }
)


def simulate_labels(
    rng: np.random.Generator,
    n: int,
    prevalence: float,
    accuracy: float,
    raters: int,
    categories: int = 2,
    adjacent: bool = False,
) -> np.ndarray:
    """n items x `raters` labels. Two categories: booleans, True with rate `prevalence`. More:
    codes 0..categories-1, the true one 0 with probability `prevalence` and each other one
    (1 - prevalence) / (categories - 1); a wrong label is any other category, equally likely,
    or with `adjacent` a grade next to the true one (either side, equally likely, where there
    are two: the near misses of an ordered scale)."""
    if categories == 2:
        truth = rng.random(n) < prevalence
        right = rng.random((n, raters)) < accuracy
        return np.where(right, truth[:, None], ~truth[:, None])
    rest = (1.0 - prevalence) / (categories - 1)
    true_code = rng.choice(categories, size=n, p=[prevalence] + [rest] * (categories - 1))
    right = rng.random((n, raters)) < accuracy
    if adjacent:
        step = np.where(rng.random((n, raters)) < 0.5, -1, 1)
        wrong = true_code[:, None] + step
        wrong = np.where(wrong < 0, 1, np.where(wrong >= categories, categories - 2, wrong))
        return np.where(right, true_code[:, None], wrong)
    shift = rng.integers(1, categories, size=(n, raters))
    return np.where(right, true_code[:, None], (true_code[:, None] + shift) % categories)


def scale(categories: int, numeric: bool = False) -> list[ag.Label]:
    """The labels of the simulated scale: False/True, or "c0", "c1", ...; with `numeric` the
    numbers 0, 1, ... (which gives interval and ratio alpha their values)."""
    if numeric:
        return list(range(categories))
    return [False, True] if categories == 2 else [f"c{c}" for c in range(categories)]


def _records(
    labels: np.ndarray, categories: int = 2, numeric: bool = False
) -> list[ag.LabelRecord]:
    names = scale(categories, numeric)
    return [
        ag.LabelRecord(str(i), f"r{r}", names[int(labels[i, r])])
        for i in range(labels.shape[0])
        for r in range(labels.shape[1])
    ]


@functools.cache
def true_values(
    prevalence: float,
    accuracy: float,
    raters: int,
    categories: int = 2,
    numeric: bool = False,
    adjacent: bool = False,
) -> dict[str, float]:
    labels = simulate_labels(
        np.random.default_rng(99), 400_000, prevalence, accuracy, raters, categories, adjacent
    )
    design = ag._design(_records(labels[:1], categories, numeric), scale(categories, numeric))
    lay = ag._features(labels.astype(np.int64), categories)
    stats, _ = ag._stats_from_sums(lay.f.sum(axis=0, keepdims=True), lay, design, 1)
    return {k: float(v[0]) for k, v in stats.items()}


@dataclass
class Cell:
    covered: int = 0
    runs: int = 0
    width: float = 0.0
    shown: int = 0
    #: how many label sets got each interval (`Interval.method`; "undefined" = no value: every
    #: label alike, or the coefficient undefined), and how many showed no disagreement at all
    used: Counter[str] = field(default_factory=Counter)
    agreeing: int = 0

    @property
    def coverage(self) -> float:
        return self.covered / self.runs

    @property
    def mean_width(self) -> float:
        return self.width / self.shown if self.shown else math.nan


def coverage(
    n: int,
    prevalence: float,
    accuracy: float,
    *,
    raters: int = 2,
    reps: int = 400,
    n_resamples: int = 1000,
    seed: int = 1,
    keys: Sequence[str] = KEYS,
    methods: Sequence[str] = METHODS,
    categories: int = 2,
    numeric: bool = False,
    adjacent: bool = False,
) -> dict[tuple[str, str], Cell]:
    """(method, coefficient) -> coverage counts over `reps` simulated label sets (labels 0, 1,
    ... with `numeric`)."""
    truth = true_values(prevalence, accuracy, raters, categories, numeric, adjacent)
    rng = np.random.default_rng(seed)
    out = {(m, k): Cell() for m in methods for k in keys}
    # On complete labels every statistic and every interval that draws no resample is a
    # function of how many items show each pattern of labels: those results are reused
    memo: dict[tuple[str, tuple[int, ...]], dict[str, Interval]] = {}
    weights = categories ** np.arange(raters)
    for r in range(reps):
        labels = simulate_labels(rng, n, prevalence, accuracy, raters, categories, adjacent)
        codes = labels.astype(np.int64) @ weights
        patterns = tuple(np.bincount(codes, minlength=categories**raters).tolist())
        for m in methods:
            stats = memo.get((m, patterns))
            if stats is None:
                res = ag.agreement(
                    _records(labels, categories, numeric),
                    categories=scale(categories, numeric),
                    rng=seed * 100_003 + r,
                    n_resamples=n_resamples,
                    interval=m,  # type: ignore[arg-type]
                )
                stats = res.statistics
                if all(stats[k].method in DETERMINISTIC for k in keys):
                    memo[(m, patterns)] = stats
            for k in keys:
                iv, cell = stats[k], out[(m, k)]
                cell.runs += 1
                cell.used[iv.method if iv.value is not None else "undefined"] += 1
                cell.agreeing += bool(np.all(labels == labels[:, :1]))
                if iv.low is None or iv.high is None:
                    continue
                cell.shown += 1
                cell.width += iv.high - iv.low
                cell.covered += iv.low <= truth[k] <= iv.high
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--n", type=int, nargs="+", default=[20, 30, 50, 100])
    parser.add_argument("--raters", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--prevalence", type=float, nargs="+", default=[0.5, 0.7, 0.9, 0.95])
    parser.add_argument("--accuracy", type=float, nargs="+", default=[0.8, 0.9, 0.95])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--categories", type=int, default=2, help="size of the scale (>= 2)")
    parser.add_argument(
        "--numeric",
        action="store_true",
        help="labels 0, 1, ... (not False/True or c0, c1, ...): interval and ratio alpha defined",
    )
    parser.add_argument(
        "--adjacent",
        action="store_true",
        help="a wrong label is a grade next to the true one (not any other one)",
    )
    parser.add_argument(
        "--keys", nargs="+", default=list(KEYS), help="coefficients (`agreement`'s statistics)"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    methods = tuple(args.methods)
    mc = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"coverage of 95% intervals over {args.reps} simulated label sets (MC se {mc:.4f});")
    print(f"cells: coverage of {' / '.join(methods)} (mean width); withheld intervals are misses")
    keys = tuple(args.keys)
    print(f"{'n':>3} {'raters':>6} {'prev':>5} {'acc':>5}  " + "  ".join(f"{k:>28}" for k in keys))
    worst: dict[str, tuple[float, str]] = dict.fromkeys(methods, (1.0, ""))
    used: dict[str, Counter[str]] = {m: Counter() for m in methods}
    agreeing = runs = 0
    t0 = time.perf_counter()
    for n in args.n:
        for raters in args.raters:
            for prev in args.prevalence:
                for acc in args.accuracy:
                    res = coverage(
                        n,
                        prev,
                        acc,
                        raters=raters,
                        reps=args.reps,
                        n_resamples=args.resamples,
                        seed=args.seed,
                        methods=methods,
                        categories=args.categories,
                        keys=keys,
                        numeric=args.numeric,
                        adjacent=args.adjacent,
                    )
                    cells = []
                    first = res[(methods[0], keys[0])]
                    agreeing += first.agreeing
                    runs += first.runs
                    for k in keys:
                        cov = "/".join(f"{res[(m, k)].coverage:.3f}" for m in methods)
                        wid = "/".join(f"{res[(m, k)].mean_width:.2f}" for m in methods)
                        cells.append(f"{cov} ({wid})")
                        for m in methods:
                            used[m].update(res[(m, k)].used)
                            here = f"n={n} raters={raters} prev={prev} acc={acc} {k}"
                            if args.categories != 2:
                                here = f"categories={args.categories} {here}"
                            worst[m] = min(worst[m], (res[(m, k)].coverage, here))
                    print(
                        f"{n:>3} {raters:>6} {prev:>5} {acc:>5}  "
                        + "  ".join(f"{c:>28}" for c in cells)
                    )
    for m in methods:
        print(f"lowest coverage, {m}: {worst[m][0]:.3f} ({worst[m][1]})")
    print(f"label sets with no disagreement: {agreeing} of {runs}")
    for m in methods:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(used[m].items()))
        print(f"intervals given by {m} (label sets x coefficients): {counts}")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
