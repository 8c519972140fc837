"""A chunk table with no chunks is refused by name before anything is indexed or written."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app


def test_run_on_an_empty_chunk_table_names_the_file(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "e1", "query": "revenue", "category": "x"}) + "\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    out = tmp_path / "run.jsonl"
    res = CliRunner().invoke(
        app,
        ["run", str(golden), "--system", "bm25", "--chunks", str(empty), "--out", str(out)],
    )
    assert res.exit_code == 2, res.output
    assert f"{empty}: chunks: the chunk table holds no chunks" in res.output
    assert "max()" not in res.output and "Traceback" not in res.output
    assert not out.exists()
