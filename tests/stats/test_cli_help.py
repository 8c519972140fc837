"""Every command of this area has help text that teaches, and option errors exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app


@pytest.mark.parametrize(
    ("cmd", "phrase"),
    [
        (["compare"], "McNemar"),
        (["gate"], "Exit status"),
        (["split"], "group-by"),
        (["plan"], "McNemar"),
        (["fresh", "seal"], "content hash"),
        (["fresh", "retire"], "provenance"),
    ],
)
def test_help(cmd: list[str], phrase: str) -> None:
    res = CliRunner().invoke(app, [*cmd, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    assert phrase in res.output


def test_bad_option_value_exits_2() -> None:
    res = CliRunner().invoke(app, ["gate", "a.jsonl", "b.jsonl", "c.jsonl", "--max-drop", "2"])
    assert res.exit_code == 2
