"""compare_arrays / compare_runs: rates, flips, tests, Holm, ledger correction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from assay.compare import compare_arrays, compare_runs, min_entries_for_conclusion, record_in_ledger
from assay.compare.ledger import ledger_path, read_ledger
from assay.dataset import load_dataset
from assay.runs import load_run


def _arrays(
    seed: int = 0,
) -> tuple[list[str], list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n = 300
    ids = [f"e{i:04d}" for i in range(n)]
    cats = [["lookup", "comparison", "trend"][i % 3] for i in range(n)]
    base_r = rng.integers(0, 4, n) / 3
    cand_r = np.where(rng.random(n) < 0.2, rng.integers(0, 4, n) / 3, base_r)
    base = {"complete@5": (base_r == 1).astype(float), "recall@5": base_r}
    cand = {"complete@5": (cand_r == 1).astype(float), "recall@5": cand_r}
    return ids, cats, base, cand


def test_rows_match_direct_computation() -> None:
    ids, cats, base, cand = _arrays()
    cmp = compare_arrays(ids, cats, base, cand, seed=3, n_resamples=2000, n_permutations=2000)
    assert list(cmp.categories) == ["comparison", "lookup", "trend"]
    ca = np.asarray(cats)
    for cat, row in cmp.categories.items():
        mask = ca == cat
        mc = row.metrics["complete@5"]
        b, c = base["complete@5"][mask], cand["complete@5"][mask]
        assert mc.base == pytest.approx(b.mean()) and mc.cand == pytest.approx(c.mean())
        assert mc.delta.value == pytest.approx((c - b).mean())
        fixed = sorted(np.asarray(ids)[mask][(b == 0) & (c == 1)])
        broken = sorted(np.asarray(ids)[mask][(b == 1) & (c == 0)])
        assert list(mc.fixed) == fixed and list(mc.broken) == broken
        if fixed or broken:
            ref = sps.binomtest(len(fixed), len(fixed) + len(broken)).pvalue
            assert mc.p == pytest.approx(ref)
        rc = row.metrics["recall@5"]
        assert set(rc.tests) == {"wilcoxon", "sign_flip", "score"}
        # the graded delta's interval is the one its score test inverts
        assert rc.delta.method == "score"
        excludes = rc.delta.low > 0 or rc.delta.high < 0
        assert excludes == (rc.tests["score"].pvalue < 0.05)
    # Holm across (3 categories + overall) x 2 metrics: one family per comparison
    family = [mc for row in cmp.rows for mc in row.metrics.values()]
    assert len(family) == 8
    ref = multipletests([mc.p for mc in family], method="holm")[1]
    np.testing.assert_allclose([mc.p_holm for mc in family], ref)
    assert cmp.overall.n == 300


def test_same_seed_bit_identical_and_category_independent() -> None:
    ids, cats, base, cand = _arrays(1)
    a = compare_arrays(ids, cats, base, cand, seed=7, n_resamples=1000, n_permutations=1000)
    b = compare_arrays(ids, cats, base, cand, seed=7, n_resamples=1000, n_permutations=1000)
    assert a.to_json() == b.to_json()
    keep = [i for i, c in enumerate(cats) if c != "trend"]
    sub = compare_arrays(
        [ids[i] for i in keep],
        [cats[i] for i in keep],
        {m: v[keep] for m, v in base.items()},
        {m: v[keep] for m, v in cand.items()},
        seed=7,
        n_resamples=1000,
        n_permutations=1000,
    )
    assert (
        sub.categories["lookup"].metrics["complete@5"].delta
        == a.categories["lookup"].metrics["complete@5"].delta
    )


def test_worked_example_through_compare() -> None:
    # 200 entries: 6 fixed, 0 broken -> p = 0.031; 16 fixed, 10 broken -> p ~ 0.33.
    for fixed, broken, p in ((6, 0, 0.03125), (16, 10, 0.3269)):
        b = np.array([0.0] * fixed + [1.0] * broken + [1.0] * (200 - fixed - broken))
        c = np.array([1.0] * fixed + [0.0] * broken + [1.0] * (200 - fixed - broken))
        ids = [f"q{i}" for i in range(200)]
        cmp = compare_arrays(
            ids, ["x"] * 200, {"complete@5": b}, {"complete@5": c}, n_resamples=500
        )
        mc = cmp.categories["x"].metrics["complete@5"]
        assert (len(mc.fixed), len(mc.broken)) == (fixed, broken)
        assert mc.delta.value == pytest.approx(0.03)
        assert mc.p == pytest.approx(p, abs=5e-4)


def test_small_category_says_so() -> None:
    assert min_entries_for_conclusion(0.05, 1) == 6
    ids = [f"q{i}" for i in range(40)]
    cats = ["big"] * 36 + ["tiny"] * 4
    b = np.zeros(40)
    c = np.ones(40)
    cmp = compare_arrays(ids, cats, {"complete@5": b}, {"complete@5": c}, n_resamples=500)
    assert cmp.categories["tiny"].small_n and "too few entries" in cmp.categories["tiny"].note
    assert not cmp.categories["big"].small_n


def test_compare_runs_formats_and_ledger(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outcomes = {
        "lookup": [(2, 2)] * 20 + [(0, 2)] * 6 + [(1, 2)] * 3,
        "comparison": [(2, 0)] * 5 + [(2, 2)] * 15 + [(1, 1)] * 4,
    }
    ds_path, base_path, cand_path = make_case(outcomes)
    ds = load_dataset(ds_path)
    cmp = compare_runs(
        ds, load_run(base_path), load_run(cand_path), k=5, n_resamples=1000, n_permutations=1000
    )
    lk = cmp.categories["lookup"].metrics
    assert lk["complete@5"].cand == 1.0
    assert len(lk["complete@5"].fixed) == 9 and not lk["complete@5"].broken
    assert lk["recall@5"].delta.value == pytest.approx((6 * 1 + 3 * 0.5) / 29)
    cp = cmp.categories["comparison"].metrics["complete@5"]
    assert len(cp.broken) == 5 and cp.broken[0] == "comparison-000"
    assert cmp.dataset_version and cmp.base_run and cmp.cand_run
    md = cmp.to_markdown()
    assert "| lookup |" in md and "comparison-000" in md
    data = json.loads(cmp.to_json())
    assert data["categories"]["comparison"]["metrics"]["complete@5"]["broken"] == 5
    # ledger: numbered, corrected
    r1 = record_in_ledger(cmp, ds_path, command="compare")
    assert r1["t"] == 1 and cmp.ledger_t == 1
    holm_p = cp.p_holm
    assert cp.p_ledger == pytest.approx(min(1.0, holm_p * 2))
    # the same comparison again (rendered twice, re-run) is one comparison: number 1 again
    again = record_in_ledger(cmp, ds_path, command="compare")
    assert again["t"] == 1 and again["repeat"] and cmp.ledger_repeat
    assert cp.p_ledger == pytest.approx(min(1.0, holm_p * 2))
    # a different comparison (another metric set) is the second
    cmp2 = compare_runs(
        ds,
        load_run(base_path),
        load_run(cand_path),
        k=5,
        metrics=["complete@5", "recall@5", "mrr"],
        n_resamples=200,
        n_permutations=200,
    )
    r2 = record_in_ledger(cmp2, ds_path, command="compare")
    cp = cmp2.categories["comparison"].metrics["complete@5"]
    assert r2["t"] == 2 and not r2["repeat"]
    assert cp.p_ledger == pytest.approx(min(1.0, cp.p_holm * 6))
    assert ledger_path(ds_path) == tmp_path / "golden.ledger.jsonl"
    recs = read_ledger(ds_path)
    assert [r["t"] for r in recs] == [1, 2]
    assert recs[1]["pvalues"]["comparison"]["complete@5"]["mcnemar_exact"] == pytest.approx(cp.p)
    cmp = cmp2
    assert "Comparison #2" in cmp.to_markdown()
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=200).print(cmp.to_table())
    assert "lookup" in buf.getvalue() and "Comparison #2" in buf.getvalue()


def test_comparison_json_keeps_full_precision(make_case) -> None:  # type: ignore[no-untyped-def]
    """JSON carries full float precision; tables round for people."""
    from assay.compare import compare_files

    ds, base, cand = make_case({"lookup": [(1, 2), (0, 2), (0, 2)]})
    cmp = compare_files(ds, base, cand, k=5, n_resamples=200, n_permutations=200, record=False)
    recall = json.loads(cmp.to_json())["overall"]["metrics"]["recall@5"]
    assert recall["cand"] == 1.0
    assert recall["base"] == 0.5 / 3  # 0.16666666666666666, not 0.1666666667
