"""The demo's gold SQL step: skipped with a note naming the extra when it is missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.demo import run_sql_demo


def test_sql_step_is_skipped_without_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def no_sql(name: str, *a: Any, **k: Any) -> Any:
        return None if name in ("sqlglot", "duckdb") else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", no_sql)
    lines: list[str] = []
    res = run_sql_demo(tmp_path / "sql", log=lines.append)
    assert res.report is None and res.skipped and "pip install 'assay[sql]'" in res.skipped
    assert lines == [res.skipped]
    assert not (tmp_path / "sql").exists()
    out = CliRunner().invoke(app, ["demo", "--sql", "--out", str(tmp_path / "d")])
    assert out.exit_code == 0 and "assay[sql]" in out.output
