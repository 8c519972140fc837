"""hit@k: at least one required piece of the best path in the top k (trec_eval's success.k)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.compare import compare_runs, is_binary_metric
from assay.dataset import Dataset
from assay.score import score_retrieval

from ._util import E, R, random_single_path


def test_agrees_with_pytrec_eval_success_on_random_runs() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = random_single_path(np.random.default_rng(23))
    ks = (1, 3, 5, 10)
    ours = score_retrieval(entries, run, k=5, metrics=[f"hit@{k}" for k in ks])
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"success.1,3,5,10"}).evaluate(trec_run)
    for k in ks:
        got = ours.per_entry[f"hit@{k}"]
        want = np.array([ref[eid][f"success_{k}"] for eid in ours.ids])
        assert np.array_equal(got, want), k
        assert 0 < want.sum() < len(want)  # both outcomes occur: the check can fail


def test_hand_worked_best_path_and_pieces() -> None:
    e = E("a", [[["c1"]], [["c2"], ["c3", "c4"]]])
    row = score_retrieval([e], R({"a": ["z", "c4", "c1"]}), metrics="hit@1,hit@2,hit@3").rows[0]
    assert row["hit@1"] == 0.0  # nothing of any path in the top 1
    assert row["hit@2"] == 1.0  # c4 satisfies one piece of the two-piece path (its best path @2)
    assert row["hit@3"] == 1.0
    nothing = score_retrieval([e], R({"a": ["x", "y"]}), metrics="hit@5").rows[0]
    assert nothing["hit@5"] == 0.0


def test_hit_is_compared_as_a_binary_metric() -> None:
    assert is_binary_metric("hit@5")
    entries = [E(f"e{i}", [[[f"a{i}"], [f"b{i}"]]]) for i in range(20)]
    base = R({f"e{i}": ["x"] for i in range(20)})
    cand = R({f"e{i}": [f"b{i}"] if i < 8 else ["x"] for i in range(20)})
    cmp = compare_runs(Dataset(entries), base, cand, metrics=["hit@5"], n_resamples=200)
    mc = cmp.overall.metrics["hit@5"]
    assert (
        mc.binary
        and next(iter(mc.tests)) == "mcnemar_exact"
        and mc.p == mc.tests["mcnemar_exact"].pvalue
    )
    assert len(mc.fixed) == 8 and not mc.broken and mc.p == pytest.approx(2 * 0.5**8)
