"""A log store survives a killed ingest, and one bad line never aborts an ingest.

Attacks: a SIGKILL early in the first ingest left a folder every later ingest and report called
"not an assay log store" until it was deleted by hand; a query with a lone surrogate, a line of
200,000 hits and a 100 MB line each ended `logs ingest` in "internal error", nothing ingested."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import DataError
from assay.logs import ingest_logs
from assay.logs.ingest import MAX_LINE_BYTES
from assay.logs.store import STAGING, alive, connect, sweep_staging

from .conftest import write_jsonl

GOOD = {
    "ts": "2026-10-03T14:05:11Z",
    "query": "What was 3M revenue in 2018?",
    "retrieved": [{"chunk_id": "3M_2018_10K/60/2~1f0c9a2e", "score": 0.5}],
    "answer": "It was $32.8 billion.",
}


def _log(tmp_path: Path, n: int = 30, name: str = "log.jsonl") -> Path:
    return write_jsonl(tmp_path / name, [{**GOOD, "query": f"q{i} revenue"} for i in range(n)])


def _count(db: Path) -> int:
    with connect(db) as con:
        return int(con.execute("SELECT COUNT(*) FROM queries").fetchone()[0])


def _killed_ingest(log: Path, db: Path, at: str) -> None:
    """Run an ingest in a child process (forked: assay is imported already) that SIGKILLs
    itself when it reaches `at` (a function of assay.logs.ingest): before its first commit
    (`_commit`) or between moving the staged files into the store and writing store.json
    (`_record`). Nothing of the ingest's own clean-up runs, as after a real kill."""
    import assay.logs.ingest as ingest_mod

    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            setattr(ingest_mod, at, lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
            ingest_logs([log], db, progress=False)
        finally:
            os._exit(3)  # not killed: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


def test_a_first_ingest_killed_before_it_committed_is_repaired_by_the_next(
    tmp_path: Path,
) -> None:
    log, db = _log(tmp_path), tmp_path / "logs"
    _killed_ingest(log, db, "_commit")
    left = sorted(p.name for p in db.iterdir())
    assert "store.json" not in left and any(n.startswith(STAGING) for n in left)
    # the report names what happened and what to do
    res = CliRunner().invoke(app, ["logs", "report", str(db)])
    assert res.exit_code == 2
    assert (
        "no store.json" in res.output
        and "`assay logs ingest` into it again repairs it" in res.output
    )
    rep = ingest_logs([log], db, progress=False)
    assert rep.total("added") == 30 and _count(db) == 30
    assert rep.repaired == [n for n in left if n.startswith(STAGING)]
    assert not list(db.glob(STAGING + "*"))
    assert "repaired: removed 1 staging folder" in rep.to_markdown()


def test_a_first_ingest_killed_mid_commit_keeps_what_it_stored(tmp_path: Path) -> None:
    log, db = _log(tmp_path), tmp_path / "logs"
    _killed_ingest(log, db, "_record")
    assert not (db / "store.json").exists() and list((db / "queries").glob("*/*.parquet"))
    rep = ingest_logs([log], db, progress=False)
    assert (rep.total("added"), rep.total("duplicates"), rep.total_in_store) == (0, 30, 30)
    assert json.loads((db / "store.json").read_text())["ingests"][-1]["duplicates"] == 30


def test_a_folder_holding_other_files_is_named_not_repaired(tmp_path: Path) -> None:
    db = tmp_path / "logs"
    (db / f"{STAGING}x").mkdir(parents=True)
    (db / "notes.txt").write_text("mine")
    (db / "queries" / "month=2026-10").mkdir(parents=True)
    (db / "queries" / "month=2026-10" / "keep.csv").write_text("a,b\n")
    with pytest.raises(DataError) as err:
        ingest_logs([_log(tmp_path)], db, progress=False)
    msg = str(err.value)
    assert "no store.json" in msg and "notes.txt" in msg and "month=2026-10/keep.csv" in msg
    assert sorted(p.name for p in db.iterdir()) == [f"{STAGING}x", "notes.txt", "queries"]


def test_a_running_ingest_keeps_its_staging_folder(tmp_path: Path) -> None:
    db = tmp_path / "logs"
    running, dead = db / f"{STAGING}running", db / f"{STAGING}dead"
    running.mkdir(parents=True)
    dead.mkdir()
    (dead / ".alive").touch()  # its process is gone: nobody holds the lock
    with alive(running):
        assert sweep_staging(db) == [dead.name]
    assert running.is_dir() and not dead.exists()


@pytest.mark.parametrize("bad", ["surrogate", "hits", "huge"])
def test_one_bad_line_is_skipped_and_counted(tmp_path: Path, bad: str) -> None:
    lines = [json.dumps({**GOOD, "query": f"q{i} revenue"}) for i in range(20)]
    if bad == "surrogate":
        worst = json.dumps({**GOOD, "query": "X"}).replace('"X"', '"bad \\ud800 query"')
        want = "query: holds a lone surrogate (\\ud800 at character 5)"
    elif bad == "hits":
        hits = [{"chunk_id": f"c/{i}/1", "score": i / 1e6} for i in range(200_000)]
        worst = json.dumps({**GOOD, "query": "many", "retrieved": hits})
        want = f"over the limit of {MAX_LINE_BYTES:,} (max_line_bytes): skipped unread"
    else:
        worst = json.dumps({**GOOD, "query": "huge", "answer": "x" * (MAX_LINE_BYTES + 1)})
        want = f"a line of {len(worst):,} bytes, over the limit"
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines[:10], worst, *lines[10:]]) + "\n")
    rep = ingest_logs([path], tmp_path / "logs", progress=False)
    assert (rep.total("lines"), rep.total("added"), rep.total("bad")) == (21, 20, 1)
    (problem,) = rep.problems
    assert (problem.file, problem.line) == (str(path), 11) and want in str(problem), problem
    assert _count(tmp_path / "logs") == 20


def test_the_line_limit_is_an_option(tmp_path: Path) -> None:
    hits = [{"chunk_id": f"c/{i}/1", "score": i / 1e6} for i in range(5_000)]
    path = write_jsonl(tmp_path / "log.jsonl", [GOOD, {**GOOD, "query": "many", "retrieved": hits}])
    rep = ingest_logs([path], tmp_path / "a", progress=False, max_line_bytes=10 << 20)
    assert rep.total("added") == 2 and rep.total("bad") == 0
    with connect(tmp_path / "a") as con:
        assert con.execute("SELECT max(n_hits) FROM queries").fetchone()[0] == 5_000
    res = CliRunner().invoke(
        app,
        ["logs", "ingest", str(path), "--db", str(tmp_path / "c"), "--max-line-bytes", "1000",
         "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert (got["added"], got["bad"]) == (1, 1)
    assert "over the limit of 1,000 (max_line_bytes)" in got["problems"][0]


def test_a_line_under_the_limit_but_over_duckdbs_cap_is_one_bad_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the limit raised, a line DuckDB cannot hold under its memory cap (here 8 MB) goes
    record by record, and a record that still does not fit is one bad line, not an abort."""
    import assay.logs.ingest as ingest_mod

    monkeypatch.setattr(ingest_mod, "_stager_memory", lambda _workers: "8MB")
    hits = [{"chunk_id": f"c/{i}/1", "score": i / 1e6} for i in range(20_000)]
    path = write_jsonl(tmp_path / "log.jsonl", [GOOD, {**GOOD, "query": "many", "retrieved": hits}])
    rep = ingest_logs([path], tmp_path / "db", progress=False, max_line_bytes=100 << 20)
    assert (rep.total("added"), rep.total("bad")) == (1, 1)
    (problem,) = rep.problems
    assert problem.line == 2 and "too large for the ingest's memory cap" in problem.message


@given(
    lengths=st.lists(st.integers(0, 60), min_size=1, max_size=40),
    cap=st.integers(1, 30),
    end=st.booleans(),
)
def test_every_line_over_the_limit_is_found(lengths: list[int], cap: int, end: bool) -> None:
    """The block check (a newline in every window first, then line by line) finds exactly the
    lines longer than the limit, wherever they are."""
    from types import SimpleNamespace

    assume(end or lengths[-1] > 0)  # else the last "line" is the newline ending the one before

    from assay.logs.ingest import _Slice, _Staged, _Stager

    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if end else b"")
    out = _Staged(0)
    lines = _Stager._too_long(
        SimpleNamespace(max_line=cap),  # type: ignore[arg-type]
        data,
        _Slice(0, "log.jsonl", 0, len(data), 1),
        out,
    )
    want = [i for i, n in enumerate(lengths) if n > cap]
    assert [p.line for p in out.problems] == [i + 1 for i in want]
    assert out.bad == len(want)
    if want:
        assert [len(x) for x in lines] == [0 if n > cap else n for n in lengths]
    else:
        assert lines == []
