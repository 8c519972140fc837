from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint as statsmodels_proportion_confint

from assay.stats._errors import StatsInputError
from assay.stats.calibration import binary_calibration, binary_calibration_by_category


def _random_pair(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    human = rng.random(n) < rng.uniform(0.2, 0.8)
    flip = rng.random(n) < rng.uniform(0.05, 0.4)
    return human, human ^ flip


@pytest.mark.parametrize("seed", range(5))
def test_point_values_match_sklearn_and_counts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    h, j = _random_pair(rng, 300)
    c = binary_calibration(h, j, rng=1, n_resamples=200)
    assert c.tpr.value == pytest.approx(np.mean(j[h]), abs=1e-12)
    assert c.tnr.value == pytest.approx(np.mean(~j[~h]), abs=1e-12)
    assert c.agreement.value == pytest.approx(np.mean(h == j), abs=1e-12)
    assert c.kappa.value == pytest.approx(cohen_kappa_score(h, j), abs=1e-9)
    assert c.tp + c.fn + c.fp + c.tn == c.n == 300
    for est in (c.tpr, c.tnr, c.kappa, c.agreement):
        assert est.low is not None and est.high is not None and est.value is not None
        assert est.low <= est.value <= est.high


def test_multinomial_bootstrap_matches_item_bootstrap() -> None:
    rng = np.random.default_rng(7)
    h, j = _random_pair(rng, 200)
    c = binary_calibration(h, j, rng=3, n_resamples=4000)
    idx = np.random.default_rng(4).integers(0, h.size, size=(4000, h.size))
    hb, jb = h[idx], j[idx]
    tpr = (hb & jb).sum(1) / hb.sum(1)
    lo, hi = np.quantile(tpr, [0.025, 0.975])
    assert c.tpr.low == pytest.approx(lo, abs=0.015)
    assert c.tpr.high == pytest.approx(hi, abs=0.015)


def test_seeded_and_generator_reproducible() -> None:
    h, j = _random_pair(np.random.default_rng(0), 150)
    a = binary_calibration(h, j, rng=5, n_resamples=300)
    b = binary_calibration(h, j, rng=np.random.default_rng(5), n_resamples=300)
    assert a == b
    assert binary_calibration(h, j, rng=6, n_resamples=300).kappa != a.kappa


def test_warnings_small_sample_and_few_fails() -> None:
    h = [True] * 80 + [False] * 10
    j = [True] * 75 + [False] * 15
    c = binary_calibration(h, j, n_resamples=100)
    assert any("90 labelled items" in w for w in c.warnings)
    assert any("10 human FAILs" in w for w in c.warnings)
    big = binary_calibration([True] * 100 + [False] * 30, [True] * 130, n_resamples=100)
    assert not any("labelled items" in w or "human FAILs" in w for w in big.warnings)


def test_degenerate_inputs_are_defined_with_messages() -> None:
    empty = binary_calibration([], [])
    assert empty.n == 0 and empty.tpr.value is None and empty.kappa.note
    same = binary_calibration([True] * 5, [True] * 5, n_resamples=50)
    assert same.tpr.value == 1.0 and same.tnr.value is None
    assert same.kappa.value is None and "same single label" in (same.kappa.note or "")
    opposite = binary_calibration([True] * 5, [False] * 5, n_resamples=50)
    assert opposite.kappa.value == 0.0 and opposite.tpr.value == 0.0
    for c in (empty, same, opposite):
        for est in (c.tpr, c.tnr, c.kappa, c.agreement):
            assert est.value is None or math.isfinite(est.value)
            assert (est.value is None) == bool(est.note and est.note.startswith("undefined"))


def test_tpr_and_tnr_are_rate_intervals_never_a_point() -> None:
    # one human FAIL among 200, caught: TNR 1 of 1 is Clopper-Pearson's [0.025, 1], not the
    # bootstrap's interval over the resamples that happened to hold that one fail
    h = [True] * 199 + [False]
    c = binary_calibration(h, h, rng=0, n_resamples=500)
    assert c.tnr.value == 1.0 and c.tnr.method == "clopper-pearson"
    assert c.tnr.low == pytest.approx(0.025) and c.tnr.high == 1.0
    # a judge right on all 20 human passes: TPR 1.000 [0.83, 1.00], not [1.00, 1.00]
    h = [True] * 20 + [False] * 20
    j = [True] * 20 + [False] * 14 + [True] * 6
    c = binary_calibration(h, j, rng=0, n_resamples=500)
    ref = statsmodels_proportion_confint(20, 20, method="beta")
    assert c.tpr.value == 1.0 and (c.tpr.low, c.tpr.high) == pytest.approx(ref, abs=1e-12)
    assert c.tpr.fmt(3) == "1.000 [0.83, 1.00]"
    # 14 of 20 fails caught: Wilson's interval, as statsmodels computes it
    ref = statsmodels_proportion_confint(14, 20, method="wilson")
    assert c.tnr.method == "wilson" and (c.tnr.low, c.tnr.high) == pytest.approx(ref, abs=1e-12)
    ref = statsmodels_proportion_confint(34, 40, method="wilson")
    assert (c.agreement.low, c.agreement.high) == pytest.approx(ref, abs=1e-12)
    assert c.kappa.method == "percentile"


def test_bad_inputs_raise_stats_input_error() -> None:
    with pytest.raises(StatsInputError, match="judge"):
        binary_calibration([1, 0, 1], [1, 0])
    with pytest.raises(StatsInputError, match=r"human\[1\]"):
        binary_calibration([1, 2], [1, 0])
    with pytest.raises(StatsInputError, match="confidence"):
        binary_calibration([1], [1], confidence=1.5)


def test_by_category_overall_last_and_consistent() -> None:
    rng = np.random.default_rng(2)
    h, j = _random_pair(rng, 240)
    cats = np.where(rng.random(240) < 0.5, "numeric", "text").tolist()
    out = binary_calibration_by_category(h, j, cats, rng=0, n_resamples=100)
    assert list(out) == ["numeric", "text", "overall"]
    assert out["numeric"].n + out["text"].n == out["overall"].n == 240
    assert out["overall"].kappa.value == pytest.approx(cohen_kappa_score(h, j), abs=1e-9)
    with pytest.raises(StatsInputError):
        binary_calibration_by_category(h, j, cats[:-1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40))
def test_never_nan_never_crash(pairs: list[tuple[bool, bool]]) -> None:
    h = [p[0] for p in pairs]
    j = [p[1] for p in pairs]
    c = binary_calibration(h, j, n_resamples=30)
    d = c.to_dict()
    for key in ("tpr", "tnr", "kappa", "agreement"):
        v = d[key]["value"]
        assert v is None or (math.isfinite(v) and -1.0 <= v <= 1.0)
        if v is None:
            assert d[key]["note"]
