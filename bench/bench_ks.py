"""Time the two-sample Kolmogorov-Smirnov test (the traffic report's drift check) against scipy.

    python bench/bench_ks.py [--n 500000] [--repeat 5]

Two samples of `--n` latencies each (log-normal, the second shifted by 1%), once rounded to
0.1 ms (ties, as logged latencies are) and once continuous. Times `assay.stats.ks_two_sample`
and `scipy.stats.ks_2samp(method="asymp")` on the same arrays in the same run (best of
`--repeat`, CPU time), checks that the statistics agree, and prints the ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from scipy.stats import ks_2samp

from assay.stats.drift import ks_two_sample


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()  # type: ignore[operator]
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for name, rounding in (("latencies rounded to 0.1 ms", 1), ("continuous", None)):
        a = rng.lognormal(6.5, 0.4, args.n)
        b = rng.lognormal(6.5, 0.4, args.n) * 1.01
        if rounding is not None:
            a, b = np.round(a, rounding), np.round(b, rounding)
        ours = ks_two_sample(a, b)
        ref = ks_2samp(a, b, method="asymp")
        assert ours is not None and abs(ours.statistic - float(ref.statistic)) < 1e-12
        t_ours = best(lambda a=a, b=b: ks_two_sample(a, b), args.repeat)
        t_ref = best(lambda a=a, b=b: ks_2samp(a, b, method="asymp"), args.repeat)
        print(
            f"{name:28s} n={args.n:,} each: assay {t_ours * 1e3:7.1f} ms, scipy {t_ref * 1e3:7.1f} "
            f"ms CPU: scipy/assay {t_ref / t_ours:.2f}x (D={ours.statistic:.6f}, p={ours.pvalue:.3g})"
        )


if __name__ == "__main__":
    main()
