"""Coverage of the agreement intervals over items on a grid of prevalence and agreement.

The simulation is `bench/bench_agreement_coverage.py`'s (which prints the whole grid, the
percentile bootstrap, BCa, the delta-method and the jackknife intervals, with widths). An
interval withheld or undefined counts as a miss. Seeded fast cells always run; the grid runs
under the ``simulation`` marker (``pytest -m simulation``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import pytest

KAPPAS = ("cohen_kappa", "fleiss_kappa", "alpha_nominal")


def test_bca_covers_where_the_percentile_bootstrap_did_not(
    bench_script: Callable[[str], ModuleType],
) -> None:
    # 30 items, prevalence 0.9, raters right 90% of the time: the percentile bootstrap's kappa
    # intervals covered 0.90-0.92; BCa 0.927-0.953 over the seeds and sizes tried (120-300 label
    # sets). Seeded and fast; BCa does not reliably reach 0.93 at n = 30 (docs/agreement.md).
    bench = bench_script("bench_agreement_coverage")
    reps = 120
    res = bench.coverage(30, 0.9, 0.9, reps=reps, n_resamples=400, seed=3, keys=KAPPAS)
    mc = math.sqrt(0.95 * 0.05 / reps)
    for k in KAPPAS:
        old, new = res[("percentile", k)], res[("bca", k)]
        print(f"{k}: percentile {old.coverage:.3f}, BCa {new.coverage:.3f} (MC se {mc:.3f})")
        assert new.coverage >= old.coverage + 0.02, (k, old.coverage, new.coverage)


def test_the_jackknife_default_covers_where_bca_did_not(
    bench_script: Callable[[str], ModuleType],
) -> None:
    # three raters, 30 items, prevalence 0.9, raters right 80% of the time: BCa (the default
    # before) covered Cohen's and Fleiss' kappa and alpha 0.875, 0.892 and 0.917 on these 120
    # label sets; the jackknife interval on the Fisher-z scale 0.942, 0.933 and 0.933 (the
    # grid, 200 sets a cell, is in docs/agreement.md)
    bench = bench_script("bench_agreement_coverage")
    reps = 120
    res = bench.coverage(
        30,
        0.9,
        0.8,
        raters=3,
        reps=reps,
        n_resamples=300,
        seed=3,
        keys=KAPPAS,
        methods=("bca", "jackknife"),
    )
    mc = math.sqrt(0.95 * 0.05 / reps)
    for k in KAPPAS:
        old, new = res[("bca", k)], res[("jackknife", k)]
        print(f"{k}: BCa {old.coverage:.3f}, jackknife {new.coverage:.3f} (MC se {mc:.3f})")
        assert new.coverage >= 0.93, (k, new.coverage)
        assert new.coverage > old.coverage, (k, old.coverage, new.coverage)
