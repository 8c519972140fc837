"""precision@k: share of the top k chunks that satisfy some piece of some path (trec_eval's P.k)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.compare import is_binary_metric
from assay.corpus import Chunk, ChunkTable
from assay.score import score_retrieval

from ._util import E, R, random_single_path


def test_agrees_with_pytrec_eval_p_on_random_runs() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = random_single_path(np.random.default_rng(29))
    ks = (1, 3, 5, 10, 50)  # 50 > the 30 retrieved: the denominator stays k
    ours = score_retrieval(entries, run, k=5, metrics=[f"precision@{k}" for k in ks])
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"P.1,3,5,10,50"}).evaluate(trec_run)
    for k in ks:
        got = ours.per_entry[f"precision@{k}"]
        want = np.array([ref[eid][f"P_{k}"] for eid in ours.ids])
        assert np.allclose(got, want, rtol=0, atol=1e-12), k
        assert len(set(want.tolist())) > (1 if k == 1 else 2)  # varied values: the check can fail
    assert not is_binary_metric("precision@5")


def test_every_path_counts_and_short_lists_divide_by_k() -> None:
    e = E("a", [[["c1"]], [["c2"], ["c3", "c4"]]])
    row = score_retrieval(
        [e], R({"a": ["c4", "z", "c1", "c3"]}), metrics="precision@2,precision@4,precision@10"
    ).rows[0]
    assert row["precision@2"] == 0.5  # c4 (path 2)
    assert row["precision@4"] == 0.75  # c4, c1 (path 1), c3 (same piece as c4, still a gold chunk)
    assert row["precision@10"] == 0.3  # three relevant, four retrieved, divided by 10


def test_a_repeated_chunk_is_credited_once() -> None:
    e = E("a", [[["c1"], ["c2"]]])
    row = score_retrieval([e], R({"a": ["c1", "c1", "c2"]}), metrics="precision@3").rows[0]
    assert row["precision@3"] == pytest.approx(2 / 3)


def test_page_level_credits_the_first_chunk_to_reach_each_gold_page() -> None:
    table = ChunkTable(
        [
            Chunk("d/1/0", "d", "alpha", [1]),
            Chunk("d/1/1", "d", "beta", [1]),
            Chunk("d/2/0", "d", "gamma", [2, 3]),
            Chunk("d/9/0", "d", "other", [9]),
        ]
    )
    gold = [
        [
            [{"doc": "d", "page": 1, "quote": "alpha"}],
            [{"doc": "d", "page": 2, "quote": "gamma"}],
            [{"doc": "d", "page": 3, "quote": "gamma"}],
        ]
    ]
    s = score_retrieval(
        [E("a", gold)],
        R({"a": ["d/1/1", "d/1/0", "d/9/0", "d/2/0"]}),
        chunks=table,
        level="page",
        metrics="precision@4,recall@4",
    )
    # d/1/1 reaches page 1; d/1/0 is page 1 again (not credited); d/9/0 is off gold; d/2/0
    # reaches pages 2 and 3 at once (one slot, credited once)
    assert s.rows[0]["precision@4"] == 0.5
    assert s.rows[0]["recall@4"] == 1.0
