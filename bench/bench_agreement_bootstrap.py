"""Time assay's Krippendorff alpha (point value and bootstrap) against the `krippendorff` package.

    PYTHONPATH=src python bench/bench_agreement_bootstrap.py [--items 2000] [--raters 4] [--resamples 200]

The peer has no bootstrap, so its bootstrap is the obvious loop: resample items, call alpha.
Both bootstraps use the same resampled item indices, and the script checks they agree.
"""

from __future__ import annotations

import argparse
import time

import krippendorff
import numpy as np

from assay.stats import agreement as ag


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--raters", type=int, default=4)
    parser.add_argument("--categories", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    truth = rng.integers(0, args.categories, size=args.items)
    noise = rng.random((args.raters, args.items)) < 0.3
    data = np.where(noise, rng.integers(0, args.categories, size=(args.raters, args.items)), truth)
    data = data.astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan

    t0 = time.perf_counter()
    ours = ag.krippendorff_alpha(data, level="ordinal")
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    t_theirs = time.perf_counter() - t0
    assert ours is not None and abs(ours - theirs) < 1e-9
    print(f"point value, {args.items} items x {args.raters} raters (ordinal alpha {ours:.4f})")
    print(
        f"  assay {t_ours * 1e3:8.1f} ms   krippendorff {t_theirs * 1e3:8.1f} ms   ratio {t_theirs / t_ours:5.1f}x"
    )

    # bootstrap: identical resamples for both
    records = ag._matrix_records(data)
    design = ag._design(records, None, "<bench>")
    n = len(design.items)
    idx = np.random.default_rng(1).integers(0, n, size=(args.resamples, n))
    # design.items keeps first-appearance order; map back to matrix columns
    cols = np.array([int(it) for it in design.items])

    t0 = time.perf_counter()
    lay = ag._features(design.codes, len(design.categories))
    w = np.zeros((args.resamples, n))
    np.add.at(w, (np.repeat(np.arange(args.resamples), n), idx.ravel()), 1.0)
    stats, _ = ag._stats_from_sums(w @ lay.f, lay, design, None)
    t_ours_b = time.perf_counter() - t0

    t0 = time.perf_counter()
    peer = np.array(
        [
            krippendorff.alpha(reliability_data=data[:, cols[row]], level_of_measurement="ordinal")
            for row in idx
        ]
    )
    t_theirs_b = time.perf_counter() - t0
    assert np.allclose(stats["alpha_ordinal"], peer, atol=1e-9)
    print(
        f"bootstrap, {args.resamples} resamples (all coefficients for assay, ordinal alpha for the peer)"
    )
    print(
        f"  assay {t_ours_b:8.3f} s    krippendorff loop {t_theirs_b:8.3f} s   ratio {t_theirs_b / t_ours_b:5.1f}x"
    )


if __name__ == "__main__":
    main()
