"""A gate's statistics without scipy (assay.stats._dist): accuracy and cost against scipy.

Prints, in one run:

* the CPU of importing ``scipy.special`` on top of what a gate imports anyway (numpy, pyarrow),
  each in a fresh interpreter, best of ``--repeat``;
* Student's t quantile, assay's ``t_ppf`` and scipy's ``stdtrit``, against a 40-digit
  reference (mpmath's incomplete beta, as tests/stats/test_dist.py has it): the worst relative
  error by distance of p from 1/2, over degrees of freedom from 1 to 1,000,000; and
  Cornish-Fisher's expansion alone at 5,000 degrees (where ``t_ppf`` starts using it alone);
* the normal quantile, ``statistics.NormalDist.inv_cdf`` and scipy's ``ndtri``, against mpmath;
* the exact binomial tails against scipy's routine: how many of the tails of up to 400 trials
  differ, by how much at most, and the time of the longest exact sum (20,000 trials);
* the time per call of each function, assay and scipy (scipy already imported).

    .venv/bin/python bench/bench_stats_dist.py [--repeat 8] [--seed 3]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from pathlib import Path

import mpmath as mp
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the reference of tests/stats/test_dist.py

from scipy import special  # noqa: E402
from scipy.special import _ufuncs  # noqa: E402
from tests.stats.test_dist import _t_reference  # noqa: E402

from assay.stats._dist import _cornish_fisher, norm_ppf, t_ppf  # noqa: E402
from assay.stats.paired import binom_half  # noqa: E402


def import_cpu(code: str, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", f"import time\n{code}\nprint(time.process_time())"],
            capture_output=True,
            text=True,
            check=True,
        )
        best = min(best, float(out.stdout))
    return best


def per_call(fn, args: list[tuple[float, float]]) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    for a in args:
        fn(*a)
    return (time.perf_counter() - t0) / len(args) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    base = "import numpy, numpy.random, pyarrow, pyarrow.compute"
    plain = import_cpu(base, args.repeat)
    with_special = import_cpu(base + ", scipy.special", args.repeat)
    print(
        f"import CPU, best of {args.repeat}: {base[7:]} {plain:.3f} s; with scipy.special "
        f"{with_special:.3f} s (+{with_special - plain:.3f} s)"
    )

    dfs = [1, 2, 3, 4, 5, 7, 10, 33, 100, 375, 1_000, 2_999, 4_999, 5_000, 43_245, 1_000_000]
    bands = [(1e-7, 1e-3), (1e-3, 1e-2), (1e-2, 5e-2), (5e-2, 0.5 - 1e-12)]
    print("t quantile, worst relative error against the 40-digit reference:")
    for lo, hi in bands:
        worst_a = worst_s = 0.0
        for _ in range(60):
            df = int(rng.choice(dfs))
            d = 10 ** rng.uniform(math.log10(lo), math.log10(hi))
            p = 0.5 + d if rng.random() < 0.5 else 0.5 - d
            want = _t_reference(df, p)
            worst_a = max(worst_a, abs(t_ppf(df, p) - want) / abs(want))
            worst_s = max(worst_s, abs(float(special.stdtrit(df, p)) - want) / abs(want))
        print(
            f"  |p - 1/2| in [{lo:g}, {hi:.2g}], 60 draws: assay {worst_a:.1e}, scipy {worst_s:.1e}"
        )
    worst_cf = 0.0
    for p in (0.6, 0.75, 0.9, 0.975, 0.99, 0.999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12):
        want = _t_reference(5_000, p)
        worst_cf = max(worst_cf, abs(_cornish_fisher(-norm_ppf(1 - p), 5_000) - want) / want)
    print(f"  Cornish-Fisher alone at 5,000 degrees, p from 0.6 to 1 - 1e-12: {worst_cf:.1e}")

    worst_a = worst_s = 0.0
    with mp.workdps(40):
        for p in np.concatenate([rng.uniform(0, 1, 1_000), 10 ** rng.uniform(-300, 0, 500)]):
            p = float(p)
            if not 0.0 < p < 1.0:
                continue
            # log Phi(x) = log p solved at 40 digits (erfinv(2p - 1) loses a tiny p to rounding)
            pm = mp.mpf(p)
            want = mp.findroot(lambda x, pm=pm: mp.log(mp.ncdf(x)) - mp.log(pm), norm_ppf(p))
            worst_a = max(worst_a, float(abs((norm_ppf(p) - want) / want)))
            worst_s = max(worst_s, float(abs((float(special.ndtri(p)) - want) / want)))
    print(f"normal quantile against mpmath, 1,500 draws: assay {worst_a:.2e}, scipy {worst_s:.2e}")

    tails = differ = 0
    worst = 0.0
    for m in range(1, 401):
        for k in range(m + 1):
            a, b = binom_half(k, m), float(_ufuncs._binom_cdf(float(k), float(m), 0.5))
            tails += 1
            if a != b:
                differ += 1
                worst = max(worst, abs(a - b) / b)
    t0 = time.perf_counter()
    binom_half(9_999, 20_000)
    longest = time.perf_counter() - t0
    print(
        f"binomial tails of up to 400 trials: {differ:,} of {tails:,} differ from scipy's "
        f"(worst {worst:.1e}); the exact sum at 20,000 trials {longest * 1e3:.0f} ms"
    )

    calls = [
        (float(rng.integers(1, 50_000)), float(rng.uniform(0.5, 0.9999))) for _ in range(2_000)
    ]
    print(
        "per call, us (assay / scipy): t quantile "
        f"{per_call(t_ppf, calls):.1f} / {per_call(special.stdtrit, calls):.1f}; normal quantile "
        f"{per_call(lambda _d, p: norm_ppf(p), calls):.1f} / "
        f"{per_call(lambda _d, p: special.ndtri(p), calls):.1f}"
    )


if __name__ == "__main__":
    main()
