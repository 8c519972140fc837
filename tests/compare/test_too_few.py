"""The "too few entries to conclude" note fires whenever a row's best possible result cannot be
significant after the correction: Holm over the real family, and the ledger's factor."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import write_case
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare import compare_arrays, too_few_note


def _six_categories() -> tuple[list[str], list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    ids, cats, base, cand = [], [], [], []
    for c in range(6):
        size = 9 if c == 0 else 40
        for i in range(size):
            ids.append(f"c{c}-{i}")
            cats.append(f"cat{c}")
            base.append(0.0 if c == 0 else float(i % 2))
            cand.append(1.0 if c == 0 else float(i % 2))  # category 0: 9 of 9 fixed
    b, n = np.array(base), np.array(cand)
    return ids, cats, {"complete@5": b, "recall@5": b}, {"complete@5": n, "recall@5": n}


def test_nine_of_nine_in_a_category_of_nine_says_it_cannot_conclude() -> None:
    ids, cats, base, cand = _six_categories()
    cmp = compare_arrays(ids, cats, base, cand, n_permutations=100)
    row = cmp.categories["cat0"]
    mc = row.metrics["complete@5"]
    assert len(mc.fixed) == 9 and mc.p == pytest.approx(2 / 512)
    # Holm over (6 categories + overall) x 2 metrics = 14 tests: 14 x 2/512 = 0.055 > 0.05
    assert cmp.family == 14 and mc.p_holm == pytest.approx(0.0546875)
    assert row.small_n and "even 9 of 9 moving one way" in row.note and "14 tests" in row.note
    assert "too few entries to conclude" in cmp.to_markdown()
    assert not cmp.categories["cat1"].small_n  # 40 entries could conclude
    # split by categories alone (the old rule: 6 tests), nine entries looked sufficient
    assert too_few_note(9, 0.05, 6) == ""


def test_the_ledger_factor_counts_too() -> None:
    ids, cats, base, cand = _six_categories()
    cmp = compare_arrays(ids, cats, base, cand, n_permutations=100)
    assert not cmp.categories["cat1"].small_n
    cmp.apply_ledger(20)  # x 420: 40 entries are still enough (2 x 0.5**40 x 14 x 420 < 0.05)
    assert not cmp.categories["cat1"].small_n
    assert "ledger's factor 420" in cmp.categories["cat0"].note
    assert too_few_note(12, 0.05, 14, 420) != "" and too_few_note(40, 0.05, 14, 420) == ""


def test_a_leaderboard_counts_every_candidate_in_the_family(tmp_path: Path) -> None:
    from assay.compare import compare_many_files

    ds, base, cand = write_case(tmp_path, {"a": [(0, 2)] * 8, "b": [(2, 2)] * 40})
    twin = tmp_path / "twin.jsonl"
    twin.write_bytes(Path(cand).read_bytes())
    board = compare_many_files(
        ds, base, [cand, twin], k=5, record=False, n_resamples=100, n_permutations=100
    )
    for cmp in board.comparisons:
        assert cmp.family == 12  # 2 candidates x (2 categories + overall) x 2 metrics
        assert cmp.categories["a"].small_n and "12 tests" in cmp.categories["a"].note


def test_plan_names_the_categories_too_small_to_conclude(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, {"a": [(0, 2)] * 9 + [(2, 2)] * 1, "b": [(2, 2)] * 30})
    res = CliRunner().invoke(
        app,
        [
            "plan",
            "--delta",
            "0.05",
            "--dataset",
            str(ds),
            "--base",
            str(base),
            "--cand",
            str(cand),
            "--discordant",
            "0.1",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = {r["category"]: r for r in data["rows"]}
    # (2 categories + overall) x 2 metrics = 6 tests: 10 entries can reach 0.05 / 6, 9 cannot
    assert "too few" not in rows["a"].get("note", "")
    assert "6 tests" in data["family"]
    res = CliRunner().invoke(
        app,
        [
            "plan",
            "--delta",
            "0.05",
            "--dataset",
            str(ds),
            "--base",
            str(base),
            "--cand",
            str(cand),
            "--discordant",
            "0.1",
            "--categories",
            "6",
            "--lifetime-comparisons",
            "2",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = {r["category"]: r for r in data["rows"]}
    assert "too few to conclude: even 10 of 10" in rows["a"]["note"]
    assert "comparison #2 (ledger x6)" in data["family"]


def _clustered_case() -> tuple[list[str], list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Category ``a``: 12 entries on 3 documents (4 each), all fixed; ``b``: 40 entries on 40."""
    ids = [f"a{i}" for i in range(12)] + [f"b{i}" for i in range(40)]
    cats = ["a"] * 12 + ["b"] * 40
    b = np.r_[np.zeros(12), np.arange(40) % 2].astype(float)
    c = np.r_[np.ones(12), np.arange(40) % 2].astype(float)
    return ids, cats, {"complete@5": b, "recall@5": b}, {"complete@5": c, "recall@5": c}


def test_a_clustered_row_counts_its_clusters() -> None:
    from assay.stats.clusters import Clustering

    ids, cats, base, cand = _clustered_case()
    docs = {i: f"doc:{int(i[1:]) // 4}" if i[0] == "a" else f"doc:b{i}" for i in ids}
    cmp = compare_arrays(
        ids, cats, base, cand, n_permutations=100, clusters=Clustering("doc", docs)
    )
    row = cmp.categories["a"]
    # twelve entries all moving one way would be p = 2/4096, but they are three draws:
    # 2/8 = 0.25, which nothing can bring under 0.05
    assert row.clusters == 3 and row.small_n
    assert row.note.startswith("too few clusters to conclude: n=12 in 3 clusters is too small")
    assert "even all 3 moving one way give p = 0.25" in row.note
    assert row.to_dict()["clusters"] == 3
    assert not cmp.categories["b"].small_n and cmp.categories["b"].clusters == 40
    # unclustered, the same twelve entries could conclude
    flat = compare_arrays(ids, cats, base, cand, n_permutations=100)
    assert flat.categories["a"].clusters is None and not flat.categories["a"].small_n
    assert too_few_note(12, 0.05, 6) == "" and too_few_note(12, 0.05, 6, clusters=3) != ""
    assert "n=12 in one cluster" in too_few_note(12, 0.05, clusters=1)


def test_the_gate_verdict_and_the_planner_count_clusters(tmp_path: Path) -> None:
    from assay.compare import GatePolicy, gate_files
    from assay.compare.planning import plan_sample

    # category a: 9 entries, 3 per fact (3 clusters), one broken; b: 30 unchanged (10 clusters)
    ds, base, cand = write_case(tmp_path, {"a": [(2, 2)] * 8 + [(2, 0)], "b": [(2, 2)] * 30})
    res = gate_files(
        ds, base, cand, policy=GatePolicy(max_drop=0.5, metric="complete@5"), k=5,
        cluster="metadata.fact_id", n_resamples=100, n_permutations=100,
    )  # fmt: skip
    row = next(r for r in res.rows if r.category == "a")
    assert row.verdict == "pass (n=9 in 3 clusters is too small for any conclusion)"
    plan = plan_sample(
        delta=0.05, dataset=ds, base=base, cand=cand, discordant=0.1, cluster="metadata.fact_id"
    )
    rows = {r["category"]: r for r in plan.rows}
    # the gate was comparison #1: 6 tests x the second's factor 6, and 2 * 0.5**n <= 0.05 / 36
    # from n = 11 on
    assert rows["a"]["note"] == (
        "too few clusters to conclude: n=9 in 3 clusters, even all 3 flipping one way give "
        "p = 0.25 > 0.00139 (need >= 11 clusters)"
    )


def test_the_best_possible_p_is_the_exact_mcnemar_of_all_moving_one_way() -> None:
    # the note's best p (2 * 0.5**n, kept exact) is the exact McNemar test's own value for every
    # n up to 1,100, to the bit; the boundary is where the corrected p crosses alpha
    from assay.stats.paired import mcnemar_exact

    for n in range(1, 1_100):
        best = mcnemar_exact(n, 0).pvalue
        for family in (1, 6, 14):
            says = too_few_note(n, 0.05, family) != ""
            assert says == (best * family > 0.05), (n, family)
    # 2 * 0.5**6 = 1/32: one test at alpha 1/32 concludes on 6 of 6, not on 5 of 5
    assert too_few_note(6, 1 / 32) == "" and too_few_note(5, 1 / 32) != ""
