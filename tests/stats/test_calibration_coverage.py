"""Judge calibration at the boundary: Wilson for TPR and TNR, corrected pass rates that widen
toward the labels alone when the labels hold too few passes or fails, and no single points."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest
from scipy.stats import binom

from assay.stats.calibration import (
    MIN_DISAGREEMENTS,
    MIN_PER_CLASS,
    corrected_pass_rate,
    ppi_mean,
)
from assay.stats.proportion import rate_ci


def test_tpr_and_tnr_cover_where_the_bootstrap_did_not() -> None:
    # the cases: TPR 0.95 on about 20 human passes (bootstrap 63%), TNR 0.9 on about 15
    # human fails (77%); exact binomial sums over the count the judge got right
    for rate, n in ((0.95, 20), (0.95, 19), (0.95, 21), (0.9, 15), (0.9, 14), (0.9, 16)):
        cover = 0.0
        for k in range(n + 1):
            iv = rate_ci(k, n)
            assert iv.low is not None and iv.high is not None and iv.high > iv.low
            if iv.low <= rate <= iv.high:
                cover += float(binom.pmf(k, n, rate))
        assert cover >= 0.93, (rate, n, cover)


def _simulate(
    pi: float, n: int, big_n: int, tpr: float, tnr: float, reps: int, seed: int
) -> dict[str, tuple[int, int, int]]:
    """method -> (covered, zero-width, undefined) over ``reps`` simulated calibrations."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[int]] = {}
    for _ in range(reps):
        h = rng.random(n) < pi
        j = np.where(h, rng.random(n) < tpr, rng.random(n) > tnr)
        hu = rng.random(big_n) < pi
        ju = np.where(hu, rng.random(big_n) < tpr, rng.random(big_n) > tnr)
        c = corrected_pass_rate(h, j, ju)
        for m in (c.labels_only, c.ppi, c.ppi_plus_plus, c.rogan_gladen):
            acc = out.setdefault(m.method, [0, 0, 0])
            iv = m.estimate
            if iv.low is None or iv.high is None:
                acc[2] += 1
                continue
            acc[0] += iv.low <= pi <= iv.high
            acc[1] += iv.high - iv.low <= 0.0
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def test_corrected_rates_cover_with_few_labelled_fails() -> None:
    # a true pass rate of 0.97 and 50 labels: one or two human fails, often none. PPI++ covered
    # 74% (a fifth of its intervals a single point), PPI 84%, Rogan-Gladen 80% when defined.
    reps = 1_500
    se = math.sqrt(0.95 * 0.05 / reps)  # Monte-Carlo standard error 0.0056
    res = _simulate(0.97, 50, 1_000, 0.95, 0.8, reps, seed=1)
    for method in ("ppi", "ppi++"):
        covered, zero, undefined = res[method]
        assert zero == 0 and undefined == 0, (method, res[method])
        assert covered / reps >= 0.93, (method, covered / reps, se)  # measured 0.989
    # Rogan-Gladen is not estimated from so few fails rather than guessed
    covered, zero, undefined = res["rogan_gladen"]
    assert undefined >= 0.95 * reps and zero == 0


def test_with_enough_labels_nothing_is_widened() -> None:
    # 400 labels, TPR 0.85, TNR 0.75: about 68 judge-human disagreements, 80 human fails
    reps = 600
    res = _simulate(0.8, 400, 2_000, 0.85, 0.75, reps, seed=2)
    for method in ("ppi", "ppi++", "rogan_gladen"):
        covered, zero, undefined = res[method]
        assert undefined == 0 and zero == 0 and covered / reps >= 0.93, (method, res[method])
    rng = np.random.default_rng(3)
    h = rng.random(400) < 0.8
    j = np.where(h, rng.random(400) < 0.85, rng.random(400) > 0.75)
    c = corrected_pass_rate(h, j, rng.random(2_000) < 0.75)
    assert int((~h).sum()) >= MIN_PER_CLASS and int((h != j).sum()) >= MIN_DISAGREEMENTS
    for m in (c.ppi, c.ppi_plus_plus):
        assert "widened" not in (m.estimate.note or "")


def test_the_widening_rule() -> None:
    # 47 passes and 3 fails among the labels, the judge agreeing with every one of them: 3 human
    # fails (trust 3 / 10) and no judge-human disagreement (trust 0 / MIN_DISAGREEMENTS): PPI and
    # PPI++ become the hull with the labels-alone interval, and the note gives both reasons
    h = np.array([True] * 47 + [False] * 3)
    u = np.array([True] * 960 + [False] * 40)
    c = corrected_pass_rate(h, h, u)
    lab = c.labels_only.estimate
    assert lab.low is not None and lab.high is not None
    for lam in (1.0, None):
        raw = ppi_mean(h, h, u, lam=lam, bounds=(0.0, 1.0)).estimate
        got = (c.ppi if lam == 1.0 else c.ppi_plus_plus).estimate
        assert raw.low is not None and raw.high is not None
        assert got.low == pytest.approx(min(raw.low, lab.low))
        assert got.high == pytest.approx(max(raw.high, lab.high))
        assert got.value == raw.value
        note = got.note or ""
        assert "widened 100% of the way" in note
        if raw.high - raw.low > 0.0:
            assert "3 human fails" in note and "disagree on 0 labelled items" in note
    assert c.rogan_gladen.estimate.value is None
    # every labelled item passed and the judge passed them all: PPI++ was [1, 1]; now it is at
    # least as wide as the labels-alone interval
    h = np.ones(50, dtype=bool)
    c = corrected_pass_rate(h, h, np.ones(1_000, dtype=bool))
    lab = c.labels_only.estimate
    assert lab.low is not None and lab.low < 0.95
    for m in (c.ppi, c.ppi_plus_plus):
        iv = m.estimate
        assert iv.low is not None and iv.high is not None
        assert iv.low <= lab.low and iv.high == 1.0 and iv.high - iv.low > 0.05
        assert "widened 100% of the way" in (iv.note or "")


def test_ppi_plus_plus_covers_just_above_the_per_class_threshold() -> None:
    # the cell: true pass rate 0.8, TPR 0.99, TNR 0.5, 100 labels (about 20 human fails,
    # above MIN_PER_CLASS) and 5,000 unlabelled: PPI++ covered 0.918-0.928 while the summary
    # named it the narrowest. About 11 judge-human disagreements: widened toward the labels now
    reps = 1_000
    se = math.sqrt(0.95 * 0.05 / reps)
    res = _simulate(0.8, 100, 5_000, 0.99, 0.5, reps, seed=4)
    for method in ("ppi", "ppi++"):
        covered, zero, undefined = res[method]
        print(f"{method}: coverage {covered / reps:.3f} (MC se {se:.3f})")
        assert zero == 0 and undefined == 0
        assert covered / reps >= 0.93, (method, covered / reps)


def test_the_disagreement_widening_rule() -> None:
    # 60 passes and 40 fails (enough of each), the judge disagreeing on 10 items: trust 10 / 50,
    # each bound moves 80% of the way toward the labels-alone bound
    h = np.array([True] * 60 + [False] * 40)
    j = h.copy()
    j[:6] = False
    j[60:64] = True
    u = np.array([True] * 3_000 + [False] * 2_000)
    c = corrected_pass_rate(h, j, u)
    lab = c.labels_only.estimate
    assert lab.low is not None and lab.high is not None
    for lam in (1.0, None):
        raw = ppi_mean(h, j, u, lam=lam, bounds=(0.0, 1.0)).estimate
        got = (c.ppi if lam == 1.0 else c.ppi_plus_plus).estimate
        assert raw.low is not None and raw.high is not None
        assert got.low == pytest.approx(min(raw.low, 0.2 * raw.low + 0.8 * lab.low))
        assert got.high == pytest.approx(max(raw.high, 0.2 * raw.high + 0.8 * lab.high))
        assert "widened 80% of the way" in (got.note or "")
        assert f"disagree on 10 labelled items, fewer than {MIN_DISAGREEMENTS}" in (got.note or "")


def test_the_calibration_grid(bench_script: Callable[[str], ModuleType]) -> None:
    # a seeded corner of bench/bench_calibration_coverage.py's grid (the bench prints all 72
    # cells): PPI and PPI++ at or above 0.93 where they were below before
    bench = bench_script("bench_calibration_coverage")
    reps = 400
    se = math.sqrt(0.95 * 0.05 / reps)
    for cell in ((0.5, 0.99, 0.95, 100), (0.8, 0.99, 0.8, 100), (0.8, 0.9, 0.5, 200)):
        pi, tpr, tnr, n = cell
        res = bench.coverage(pi, tpr, tnr, n, 5_000, reps, seed=5)
        print(cell, {m: round(c, 3) for m, (c, _w) in res.items()}, f"MC se {se:.3f}")
        for m in ("ppi", "ppi++"):
            assert res[m][0] >= 0.93, (cell, m, res[m])


def test_the_summary_recommends_the_best_measured_coverage_not_the_narrowest() -> None:
    from assay.stats.calibration import MEASURED_COVERAGE

    rng = np.random.default_rng(6)
    h = rng.random(300) < 0.7
    j = np.where(h, rng.random(300) < 0.9, rng.random(300) > 0.8)
    c = corrected_pass_rate(h, j, rng.random(5_000) < 0.68)
    shown = [m for m in c.methods[1:] if m.width is not None]
    best = max(MEASURED_COVERAGE[m.method] for m in shown)
    assert c.recommended is not None and MEASURED_COVERAGE[c.recommended] == best
    assert MEASURED_COVERAGE["rogan_gladen"] < best and c.rogan_gladen.width is not None
    assert c.summary.startswith(f"recommended: {c.recommended} ")
    assert c.to_dict()["recommended"] == c.recommended


def test_unwidened_ppi_plus_plus_is_ppi_py(bench_script: Callable[[str], ModuleType]) -> None:
    # where nothing is widened, the interval is ppi_py's own (and clipped to [0, 1])
    from ppi_py import ppi_mean_ci

    rng = np.random.default_rng(7)
    h = rng.random(400) < 0.6
    j = np.where(h, rng.random(400) < 0.85, rng.random(400) > 0.8)
    u = rng.random(5_000) < 0.58
    c = corrected_pass_rate(h, j, u)
    assert "widened" not in (c.ppi_plus_plus.estimate.note or "")
    low, high = ppi_mean_ci(h.astype(float), j.astype(float), u.astype(float), alpha=0.05)
    assert c.ppi_plus_plus.estimate.low == pytest.approx(float(np.atleast_1d(low)[0]), abs=1e-9)
    assert c.ppi_plus_plus.estimate.high == pytest.approx(float(np.atleast_1d(high)[0]), abs=1e-9)
