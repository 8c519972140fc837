from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.stats.calibration import (
    MIN_DISAGREEMENTS,
    corrected_pass_rate,
    ppi_mean,
    rogan_gladen,
)


@pytest.mark.parametrize("seed", range(6))
def test_ppi_matches_ppi_py_continuous(seed: int) -> None:
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # the oracle (seconds to import)

    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(20, 200)), int(rng.integers(50, 2000))
    y = rng.normal(size=n)
    yhat = y * rng.uniform(0, 1.5) + rng.normal(scale=rng.uniform(0.1, 2), size=n)
    yu = rng.normal(size=big_n) * rng.uniform(0.5, 1.5)
    alpha = 0.1
    for lam in (1.0, 0.3, None):
        ours = ppi_mean(y, yhat, yu, lam=lam, confidence=1 - alpha)
        lo, hi = ppi_mean_ci(y, yhat, yu, alpha=alpha, lam=lam)
        point = ppi_mean_pointestimate(y, yhat, yu, lam=lam)
        assert ours.estimate.value == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
        assert ours.estimate.low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
        assert ours.estimate.high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_ppi_matches_ppi_py_binary(seed: int) -> None:
    from ppi_py import ppi_mean_ci  # the oracle (seconds to import)

    rng = np.random.default_rng(100 + seed)
    # 15% of 500 labels flipped: about 75 judge-human disagreements, nothing widened
    n, big_n = 500, 1500
    y = rng.random(n) < 0.7
    yhat = y ^ (rng.random(n) < 0.15)
    assert int((y != yhat).sum()) >= MIN_DISAGREEMENTS
    yu = rng.random(big_n) < 0.65
    res = corrected_pass_rate(y, yhat, yu)
    for ours, lam in ((res.ppi, 1.0), (res.ppi_plus_plus, None)):
        lo, hi = ppi_mean_ci(
            y.astype(float), yhat.astype(float), yu.astype(float), alpha=0.05, lam=lam
        )
        assert ours.estimate.low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
        assert ours.estimate.high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)
    # PPI++ is never wider than PPI and its lam lies in [0, 1]
    assert res.ppi_plus_plus.lam is not None and 0.0 <= res.ppi_plus_plus.lam <= 1.0
    assert res.narrowest in {"rogan_gladen", "ppi", "ppi++"}
    widths = {m.method: m.width for m in (res.rogan_gladen, res.ppi, res.ppi_plus_plus)}
    assert widths[res.narrowest] == min(w for w in widths.values() if w is not None)
    assert res.narrowest in res.summary


def test_rogan_gladen_formula_and_delta_method() -> None:
    # judge passes 60% of unlabelled items; TPR 0.9, TNR 0.8 -> (0.6 + 0.8 - 1) / 0.7
    r = rogan_gladen(0.6, 1000, 0.9, 0.8, 200, 100)
    pi = 0.4 / 0.7
    assert r.estimate.value == pytest.approx(pi)
    var = (0.6 * 0.4 / 1000 + pi**2 * 0.9 * 0.1 / 200 + (1 - pi) ** 2 * 0.8 * 0.2 / 100) / 0.49
    assert r.se == pytest.approx(math.sqrt(var))
    assert r.estimate.low == pytest.approx(pi - 1.959963984540054 * math.sqrt(var))
    # a perfect judge needs no correction and the variance is the binomial one
    perfect = rogan_gladen(0.3, 400, 1.0, 1.0, 50, 50)
    assert perfect.estimate.value == pytest.approx(0.3)
    assert perfect.se == pytest.approx(math.sqrt(0.3 * 0.7 / 400))


def test_rogan_gladen_unbiased_on_simulated_population() -> None:
    rng = np.random.default_rng(11)
    true_rate, tpr, tnr = 0.55, 0.95, 0.6
    truth = rng.random(20000) < true_rate
    judged = np.where(truth, rng.random(truth.size) < tpr, rng.random(truth.size) >= tnr)
    lab = slice(0, 600)
    res = corrected_pass_rate(truth[lab], judged[lab], judged[600:])
    naive = res.judge_rate.estimate.value
    assert naive is not None and abs(naive - true_rate) > 0.05  # the judge is biased
    for r in (res.rogan_gladen, res.ppi, res.ppi_plus_plus):
        e = r.estimate
        assert e.low is not None and e.high is not None
        assert e.low <= true_rate <= e.high


def test_degenerate_corrections_defined() -> None:
    chance = rogan_gladen(0.5, 100, 0.5, 0.5, 50, 50)
    assert chance.estimate.value is None and "chance" in (chance.estimate.note or "")
    clipped = rogan_gladen(0.02, 100, 0.9, 0.9, 50, 50)
    assert clipped.estimate.value == 0.0 and "clipped" in (clipped.estimate.note or "")
    assert rogan_gladen(0.5, 0, 0.9, 0.9, 50, 50).estimate.value is None
    no_fail = corrected_pass_rate([True] * 10, [True] * 10, [True, False])
    assert no_fail.rogan_gladen.estimate.value is None
    assert no_fail.ppi.estimate.value == pytest.approx(0.5 + 0.0)
    const = corrected_pass_rate([True, False] * 5, [True] * 10, [True] * 5)
    assert const.ppi_plus_plus.lam == 0.0 and "lam = 0" in (const.ppi_plus_plus.estimate.note or "")
    empty = corrected_pass_rate([], [], [])
    assert empty.narrowest is None and all(m.estimate.value is None for m in empty.methods)
    assert "no corrected estimate" in empty.summary


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=30),
    st.lists(st.booleans(), max_size=30),
)
def test_corrections_never_nan(pairs: list[tuple[bool, bool]], unlabelled: list[bool]) -> None:
    res = corrected_pass_rate([p[0] for p in pairs], [p[1] for p in pairs], unlabelled)
    for m in res.methods:
        e = m.estimate
        if e.value is None:
            assert e.note and e.note.startswith("undefined")
        else:
            assert math.isfinite(e.value)
            assert e.low is not None and e.high is not None and e.low <= e.value <= e.high
    json.dumps(res.to_dict())


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((float("nan"), 100, 0.9, 0.8, 50, 50), "observed_rate"),
        ((0.5, 100, 1.2, 0.8, 50, 50), "tpr"),
        ((0.5, 100, 0.9, -0.1, 50, 50), "tnr"),
        ((0.5, 100, 0.9, float("inf"), 50, 50), "tnr"),
        ((0.5, -3, 0.9, 0.8, 50, 50), "n_observed"),
        ((0.5, 100, 0.9, 0.8, 50, -1), "n_neg"),
    ],
)
def test_rogan_gladen_rejects_bad_inputs(args: tuple[float, ...], field: str) -> None:
    from assay.stats._errors import StatsInputError

    with pytest.raises(StatsInputError) as info:
        rogan_gladen(*args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_rogan_gladen_judge_barely_better_than_chance_is_a_note_not_a_huge_se() -> None:
    # TPR + TNR - 1 = 1e-8: the correction would divide by almost nothing (se ~ 1e7)
    r = rogan_gladen(0.5, 1000, 0.5 + 1e-8, 0.5, 50, 50)
    assert r.estimate.value is None and r.se is None
    assert "not clearly better than chance" in (r.estimate.note or "")
    # within two standard errors of chance on 40 + 40 labels: still no correction
    assert rogan_gladen(0.5, 1000, 0.6, 0.55, 40, 40).estimate.value is None
    # clearly better than chance: corrected, and the interval lies in [0, 1]
    ok = rogan_gladen(0.5, 1000, 0.9, 0.8, 200, 100)
    assert ok.estimate.value is not None and ok.se is not None and ok.se < 0.1


def test_ppi_pass_rate_clipped_to_unit_interval_with_a_note() -> None:
    # the judge fails half of what humans pass, but passes every unlabelled item:
    # PPI = 1.0 + mean(human - judge) = 1.5 before clipping
    human = [True] * 40
    judge = [True] * 20 + [False] * 20
    res = corrected_pass_rate(human, judge, [True] * 200)
    for r in (res.ppi, res.ppi_plus_plus):
        e = r.estimate
        assert e.value is not None and e.low is not None and e.high is not None
        assert 0.0 <= e.low <= e.value <= e.high <= 1.0, r
    assert "clipped to [0, 1]" in (res.ppi.estimate.note or "")
    # ppi_mean itself (any mean, not only a rate) is not clipped unless asked
    raw = ppi_mean([1.0] * 40, [1.0] * 20 + [0.0] * 20, [1.0] * 200)
    assert raw.estimate.value == pytest.approx(1.5)


def test_rogan_gladen_refuses_what_the_command_refuses() -> None:
    # two human passes and two human fails: the command refuses; the function did not (it
    # returned a narrow interval around a divisor measured on four items)
    few = rogan_gladen(0.6, 1000, 1.0, 1.0, 2, 2)
    assert few.estimate.value is None
    assert few.estimate.note and "2 human passes and 2 human fails" in few.estimate.note
    # at the threshold it answers
    assert rogan_gladen(0.6, 1000, 0.9, 0.9, 10, 10).estimate.value is not None
