"""A comparison kept out of the ledger says so, naming the switch as its caller's user wrote it:
``--no-record`` on the command line, ``record=False`` (or what the caller passes as
``record_switch``) in the library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import write_case
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare import compare_files, compare_many_files, gate_files

FAST = ["--resamples", "100", "--permutations", "100", "--no-record", "-f", "json"]
KW = {"n_resamples": 100, "n_permutations": 100, "record": False}
OUTCOMES = {"a": [(1, 2), (2, 2), (0, 2)] * 4}


def _unrecorded(notes: list[str]) -> str:
    (note,) = [n for n in notes if n.startswith("Not recorded in the ledger")]
    return note


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    twin = tmp_path / "twin.jsonl"
    twin.write_bytes(cand.read_bytes())
    return ds, base, cand, twin


def test_the_library_names_the_argument(case: tuple[Path, Path, Path, Path]) -> None:
    ds, base, cand, twin = case
    assert "(record=False)" in _unrecorded(compare_files(ds, base, cand, **KW).notes)  # type: ignore[arg-type]
    assert "(record=False)" in _unrecorded(gate_files(ds, base, cand, **KW).comparison.notes)  # type: ignore[arg-type]
    board = compare_many_files(ds, base, [cand, twin], **KW)  # type: ignore[arg-type]
    assert "(record=False)" in _unrecorded(board.notes)
    mine = compare_files(ds, base, cand, record_switch="record=no", **KW)  # type: ignore[arg-type]
    assert "(record=no)" in _unrecorded(mine.notes)


@pytest.mark.parametrize("command", ["compare", "gate", "leaderboard"])
def test_the_command_line_names_its_flag(case: tuple[Path, Path, Path, Path], command: str) -> None:
    ds, base, cand, twin = case
    runs = [str(base), str(cand), *([str(twin)] if command == "leaderboard" else [])]
    verb = "gate" if command == "gate" else "compare"
    res = CliRunner().invoke(app, [verb, str(ds), *runs, *FAST])
    assert res.exit_code in (0, 1), res.output
    data = json.loads(res.stdout)
    notes = data["comparison"]["notes"] if command == "gate" else data["notes"]
    assert "(--no-record)" in _unrecorded(notes)
    assert "record=False" not in res.stdout
