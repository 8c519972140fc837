"""No interval claims certainty the data cannot give: agreement on 8 items, six equal recall
values in `score --ci`, answer-check pass rates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint
from tests.conftest import write_case
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.stats.agreement import agreement


def _two_raters_agreeing(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        label = i % 2 == 0
        rows += [
            {"item": f"i{i}", "rater": "A", "label": label},
            {"item": f"i{i}", "rater": "B", "label": label},
        ]
    return rows


def test_perfect_agreement_on_eight_items_is_not_a_certain_one() -> None:
    boot = agreement(_two_raters_agreeing(8), n_resamples=400, rng=0, interval="bca")
    alpha = boot.statistics["alpha_nominal"]
    assert alpha.value == 1.0
    # every resample gives alpha = 1: no bootstrap interval, and the note says why, not
    # [1.00, 1.00]
    assert alpha.low is None and alpha.high is None
    assert alpha.note and "no variation" in alpha.note
    # the jackknife bounds the disagreement rate 0 of 8 allows (Clopper-Pearson): a wide interval
    res = agreement(_two_raters_agreeing(8), n_resamples=400, rng=0, interval="jackknife")
    alpha = res.statistics["alpha_nominal"]
    assert alpha.method == "no-disagreement bound" and alpha.high == 1.0
    assert alpha.low is not None and alpha.low < 0.5
    assert alpha.note and "never disagree" in alpha.note
    # the default on a binary scale (the goodness-of-fit interval) is wide too
    gof = agreement(_two_raters_agreeing(8), n_resamples=400, rng=0)
    alpha = gof.statistics["alpha_nominal"]
    assert alpha.method == "goodness-of-fit" and alpha.high == 1.0
    assert alpha.low is not None and alpha.low < 0.5
    for r in (boot, res, gof):
        for name in ("alpha_nominal", "cohen_kappa", "raw_agreement"):
            iv = r.statistics[name]
            assert iv.low is None or iv.high is None or iv.high > iv.low, (name, iv)


def test_score_ci_on_six_equal_recall_values_is_an_interval(tmp_path: Path) -> None:
    # six entries, each finding one of its two pieces: recall 0.5 on every one
    ds, base, _ = write_case(tmp_path, {"x": [(1, 1)] * 6})
    res = CliRunner().invoke(app, ["score", str(ds), str(base), "--ci", "-f", "json"])
    assert res.exit_code == 0, res.output
    ci = json.loads(res.output)["overall"]["recall@5_ci"]
    # no value off the most common one: the exact interval (at least the score interval)
    assert ci["value"] == 0.5 and ci["method"] == "exact (off-mode count)"
    assert (round(ci["low"], 2), round(ci["high"], 2)) == (0.30, 0.70)
    assert "0 of 6 values differ from 0.5" in ci["note"]


def test_answer_check_pass_rates_are_wilson_intervals() -> None:
    from assay.judge.report import rate_table

    # refusal_ok and abstained_when_should_answer vary: 14 of 20 and 3 of 20 passed
    rows = [
        {"category": "c", "refusal_ok": i < 14, "abstained_when_should_answer": i < 3}
        for i in range(20)
    ]
    table = rate_table(
        rows, ["refusal_ok", "abstained_when_should_answer"], np.random.default_rng(0)
    )
    ok = table["c"]["refusal_ok"].interval
    assert ok.method == "wilson"
    assert (ok.low, ok.high) == pytest.approx(
        proportion_confint(14, 20, method="wilson"), abs=1e-12
    )
    rare = table["c"]["abstained_when_should_answer"].interval
    assert rare.method == "clopper-pearson"  # 3 of 20: fewer than 4 on one side
    assert (rare.low, rare.high) == pytest.approx(
        proportion_confint(3, 20, method="beta"), abs=1e-12
    )
