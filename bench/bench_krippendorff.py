"""Time assay's Krippendorff's alpha (point value) against the `krippendorff` package.

    PYTHONPATH=src python bench/bench_krippendorff.py [--items 100000] [--raters 5] [--repeat 5]

Both get the same raters x items matrix of 4 ordinal grades with 15% missing. Prints the best of
``--repeat`` runs for each level and the ratio (assay / package: below 1 is faster), then the
time as the number of raters grows at a fixed number of items (it should grow linearly). The
script checks the two values agree to 1e-9.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import krippendorff
import numpy as np

from assay.stats.agreement import krippendorff_alpha


def _data(raters: int, items: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=items)
    noise = rng.random((raters, items)) < 0.3
    data = np.where(noise, rng.integers(0, 4, size=(raters, items)), truth).astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan
    return data


def _best(fn: Callable[[], float | None], repeat: int) -> tuple[float, float | None]:
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data = _data(args.raters, args.items)
    print(f"{args.raters} raters x {args.items} items, best of {args.repeat}")
    for level in ("nominal", "ordinal", "interval", "ratio"):
        t_ours, ours = _best(lambda lv=level: krippendorff_alpha(data, level=lv), args.repeat)  # type: ignore[misc]
        t_pkg, theirs = _best(
            lambda lv=level: float(
                krippendorff.alpha(reliability_data=data, level_of_measurement=lv)
            ),
            args.repeat,
        )
        assert ours is not None and theirs is not None and abs(ours - theirs) < 1e-9
        print(
            f"  {level:8s} alpha {ours:.4f}   assay {t_ours * 1e3:7.1f} ms   "
            f"krippendorff {t_pkg * 1e3:7.1f} ms   ratio {t_ours / t_pkg:4.2f}"
        )

    items = 10_000
    print(f"growth with raters, {items} items, nominal alpha")
    for raters in (5, 10, 20, 40, 80):
        d = _data(raters, items, seed=raters)
        t_ours, ours = _best(lambda d=d: krippendorff_alpha(d), args.repeat)  # type: ignore[misc]
        t_pkg, _ = _best(lambda d=d: float(krippendorff.alpha(reliability_data=d)), args.repeat)  # type: ignore[misc]
        print(
            f"  {raters:3d} raters   assay {t_ours * 1e3:7.1f} ms   krippendorff "
            f"{t_pkg * 1e3:7.1f} ms   ratio {t_ours / t_pkg:4.2f}"
        )


if __name__ == "__main__":
    main()
