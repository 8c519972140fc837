"""`compare_runs` and `compare_many` take one set of keyword options (`RunsOptions`): how runs
are read into series, with their defaults in one place, and `compare_arrays`'s statistics."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest
from tests.conftest import write_case

from assay.compare import CompareOptions, RunsOptions, compare_arrays, compare_many, compare_runs
from assay.compare._reading import Reading
from assay.dataset.io import load_dataset
from assay.runs import load_run


def test_the_options_are_the_reading_and_the_statistics() -> None:
    reading = {f.name for f in fields(Reading)}
    stats = set(CompareOptions.__optional_keys__)
    assert set(RunsOptions.__optional_keys__) == reading | stats and not reading & stats
    # compare_arrays's own keywords, but those compare_series sets itself
    own = inspect.signature(compare_arrays).parameters
    assert stats == {n for n, p in own.items() if p.kind is p.KEYWORD_ONLY} - {"metrics", "k"}


def test_the_defaults_are_the_documented_ones() -> None:
    assert Reading() == Reading(
        k=5, chunks=None, level="chunk", metrics=None, allow_reuse=False, command="compare",
        allow_corpus_change=False, by="category", skip_stale=False,
        allow_changed_entries=False, base_chunks=None, max_unknown_share=None,
    )  # fmt: skip
    reading, rest = Reading.split({"k": 10, "by": "format", "seed": 3, "n_resamples": 100})
    assert (reading.k, reading.by, reading.level) == (10, "format", "chunk")
    assert rest == {"seed": 3, "n_resamples": 100}


def test_both_functions_read_runs_alike(tmp_path: Path) -> None:
    """The options reach the reading (k) and the statistics (seed, resamples) in both, and a
    misspelt option is refused as before."""
    ds, base, cand = write_case(tmp_path, {"a": [(0, 2), (2, 2), (1, 2)] * 5})
    data, b, c = load_dataset(ds), load_run(base), load_run(cand)
    kw = {"k": 3, "seed": 11, "n_resamples": 200, "n_permutations": 200, "allow_reuse": True}
    pair = compare_runs(data, b, c, **kw)  # type: ignore[arg-type]
    board = compare_many(data, b, [c], names=["cand"], **kw)  # type: ignore[arg-type]
    assert pair.k == 3 and pair.seed == 11 and pair.n_resamples == 200
    assert pair.to_dict()["overall"] == board.comparisons[0].to_dict()["overall"]
    with pytest.raises(TypeError, match="n_resample"):
        compare_runs(data, b, c, n_resample=200)  # type: ignore[call-arg]


def test_the_file_functions_load_alike(tmp_path: Path) -> None:
    """compare_files and compare_many_files load their inputs one way: a bad level is refused
    before any file is read, and the runs are read in the order given."""
    from assay.compare import compare_files, compare_many_files

    nowhere = tmp_path / "missing.jsonl"
    for call in (
        lambda: compare_files(nowhere, nowhere, nowhere, level="doc"),
        lambda: compare_many_files(nowhere, nowhere, [nowhere, nowhere], level="doc"),
    ):
        with pytest.raises(ValueError, match="level must be 'chunk' or 'page'"):
            call()
    ds, base, cand = write_case(tmp_path, {"a": [(0, 2), (2, 2), (1, 2)] * 5})
    board = compare_many_files(
        ds, base, [cand, base], record=False, n_resamples=100, n_permutations=100
    )
    assert [c.cand_run for c in board.comparisons] == [load_run(cand).hash, load_run(base).hash]
    assert all(c.base_run == load_run(base).hash for c in board.comparisons)


def test_the_command_line_gives_both_paths_the_same_options(tmp_path: Path) -> None:
    """`assay compare` with one candidate and with several passes the same options."""
    import json
    import shutil

    from typer.testing import CliRunner

    import assay.cli.stats_cmds  # noqa: F401
    from assay.cli import app

    ds, base, cand = write_case(tmp_path, {"a": [(0, 2), (2, 2), (1, 2)] * 5})
    other = tmp_path / "other.jsonl"
    shutil.copy(cand, other)
    flags = ["--resamples", "100", "--permutations", "120", "--seed", "3", "--k", "4",
             "--binary-ci", "newcombe", "--ci-method", "percentile", "--alpha", "0.1",
             "--confidence", "0.9", "--no-record", "-f", "json"]  # fmt: skip
    settings = ("k", "seed", "n_resamples", "n_permutations", "confidence", "ci_method",
                "binary_ci", "alpha", "cand_run")  # fmt: skip
    runner = CliRunner()
    pair = json.loads(runner.invoke(app, ["compare", str(ds), str(base), str(cand), *flags]).stdout)
    many = runner.invoke(app, ["compare", str(ds), str(base), str(cand), str(other), *flags])
    board = json.loads(many.stdout)["comparisons"]["cand"]
    assert {s: pair[s] for s in settings} == {s: board[s] for s in settings}
    assert (pair["k"], pair["seed"], pair["binary_ci"], pair["ci_method"]) == (
        4, 3, "newcombe", "percentile",
    )  # fmt: skip
    # the same cell but for Holm, whose family the leaderboard widens to both candidates
    cells = [dict(c["overall"]["metrics"]["complete@4"]) for c in (pair, board)]
    assert cells[0].pop("p_holm") < cells[1].pop("p_holm")
    assert cells[0] == cells[1]


def test_series_of_different_room_versions_refuse_to_compare() -> None:
    """The one room check serves compare_scores and the series of compare_runs/compare_many."""
    from assay.compare import RunSeries
    from assay.compare._reading import same_room
    from assay.errors import DataError

    v1 = RunSeries({}, {}, room="assay-synth/1.0", run_hash="r1")
    v2 = RunSeries({}, {}, room="assay-synth/2.0", run_hash="r2")
    with pytest.raises(DataError, match="different room versions"):
        same_room(v1, v2)
    same_room(v1, v1)
    same_room(v1, RunSeries({}, {}))  # a run that names no room is not refused
