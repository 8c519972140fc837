from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import DataError
from assay.logs import ingest_logs
from assay.logs.store import connect

from .conftest import write_jsonl


def _count(db: Path) -> int:
    with connect(db) as con:
        return int(con.execute("SELECT COUNT(*) FROM queries").fetchone()[0])


def test_ingest_is_idempotent(two_months: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    path, _ = two_months
    db = tmp_path / "logs.db"
    first = ingest_logs([path], db, progress=False)
    assert first.total("added") == 320 and first.total("duplicates") == 0
    again = ingest_logs([path], db, progress=False)
    assert again.total("added") == 0 and again.total("duplicates") == 320
    assert _count(db) == 320
    # the same line spelled differently (key order, a bare id for {"chunk_id"}, Z vs +00:00)
    row = json.loads(path.read_text().splitlines()[20])
    respelled = {k: row[k] for k in reversed(list(row))}
    respelled["ts"] = row["ts"].replace("Z", "+00:00")
    respelled["retrieved"] = [
        h if isinstance(h, str) or "score" in h else h["chunk_id"] for h in row["retrieved"]
    ]
    rep = ingest_logs([write_jsonl(tmp_path / "again.jsonl", [respelled])], db, progress=False)
    assert rep.total("duplicates") == 1 and _count(db) == 320


def test_bad_lines_are_named_and_skipped(tmp_path: Path) -> None:
    good = {"ts": "2026-10-01T10:00:00Z", "query": "AVER rev FY25", "retrieved": ["a", "b"]}
    path = tmp_path / "log.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({"query": "no ts"}),
                json.dumps({**good, "query": "x", "feedback": "meh"}),
                "",
                json.dumps({**good, "query": "y", "retrieved": [{"score": 1}]}),
                json.dumps({**good, "query": "z", "latency_ms": "fast"}),
            ]
        )
        + "\n"
    )
    rep = ingest_logs([path], tmp_path / "logs.db", progress=False)
    assert rep.total("added") == 1 and rep.total("bad") == 5
    text = [str(p) for p in rep.problems]
    assert text[0].startswith(f"{path}:2: not valid JSON")
    assert f"{path}:3: ts: is required" in text
    assert f"{path}:4: feedback: " in text[2]
    assert f"{path}:6: retrieved.0: " in text[3]
    assert f"{path}:7: latency_ms: " in text[4]


def test_a_broken_first_line_is_one_bad_line_not_a_broken_document(tmp_path: Path) -> None:
    """A log whose first line is cut short is JSONL with one bad line (FILE:1), not a JSON
    export that fails whole; an indented export whose first line is ``{`` is still read whole."""
    good = {"ts": "2026-10-01T10:00:00Z", "query": "AVER rev FY25"}
    path = tmp_path / "log.jsonl"
    path.write_text('{"ts": "2026-10-01T09:\n' + json.dumps(good) + "\n")
    rep = ingest_logs([path], tmp_path / "logs", progress=False)
    assert rep.total("added") == 1 and rep.total("bad") == 1
    assert str(rep.problems[0]).startswith(f"{path}:1: not valid JSON")
    only = tmp_path / "only.jsonl"
    only.write_text("{not json\n")
    with pytest.raises(DataError, match=f"{only}:1: not valid JSON"):
        ingest_logs([only], tmp_path / "none", progress=False)
    export = tmp_path / "spans.json"
    span = {
        "name": "retrieve",
        "span_kind": "RETRIEVER",
        "start_time": "2026-10-03T14:05:11Z",
        "attributes": {"input": {"value": "AVER rev"}},
    }
    export.write_text(json.dumps({"data": [span, span]}, indent=2))
    rep = ingest_logs([export], tmp_path / "spans", progress=False)
    assert rep.total("added") == 1 and rep.total("duplicates") == 1 and rep.total("bad") == 0


def test_nothing_readable_or_missing_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n[1,\n")
    db = tmp_path / "logs.db"
    with pytest.raises(DataError):
        ingest_logs([bad], db, progress=False)
    assert not db.exists()
    with pytest.raises(DataError, match="file not found"):
        ingest_logs([tmp_path / "missing.jsonl"], db, progress=False)
    assert not db.exists()


def test_abstention_uses_the_refusal_check(tmp_path: Path) -> None:
    rows = [
        {"ts": "2026-10-01T10:00:00Z", "query": "q1", "answer": "Net income was $12 million."},
        {"ts": "2026-10-01T10:00:01Z", "query": "q2", "answer": "I cannot determine that."},
        {"ts": "2026-10-01T10:00:02Z", "query": "q3"},
    ]
    db = tmp_path / "logs.db"
    ingest_logs([write_jsonl(tmp_path / "l.jsonl", rows)], db, progress=False)
    with connect(db) as con:
        got = dict(con.execute("SELECT query, abstained FROM queries").fetchall())
    assert got == {"q1": 0, "q2": 1, "q3": None}


def test_origin_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text('\n\n{"ts": "2026-10-01T00:00:00Z", "query": "q"}\n')
    db = tmp_path / "logs.db"
    ingest_logs([path], db, progress=False)
    with connect(db) as con:
        assert con.execute("SELECT origin FROM queries").fetchone()[0] == "l.jsonl:3"
