"""`assay validate -f json|markdown`: the problems as objects, ok and counts."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app

runner = CliRunner()


def test_validate_json_lists_problems_as_objects(tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    ds.write_text('{"id": "a", "query": "q"}\nnot json\n', encoding="utf-8")
    res = runner.invoke(app, ["validate", str(ds), "-f", "json"])
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and out["counts"]["problems"] == 2
    assert out["problems"] == [
        {"file": str(ds), "line": 1, "field": "category", "message": "required field is missing"},
        {
            "file": str(ds),
            "line": 2,
            "field": None,
            "message": "bad JSON: Expecting value (column 1)",
        },
    ]


def test_validate_json_and_markdown_when_clean(tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    rows = [
        {"id": "a", "query": "q", "category": "x", "evidence_paths": [[["c1"]]]},
        {"id": "b", "query": "q", "category": "y", "answerable": False},
    ]
    ds.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = runner.invoke(app, ["validate", str(ds), "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["ok"] is True and out["problems"] == []
    assert out["counts"] == {
        "problems": 0,
        "entries": 2,
        "answerable": 1,
        "unanswerable": 1,
        "drafts": 0,
        "categories": 2,
        "sql": 0,
        "tiers": {"unknown": 2},  # entries per label tier: these two say none
    }
    md = runner.invoke(app, ["validate", str(ds), "-f", "markdown"])
    assert md.exit_code == 0 and "| 2 | 1 | 1 | 2 |" in md.stdout
