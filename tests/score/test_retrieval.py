from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.metrics._util import E, R, random_single_path

from assay.corpus import Chunk, ChunkTable
from assay.runs import Run
from assay.score import score_retrieval


def test_hand_worked_paths_pieces_alternatives() -> None:
    e = E("a", [[["c1"]], [["c2"], ["c3", "c4"]]])
    s = score_retrieval([e], R({"a": ["z", "c2", "c4"]}), k=2, ks=[3])
    row = s.rows[0]
    assert row["recall@2"] == 0.5 and row["complete@2"] == 0.0
    assert row["mrr"] == 0.5
    assert row["ndcg@2"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert row["recall@3"] == 1.0 and row["complete@3"] == 1.0
    # the single-piece path wins when it is complete
    s = score_retrieval([e], R({"a": ["c1"]}), k=1)
    assert s.rows[0]["complete@1"] == 1.0 and s.rows[0]["ndcg@1"] == 1.0


def test_seed_example_arithmetic() -> None:
    """200 comparison entries; six move from half their evidence to all of it:
    complete@k rises by 3 points and mean recall@k by 1.5 points."""
    entries = [E(f"e{i}", [[[f"a{i}"], [f"b{i}"]]], cat="comparison") for i in range(200)]
    base: dict[str, list[str]] = {}
    cand: dict[str, list[str]] = {}
    for i in range(200):
        if i < 100:  # complete in both
            base[f"e{i}"] = cand[f"e{i}"] = [f"a{i}", f"b{i}"]
        elif i < 106:  # the six movers
            base[f"e{i}"] = [f"a{i}", "x"]
            cand[f"e{i}"] = [f"a{i}", f"b{i}"]
        else:  # half in both
            base[f"e{i}"] = cand[f"e{i}"] = [f"a{i}", "y"]
    b = score_retrieval(entries, R(base), k=5).categories["comparison"].values
    c = score_retrieval(entries, R(cand), k=5).categories["comparison"].values
    assert c["complete@5"] - b["complete@5"] == pytest.approx(0.03)
    assert c["recall@5"] - b["recall@5"] == pytest.approx(0.015)


def test_unanswerable_excluded_and_counted() -> None:
    es = [E("a", [[["x"]]]), E("u", [], cat="c"), E("v", [[["x"]]], answerable=False)]
    s = score_retrieval(es, R({"a": ["x"]}), k=1)
    assert s.overall is not None and s.overall.n == 1 and s.overall.unanswerable_n == 2
    assert s.to_dict()["unanswerable_n"] == 2


def test_missing_gold_chunk_refuses_with_ids() -> None:
    from assay.errors import DataError

    table = ChunkTable([Chunk("x", "d", "t", [1])])
    with pytest.raises(DataError) as ei:
        score_retrieval([E("a", [[["x"], ["ghost"]]])], R({"a": ["x"]}), chunks=table)
    assert "ghost" in str(ei.value) and "entry a" in str(ei.value)


def test_missing_run_rows_refuse_unless_allowed() -> None:
    from assay.errors import DataError

    es = [E("a", [[["x"]]]), E("b", [[["y"]]])]
    with pytest.raises(DataError, match="b"):
        score_retrieval(es, R({"a": ["x"]}))
    s = score_retrieval(es, R({"a": ["x"]}), allow_missing=True, k=1)
    assert s.per_entry["recall@1"].tolist() == [1.0, 0.0]


def test_a_row_without_retrieved_is_refused_for_an_entry_with_retrieval_gold(
    tmp_path: Path,
) -> None:
    """A text-to-SQL row (no `retrieved`) for an entry with evidence is refused as a missing row
    is, naming the run file, the row's line and the field; with allow_missing it retrieved
    nothing. On an entry without retrieval gold it is no matter."""
    from assay.errors import DataError
    from assay.runs import load_run

    es = [E("a", [[["x"]]]), E("b", [[["y"]]]), E("s", [], answerable=False)]
    p = tmp_path / "run.jsonl"
    p.write_text(
        '{"id": "s", "sql": "SELECT 1"}\n{"id": "a", "retrieved": ["x"]}\n'
        '{"id": "b", "sql": "SELECT 2", "answer": "2"}\n'
    )
    run = load_run(p)
    with pytest.raises(DataError) as ei:
        score_retrieval(es, run, k=1)
    assert [(x.file, x.line, x.field) for x in ei.value.problems] == [(str(p), 3, "retrieved")]
    assert "'b'" in ei.value.problems[0].message
    s = score_retrieval(es, run, allow_missing=True, k=1)
    assert s.per_entry["recall@1"].tolist() == [1.0, 0.0]
    assert score_retrieval(es[:1] + es[2:], run, k=1).per_entry["recall@1"].tolist() == [1.0]


def test_page_level_and_anchors() -> None:
    table = ChunkTable(
        [
            Chunk("d/1/0", "d", "Revenue was 5,000 million", [1]),
            Chunk("d/1/1", "d", "other text on page one", [1]),
            Chunk("d/2/0", "d", "more", [2, 3]),
        ]
    )
    e = E(
        "a",
        [
            [
                [{"doc": "d", "page": 1, "quote": "revenue was 5000 million"}],
                [{"doc": "d", "page": 3, "quote": "x"}],
            ]
        ],
    )
    s = score_retrieval([e], R({"a": ["d/1/1", "d/2/0"]}), k=2, chunks=table, level="page")
    assert s.rows[0]["recall@2"] == 1.0  # same page counts; a chunk spanning pages 2-3 holds page 3
    e2 = E("b", [[[{"doc": "d", "page": 1, "quote": "revenue was 5000 million"}]]])
    s = score_retrieval([e2], R({"b": ["d/1/1", "d/1/0"]}), k=1, chunks=table, level="chunk")
    assert s.rows[0]["recall@1"] == 0.0 and s.rows[0]["mrr"] == 0.5


def test_graded_relevance_on_anchors() -> None:
    table = ChunkTable([Chunk("a", "d", "alpha beta", [1]), Chunk("b", "d", "gamma delta", [1])])
    e = E(
        "q",
        [
            [
                [{"doc": "d", "page": 1, "quote": "alpha beta", "relevance": 3}],
                [{"doc": "d", "page": 1, "quote": "gamma delta", "relevance": 1}],
            ]
        ],
    )
    s = score_retrieval([e], R({"q": ["b", "a"]}), k=2, chunks=table)
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert s.rows[0]["ndcg@2"] == pytest.approx(dcg / idcg)


def test_agrees_with_pytrec_eval_on_random_runs() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    entries, run, qrels, trec_run = random_single_path(np.random.default_rng(11), 300)
    ours = score_retrieval(entries, run, k=5, ks=[10])
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5,10", "ndcg_cut.5,10", "recip_rank"})
    ref = ev.evaluate(trec_run)
    for i, eid in enumerate(ours.ids):
        assert ours.per_entry["recall@5"][i] == pytest.approx(ref[eid]["recall_5"], abs=1e-9)
        assert ours.per_entry["recall@10"][i] == pytest.approx(ref[eid]["recall_10"], abs=1e-9)
        assert ours.per_entry["ndcg@5"][i] == pytest.approx(ref[eid]["ndcg_cut_5"], abs=1e-9)
        assert ours.per_entry["ndcg@10"][i] == pytest.approx(ref[eid]["ndcg_cut_10"], abs=1e-9)
        assert ours.per_entry["mrr"][i] == pytest.approx(ref[eid]["recip_rank"], abs=1e-9)


def test_tie_rule_is_file_order() -> None:
    """Ties keep the order given: the run's list order is the ranking, scores are never re-sorted."""
    e = E("a", [[["y"]]])
    s = score_retrieval(
        [e],
        Run.from_rows(
            [
                {
                    "id": "a",
                    "retrieved": [{"chunk_id": "x", "score": 1.0}, {"chunk_id": "y", "score": 1.0}],
                }
            ]
        ),
        k=1,
    )
    assert s.rows[0]["recall@1"] == 0.0 and s.rows[0]["mrr"] == 0.5


# ------------------------------------------------------------------ properties

ids = st.sampled_from([f"c{i}" for i in range(12)])
piece = st.lists(ids, min_size=1, max_size=3)
path = st.lists(piece, min_size=1, max_size=3)
paths = st.lists(path, min_size=1, max_size=3)
ranking = st.lists(ids, min_size=0, max_size=15, unique=True)


@settings(max_examples=150, deadline=None)
@given(paths, ranking, st.integers(1, 10))
def test_metrics_in_unit_interval(ps: list, ret: list[str], k: int) -> None:
    s = score_retrieval([E("a", ps)], R({"a": ret}), k=k)
    for v in s.rows[0].values():
        if isinstance(v, float):
            assert 0.0 <= v <= 1.0


@settings(max_examples=150, deadline=None)
@given(paths, ranking, ranking, st.integers(1, 10))
def test_hits_beyond_k_change_nothing_at_k(
    ps: list, ret: list[str], extra: list[str], k: int
) -> None:
    top = (ret + [f"pad{i}" for i in range(k)])[:k]  # exactly k hits, so extras land beyond rank k
    a = score_retrieval([E("a", ps)], R({"a": top}), k=k).rows[0]
    b = score_retrieval([E("a", ps)], R({"a": top + [x for x in extra if x not in top]}), k=k).rows[
        0
    ]
    for m in ("recall", "complete", "ndcg"):
        assert a[f"{m}@{k}"] == b[f"{m}@{k}"]


@settings(max_examples=150, deadline=None)
@given(paths, ranking, ranking, st.integers(1, 10))
def test_superset_of_top_k_never_lowers(ps: list, ret: list[str], more: list[str], k: int) -> None:
    base = ret[:k]
    sup = base + [x for x in more if x not in base]
    kk = len(sup) or 1
    a = score_retrieval([E("a", ps)], R({"a": base}), k=kk).rows[0]
    b = score_retrieval([E("a", ps)], R({"a": sup}), k=kk).rows[0]
    assert b[f"recall@{kk}"] >= a[f"recall@{kk}"]
    assert b[f"complete@{kk}"] >= a[f"complete@{kk}"]


@settings(max_examples=100, deadline=None)
@given(paths, ranking, st.integers(1, 10), st.permutations([f"c{i}" for i in range(12)]))
def test_renaming_ids_consistently_changes_nothing(
    ps: list, ret: list[str], k: int, perm: list[str]
) -> None:
    ren = {f"c{i}": f"renamed-{p}" for i, p in enumerate(perm)}
    ps2 = [[[ren[a] for a in pc] for pc in p] for p in ps]
    a = score_retrieval([E("a", ps)], R({"a": ret}), k=k).rows[0]
    b = score_retrieval([E("zz", ps2)], R({"zz": [ren[x] for x in ret]}), k=k).rows[0]
    assert {m: v for m, v in a.items() if m != "id"} == {m: v for m, v in b.items() if m != "id"}


def test_bootstrap_ci_on_every_cell_is_seeded_and_brackets_estimate() -> None:
    rng = np.random.default_rng(3)
    entries = [E(f"e{i}", [[[f"a{i}"], [f"b{i}"]]], cat=f"cat{i % 3}") for i in range(90)]
    run = R({f"e{i}": [f"a{i}"] + ([f"b{i}"] if rng.random() < 0.5 else []) for i in range(90)})
    s1 = score_retrieval(entries, run, k=5)
    s1.add_ci(seed=7, n_resamples=2000)
    s2 = score_retrieval(entries, run, k=5)
    s2.add_ci(seed=7, n_resamples=2000)
    assert s1.to_json() == s2.to_json()
    d = s1.to_dict()
    for row in [*d["categories"].values(), d["overall"]]:
        ci = row["complete@5_ci"]
        lo, hi = ci["low"], ci["high"]
        assert lo <= row["complete@5"] <= hi and lo < hi
        assert ci["method"] == "wilson"  # complete@k is a rate
        rc = row["recall@5_ci"]
        # a graded cell: the score interval of a bounded mean (deterministic)
        assert rc["method"] == "score" and rc["low"] <= row["recall@5"] <= rc["high"]
    s3 = score_retrieval(entries, run, k=5)
    s3.add_ci(seed=7, n_resamples=2000, method="percentile")
    s4 = score_retrieval(entries, run, k=5)
    s4.add_ci(seed=7, n_resamples=2000, method="percentile")
    assert s3.to_json() == s4.to_json()
    boot = s3.to_dict()["overall"]["recall@5_ci"]
    assert boot["method"] == "percentile" and boot["low"] < boot["high"]


def test_score_ci_on_all_equal_cells_is_not_a_point() -> None:
    # every entry complete: the truth is uncertain, so the interval must not be [1.00, 1.00]
    entries = [E(f"e{i}", [[[f"a{i}"]]], cat="x") for i in range(30)]
    run = R({f"e{i}": [f"a{i}"] for i in range(30)})
    s = score_retrieval(entries, run, k=5)
    s.add_ci(seed=0, n_resamples=500)
    for m in ("complete@5", "recall@5"):
        ci = s.to_dict()["overall"][f"{m}_ci"]
        assert ci["high"] == 1.0 and ci["low"] < 0.9, (m, ci)
    # 30 of 30: no fail at all, a rare event: Clopper-Pearson [0.884, 1] (Wilson's is [0.886, 1])
    assert "[0.88, 1.00]" in s.to_markdown()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(paths, st.lists(ids, max_size=20)), min_size=1, max_size=8),
    st.integers(1, 10),
)
def test_direct_and_lookup_paths_agree(data: list, k: int) -> None:
    """The chunk-level fast path and the general lookup give the same metrics (duplicates,
    ragged lists and empty rows included)."""
    from assay.gold import resolve_gold
    from assay.score import compute_metrics
    from assay.score.retrieval import _retrieved_arrays

    entries = [E(f"e{i}", ps) for i, (ps, _) in enumerate(data)]
    run = Run.from_rows([{"id": f"e{i}", "retrieved": ret} for i, (_, ret) in enumerate(data)])
    fast = score_retrieval(entries, run, k=k)
    gold = resolve_gold(entries)
    ent, rank, code, voc = _retrieved_arrays(gold, run, None)
    slow = compute_metrics(gold, ent, rank, code, voc, [k])
    for m, arr in slow.items():
        assert np.allclose(fast.per_entry[m], arr), m


def test_uniform_rows_fast_path_matches_lookup() -> None:
    from assay.gold import resolve_gold
    from assay.score import compute_metrics
    from assay.score.retrieval import _retrieved_arrays

    rng = np.random.default_rng(2)
    entries = [
        E(f"e{i}", [[[f"c{j}"] for j in rng.choice(30, 2, replace=False)]]) for i in range(50)
    ]
    run = R({f"e{i}": [f"c{j}" for j in rng.integers(0, 30, 8)] for i in range(49)})  # e49 missing
    fast = score_retrieval(entries, run, k=5, allow_missing=True)
    gold = resolve_gold(entries)
    ent, rank, code, voc = _retrieved_arrays(gold, run, None)
    slow = compute_metrics(gold, ent, rank, code, voc, [5])
    for m, arr in slow.items():
        assert np.array_equal(fast.per_entry[m], arr), m
    assert fast.per_entry["mrr"][-1] == 0.0


def test_per_entry_rows_name_the_best_path_the_missing_pieces_and_every_rank() -> None:
    """Hand-worked: path 0 has b at rank 2 and a at rank 4, path 1 has c at rank 6."""
    e1 = E("one", [[["a"], ["b"]], [["c"]]])
    e2 = E("two", [[["q", "r"]]])  # a piece with two alternatives, the second retrieved
    e3 = E("three", [[["nowhere"]], [["x"], ["elsewhere"]]])
    run = R({"one": ["x", "b", "y", "a", "z", "c"], "two": ["p", "r"], "three": ["x"]})
    rows = {r["id"]: r for r in score_retrieval([e1, e2, e3], run, k=3).rows}
    assert (rows["one"]["best_path"], rows["one"]["missing"]) == (0, [0])
    assert rows["one"]["ranks"] == [[4, 2], [6]]
    assert (rows["two"]["best_path"], rows["two"]["missing"], rows["two"]["ranks"]) == (
        0, [], [[2]]
    )  # fmt: skip
    # nothing of path 0, half of path 1: path 1 is best and its second piece is missing
    assert rows["three"]["best_path"] == 1
    assert rows["three"]["missing"] == [1] and rows["three"]["ranks"] == [[None], [1, None]]
    # at k=1 path 0 of "one" has nothing and path 1 nothing: ties go to the first path
    rows = {r["id"]: r for r in score_retrieval([e1], run, k=1).rows}
    assert (rows["one"]["best_path"], rows["one"]["missing"]) == (0, [0, 1])


def test_per_entry_ranks_at_page_level() -> None:
    table = ChunkTable([Chunk("d/1/0", "d", "alpha", [1]), Chunk("d/2/0", "d", "beta", [2])])
    e = E(
        "a", [[[{"doc": "d", "page": 2, "quote": "beta"}], [{"doc": "d", "page": 1, "quote": "z"}]]]
    )
    s = score_retrieval([e], R({"a": ["d/2/0", "x", "d/1/0"]}), k=2, chunks=table, level="page")
    assert s.rows[0]["ranks"] == [[1, 3]] and s.rows[0]["missing"] == [1]


def test_score_per_entry_file_carries_the_diagnostics(tmp_path: Path) -> None:
    import json

    from tests.conftest import write_jsonl
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401
    from assay.cli import app
    from assay.runs import write_run

    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [{"id": "a", "query": "q", "category": "c", "evidence_paths": [[["c1"], ["c2"]]]}],
    )
    run = tmp_path / "r.jsonl"
    write_run(run, [{"id": "a", "retrieved": ["c2", "x", "y", "c1"]}])
    out = tmp_path / "pe.jsonl"
    res = CliRunner().invoke(app, ["score", str(ds), str(run), "--k", "3", "--per-entry", str(out)])
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["best_path"] == 0 and row["missing"] == [0] and row["ranks"] == [[4, 1]]
