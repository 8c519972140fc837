"""The SQL ingest path stores exactly what the record-by-record path stores.

Two references: the same ingest with every line sent through the record-by-record reader
(`_Stager.records_only`), whose store must equal the SQL path's row for row; and the
straightforward reading of the log -- every line through the standard library's `json.loads`
and `parse_log_line` / `parse_span` into a `LogRecord`, the first of each `LogRecord.key` kept --
whose records must be the stored rows' values. The generated log mixes what the SQL path takes
(plain lines) with everything it must hand back (spans, bare ids, integer scores and latencies,
scores printed in exponent form, time zones and fractions of a second, upper-case feedback,
extra fields, NaN, bad lines, duplicates, blank lines, non-ASCII text and escapes, times out of
range).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import assay.logs.ingest as ingest_mod
from assay.errors import DataError
from assay.executors import parse_executor
from assay.logs import ingest_logs
from assay.logs.model import LogRecord, _Bad, parse_log_line, parse_span
from assay.logs.store import connect
from tests.fakeray import Die, DyingRay

SPAN = {
    "name": "retrieve",
    "span_kind": "RETRIEVER",
    "context": {"trace_id": "t1", "span_id": "s1"},
    "start_time": "2026-10-03T14:05:11.000000+00:00",
    "end_time": "2026-10-03T14:05:11.250000+00:00",
    "attributes": {
        "input": {"value": "AVER sub rev growth y/y"},
        "session": {"id": "sess-9"},
        "retrieval": {
            "documents": [
                {"document": {"id": "aver#p3#c2", "score": 0.91}},
                {"document": {"id": "aver#p4#c1", "score": 0.5}},
            ]
        },
    },
}


def _line(rng: np.random.Generator, i: int) -> str:
    queries = [
        "AVER sub rev growth y/y FY24",
        "  latest qtr rev  ",
        "Société Générale NII 2025",
        "EIN of CO017",
        'risk factors "cyber"\tCO9',
        "capex vs opex Q2 FY24",
        "what was the RPO at last FYE",
    ]
    t = dt.datetime(2026, 9, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=int(rng.integers(0, 5e6)))
    rec: dict[str, Any] = {
        "ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "query": queries[int(rng.integers(len(queries)))],
        "retrieved": [
            {"chunk_id": f"d{int(rng.integers(50))}#c{j}", "score": round(float(s), 3) + 0.0001}
            for j, s in enumerate(sorted(rng.gamma(2.0, 2.0, int(rng.integers(0, 6))))[::-1])
        ],
        "answer": ["It was $12 million.", "I could not find this in the filings.", None][i % 3],
        "feedback": ["up", "down", None, None][i % 4],
        "latency_ms": round(float(rng.lognormal(6.5, 0.4)), 1),
        "session": f"s{i % 13}",
    }
    kind = i % 23
    if kind == 1:
        rec["retrieved"] = ["bare-id", {"chunk_id": "x", "score": 3}]
    elif kind == 2:
        rec["retrieved"] = [
            {"chunk_id": "tiny", "score": 1.5e-05},
            {"chunk_id": "big", "score": 2e16},
        ]
    elif kind == 3:
        rec["ts"] = "2026-10-03T16:05:11.250+02:00"
    elif kind == 4:
        rec["feedback"] = "UP"
    elif kind == 5:
        rec["latency_ms"] = 800
    elif kind == 6:
        rec["as_of"] = "2026-06-30"
        rec["citations"] = ["d1#c0", "Zürich#c1"]
        rec["system"] = "filings:lexical"
    elif kind == 7:
        rec["extra_field"] = {"nested": True}
    elif kind == 8:
        rec["retrieved"] = [{"chunk_id": "neg", "score": -2.5}, {"chunk_id": "zero", "score": 0.0}]
    elif kind == 9:
        rec["query"] = "EBITDA \u2014 Q3 \u00e9t\u00e9 \u2028 y/y"
        rec["retrieved"] = [{"chunk_id": 'caf\u00e9\n\u0001#c"2\\', "score": 7.25}]
    elif kind == 10:
        rec["ts"] = "2026-02-30T10:00:00Z"  # no such day: a bad line
    elif kind == 11:
        rec["ts"] = "2026-10-03T25:00:00Z"  # no such hour: a bad line
    elif kind == 12:
        rec["retrieved"] = [{"chunk_id": "", "score": 1.0}]  # an empty id: a bad line
    elif kind == 13:
        rec["latency_ms"] = -1.0  # a bad line
    elif kind == 14:
        rec["as_of"] = "20261003"
    elif kind == 22:
        rec["ts"] = [1e309, -1e20, 99999999999999999999, "9999-12-31T00:00:00Z"][i % 4]
    line = json.dumps(rec, ensure_ascii=kind % 2 == 0)
    if kind == 15:
        line = line.replace('"latency_ms": ', '"latency_ms": NaN, "x": ', 1)  # NaN: bad line
    elif kind == 16:
        line = json.dumps(
            {**SPAN, "attributes": {**SPAN["attributes"], "input": {"value": rec["query"]}}}
        )
    elif kind == 17:
        line = json.dumps({**SPAN, "span_kind": "LLM"})  # skipped, not bad
    elif kind == 18:
        line = "{not json"
    elif kind == 19:
        line = ""
    elif kind == 20:
        line = json.dumps({"query": "no ts"})
    elif kind == 21:
        line = json.dumps(dict(reversed(rec.items())), separators=(",", ":")) + "  "
    return line


def _reference(path: Path) -> tuple[dict[str, tuple[int, LogRecord]], list[int]]:
    """(first line and record of each key, the bad lines' numbers): the log read the plain
    way."""
    records: dict[str, tuple[int, LogRecord]] = {}
    bad: list[int] = []
    for lineno, raw in enumerate(path.read_bytes().split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            if "span_kind" in obj:
                if obj["span_kind"] != "RETRIEVER":
                    continue
                rec = parse_span(obj)
            else:
                rec = parse_log_line(obj)
        except (ValueError, _Bad):  # invalid JSON, or the parser's complaint about a field
            bad.append(lineno)
            continue
        records.setdefault(rec.key(), (lineno, rec))
    return records, bad


def _store(db: Path) -> list[tuple[Any, ...]]:
    with connect(db) as con:
        return con.execute("SELECT * FROM queries ORDER BY key").fetchall()


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(11)
    lines = [_line(rng, i) for i in range(1500)]
    lines += lines[100:400]  # every one of these again: duplicates
    path = tmp_path_factory.mktemp("fast") / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_sql_path_stores_what_the_record_path_stores(
    mixed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_mod, "BLOCK", 40_000)  # several blocks
    slow_calls = []
    real = ingest_mod._normalised

    def counting(*args: Any) -> tuple[Any, ...]:
        slow_calls.append(1)
        return real(*args)

    monkeypatch.setattr(ingest_mod, "_normalised", counting)
    rep = ingest_logs([mixed_log], tmp_path / "sql", progress=False)
    stored = _store(tmp_path / "sql")
    records = rep.total("added") + rep.total("duplicates")
    # the SQL path took most lines; the record path only the unusual ones
    assert 0 < len(slow_calls) < records - 500

    monkeypatch.setattr(ingest_mod._Stager, "records_only", True)
    ref = ingest_logs([mixed_log], tmp_path / "records", progress=False)
    assert _store(tmp_path / "records") == stored
    assert {k: v for k, v in ref.to_dict().items() if k not in ("seconds", "db")} == {
        k: v for k, v in rep.to_dict().items() if k not in ("seconds", "db")
    }

    expected, bad_lines = _reference(mixed_log)
    assert len(expected) > 700 and len(stored) == len(expected)
    assert rep.total("bad") == len(bad_lines) > 300
    assert rep.total("skipped_spans") > 50
    assert rep.total("duplicates") >= 150
    by_origin = {row[-1]: row for row in stored}  # origin: FILE:LINE
    cols = ["key", "ts", "ts_utc", "month", "week", "as_of", "query", "norm", "hits"]
    for lineno, rec in expected.values():
        row = dict(zip(cols, by_origin[f"{mixed_log.name}:{lineno}"], strict=False))
        assert row["ts_utc"] == rec.ts.replace(tzinfo=None)
        assert (row["query"], row["as_of"]) == (rec.query, rec.as_of.isoformat())
        assert [(h["chunk_id"], h["score"]) for h in json.loads(row["hits"])] == list(rec.retrieved)
    problems = [str(p) for p in rep.problems]
    assert any(p.startswith(f"{mixed_log}:19: not valid JSON") for p in problems)
    assert any(p.startswith(f"{mixed_log}:11: ts: ") for p in problems)
    # idempotent: the same log again adds nothing and changes nothing
    monkeypatch.setattr(ingest_mod._Stager, "records_only", False)
    again = ingest_logs([mixed_log], tmp_path / "sql", progress=False)
    assert again.total("added") == 0 and again.total("duplicates") == records
    assert _store(tmp_path / "sql") == stored


def test_a_time_out_of_range_is_a_counted_bad_line_not_an_abort(tmp_path: Path) -> None:
    good = '{"ts": "2026-10-01T10:00:00Z", "query": "AVER rev FY25"}'
    lines = [
        good,
        '{"ts": 1e309, "query": "q"}',
        '{"ts": -1e20, "query": "q"}',
        '{"ts": 99999999999999999999, "query": "q"}',
        '{"ts": "2150-01-01T00:00:00Z", "query": "q"}',
        '{"ts": "1969-12-31T23:59:59Z", "query": "q"}',
        '{"ts": 1791000000, "query": "epoch seconds"}',
    ]
    log = tmp_path / "l.jsonl"
    log.write_text("\n".join(lines) + "\n")
    rep = ingest_logs([log], tmp_path / "store", progress=False)
    assert rep.total("added") == 2 and rep.total("bad") == 5
    text = [str(p) for p in rep.problems]
    assert text[0] == f"{log}:2: ts: inf is not a finite time"
    assert text[1].startswith(f"{log}:3: ts: -1e+20 is outside 1970-01-01 .. 2100-01-01")
    assert text[2].startswith(f"{log}:4: ts: ") and "outside" in text[2]
    assert text[3].startswith(f"{log}:5: ts: '2150-01-01T00:00:00Z' is outside")
    assert text[4].startswith(f"{log}:6: ts: ") and "outside" in text[4]


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kinds=st.lists(st.integers(0, 22), min_size=1, max_size=60),
    repeats=st.lists(st.integers(0, 59), max_size=10),
    seed=st.integers(0, 2**16),
    block=st.sampled_from([64, 700, 4096, 1 << 20]),
)
@example(kinds=[19], repeats=[], seed=0, block=64)  # blank lines only: a file-level refusal
@example(kinds=[18, 18], repeats=[], seed=0, block=64)  # broken lines only: each one a bad line
def test_bulk_and_record_paths_agree_on_any_mix_of_lines(
    kinds: list[int],
    repeats: list[int],
    seed: int,
    block: int,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any mix of good, unusual and bad lines (1e309, -1e20, a 20-digit epoch, bad JSON, NaN,
    blank lines, spans, duplicates), cut into blocks of any size: the bulk path (DuckDB, the
    record reader only for the lines it hands back) and the record-by-record path store the same
    rows and report the same counts and the same FILE:LINE messages, and the bad lines are
    exactly those the plain reading refuses."""
    rng = np.random.default_rng(seed)
    lines = [_line(rng, k) for k in kinds]
    lines += [lines[r] for r in repeats if r < len(lines)]
    path = tmp_path_factory.mktemp("mix") / "mix.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(ingest_mod, "BLOCK", block)
    reports, stores = [], []
    for records_only in (False, True):
        monkeypatch.setattr(ingest_mod._Stager, "records_only", records_only)
        db = path.parent / f"store-{records_only}"
        try:
            rep = ingest_logs([path], db, progress=False)
        except DataError as exc:  # nothing readable: both paths refuse alike
            reports.append({"refused": [str(p) for p in exc.problems]})
            stores.append([])
            continue
        reports.append({k: v for k, v in rep.to_dict().items() if k not in ("seconds", "db")})
        stores.append(_store(db))
    assert reports[0] == reports[1]
    assert stores[0] == stores[1]
    expected, bad_lines = _reference(path)
    assert len(stores[0]) == len(expected)
    problems = reports[0].get("problems", reports[0].get("refused", []))
    head = f"{path}:"
    # FILE:LINE problems name the bad lines; a file-level one ("FILE: no log records in this
    # file", for a mix of blank lines and spans only) names none
    where = [p[len(head) :].split(":")[0] for p in problems if p.startswith(head)]
    named = sorted({int(w) for w in where if w.isdigit()})
    assert named == bad_lines


def test_local_workers_stage_side_by_side_into_the_same_store(
    mixed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--workers 2` with the local executor: two stagers on threads, blocks in flight at once;
    the store, the counts and the FILE:LINE messages are those of one stager."""
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (registers the commands)
    from assay.cli import app
    from assay.executors import parse_executor

    monkeypatch.setattr(ingest_mod, "BLOCK", 20_000)  # a dozen blocks
    one = ingest_logs(
        [mixed_log], tmp_path / "one", progress=False, executor=parse_executor("local", workers=1)
    )
    threads: set[str] = set()
    real = ingest_mod._Stager.__call__

    def call(self: Any, sl: Any) -> Any:
        import threading

        threads.add(threading.current_thread().name)
        return real(self, sl)

    monkeypatch.setattr(ingest_mod._Stager, "__call__", call)
    two = ingest_logs(
        [mixed_log], tmp_path / "two", progress=False, executor=parse_executor("local", workers=2)
    )
    assert len(threads) == 2 and all(t.startswith("assay-ingest") for t in threads)
    same = ("seconds", "db")
    assert {k: v for k, v in two.to_dict().items() if k not in same} == {
        k: v for k, v in one.to_dict().items() if k not in same
    }
    assert _store(tmp_path / "two") == _store(tmp_path / "one")
    out = CliRunner().invoke(
        app,
        ["logs", "ingest", str(mixed_log), "--db", str(tmp_path / "two"), "--workers", "2",
         "-f", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["added"] == 0


def test_the_default_is_a_stager_per_cpu_and_never_more_than_blocks(
    mixed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no --workers the local ingest stages on one thread per CPU it may use (at most
    `_MAX_DEFAULT_WORKERS`), each stager's DuckDB capped so that together they stay at 512 MB;
    a log of one block is staged by one stager; the store is the same either way."""
    made: list[str] = []
    real = ingest_mod._Stager.__init__

    def init(self: Any, *args: Any) -> None:
        made.append(args[4])  # the DuckDB memory cap
        real(self, *args)

    monkeypatch.setattr(ingest_mod._Stager, "__init__", init)
    monkeypatch.setattr(ingest_mod, "_default_workers", lambda: 4)
    monkeypatch.setattr(ingest_mod, "BLOCK", 20_000)
    ingest_logs([mixed_log], tmp_path / "four", progress=False)
    assert made == ["128MB"] * 4
    made.clear()
    monkeypatch.setattr(ingest_mod, "BLOCK", 1 << 24)  # the whole log in one block
    ingest_logs([mixed_log], tmp_path / "one", progress=False)
    assert made == ["256MB"]
    assert _store(tmp_path / "four") == _store(tmp_path / "one")


def test_stagers_on_threads_classify_each_query_once(
    mixed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stagers of one ingest share what they classified: a query one classified is not
    classified again by another (the stores are the same as without sharing)."""
    from assay.logs.classify import Classifier

    asked: list[str] = []
    real = Classifier.classify

    def classify(self: Any, query: str, **kw: Any) -> Any:
        asked.append(query)
        return real(self, query, **kw)

    monkeypatch.setattr(Classifier, "classify", classify)
    staging = tmp_path / "staging"
    staging.mkdir()
    memo: dict[str, tuple[Any, ...]] = {}
    a = ingest_mod._Stager(str(staging), [], None, 1, "128MB", memo)
    b = ingest_mod._Stager(str(staging), [], None, 1, "128MB", memo)
    (sl,) = list(ingest_mod._slices(0, mixed_log, 1 << 24, keep=True))
    try:
        a(sl)
        first = len(asked)
        assert first == len(set(asked)) > 5
        b(sl)
        assert len(asked) == first  # b found them all in the shared memo
        alone = ingest_mod._Stager(str(staging), [], None, 1, "128MB")
        alone(sl)
        assert len(asked) == 2 * first
        alone.close()
    finally:
        a.close()
        b.close()

    memos: list[int] = []
    real_init = ingest_mod._Stager.__init__

    def init(self: Any, *args: Any) -> None:
        real_init(self, *args)
        memos.append(id(self.memo))

    monkeypatch.setattr(ingest_mod._Stager, "__init__", init)
    monkeypatch.setattr(ingest_mod, "BLOCK", 20_000)
    ingest_logs(
        [mixed_log], tmp_path / "three", progress=False, executor=parse_executor("local", workers=3)
    )
    assert len(memos) == 3 and len(set(memos)) == 1


def test_default_workers_follow_the_cpus_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    for cpus, want in ((1, 1), (2, 2), (3, 3), (16, ingest_mod._MAX_DEFAULT_WORKERS)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cpus: set(range(n)))
        assert ingest_mod._default_workers() == want


def test_a_block_staged_again_after_its_worker_died_mid_write_is_stored_once(
    mixed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker dies while writing a block's second month (its first month's file already
    written, the second half-written); the block is staged again on another worker. The store,
    the counts and the messages are those of a local ingest: the half file is not read, and the
    rows written twice are stored once."""
    import re

    import assay.executors as ex_mod

    monkeypatch.setattr(ingest_mod, "BLOCK", 20_000)
    local = ingest_logs(
        [mixed_log], tmp_path / "local", progress=False, executor=parse_executor("local", workers=1)
    )
    slices = list(ingest_mod._slices(0, mixed_log))
    doomed = slices[3].offset
    left: list[Path] = []
    real_write = ingest_mod._Stager._write

    def write(self: Any, sl: Any, name: str) -> None:
        if sl.offset != doomed or left:
            return real_write(self, sl, name)
        con = self.con

        class Dying:
            copies = 0

            def execute(self, sql: str, *args: Any) -> Any:
                if sql.startswith("COPY"):
                    Dying.copies += 1
                    if Dying.copies == 2:  # the process ends while DuckDB writes this file
                        path = Path(re.findall(r"TO '([^']+)'", sql)[-1])
                        path.write_bytes(b"PAR1 and then nothing")
                        left.append(path)
                        raise Die
                return con.execute(sql, *args)

        self.con = Dying()
        try:
            real_write(self, sl, name)
        finally:
            self.con = con

    monkeypatch.setattr(ingest_mod._Stager, "_write", write)
    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: DyingRay(2))
    seen: list[list[str]] = []
    real_commit = ingest_mod._commit

    def commit(con: Any, store: Path, staging: Path, *args: Any) -> dict[int, int]:
        seen.append(sorted(p.name for p in staging.rglob("*") if p.is_file()))
        return real_commit(con, store, staging, *args)

    monkeypatch.setattr(ingest_mod, "_commit", commit)
    rep = ingest_logs([mixed_log], tmp_path / "ray", progress=False, executor="ray")
    assert len(left) == 1 and left[0].name in seen[0]  # the half file was there at the commit
    same = ("seconds", "db")
    assert {k: v for k, v in rep.to_dict().items() if k not in same} == {
        k: v for k, v in local.to_dict().items() if k not in same
    }
    assert _store(tmp_path / "ray") == _store(tmp_path / "local")
