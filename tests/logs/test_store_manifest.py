"""A log store's record (store.json) damaged in its fields, not only in its syntax, is named:
file, field and what it holds, exit 2, nothing written. Attack: `"ingests": 5` made the next
`logs ingest` end in "internal error: TypeError"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import DataError
from assay.logs import ingest_logs
from assay.logs.store import read_manifest

from .conftest import write_jsonl

GOOD = {"ts": "2026-10-03T14:05:11Z", "query": "What was revenue?", "answer": "5."}


@pytest.mark.parametrize(
    "field,value",
    [("ingests", 5), ("ingests", [5]), ("ingests", {"a": 1}), ("classifier", 5)],
)
def test_a_damaged_store_record_is_named(tmp_path: Path, field: str, value: object) -> None:
    log = write_jsonl(tmp_path / "l.jsonl", [{**GOOD, "query": f"q{i}"} for i in range(5)])
    db = tmp_path / "st"
    ingest_logs([log], db)
    record = db / "store.json"
    data = json.loads(record.read_text())
    data[field] = value
    record.write_text(json.dumps(data))
    before = sorted(p.name for p in db.rglob("*"))
    with pytest.raises(DataError) as err:
        read_manifest(db)
    (p,) = err.value.problems
    assert (p.file, p.field) == (str(record), field)
    assert "damaged" in p.message
    res = CliRunner().invoke(app, ["logs", "ingest", str(log), "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.output and field in res.output
    assert sorted(p.name for p in db.rglob("*")) == before
    res = CliRunner().invoke(app, ["logs", "report", str(db)])
    assert res.exit_code == 2 and "damaged" in res.output, res.output


@pytest.mark.parametrize("how", ["truncated", "foreign"])
def test_a_damaged_parquet_file_in_the_store_is_named(tmp_path: Path, how: str) -> None:
    """A Parquet file cut short, or another file with the suffix, is named by report and ingest
    (before: "internal error: InvalidInputException" quoting the SQL)."""
    log = write_jsonl(tmp_path / "l.jsonl", [{**GOOD, "query": f"q{i}"} for i in range(5)])
    db = tmp_path / "st"
    ingest_logs([log], db)
    (part,) = sorted(db.glob("queries/month=*/*.parquet"))
    bad = part
    if how == "truncated":
        part.write_bytes(part.read_bytes()[:100])
    else:
        bad = part.parent / "zz.parquet"
        bad.write_text("not parquet\n")
    for args in (["logs", "report", str(db)], ["logs", "ingest", str(log), "--db", str(db)]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, res.output
        text = res.output.replace("\n", "")
        assert "internal error" not in text and "damaged" in text and bad.name in text, text
