"""`assay validate` runs every gold query read-only and compares it with its stored result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import Dataset, Entry
from assay.gold import validate
from assay.sql.gold import validate_dataset, validate_sql_gold


def _copy(warehouse: Path, tmp_path: Path) -> Path:
    for name in ("warehouse.duckdb", "warehouse.schema.json"):
        shutil.copy(warehouse / name, tmp_path / name)
    return tmp_path / "golden.jsonl"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_generated_gold_validates(warehouse: Path) -> None:
    report = validate_dataset(warehouse / "golden.jsonl")
    assert report.ok, report.problems[:5]
    assert report.sql == report.entries >= 200
    res = CliRunner().invoke(app, ["validate", str(warehouse / "golden.jsonl"), "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["counts"]["sql"] == report.sql


def test_gold_also_holds_on_sqlite(golden: Dataset, warehouse: Path) -> None:
    """Every gold query, transpiled by sqlglot, gives its stored result on the SQLite file."""
    moved = []
    for e in golden.entries:
        assert e.sql is not None
        d = e.model_dump(mode="json")
        d["sql"]["database"] = "warehouse.sqlite"
        moved.append(Entry.model_validate(d))
    assert validate_sql_gold(moved, warehouse) == []


def test_validate_names_file_line_and_field(
    golden: Dataset, warehouse: Path, tmp_path: Path
) -> None:
    path = _copy(warehouse, tmp_path)
    rows = [e.to_json_dict() for e in golden.entries[:6]]
    rows[1]["sql"]["result"]["rows"][0][-1] = 12345.0  # a stored result that is wrong
    rows[2]["sql"]["queries"] = ["DELETE FROM customers"]  # an unsafe gold query
    rows[3]["sql"]["queries"].append("SELECT 1 AS nothing")  # a "equivalent" that is not
    rows[4]["sql"]["database"] = "missing.duckdb"
    rows[5]["expected_behavior"] = "refuse"  # refuse, although it has gold queries
    _write(path, rows)
    problems = {(p.line, p.field): p.message for p in validate_dataset(path).problems}
    assert validate(path).ok  # the gold layer alone knows nothing of SQL
    assert "differs from the stored sql.result" in problems[(2, "sql.queries.0")]
    assert "DELETE" in problems[(3, "sql.queries.0")]
    assert "differs" in problems[(4, "sql.queries.1")]
    assert "not found" in problems[(5, "sql.database")]
    assert "refuse" in problems[(6, "expected_behavior")]
    res = CliRunner().invoke(app, ["validate", str(path)])
    assert res.exit_code == 1
    assert f"{path}:2: sql.queries.0:" in res.output.replace("\n", "")


def test_unanswerable_needs_refuse_and_no_result(warehouse: Path, tmp_path: Path) -> None:
    path = _copy(warehouse, tmp_path)
    base = {"query": "q?", "category": "unanswerable"}
    _write(
        path,
        [
            {**base, "id": "u1", "sql": {"queries": [], "database": "warehouse.duckdb"}},
            {
                **base,
                "id": "u2",
                "expected_behavior": "refuse",
                "sql": {"queries": [], "result": {"columns": ["a"], "rows": [[1]]}},
            },
            {**base, "id": "u3", "expected_behavior": "refuse", "sql": {"queries": []}},
        ],
    )
    problems = {(p.line, p.field) for p in validate_dataset(path).problems}
    assert problems == {(1, "sql.queries"), (2, "sql.result")}


def test_schema_rejects_bad_sql_gold() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="row 0 has 1 values for 2 columns"):
        Entry.model_validate(
            {
                "id": "x",
                "query": "q",
                "category": "c",
                "sql": {"queries": ["SELECT 1"], "result": {"columns": ["a", "b"], "rows": [[1]]}},
            }
        )
    with pytest.raises(ValidationError):
        Entry.model_validate({"id": "x", "query": "q", "category": "c", "sql": {"queries": ["  "]}})
    with pytest.raises(ValidationError):
        Entry.model_validate(
            {"id": "x", "query": "q", "category": "c", "sql": {"semantics": "multiset"}}
        )
    schema = Entry.model_json_schema()
    assert "sql" in schema["properties"] and "sql" not in schema["required"]
