"""Registering a metric is the only edit needed: score, compare and gate pick it up by name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.compare import compare_runs
from assay.dataset import Dataset
from assay.metrics import register, unregister
from assay.runs import write_run
from assay.score import score_retrieval

from ._util import E, R

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics import Context


@pytest.fixture
def half() -> Iterator[str]:
    """A toy binary family: 1 when the best path has at least half of its pieces in the top k."""

    @register("half", binary=True, cutoff=True)
    def _half(ctx: Context, k: int | None) -> NDArray[np.float64]:
        """1 when the best path has at least half of its pieces in the top k."""
        assert k is not None
        return (ctx.recall(k) >= 0.5).astype(float)

    yield "half"
    unregister("half")


ENTRIES = [E(f"e{i}", [[[f"a{i}"], [f"b{i}"], [f"c{i}"], [f"d{i}"]]]) for i in range(12)]
BASE = {f"e{i}": [f"a{i}", "x", "y"] for i in range(12)}  # 1 of 4 pieces: half = 0
CAND = {f"e{i}": [f"a{i}", f"b{i}"] if i < 9 else ["x"] for i in range(12)}  # 9 fixed, 3 stay at 0


def test_a_registered_metric_is_scored_and_compared(half: str) -> None:
    s = score_retrieval(ENTRIES, R(CAND), metrics=f"{half}@2,recall@2")
    assert s.metric_names == ["half@2", "recall@2"]
    assert s.overall is not None and s.overall.values["half@2"] == 0.75
    assert "half@2" in s.to_markdown() and s.to_dict()["overall"]["half@2"] == 0.75
    cmp = compare_runs(Dataset(ENTRIES), R(BASE), R(CAND), metrics=["half"], k=2, n_resamples=200)
    mc = cmp.overall.metrics["half@2"]
    assert mc.binary and next(iter(mc.tests)) == "mcnemar_exact"  # binary-ness from the registry
    assert (len(mc.fixed), len(mc.broken)) == (9, 0)


def test_a_registered_metric_works_on_the_command_line(half: str, tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in ENTRIES))
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    write_run(base, [{"id": k, "retrieved": v} for k, v in BASE.items()])
    write_run(cand, [{"id": k, "retrieved": v} for k, v in CAND.items()])
    runner = CliRunner()
    res = runner.invoke(app, ["score", str(ds), str(cand), "--metrics", "half@2,mrr", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["overall"]["half@2"] == 0.75
    fast = ["--resamples", "200", "--permutations", "200"]
    res = runner.invoke(
        app,
        ["compare", str(ds), str(base), str(cand), "-m", "half", "--k", "2", "-f", "json", *fast],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["metrics"] == ["half@2"]
    assert data["overall"]["metrics"]["half@2"]["kind"] == "binary"
    res = runner.invoke(
        app, ["gate", str(ds), str(cand), str(base), "-m", "half@2", "-f", "json", *fast]
    )
    assert res.exit_code == 1, res.output  # base as the candidate: half@2 drops by 0.75
    assert json.loads(res.output)["metric"] == "half@2"
