"""`graded_mean_interval` routes a cell as `assay score --ci` and `assay check` do: values all 0
or 1 are a rate (the rate interval, Clopper-Pearson below 4 passes or fails) whatever the
metric's declared kind, fewer than 4 values off the usual one get the exact interval; the
commands call the function, so the two agree."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.stats.bounded import EXACT_METHOD, graded_mean_interval
from assay.stats.proportion import rate_interval


def test_zero_one_values_get_the_rate_interval() -> None:
    iv = graded_mean_interval([1.0] + [0.0] * 29)
    low, high = proportion_confint(1, 30, alpha=0.05, method="beta")
    assert iv.method == "clopper-pearson"
    assert (iv.low, iv.high) == pytest.approx((low, high), rel=1e-9)
    assert round(iv.low, 4) == 0.0008 and round(iv.high, 3) == 0.172  # was [0, 0.167]
    many = [1.0] * 12 + [0.0] * 18
    assert graded_mean_interval(many) == rate_interval(many)  # Wilson away from the edges
    assert graded_mean_interval(many, rate_method="clopper-pearson").method == "clopper-pearson"
    # 0/1 values in a wider range are not a rate: the graded route
    assert graded_mean_interval([1.0] + [0.0] * 29, lower=-1.0).method != "clopper-pearson"
    # few values off the usual one (not 0/1): still the exact interval
    assert graded_mean_interval([0.5] * 27 + [0.0] * 3).method == EXACT_METHOD


def test_the_function_and_score_ci_agree(tmp_path: Path) -> None:
    # 30 entries with one evidence piece each, the first alone retrieved: recall@5 is 0/1
    ds, run = tmp_path / "golden.jsonl", tmp_path / "run.jsonl"
    entries = [
        {"id": f"e{i:02d}", "query": f"question {i}", "category": "c",
         "evidence_paths": [[[f"e{i:02d}-a"]]]}
        for i in range(30)
    ]  # fmt: skip
    ds.write_text("".join(json.dumps(e) + "\n" for e in entries))
    run.write_text(
        "".join(
            json.dumps({"id": e["id"], "retrieved": [f"e{i:02d}-a" if i == 0 else "noise"]}) + "\n"
            for i, e in enumerate(entries)
        )
    )
    res = CliRunner().invoke(
        app, ["score", str(ds), str(run), "--ci", "--cluster", "none", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    overall = json.loads(res.output)["overall"]
    values = np.array([1.0] + [0.0] * 29)
    for metric in ("recall@5", "complete@5"):
        ci = overall[f"{metric}_ci"]
        want = graded_mean_interval(values)
        assert (ci["method"], ci["low"], ci["high"]) == (want.method, want.low, want.high)
