"""`ingest_logs(..., executor="ray")` on a local Ray started here (2 CPUs): blocks staged as
Parquet by the workers in parallel; the store and the report are those of a local ingest, bad
lines included (named FILE:LINE, in file order).

Skipped, with the reason, only where the `ray` extra is not installed."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
import assay.logs.ingest as ingest_mod
from assay.cli import app
from assay.logs import ingest_logs
from assay.logs.store import connect, parquet_files
from tests.rayutil import local_ray as start_local_ray

from .conftest import known_month

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'assay[ray]')")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs for this module; its workers import assay from this tree."""
    with start_local_ray(ray, with_tests=False):
        yield


def _logs(tmp_path: Path) -> list[Path]:
    """A JSONL log with every kind of line (fast path, checked path, bad, blank, duplicate, a
    span, an ignored span) and a JSON array export (read by the driver)."""
    lines, _ = known_month(
        dt.datetime(2026, 10, 1, tzinfo=dt.UTC), 400, seed=3, no_hits=20, down=30, refusals=15
    )
    text = [json.dumps(x) for x in lines]
    text[17] = "{not json"
    text[60] = json.dumps({"ts": "2026-10-03T01:00:00Z"})  # no query
    text[99] = ""
    text[150] = text[149]  # a duplicate
    text[201] = json.dumps({**lines[201], "ts": "2026-10-09T10:00:00+02:00"})  # checked path
    text[260] = json.dumps(
        {
            "name": "retrieve",
            "attributes": {"openinference.span.kind": "RETRIEVER"},
        }
    )
    text[333] = json.dumps({**lines[333], "retrieved": [{"chunk_id": "", "score": 1.0}]})
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join(text) + "\n", encoding="utf-8")
    more, _ = known_month(
        dt.datetime(2026, 11, 1, tzinfo=dt.UTC), 30, seed=4, no_hits=3, down=2, refusals=1
    )
    b = tmp_path / "b.json"
    b.write_text(json.dumps(more, indent=1), encoding="utf-8")
    c = tmp_path / "c.jsonl"
    c.write_text("".join(json.dumps({**x, "session": "c"}) + "\n" for x in lines[:50]))
    return [a, b, c]


def _store(db: Path) -> list[tuple[Any, ...]]:
    with connect(db) as con:
        return con.execute("SELECT * FROM queries ORDER BY key").fetchall()


def _same(rep: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rep.items() if k not in ("seconds", "db")}


def test_ray_ingest_writes_the_local_store(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_mod, "BLOCK", 8192)  # many blocks, the last one short
    logs = _logs(tmp_path)
    assert len(list(ingest_mod._slices(0, logs[0]))) > 5
    local = ingest_logs(logs, tmp_path / "local.db", progress=False)
    staged: list[Path] = []
    real_commit = ingest_mod._commit

    def commit(con: Any, store: Path, staging: Path, *args: Any) -> dict[int, int]:
        staged.extend(staging.glob("month=*/*.parquet"))
        return real_commit(con, store, staging, *args)

    monkeypatch.setattr(ingest_mod, "_commit", commit)
    remote = ingest_logs(logs, tmp_path / "ray.db", progress=False, executor="ray")
    # the workers wrote Parquet files, one per block and month, that this process committed;
    # two worker processes (not this one) wrote them, side by side
    assert len(staged) > 5 and parquet_files(tmp_path / "ray.db")
    writers = {re.search(r"-p(\d+)-", p.name).group(1) for p in staged}  # type: ignore[union-attr]
    assert len(writers) == 2 and str(os.getpid()) not in writers
    assert _same(remote.to_dict()) == _same(local.to_dict())
    assert remote.total("bad") >= 3 and remote.total("duplicates") == 1
    assert f"{logs[0]}:18: not valid JSON" in {
        str(p)[: len(str(logs[0])) + 19] for p in remote.problems
    }
    rows = _store(tmp_path / "ray.db")
    assert rows == _store(tmp_path / "local.db")
    assert len(rows) == local.total("added") == 400 - 4 - 1 + 30 - 1 + 50
    # through the command line, a second ingest adds nothing; an unknown executor is refused
    runner = CliRunner()
    args = ["logs", "ingest", *map(str, logs), "-f", "json", "--executor"]
    again = runner.invoke(app, [*args, "ray", "--db", str(tmp_path / "ray.db")])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["added"] == 0 and _store(tmp_path / "ray.db") == rows
    bad = runner.invoke(app, [*args, "spark", "--db", str(tmp_path / "m.db")])
    assert bad.exit_code == 2 and "unknown executor" in bad.output
    assert not (tmp_path / "m.db").exists()
