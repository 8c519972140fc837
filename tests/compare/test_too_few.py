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
