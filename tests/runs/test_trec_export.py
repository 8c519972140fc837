"""TREC export agrees with assay on tied runs (pytrec_eval, ranx); qrels from anchors need the
chunk table and are never written empty; NaN/Infinity scores are FILE:LINE: field errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.corpus import load_chunks
from assay.dataset import load_dataset
from assay.errors import DataError
from assay.runs import (
    Run,
    load_run,
    qrels_from_dataset,
    read_trec_qrels,
    read_trec_run,
    write_trec_run,
)
from assay.score import score_retrieval


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _tied_run(n: int = 60, seed: int = 11) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Entries with one gold chunk and runs whose scores tie heavily (and are not sorted)."""
    rng = np.random.default_rng(seed)
    entries, rows = [], []
    for i in range(n):
        docs = [f"d{j:02d}" for j in rng.permutation(20)[:8]]
        gold = docs[int(rng.integers(0, 8))] if rng.random() < 0.9 else "d99"
        entries.append({"id": f"q{i}", "query": "q", "category": "c", "evidence_paths": [[[gold]]]})
        scores = rng.choice([1.0, 2.0], size=8)  # ties everywhere, order is the system's own
        rows.append(
            {
                "id": f"q{i}",
                "retrieved": [
                    {"chunk_id": d, "score": float(s)} for d, s in zip(docs, scores, strict=True)
                ],
            }
        )
    return entries, rows


def _trec_dict(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        out.setdefault(qid, {})[doc] = float(score)
    return out


def test_exported_tied_runs_score_the_same_in_pytrec_eval(tmp_path: Path) -> None:
    entries, rows = _tied_run()
    ds = load_dataset(_jsonl(tmp_path / "g.jsonl", entries))
    run = load_run(_jsonl(tmp_path / "r.jsonl", rows))
    ours = score_retrieval(ds, run, k=5)
    per_entry = {r["id"]: r for r in ours.rows}
    qrels = qrels_from_dataset(ds).qrels
    write_trec_run(tmp_path / "r.trec", run)
    trec = _trec_dict(tmp_path / "r.trec")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut_5"}).evaluate(trec)
    for qid in qrels:
        assert got[qid]["recip_rank"] == pytest.approx(per_entry[qid]["mrr"], abs=1e-12), qid
        assert got[qid]["ndcg_cut_5"] == pytest.approx(per_entry[qid]["ndcg@5"], abs=1e-12), qid
    # the system's own tied scores make trec_eval re-rank (the defect this guards against)
    write_trec_run(tmp_path / "sys.trec", run, scores="system")
    raw = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        _trec_dict(tmp_path / "sys.trec")
    )
    assert any(
        abs(raw[q]["recip_rank"] - per_entry[q]["mrr"]) > 1e-9 for q in qrels
    )  # so the default matters
    # and reading the export back gives assay's ranking
    again = read_trec_run(tmp_path / "r.trec")
    assert all(again.hits(rid) == run.hits(rid) for rid in run.ids)


@pytest.mark.slow  # ranx compiles its metrics with numba on first use
# numba warns about its own uint64 -> int64 cast while compiling ranx's metrics the first time on
# a fresh machine (a warm numba cache compiles nothing and says nothing): the oracle's warning,
# not assay's
@pytest.mark.filterwarnings("ignore:.*unsafe cast from uint64 to int64")  # numba may colour it
def test_exported_tied_runs_score_the_same_in_ranx(tmp_path: Path) -> None:
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate

    entries, rows = _tied_run()
    ds = load_dataset(_jsonl(tmp_path / "g.jsonl", entries))
    run = load_run(_jsonl(tmp_path / "r.jsonl", rows))
    ours = score_retrieval(ds, run, k=5)
    write_trec_run(tmp_path / "r.trec", run)
    trec = _trec_dict(tmp_path / "r.trec")
    qrels = qrels_from_dataset(ds).qrels
    got = evaluate(RanxQrels(qrels), RanxRun(trec), "mrr", make_comparable=True)
    assert got == pytest.approx(ours.to_dict()["overall"]["mrr"], abs=1e-6)


def test_cli_export_preserves_rank_order(tmp_path: Path) -> None:
    ds = _jsonl(
        tmp_path / "g.jsonl",
        [{"id": "q1", "query": "q", "category": "c", "evidence_paths": [[["a"]]]}],
    )
    run = _jsonl(
        tmp_path / "r.jsonl",
        [
            {
                "id": "q1",
                "retrieved": [{"chunk_id": "a", "score": 1.0}, {"chunk_id": "b", "score": 1.0}],
            }
        ],
    )
    res = CliRunner().invoke(
        app,
        [
            *("trec", "export", str(ds), "--run", str(run)),
            *("--run-out", str(tmp_path / "r.trec"), "--qrels", str(tmp_path / "q.qrels")),
        ],
    )
    assert res.exit_code == 0, res.output
    trec = _trec_dict(tmp_path / "r.trec")
    qrels = read_trec_qrels(tmp_path / "q.qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(trec)
    assert got["q1"]["recip_rank"] == 1.0  # assay ranks a first; trec_eval must too


ANCHORED = [
    {
        "id": "q1",
        "query": "revenue",
        "category": "c",
        "evidence_paths": [[[{"doc": "d1", "page": 1, "quote": "revenue grew to 10"}]]],
    },
    {"id": "q2", "query": "cash", "category": "c", "evidence_paths": [[["d1/1/1", "d1/1/0"]]]},
    {"id": "u", "query": "nothing", "category": "c", "answerable": False},
]
CHUNKS = [
    {"chunk_id": "d1/1/0", "doc_id": "d1", "page": 1, "text": "Total revenue grew to 10 million."},
    {"chunk_id": "d1/1/1", "doc_id": "d1", "page": 1, "text": "Cash was 4 million."},
]


def test_anchor_gold_needs_chunks_and_writes_nothing_without(tmp_path: Path) -> None:
    ds = _jsonl(tmp_path / "g.jsonl", ANCHORED)
    qrels = tmp_path / "q.qrels"
    res = CliRunner().invoke(app, ["trec", "export", str(ds), "--qrels", str(qrels)])
    assert res.exit_code == 2, res.output
    assert f"{ds}:1: evidence_paths.0.0.0" in res.output and "--chunks" in res.output
    assert not qrels.exists()
    chunks = _jsonl(tmp_path / "c.jsonl", CHUNKS)
    res = CliRunner().invoke(
        app, ["trec", "export", str(ds), "--qrels", str(qrels), "--chunks", str(chunks)]
    )
    assert res.exit_code == 0, res.output
    assert read_trec_qrels(qrels) == {"q1": {"d1/1/0": 1}, "q2": {"d1/1/1": 1, "d1/1/0": 1}}
    assert "1 entries flattened" in res.output


def test_qrels_are_never_written_empty(tmp_path: Path) -> None:
    ds = _jsonl(tmp_path / "g.jsonl", [ANCHORED[2]])
    qrels = tmp_path / "q.qrels"
    res = CliRunner().invoke(app, ["trec", "export", str(ds), "--qrels", str(qrels)])
    assert res.exit_code == 2 and "qrels would be empty" in res.output, res.output
    assert not qrels.exists()


def test_gold_that_points_at_nothing_is_refused(tmp_path: Path) -> None:
    rows = [
        {**ANCHORED[0], "evidence_paths": [[[{"doc": "d1", "page": 1, "quote": "absent text"}]]]},
        {**ANCHORED[1], "evidence_paths": [[["ghost"]]]},
    ]
    ds = load_dataset(_jsonl(tmp_path / "g.jsonl", rows))
    with pytest.raises(DataError) as err:
        qrels_from_dataset(ds, chunks=load_chunks(_jsonl(tmp_path / "c.jsonl", CHUNKS)))
    where = {(p.line, p.field) for p in err.value.problems}
    assert where == {(1, "evidence_paths.0.0.0"), (2, "evidence_paths.0.0.0")}


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_scores_in_jsonl_runs_are_line_field_errors(tmp_path: Path, token: str) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": [{"chunk_id": "x", "score": 1.5}]}\n'
        f'{{"id": "b", "retrieved": [{{"chunk_id": "x", "score": 2}}, {{"chunk_id": "y", "score": {token}}}]}}\n'
    )
    with pytest.raises(DataError) as err:
        load_run(p)
    [problem] = err.value.problems
    assert (problem.line, problem.field) == (2, "retrieved.1.score")
    assert str(problem).startswith(f"{p}:2: retrieved.1.score: must be a finite number")


@pytest.mark.parametrize("fast", [True, False])
def test_non_finite_scores_in_trec_runs_are_line_errors(tmp_path: Path, fast: bool) -> None:
    p = tmp_path / "r.trec"
    p.write_text("q1 Q0 a 1 2.0 t\n\nq1 Q0 b 2 nan t\nq2 Q0 a 1 inf t\n")
    with pytest.raises(DataError) as err:
        read_trec_run(p, fast=fast)
    assert [(x.line, x.field) for x in err.value.problems] == [(3, "score"), (4, "score")]
    res = CliRunner().invoke(app, ["trec", "import", str(p), "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and f"{p}:3: score: must be a finite number" in res.output
    assert not (tmp_path / "o.jsonl").exists()


def test_ids_with_whitespace_cannot_be_written_as_trec(tmp_path: Path) -> None:
    run = Run.from_rows([{"id": "q 1", "retrieved": ["a"]}])
    with pytest.raises(DataError, match="whitespace"):
        write_trec_run(tmp_path / "r.trec", run)
    assert not (tmp_path / "r.trec").exists()
