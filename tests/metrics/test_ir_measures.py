"""MAP, R-precision and bpref: trec_eval's measures where assay's gold coincides with its qrels,
and the documented extension (paths, several alternatives, repeats) where it does not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.compare import is_binary_metric
from assay.corpus import Chunk, ChunkTable
from assay.metrics import family
from assay.runs.qrels import qrels_from_dataset
from assay.score import score_retrieval

from ._util import E, R, random_single_path
from .test_graded import _random_graded

MEASURES = {"map": "map", "rprec": "Rprec", "bpref": "bpref"}


@pytest.mark.parametrize("seed", [41, 7])
def test_agree_with_pytrec_eval_on_random_graded_qrels(seed: int) -> None:
    """Pieces of one relevant chunk (graded 1-3) and up to three graded 0 (judged not relevant,
    what bpref counts), tie-free runs of 30 chunks (assay's order is the list order, trec_eval's
    the score order: the same here)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = _random_graded(np.random.default_rng(seed), 400)
    assert qrels_from_dataset(entries).qrels == qrels
    ours = score_retrieval(entries, run, metrics=list(MEASURES))
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(trec_run)
    for name, measure in MEASURES.items():
        want = np.array([ref[eid][measure] for eid in ours.ids])
        np.testing.assert_allclose(ours.per_entry[name], want, rtol=0, atol=1e-12, err_msg=name)
        assert len(np.unique(np.round(want, 9))) > 6, name  # varied: the check can fail
    # bpref is not recall here: judged-not-relevant chunks above relevant ones cost something
    recall = score_retrieval(entries, run, metrics="recall@30").per_entry["recall@30"]
    assert np.sum(ours.per_entry["bpref"] < recall - 1e-9) > 50


def test_agree_with_pytrec_eval_on_binary_qrels() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = random_single_path(np.random.default_rng(3))
    ours = score_retrieval(entries, run, metrics=list(MEASURES))
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(trec_run)
    for name, measure in MEASURES.items():
        want = np.array([ref[eid][measure] for eid in ours.ids])
        np.testing.assert_allclose(ours.per_entry[name], want, rtol=0, atol=1e-12, err_msg=name)
    # no grade-0 chunk: nothing is judged not relevant, bpref is recall over the whole list
    full = score_retrieval(entries, run, metrics="recall@30").per_entry["recall@30"]
    np.testing.assert_allclose(ours.per_entry["bpref"], full, atol=1e-12)


def test_registered_graded_without_cutoff() -> None:
    for name in MEASURES:
        fam = family(name)
        assert not fam.binary and not fam.cutoff and fam.description
        assert not is_binary_metric(name)


def test_worked_example() -> None:
    # path 1: pieces {a}, {b}; path 2: pieces {c}, {d}, {e}
    e = E("q", [[["a"], ["b"]], [["c"], ["d"], ["e"]]])
    row = score_retrieval(
        [e], R({"q": ["c", "x", "a", "d", "y", "e", "b"]}), metrics=list(MEASURES)
    ).rows[0]
    # path 1: a at 3, b at 7 -> (1/3 + 2/7) / 2; path 2: c 1, d 4, e 6 -> (1 + 2/4 + 3/6) / 3
    assert row["map"] == pytest.approx(max((1 / 3 + 2 / 7) / 2, (1 + 0.5 + 0.5) / 3))
    # R-precision: path 1 has a in its top 2? no (a at 3): 0; path 2: c, d in top 3? c only: 1/3
    assert row["rprec"] == pytest.approx(1 / 3)
    assert row["bpref"] == 1.0  # nothing judged not relevant: every satisfied piece earns 1


def test_one_chunk_for_two_pieces_fills_one_slot() -> None:
    e = E("q", [[["a", "b"], ["b", "c"]]])  # b satisfies both pieces
    row = score_retrieval([e], R({"q": ["b"]}), metrics="map,rprec").rows[0]
    assert row == {**row, "map": 1.0, "rprec": 1.0}
    row = score_retrieval([e], R({"q": ["x", "b"]}), metrics="map").rows[0]
    assert row["map"] == pytest.approx(0.5)  # both pieces at rank 2, one relevant slot of 2


def test_bpref_counts_grade_zero_above_and_repeats_once() -> None:
    grades = {"a": 1, "b": 1, "n1": 0, "n2": 0, "n3": 0}
    e = E("q", [[["a", "n1"], ["b", "n2", "n3"]]], metadata={"relevance": grades})
    run = R({"q": ["n1", "a", "n1", "x", "n2", "b"]})  # n1 repeated: counted once
    row = score_retrieval([e], run, metrics="bpref").rows[0]
    # R = 2, N = 3: a has 1 judged above -> 1 - 1/2; b has 2 above -> 1 - 2/2
    assert row["bpref"] == pytest.approx((0.5 + 0.0) / 2)


def test_bpref_reads_grade_zero_anchors_at_page_level() -> None:
    table = ChunkTable(
        [
            Chunk("d/1/0", "d", "alpha beta gamma", [1]),
            Chunk("d/2/0", "d", "delta epsilon zeta", [2]),
            Chunk("d/3/0", "d", "eta theta iota", [3]),
        ]
    )
    e = E(
        "q",
        [
            [
                [
                    {"doc": "d", "page": 1, "quote": "alpha beta gamma"},
                    {"doc": "d", "page": 2, "quote": "delta epsilon zeta", "relevance": 0},
                ]
            ]
        ],
    )
    for level in ("chunk", "page"):
        row = score_retrieval(
            [e], R({"q": ["d/2/0", "d/1/0"]}), chunks=table, level=level, metrics="bpref,map"
        ).rows[0]
        assert (row["bpref"], row["map"]) == (0.0, 0.5), level  # R = N = 1: one judged above


chunk = st.sampled_from([f"c{i}" for i in range(8)])
paths = st.lists(
    st.lists(st.lists(chunk, min_size=1, max_size=2), min_size=1, max_size=3),
    min_size=1,
    max_size=3,
)


def _reference(e_paths: list[list[list[str]]], ret: list[str]) -> dict[str, float]:
    """The documented definitions written out (no grade 0: bpref is whole-list recall)."""
    first: dict[str, int] = {}
    for i, c in enumerate(ret):
        first.setdefault(c, i + 1)
    best = dict.fromkeys(MEASURES, 0.0)
    for path in e_paths:
        r = len(path)
        ranks = [min((first[a] for a in piece if a in first), default=None) for piece in path]
        hit = sorted(x for x in ranks if x is not None)
        ap = sum(len({x for x in hit if x <= rk}) / rk for rk in hit) / r
        rp = sum(x <= r for x in hit) / r
        best["map"] = max(best["map"], ap)
        best["rprec"] = max(best["rprec"], rp)
        best["bpref"] = max(best["bpref"], len(hit) / r)
    return best


@settings(max_examples=150, deadline=None)
@given(paths, st.lists(chunk, max_size=10))
def test_multi_path_definitions(ps: list[list[list[str]]], ret: list[str]) -> None:
    row = score_retrieval([E("a", ps)], R({"a": ret}), metrics=list(MEASURES)).rows[0]
    want = _reference(ps, ret)
    for name in MEASURES:
        assert row[name] == pytest.approx(want[name], abs=1e-12), name
