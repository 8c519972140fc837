"""compare_many / assay compare with several candidates: the leaderboard and its one Holm family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests
from tests.conftest import _rows, write_case
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.compare import compare_runs
from assay.compare.leaderboard import compare_many, run_names
from assay.compare.ledger import read_ledger
from assay.dataset import load_dataset
from assay.report import render
from assay.runs import load_run, write_run

OUTCOMES = {
    "lookup": [(2, 2)] * 20 + [(0, 2)] * 8 + [(1, 2)] * 3,
    "comparison": [(2, 0)] * 5 + [(2, 2)] * 15 + [(1, 1)] * 4,
    "trend": [(0, 0)] * 6 + [(0, 2)] * 2,
}
# a second candidate: the baseline's outcome everywhere but a few lookups fixed
WEAKER = {
    "lookup": [(2, 2)] * 20 + [(0, 0)] * 6 + [(0, 2)] * 2 + [(1, 1)] * 3,
    "comparison": [(2, 2)] * 20 + [(1, 1)] * 4,
    "trend": [(0, 0)] * 8,
}


def _case(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    weaker = tmp_path / "weaker.jsonl"
    write_run(weaker, _rows(WEAKER, 1))
    return ds, base, cand, weaker


def test_holm_is_one_family_across_candidates(tmp_path: Path) -> None:
    ds_path, base, cand, weaker = _case(tmp_path)
    ds = load_dataset(ds_path)
    kw = {"k": 5, "n_resamples": 500, "n_permutations": 500}
    board = compare_many(
        ds, load_run(base), [load_run(cand), load_run(weaker)], names=["cand", "weaker"], **kw
    )
    cells = [mc for cmp in board.comparisons for row in cmp.rows for mc in row.metrics.values()]
    raw = np.array([mc.p for mc in cells])
    assert board.family_size == len(cells) == 2 * 4 * 2
    _, expected, _, _ = multipletests(raw, method="holm")
    np.testing.assert_allclose([mc.p_holm for mc in cells], expected, rtol=1e-12)
    # everything but the adjustment is the two-run comparison's
    pair = compare_runs(ds, load_run(base), load_run(cand), **kw)
    mine = board.comparisons[0]
    for c, row in pair.categories.items():
        for m, mc in row.metrics.items():
            other = mine.categories[c].metrics[m]
            assert (other.up, other.down, other.p) == (mc.up, mc.down, mc.p)
            assert other.delta.to_dict() == mc.delta.to_dict()
            assert other.p_holm >= mc.p_holm  # a bigger family never makes p smaller
    # the ranking: cand fixes more than weaker on complete@5 overall
    data = json.loads(board.to_json())
    assert [r["run"] for r in data["leaderboard"]] == ["cand", "weaker"]
    top = data["leaderboard"][0]["overall"]["complete@5"]
    assert top["up"] == 11 + 2 and top["down"] == 5
    assert data["comparisons"]["weaker"]["categories"]["lookup"]["metrics"]["complete@5"][
        "fixed_ids"
    ] == ["lookup-026", "lookup-027"]
    assert data["holm"]["size"] == 16


def test_leaderboard_tables_and_pandas(tmp_path: Path) -> None:
    ds_path, base, cand, weaker = _case(tmp_path)
    board = compare_many(
        load_dataset(ds_path),
        load_run(base),
        [load_run(cand), load_run(weaker)],
        names=["cand", "weaker"],
        n_resamples=200,
        n_permutations=200,
    )
    md = board.to_markdown()
    assert "Leaderboard: 2 candidates" in md and "| lookup |" in md
    df = board.to_pandas()
    overall = df[(df["table"].str.startswith("Per category")) & (df["category"] == "overall")]
    assert list(overall["run"]) == ["cand", "cand", "weaker", "weaker"]
    assert overall["cand"].tolist()[0] == pytest.approx(
        board.comparisons[0].overall.metrics["complete@5"].cand, abs=5e-4
    )


def test_the_leaderboard_states_what_each_column_controls(tmp_path: Path) -> None:
    # the CI columns are per cell while p Holm spans every candidate's cells: a CI that
    # excludes 0 next to an unstarred p Holm is not a contradiction, and the report says why
    ds_path, base, cand, weaker = _case(tmp_path)
    board = compare_many(
        load_dataset(ds_path),
        load_run(base),
        [load_run(cand), load_run(weaker)],
        names=["cand", "weaker"],
        n_resamples=200,
        n_permutations=200,
    )
    want = (
        "What each column controls: a delta's CI is per cell (its own 95%, not corrected for "
        "the other cells); p is the cell's own test; p Holm is Holm-corrected across the one "
        "family of 16 tests; the stars mark p Holm below alpha; the rank orders values, not "
        "significance."
    )
    for fmt in ("markdown", "table"):
        text = render(board, fmt)
        assert want in " ".join(text.split()), text


def test_run_names_disambiguate() -> None:
    assert run_names(["a/run.jsonl", "b/other.jsonl"]) == ["run", "other"]
    assert run_names(["a/run.jsonl", "b/run.jsonl"]) == ["a/run.jsonl", "b/run.jsonl"]


def test_cli_two_runs_unchanged_many_runs_leaderboard(tmp_path: Path) -> None:
    ds, base, cand, weaker = _case(tmp_path)
    runner = CliRunner()
    opts = ["--resamples", "200", "--permutations", "200", "--no-record", "-f", "json"]
    two = runner.invoke(app, ["compare", str(ds), str(base), str(cand), *opts])
    assert two.exit_code == 0, two.output
    assert json.loads(two.stdout)["schema"] == "assay.comparison/1"
    many = runner.invoke(app, ["compare", str(ds), str(base), str(cand), str(weaker), *opts])
    assert many.exit_code == 0, many.output
    data = json.loads(many.stdout)
    assert data["schema"] == "assay.leaderboard/1"
    assert set(data["comparisons"]) == {"cand", "weaker"}
    assert data["baseline"]["run"] == "base"
    # recorded: one ledger line per candidate comparison
    rec = runner.invoke(app, ["compare", str(ds), str(base), str(cand), str(weaker), *opts[:4]])
    assert rec.exit_code == 0, rec.output
    assert "Leaderboard" in rec.stdout
    assert [r["t"] for r in read_ledger(ds)] == [1, 2]
