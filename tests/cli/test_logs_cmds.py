"""`assay logs ...` and `assay run --log` through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app

runner = CliRunner()


def _w(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _log(tmp_path: Path) -> Path:
    rows = [
        {
            "ts": f"2026-10-{1 + i % 28:02d}T10:00:00Z",
            "query": f"company{i} revenue FY{2000 + i}",
            "retrieved": [] if i % 10 == 0 else [{"chunk_id": f"c{i}", "score": float(i)}],
            "answer": "I could not find this in the filings." if i % 5 == 0 else "It was $3m.",
            "feedback": "down" if i % 4 == 0 else None,
            "latency_ms": float(100 + i),
        }
        for i in range(40)
    ]
    path = _w(tmp_path / "log.jsonl", rows)
    with open(path, "a") as fh:
        fh.write("{broken\n")
    return path


def test_logs_commands_end_to_end(tmp_path: Path) -> None:
    log, db = _log(tmp_path), tmp_path / "logs.db"
    res = runner.invoke(app, ["logs", "ingest", str(log), "--db", str(db), "-f", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["added"] == 40 and d["bad"] == 1
    assert d["problems"] == [
        f"{log}:41: not valid JSON: Expecting property name enclosed in double quotes"
    ]
    res = runner.invoke(app, ["logs", "report", str(db), "-f", "json"])
    assert res.exit_code == 0, res.output
    (p,) = json.loads(res.stdout)["periods"]
    assert p["n"] == 40 and p["no_hits_rate"] == 4 / 40 and p["down_rate"] == 10 / 40
    assert p["abstain_rate"] == 8 / 40 and "categories" in p
    res = runner.invoke(app, ["logs", "report", str(db), "-f", "markdown", "--by", "week"])
    assert res.exit_code == 0 and "| period |" in res.stdout
    out, wb = tmp_path / "fresh.jsonl", tmp_path / "wb.db"
    res = runner.invoke(
        app,
        ["logs", "sample", str(db), "--month", "2026-10", "--n", "6", "--out", str(out),
         "--to-workbench", f"sqlite:///{wb}", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["drawn"] == 6 and d["workbench"]["added"] == 6 and d["workbench"]["tasks"] == 12
    from assay.workbench.db import Database
    from assay.workbench.models import Item, Task

    dbw = Database(f"sqlite:///{wb}")
    with dbw.read() as s:
        assert s.query(Item).count() == 6
        assert {t.kind for t in s.query(Task).all()} == {"evidence", "reference"}
        assert all(i.entry["split"] == "fresh" for i in s.query(Item).all())
    dbw.dispose()
    cand = tmp_path / "cand.jsonl"
    res = runner.invoke(
        app, ["logs", "failures", str(db), "--rules", "down,no_hits", "--out", str(cand)]
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in cand.read_text().splitlines()]
    assert len(rows) == len({0, 4, 8, 10, 12, 16, 20, 24, 28, 30, 32, 36})
    res = runner.invoke(app, ["logs", "failures", str(db), "--rules", "slow"])
    assert res.exit_code == 2 and "unknown failure rule" in res.output


def test_ingest_refuses_an_unreadable_log_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "no ts"}\n')
    db = tmp_path / "logs.db"
    res = runner.invoke(app, ["logs", "ingest", str(bad), "--db", str(db)])
    assert res.exit_code == 2
    assert f"{bad}:1: ts: is required" in res.output
    assert not db.exists()


def test_run_writes_the_log_format(tmp_path: Path) -> None:
    chunks = _w(
        tmp_path / "chunks.jsonl",
        [
            {"chunk_id": "a", "doc_id": "d", "page": 1, "text": "revenue was 10 million"},
            {"chunk_id": "b", "doc_id": "d", "page": 2, "text": "headcount grew to 900"},
        ],
    )
    golden = _w(
        tmp_path / "golden.jsonl",
        [
            {"id": "q1", "query": "revenue", "category": "numeric_lookup",
             "evidence_paths": [[["a"]]], "as_of": "2026-09-30"},
            {"id": "q2", "query": "headcount", "category": "numeric_lookup",
             "evidence_paths": [[["b"]]]},
        ],
    )  # fmt: skip
    log = tmp_path / "prod.jsonl"
    res = runner.invoke(
        app,
        ["run", str(golden), "--system", "bm25", "--chunks", str(chunks),
         "--out", str(tmp_path / "run.jsonl"), "--log", str(log), "--no-cache"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["query"] for x in lines] == ["revenue", "headcount"]
    assert lines[0]["as_of"] == "2026-09-30" and lines[0]["retrieved"][0]["chunk_id"] == "a"
    assert lines[0]["system"] == "bm25" and "latency_ms" in lines[0]
    db = tmp_path / "logs.db"
    res = runner.invoke(app, ["logs", "ingest", str(log), "--db", str(db), "--golden", str(golden)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["logs", "report", str(db), "--golden", str(golden), "-f", "json"])
    (p,) = json.loads(res.stdout)["periods"]
    assert p["retrieval"]["matched"] == 2
    assert p["retrieval"]["overall"]["recall@5"] == 1.0


def test_fresh_sample_seal_and_retire_with_failures(tmp_path: Path) -> None:
    log, db = _log(tmp_path), tmp_path / "logs.db"
    assert runner.invoke(app, ["logs", "ingest", str(log), "--db", str(db)]).exit_code == 0
    fresh = tmp_path / "fresh-2026-10.jsonl"
    res = runner.invoke(
        app, ["logs", "sample", str(db), "--month", "2026-10", "--n", "5", "--out", str(fresh)]
    )
    assert res.exit_code == 0, res.output
    ids = [json.loads(x)["id"] for x in fresh.read_text().splitlines()]
    assert runner.invoke(app, ["fresh", "seal", str(fresh)]).exit_code == 0
    main = _w(tmp_path / "main.jsonl", [{"id": "m1", "query": "q", "category": "numeric_lookup"}])
    failed = tmp_path / "failed.txt"
    failed.write_text(f"# failed in the one use\n{ids[0]}\n")
    res = runner.invoke(
        app, ["fresh", "retire", str(fresh), "--into", str(main), "--failed", str(failed)]
    )
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in map(json.loads, main.read_text().splitlines())}
    assert len(rows) == 6 and rows[ids[0]]["flags"] == ["fresh_failure"]
    assert all(rows[i]["source"] == "log" and rows[i]["split"] == "fresh-2026-10" for i in ids)


def test_demo_logs_prints_each_step(tmp_path: Path, monkeypatch: Any) -> None:
    import assay.logs.traffic_demo as demo

    real = demo.run_logs_demo
    monkeypatch.setattr(
        demo, "run_logs_demo", lambda out, **kw: real(out, per_month=60, n_sample=10, **kw)
    )
    res = runner.invoke(app, ["demo", "--logs", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    for step in (
        "1/6 generated",
        "2/6 ingested",
        "3/6 report",
        "4/6 fresh sample",
        "5/6 failures",
        "6/6 seasonal audit",
    ):
        assert step in res.output
    assert "Category share" in res.output
    assert (tmp_path / "logs" / "logstore" / "store.json").exists()
    assert (tmp_path / "logs" / "fresh.jsonl").exists()
