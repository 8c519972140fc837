"""A log store damaged on disk (issue 40): store.json cut short or garbage, a Parquet part damaged
inside with its magic bytes intact, and a part deleted. Each is named -- the file and what is
wrong, exit 2, no "internal error" and no SQL -- and a deleted part is not a silent loss of its
queries: report, sample and failures refuse the store until an ingest of the logs again drops
the part from the record (and says so). Before, a part damaged inside ended in "internal error"
printing DuckDB's SQL, and a deleted part's queries were left out of every report without a
word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import DataError
from assay.logs import ingest_logs
from assay.logs.store import connect

from .conftest import write_jsonl

ROWS = [
    {"ts": f"2026-{m:02d}-03T14:05:11Z", "query": f"What was revenue {i}?", "answer": "5."}
    for m in (9, 10)
    for i in range(20)
]


def _store(tmp_path: Path) -> tuple[Path, Path]:
    log = write_jsonl(tmp_path / "l.jsonl", ROWS)
    db = tmp_path / "st"
    ingest_logs([log], db)
    return log, db


def _september(db: Path) -> Path:
    (part,) = sorted(db.glob("queries/month=2026-09/*.parquet"))
    return part


def _said(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    text = res.output.replace("\n", "")
    assert res.exit_code == 2, res.output
    assert "internal error" not in text and "SELECT" not in text and "LINE" not in text, text
    return text


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:100],  # cut short
        lambda b: b"\x00\xff garbage",  # not text
        lambda b: b"[" * 100_000,  # nested past any parser
        lambda b: b'{"format": "assay-logs/2", "ingests": [' + b"1" * 5000 + b"]}",  # a huge int
    ],
    ids=["truncated", "garbage", "deep", "huge-int"],
)
def test_a_damaged_store_record_is_named(tmp_path: Path, damage: object) -> None:
    log, db = _store(tmp_path)
    record = db / "store.json"
    record.write_bytes(damage(record.read_bytes()))  # type: ignore[operator]
    for args in (["logs", "report", str(db)], ["logs", "ingest", str(log), "--db", str(db)]):
        text = _said(args)
        assert "store.json" in text, text


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:4] + b"\x07" * (len(b) - 1004) + b[-1000:],  # its pages overwritten
        lambda b: b[:-300] + b"\xff" * 292 + b[-8:],  # its footer overwritten
        lambda b: b[: len(b) // 2] + b[-8:],  # its middle cut out
    ],
    ids=["pages", "footer", "middle"],
)
def test_a_part_damaged_inside_is_named(tmp_path: Path, damage: object) -> None:
    log, db = _store(tmp_path)
    part = _september(db)
    part.write_bytes(damage(part.read_bytes()))  # type: ignore[operator]
    for args in (
        ["logs", "report", str(db)],
        ["logs", "failures", str(db), "--out", str(tmp_path / "f.jsonl")],
        ["logs", "ingest", str(log), "--db", str(db)],
    ):
        text = _said(args)
        assert part.name in text and "damaged" in text, (args, text)


def test_a_deleted_part_is_not_a_silent_loss(tmp_path: Path) -> None:
    log, db = _store(tmp_path)
    part = _september(db)
    part.unlink()
    with pytest.raises(DataError) as err, connect(db):
        pass
    (p,) = err.value.problems
    assert p.file == str(part) and "missing" in p.message
    text = _said(["logs", "report", str(db)])
    assert part.name in text and "missing" in text
    # an ingest of the logs again restores the queries, says what was missing, and drops it
    rep = ingest_logs([log], db)
    assert rep.total("added") == 20 and rep.total_in_store == 40
    assert any(q.file == str(part) and "missing" in q.message for q in rep.problems)
    listed = [r for i in json.loads((db / "store.json").read_text())["ingests"] for r in i["parts"]]
    assert all((db / r).is_file() for r in listed) and len(listed) == 2  # Sept again, Oct
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM queries").fetchone() == (40,)
