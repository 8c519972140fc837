"""Exact coverage of the goodness-of-fit interval of kappa for two raters on a binary scale.

    PYTHONPATH=src python bench/bench_agreement_exact.py [--n 20 30 50 100] [--critical t chi2]

Data as in `bench/bench_agreement_coverage.py`: each item truly positive with probability
``prevalence``, each of two raters right with probability ``accuracy``, independently. Two raters'
labels of n items fall in three cells (both negative, discordant, both positive), a multinomial
whose probabilities the model gives; the intraclass kappa (Fleiss' kappa of two raters, the
population value of Cohen's kappa and alpha here) is ``(p11 - q^2) / (q (1 - q))`` with q the
positive rate. The coverage of `assay.stats.agreement._gof_interval` is summed exactly over every
one of the ``(n + 1)(n + 2) / 2`` tables (no Monte-Carlo error; a table with one label only, where
the interval is undefined, is a miss). ``--critical t`` is the default interval (critical value
Student's t(n - 1) squared), ``chi2`` Donner and Eliasziw's chi-square(1) as published.

The peer timed is the same sum with scipy's ``multinomial.pmf`` table by table (the obvious
way), on the first cell; the ratio is printed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import gammaln
from scipy.stats import multinomial

from assay.stats import agreement as ag

PREVALENCE = (0.5, 0.7, 0.9, 0.95)
ACCURACY = (0.8, 0.9, 0.95)


def cells(prevalence: float, accuracy: float) -> tuple[tuple[float, float, float], float]:
    """Probabilities of (both negative, discordant, both positive) and the true kappa."""
    q = prevalence * accuracy + (1 - prevalence) * (1 - accuracy)
    p11 = prevalence * accuracy**2 + (1 - prevalence) * (1 - accuracy) ** 2
    p00 = (1 - prevalence) * accuracy**2 + prevalence * (1 - accuracy) ** 2
    return (p00, 1.0 - p00 - p11, p11), (p11 - q * q) / (q * (1 - q))


def tables(n: int, critical: str = "t") -> tuple[np.ndarray, np.ndarray]:
    """Every table (n00, nd, n11) of n items and its interval (NaN where undefined)."""
    rows = [(n - nd - n11, nd, n11) for n11 in range(n + 1) for nd in range(n + 1 - n11)]
    t = np.array(rows, dtype=np.int64)
    iv = np.full((len(rows), 2), np.nan)
    dof = n - 1 if critical == "t" else None
    for i, (a, b, c) in enumerate(rows):
        got = ag._gof_interval(float(a), float(b), float(c), 0.95, t_dof=dof)
        if got is not None:
            iv[i] = got
    return t, iv


def exact_coverage(
    n: int, prevalence: float, accuracy: float, table: tuple[np.ndarray, np.ndarray]
) -> float:
    """P(interval contains the true kappa), summed over every table."""
    t, iv = table
    p, kappa = cells(prevalence, accuracy)
    logp = (
        gammaln(n + 1) - gammaln(t + 1).sum(axis=1) + (t * np.log(np.array(p))[None, :]).sum(axis=1)
    )
    hit = (iv[:, 0] <= kappa) & (kappa <= iv[:, 1])
    return float(np.exp(logp[hit]).sum())


def _peer(
    n: int, prevalence: float, accuracy: float, table: tuple[np.ndarray, np.ndarray]
) -> float:
    t, iv = table
    p, kappa = cells(prevalence, accuracy)
    return float(
        sum(
            multinomial.pmf(row, n, p)
            for row, (lo, hi) in zip(t, iv, strict=True)
            if lo <= kappa <= hi
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[20, 30, 50, 100])
    parser.add_argument("--critical", nargs="+", default=["t", "chi2"], choices=["t", "chi2"])
    args = parser.parse_args()
    print("exact coverage of the 95% goodness-of-fit interval of kappa, two raters")
    head = " ".join(f"{p}/{a}" for p in PREVALENCE for a in ACCURACY)
    for crit in args.critical:
        print(f"critical value: {'t(n - 1)^2' if crit == 't' else 'chi-square(1)'}")
        print(f"{'n':>4}  prevalence/accuracy: {head}")
        worst = (1.0, "")
        for n in args.n:
            table = tables(n, crit)
            row = []
            for prev in PREVALENCE:
                for acc in ACCURACY:
                    c = exact_coverage(n, prev, acc, table)
                    row.append(f"{c:.3f}")
                    worst = min(worst, (c, f"n={n} prevalence={prev} accuracy={acc}"))
            print(f"{n:>4}  " + " ".join(row))
        print(f"lowest: {worst[0]:.3f} ({worst[1]})")
    n = args.n[0]
    table = tables(n)
    t0 = time.perf_counter()
    ours = exact_coverage(n, 0.9, 0.9, table)
    t1 = time.perf_counter()
    theirs = _peer(n, 0.9, 0.9, table)
    t2 = time.perf_counter()
    assert abs(ours - theirs) < 1e-12, (ours, theirs)
    print(
        f"sum over tables at n={n}: assay {t1 - t0:.4f} s, scipy multinomial.pmf per table "
        f"{t2 - t1:.4f} s (ratio {(t2 - t1) / max(t1 - t0, 1e-9):.0f}x), equal to 1e-12"
    )


if __name__ == "__main__":
    main()
