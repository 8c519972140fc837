"""Graded relevance: every alternative keeps its own grade, grade 0 satisfies nothing, and nDCG
credits a piece with the grade of the alternative actually retrieved."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry
from assay.runs import Run
from assay.runs.qrels import qrels_from_dataset
from assay.score import score_retrieval

from ._util import E, R

GRADED = {"top": 3, "low": 1, "zero": 0}  # one piece, three interchangeable chunks


def _one_piece(cat: str = "c") -> Entry:
    return E("q", [[["top", "low", "zero"]]], cat, metadata={"relevance": GRADED})


@pytest.mark.parametrize(
    ("retrieved", "ndcg", "satisfied"),
    [
        ("top", 1 / math.log2(3), True),
        ("low", (1 / math.log2(3)) / 3, True),  # its own grade 1, not the piece's best 3
        ("zero", 0.0, False),  # not relevant: satisfies nothing
    ],
)
def test_each_alternative_earns_its_own_grade(retrieved: str, ndcg: float, satisfied: bool) -> None:
    row = score_retrieval(
        [_one_piece()],
        R({"q": ["other", retrieved]}),
        metrics="ndcg@2,recall@2,complete@2,hit@2,mrr,precision@2",
    ).rows[0]
    assert row["ndcg@2"] == pytest.approx(ndcg, abs=1e-12)
    on = 1.0 if satisfied else 0.0
    assert (row["recall@2"], row["complete@2"], row["hit@2"]) == (on, on, on)
    assert row["mrr"] == (0.5 if satisfied else 0.0)
    assert row["precision@2"] == (0.5 if satisfied else 0.0)


def test_anchor_grades_are_their_own_too() -> None:
    table = ChunkTable(
        [
            Chunk("a", "d", "alpha beta gamma", [1]),
            Chunk("b", "d", "delta epsilon zeta", [1]),
            Chunk("c", "d", "eta theta iota", [1]),
        ]
    )
    anchor = {"doc": "d", "page": 1}
    e = E(
        "q",
        [
            [
                [
                    anchor | {"quote": "alpha beta gamma", "relevance": 3},
                    anchor | {"quote": "delta epsilon zeta", "relevance": 2},
                    anchor | {"quote": "eta theta iota", "relevance": 0},
                ]
            ]
        ],
    )
    rows = {
        hit: score_retrieval([e], R({"q": [hit]}), chunks=table, metrics="ndcg@1,complete@1").rows[
            0
        ]
        for hit in "abc"
    }
    assert [rows[h]["ndcg@1"] for h in "abc"] == [1.0, pytest.approx(2 / 3), 0.0]
    assert [rows[h]["complete@1"] for h in "abc"] == [1.0, 1.0, 0.0]
    # the qrels export writes each alternative's own grade, the grade-0 one as judged irrelevant
    assert qrels_from_dataset([e], chunks=table).qrels == {"q": {"a": 3, "b": 2, "c": 0}}


def test_a_piece_graded_all_zero_is_refused_naming_the_field(tmp_path: Any) -> None:
    import json

    from assay.dataset import load_dataset
    from assay.errors import DataError

    path = tmp_path / "gold.jsonl"
    good = {"id": "a", "query": "q", "category": "c", "evidence_paths": [[["x"]]]}
    bad = good | {"id": "b", "evidence_paths": [[["x"], ["y", "z"]]]}
    bad["metadata"] = {"relevance": {"y": 0, "z": 0}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError) as ei:
        load_dataset(path)
    text = str(ei.value)
    assert f"{path}:2" in text and "metadata" in text and "piece 1" in text and "graded 0" in text
    with pytest.raises(ValueError, match="graded 0"):  # anchors alike, without metadata
        E("c", [[[{"doc": "d", "page": 1, "quote": "x", "relevance": 0}]]])
    with pytest.raises(ValueError, match="not an integer >= 0"):
        E("d", [[["x"]]], metadata={"relevance": {"x": "high"}})
    # a grade-0 alternative beside a relevant one is fine: it is simply not relevant
    assert E("e", [[["x", "y"]]], metadata={"relevance": {"y": 0}}).grade("y") == 0


# ---------------------------------------------------------------- against pytrec_eval


def _random_graded(
    rng: np.random.Generator, n: int
) -> tuple[list[Entry], Run, dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Single-path entries (a third of them single-piece) whose pieces each have one chunk graded
    1-3 and up to three graded 0, distinct across the entry: there assay's definitions and
    trec_eval's coincide. A tie-free run of 30 chunks per entry drawn from a small vocabulary,
    so grade-0 and graded chunks are both retrieved often."""
    entries: list[Entry] = []
    qrels: dict[str, dict[str, int]] = {}
    rows: list[dict[str, Any]] = []
    trec_run: dict[str, dict[str, float]] = {}
    for q in range(n):
        n_pieces = 1 if q % 3 == 0 else int(rng.integers(2, 6))
        n_zero = rng.integers(0, 4, size=n_pieces)
        picked = rng.choice(40, size=int(n_pieces + n_zero.sum()), replace=False)
        docs = [f"d{j}" for j in picked]
        grades: dict[str, int] = {}
        pieces: list[list[str]] = []
        at = 0
        for p in range(n_pieces):
            piece = docs[at : at + 1 + int(n_zero[p])]
            at += len(piece)
            grades[piece[0]] = int(rng.integers(1, 4))
            grades.update(dict.fromkeys(piece[1:], 0))
            pieces.append([str(x) for x in rng.permutation(piece)])
        entries.append(E(f"q{q}", [pieces], metadata={"relevance": grades}))
        qrels[f"q{q}"] = grades
        ret = [f"d{j}" for j in rng.choice(40, size=30, replace=False)]
        rows.append({"id": f"q{q}", "retrieved": ret})
        trec_run[f"q{q}"] = {d: float(30 - i) for i, d in enumerate(ret)}
    return entries, Run.from_rows(rows), qrels, trec_run


def test_graded_metrics_agree_with_pytrec_eval_on_random_graded_qrels() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = _random_graded(np.random.default_rng(37), 400)
    # the export writes what trec_eval is given here: every alternative with its own grade
    assert qrels_from_dataset(entries).qrels == qrels
    ks = (1, 3, 5, 10, 20)
    names = [f"{m}@{k}" for k in ks for m in ("ndcg", "recall", "complete", "hit", "precision")]
    ours = score_retrieval(entries, run, metrics=[*names, "mrr"])
    cut = ",".join(map(str, ks))
    measures = {f"ndcg_cut.{cut}", f"recall.{cut}", f"success.{cut}", f"P.{cut}", "recip_rank"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(trec_run)

    def want(measure: str) -> np.ndarray:
        return np.array([ref[eid][measure] for eid in ours.ids])

    for k in ks:
        ndcg = want(f"ndcg_cut_{k}")
        np.testing.assert_allclose(ours.per_entry[f"ndcg@{k}"], ndcg, rtol=0, atol=1e-12)
        recall = want(f"recall_{k}")
        np.testing.assert_allclose(ours.per_entry[f"recall@{k}"], recall, rtol=0, atol=1e-12)
        assert np.array_equal(ours.per_entry[f"complete@{k}"], (recall >= 1.0).astype(float))
        assert np.array_equal(ours.per_entry[f"hit@{k}"], want(f"success_{k}"))
        np.testing.assert_allclose(ours.per_entry[f"precision@{k}"], want(f"P_{k}"), atol=1e-12)
    # the data tell the grades apart: nDCG@20 is neither 0/1 nor a function of the rank alone
    assert len(np.unique(np.round(ours.per_entry["ndcg@20"], 9))) > 100
    np.testing.assert_allclose(ours.per_entry["mrr"], want("recip_rank"), rtol=0, atol=1e-12)
    # grade-0 chunks are retrieved, and often ahead of every relevant one
    first_judged = [next((d for d in trec_run[eid] if d in qrels[eid]), None) for eid in ours.ids]
    zero_first = sum(
        d is not None and qrels[eid][d] == 0 for eid, d in zip(ours.ids, first_judged, strict=True)
    )
    assert zero_first > 50


# ---------------------------------------------------------------- multi-piece, several alternatives

chunk = st.sampled_from([f"c{i}" for i in range(10)])
graded_piece = st.lists(st.tuples(chunk, st.integers(0, 3)), min_size=1, max_size=3)
graded_path = st.lists(graded_piece, min_size=1, max_size=3)
graded_paths = st.lists(graded_path, min_size=1, max_size=3)
ranking = st.lists(chunk, min_size=0, max_size=12, unique=True)


def _entry(paths: list[list[list[tuple[str, int]]]]) -> Entry | None:
    """The entry with one grade per chunk id (the last drawn wins); None when a piece would be
    graded all 0 (refused)."""
    grades = {c: g for path in paths for piece in path for c, g in piece}
    ps = [[[c for c, _ in piece] for piece in path] for path in paths]
    if any(all(grades[c] == 0 for c in piece) for path in ps for piece in path):
        return None
    return E("a", ps, metadata={"relevance": grades})


def _grade(e: Entry, chunk_id: Any) -> int:
    return int(e.metadata["relevance"][chunk_id])


def _reference_ndcg(e: Entry, ret: list[str], k: int) -> float:
    """The documented definition, written out: per path, each piece's credit is the largest
    grade / log2(rank + 1) among its alternatives retrieved in the top k; the ideal puts the
    pieces' best grades at ranks 1..; the best path has the highest recall@k, then nDCG@k."""
    rank = {c: i + 1 for i, c in enumerate(ret[:k])}
    best: tuple[float, float] | None = None
    for path in e.evidence_paths:
        dcg, sat = 0.0, 0
        for piece in path:
            credits = [_grade(e, a) / math.log2(rank[a] + 1) for a in piece if a in rank]
            credits = [c for c in credits if c > 0]
            sat += bool(credits)
            dcg += max(credits, default=0.0)
        ideal_gains = sorted((max(_grade(e, a) for a in piece) for piece in path), reverse=True)
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_gains[:k]))
        here = (sat / len(path), min(dcg / idcg, 1.0))
        if best is None or here > best:
            best = here
    assert best is not None
    return best[1]


@settings(max_examples=100, deadline=None)
@given(graded_paths, ranking, st.integers(1, 8))
def test_ndcg_follows_the_grade_of_the_chunk_retrieved(ps: list, ret: list[str], k: int) -> None:
    e = _entry(ps)
    if e is None:
        return
    got = score_retrieval([e], R({"a": ret}), metrics=f"ndcg@{k}").rows[0][f"ndcg@{k}"]
    assert got == pytest.approx(_reference_ndcg(e, ret, k), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(graded_paths, ranking, st.integers(1, 8))
def test_a_grade_zero_alternative_counts_as_absent(ps: list, ret: list[str], k: int) -> None:
    """Scoring with the grade-0 alternatives is scoring without them, for every metric."""
    e = _entry(ps)
    if e is None:
        return
    kept = [[[a for a in piece if _grade(e, a) > 0] for piece in path] for path in e.evidence_paths]
    grades = e.metadata["relevance"]
    without = E("a", kept, metadata={"relevance": {c: g for c, g in grades.items() if g}})
    metrics = f"ndcg@{k},recall@{k},complete@{k},hit@{k},precision@{k},mrr"
    a = score_retrieval([e], R({"a": ret}), metrics=metrics).rows[0]
    b = score_retrieval([without], R({"a": ret}), metrics=metrics).rows[0]
    assert a == b
