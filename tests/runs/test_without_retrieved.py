"""Run rows without `retrieved`: what a text-to-SQL system writes (`{"id", "sql"}`).

Every reader (the checked JSONL reader, the pyarrow fast path, Parquet, rows in memory) reads
such a row as one with no hits, kept apart from a row that retrieved nothing (``[]``) in
`Run.unretrieved`, with its line; every writer keeps the absence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import DataError
from assay.runs import Run, RunRow, _fast, load_run, write_run

SQL_ROWS = [
    {"id": "q1", "sql": "SELECT 1"},
    {"id": "q2", "retrieved": [{"chunk_id": "c1", "score": 2.0}], "answer": "x"},
    {"id": "q3", "sql": None, "answer": "I cannot answer.", "latency_ms": 3.5},
    {"id": "q4", "retrieved": None, "sql": "SELECT 2", "error": "timeout"},
    {"id": "q5", "retrieved": [], "sql": "SELECT 3"},
]


def _write(path: Path, rows: list[dict[str, Any]], pad: int = 0) -> Path:
    """JSONL rows; ``pad`` pads every row with an unused field to pass the fast path's floor."""
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({**r, "note": "x" * pad} if pad else r) + "\n")
    return path


def _check(run: Run) -> None:
    assert run.ids == ["q1", "q2", "q3", "q4", "q5"]
    assert run.unretrieved == {"q1": 1, "q3": 3, "q4": 4}
    assert [run.hits(i) for i in run.ids] == [[], ["c1"], [], [], []]
    assert run.row("q1").retrieved is None and run.row("q5").retrieved == []
    assert run.row("q1").extra["sql"] == "SELECT 1"
    assert run.row("q3").latency_ms == 3.5 and run.row("q3").answer == "I cannot answer."
    assert run.row("q4").extra == {"sql": "SELECT 2", "error": "timeout"}
    assert "retrieved" not in run.row("q1").to_dict()
    assert run.row("q5").to_dict()["retrieved"] == []


@pytest.mark.parametrize("fast", [True, False])
def test_rows_without_retrieved_load(tmp_path: Path, fast: bool) -> None:
    _check(load_run(_write(tmp_path / "run.jsonl", SQL_ROWS), fast=fast))


def test_the_fast_path_reads_them_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(_fast, "_MIN_BYTES", 0)
    p = _write(tmp_path / "run.jsonl", SQL_ROWS)
    cols = _fast.read_jsonl_run(p)
    assert cols is not None  # not handed back to the checked reader
    assert cols["unretrieved"] == {"q1": 1, "q3": 3, "q4": 4}
    fast, checked = load_run(p), load_run(p, fast=False)
    _check(fast)
    assert fast.details == checked.details and fast.offsets.tolist() == checked.offsets.tolist()
    assert fast.identity == checked.identity


def test_a_large_sql_run_takes_the_fast_path(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    rows = [{"id": f"q{i}", "sql": f"SELECT {i} FROM t WHERE x = 'abc'"} for i in range(8000)]
    p = _write(tmp_path / "run.jsonl", rows)
    assert p.stat().st_size > _fast._MIN_BYTES
    assert _fast.read_jsonl_run(p) is not None
    run = load_run(p)
    assert len(run) == 8000 and len(run.unretrieved) == 8000 and run.unretrieved["q7999"] == 8000


@pytest.mark.parametrize("fast", [True, False])
def test_retrieved_that_is_not_a_list_is_still_refused(
    tmp_path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fast, "_MIN_BYTES", 0)
    p = tmp_path / "run.jsonl"
    p.write_text('{"id": "a", "sql": "SELECT 1"}\n{"id": "b", "retrieved": "c1"}\n')
    with pytest.raises(DataError) as ei:
        load_run(p, fast=fast)
    assert [(x.file, x.line, x.field) for x in ei.value.problems] == [(str(p), 2, "retrieved")]
    assert "list of hits" in str(ei.value)


def test_rows_in_memory_and_written_back_keep_the_absence(tmp_path: Path) -> None:
    run = Run.from_rows([*SQL_ROWS[:1], RunRow("q2", None, answer="a"), RunRow("q3", [])])
    assert run.unretrieved == {"q1": None, "q2": None}
    assert run.row("q2").retrieved is None and run.row("q3").retrieved == []
    write_run(tmp_path / "out.jsonl", run)
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines == [
        {"id": "q1", "sql": "SELECT 1"},
        {"id": "q2", "answer": "a"},
        {"id": "q3", "retrieved": []},
    ]
    back = load_run(tmp_path / "out.jsonl")
    assert back.unretrieved == {"q1": 1, "q2": 2}
    assert back.identity == run.identity


def test_parquet_keeps_the_absence(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    run = load_run(_write(tmp_path / "run.jsonl", SQL_ROWS))
    write_run(tmp_path / "run.parquet", run)
    back = load_run(tmp_path / "run.parquet")
    _check(back)
    assert back.details == run.details and back.identity == run.identity
    write_run(tmp_path / "again.jsonl", back)
    assert (tmp_path / "again.jsonl").read_text() == "".join(
        json.dumps(r.to_dict()) + "\n" for r in run.rows
    )


def test_parquet_null_lists_over_child_values_hold_no_hits(tmp_path: Path) -> None:
    """Another writer's null list may lie over hits (Arrow allows it): they are not the row's."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    hit = pa.struct([("chunk_id", pa.string()), ("score", pa.float64())])
    hits = pa.array([{"chunk_id": c, "score": 1.0} for c in ("x", "y", "z")], type=hit)
    ret = pa.ListArray.from_arrays(
        pa.array([0, 1, 2, 3], pa.int32()), hits, mask=pa.array([False, True, False])
    )
    pq.write_table(pa.table({"id": ["a", "b", "c"], "retrieved": ret}), tmp_path / "r.parquet")
    run = load_run(tmp_path / "r.parquet")
    assert [run.hits(i) for i in run.ids] == [["x"], [], ["z"]]
    assert run.unretrieved == {"b": 2}


def test_a_row_without_retrieved_is_another_run_than_one_with_none() -> None:
    """The identity (what the ledger keys runs by) tells `[]` from no `retrieved`."""
    empty = Run.from_rows([{"id": "q1", "retrieved": [], "sql": "SELECT 1"}])
    absent = Run.from_rows([{"id": "q1", "sql": "SELECT 1"}])
    assert empty.identity != absent.identity


def test_retrieval_problems_name_file_line_and_field(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path / "run.jsonl", SQL_ROWS))
    got = run.retrieval_problems(["q2", "q3", "q5", "absent"])
    assert [(p.file, p.line, p.field) for p in got] == [
        (str(tmp_path / "run.jsonl"), 3, "retrieved")
    ]
    assert "q3" in got[0].message
    # several, in file order whatever the order of the entries asked about
    assert [p.line for p in run.retrieval_problems(["q4", "q3", "q1", "q3"])] == [1, 3, 4]
    assert Run.from_rows([{"id": "q1", "retrieved": []}]).retrieval_problems(["q1"]) == []
