from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import DataError
from assay.runs import (
    Run,
    load_run,
    read_trec_qrels,
    read_trec_run,
    write_run,
    write_trec_qrels,
    write_trec_run,
)


def test_jsonl_roundtrip_and_plain_id_lists(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": ["x", "y"]}\n'
        '{"id": "b", "retrieved": [{"chunk_id": "y", "score": 2.5}], "answer": "hi", "citations": ["y"], "as_of": "2024-01-01", "latency_ms": 4, "trace": {"t": 1}}\n'
    )
    r = load_run(p)
    assert (
        r.hits("a") == ["x", "y"]
        and r.row("b").answer == "hi"
        and r.row("b").extra == {"trace": {"t": 1}}
    )
    write_run(tmp_path / "r2.jsonl", r.rows)
    r2 = load_run(tmp_path / "r2.jsonl")
    assert [r2.row(i).to_dict() for i in r2.ids] == [r.row(i).to_dict() for i in r.ids]


def test_bad_lines_all_reported(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": ["x"]}\n{"retrieved": []}\n{"id": "c", "retrieved": [{"score": 1}]}\nnope\n{"id": "a", "retrieved": []}\n{"id": "e", "retrieved": [{"chunk_id": "x", "score": "high"}]}\n'
    )
    with pytest.raises(DataError) as ei:
        load_run(p)
    got = {(pr.line, pr.field) for pr in ei.value.problems}
    assert got == {(2, "id"), (3, "retrieved.0"), (4, None), (5, "id"), (6, "retrieved.0.score")}


def test_trec_roundtrip_and_sorting(tmp_path: Path) -> None:
    p = tmp_path / "r.trec"
    p.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 3.0 t\nq1 Q0 d3 3 3.0 t\nq2 Q0 d1 1 0.5 t\n")
    r = read_trec_run(p)
    assert r.hits("q1") == ["d2", "d3", "d1"]  # score desc, ties in file order
    write_trec_run(tmp_path / "o.trec", r)
    assert read_trec_run(tmp_path / "o.trec").hits("q1") == ["d2", "d3", "d1"]
    assert load_run(p).hits("q2") == ["d1"]  # auto-detected
    write_trec_qrels(tmp_path / "q.qrels", {"q1": {"d1": 1, "d2": 2}})
    assert read_trec_qrels(tmp_path / "q.qrels") == {"q1": {"d1": 1, "d2": 2}}
    (tmp_path / "bad.trec").write_text("q1 Q0 d1 1\n")
    with pytest.raises(DataError, match=":1"):
        read_trec_run(tmp_path / "bad.trec")


def test_from_rows_matches_load(tmp_path: Path) -> None:
    rows = [{"id": "a", "retrieved": [{"chunk_id": "x", "score": 1.0}]}]
    write_run(tmp_path / "r.jsonl", rows)
    assert load_run(tmp_path / "r.jsonl").hits("a") == Run.from_rows(rows).hits("a")


def test_trec_fast_and_exact_readers_agree(tmp_path: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    lines = []
    for q in rng.permutation(30):
        for d in rng.choice(50, size=10, replace=False):
            lines.append(f"q{q} Q0 doc-{d} 0 {rng.integers(0, 4) / 2:.1f} t\n")  # many ties
    p = tmp_path / "r.trec"
    p.write_text("".join(lines))
    a, b = read_trec_run(p, fast=True), read_trec_run(p, fast=False)
    assert a.ids == b.ids
    assert all(a.hits(q) == b.hits(q) for q in a.ids)
    assert np.array_equal(a.scores, b.scores)


def test_fast_and_checked_hit_paths_agree(tmp_path: Path) -> None:
    """Well-formed rows take the fast path; odd ones the checked path; the run is the same."""
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": [{"chunk_id": "x", "score": 1.0}, {"chunk_id": "y"}]}\n'
        '{"id": "b", "retrieved": ["y", {"chunk_id": "z", "score": 2}]}\n'
        '{"id": "c", "retrieved": []}\n'
    )
    r = load_run(p)
    assert r.hits("a") == ["x", "y"] and r.hits("b") == ["y", "z"] and r.hits("c") == []
    assert r.row("a").retrieved[1].score is None and r.row("b").retrieved[1].score == 2.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "retrieved": [{"chunk_id": "x", "score": true}]}\n')
    with pytest.raises(DataError, match=r"retrieved\.0\.score"):
        load_run(bad)
