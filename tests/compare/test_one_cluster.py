"""Every entry in one cluster: one draw, so no report prints an interval for it.

The small room clustered by ``source`` (every entry synthetic) is one cluster. The statistics
give the whole range with the note "one cluster: no interval"; every report prints the note
where the interval would be, not ``[0.00, 1.00]`` or ``[-1.000, +1.000]``, and the planner does
not read an ICC off one cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.compare.room_runs import good_and_five
from typer.testing import CliRunner

import assay.cli.judge_cmds
import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app

ONE = "one cluster: no interval"
FAST = ["--resamples", "100", "--permutations", "100"]
runner = CliRunner()


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return good_and_five(tmp_path_factory.mktemp("one-cluster"))


def _run(args: list[str], code: int = 0) -> str:
    res = runner.invoke(app, args, terminal_width=400)
    assert res.exit_code == code, res.output
    return res.output


def _no_whole_range(out: str) -> None:
    for whole in ("[0.00, 1.00]", "[-1.000, +1.000]", "[0.000, 1.000]"):
        assert whole not in out


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_score_and_check_say_one_cluster(case: dict[str, Any], fmt: str) -> None:
    g, chunks = str(case["golden"]), str(case["chunks"])
    score = _run(["score", g, str(case["five"]), "--chunks", chunks, "--ci",
                  "--cluster", "source", "-f", fmt])  # fmt: skip
    assert "57 entries in 1 cluster" in score and f"1.000 ({ONE})" in score
    _no_whole_range(score)
    check = _run(["check", g, str(case["five"]), "--chunks", chunks, "--checks",
                  "answer_correct", "--cluster", "source", "-f", fmt])  # fmt: skip
    assert f"0.91 ({ONE}) n=53" in check
    _no_whole_range(check)


def test_compare_gate_and_leaderboard_say_one_cluster(case: dict[str, Any], tmp_path: Path) -> None:
    g, chunks = str(case["golden"]), str(case["chunks"])
    pair = [g, str(case["good"]), str(case["five"]), "--chunks", chunks, "--metrics",
            "answer_correct,complete@5", "--cluster", "source", "--no-record", *FAST]  # fmt: skip
    for fmt in ("table", "markdown"):
        compare = _run(["compare", *pair, "-f", fmt])
        assert f"-0.094 ({ONE})" in compare
        assert "n=73 in one cluster is" in compare  # the row's entries, in one draw
        _no_whole_range(compare)
        gate = _run(["gate", *pair, "--metric", "answer_correct", "-f", fmt], code=1)
        assert f"-0.385 ({ONE})" in gate and "n=13 in one cluster" in gate
        _no_whole_range(gate)
    data = json.loads(_run(["compare", *pair, "-f", "json"]))
    cell = data["overall"]["metrics"]["answer_correct"]["delta"]
    assert cell["note"] == ONE and data["overall"]["clusters"] == 1
    assert data["overall"]["note"].endswith("is one draw (one cluster: no interval)")
    twin = tmp_path / "twin.jsonl"
    twin.write_bytes(Path(case["five"]).read_bytes())
    board = _run(["compare", *pair[:3], str(twin), *pair[3:]])
    assert board.count(f"-0.094 ({ONE})") == 2
    _no_whole_range(board)


def test_plan_reads_no_icc_off_one_cluster(case: dict[str, Any]) -> None:
    out = json.loads(
        _run(
            [
                "plan",
                "--delta",
                "0.1",
                "--dataset",
                str(case["golden"]),
                "--base",
                str(case["good"]),
                "--cand",
                str(case["five"]),
                "--cluster",
                "source",
                "--chunks",
                str(case["chunks"]),
                "--discordant",
                "0.1",
                "-f",
                "json",
            ]
        )
    )
    assert "one cluster: no ICC estimate, planned at ICC 1" in out["family"]
    notes = [r.get("note", "") for r in out["rows"]]
    assert notes and all("in one cluster is one draw (one cluster: no interval" in n for n in notes)
