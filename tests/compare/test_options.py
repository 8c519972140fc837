"""Compare, the gate and the leaderboard take one frozen value of options (`CompareOptions`),
built once and passed down; each option is also a keyword of the public functions (their
spelling, `RunsOptions`), which changes the value given."""

from __future__ import annotations

import inspect
import typing
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest
from tests.conftest import write_case

from assay.compare import CompareOptions, RunsOptions, compare_arrays, compare_many, compare_runs
from assay.dataset import load_dataset
from assay.runs import load_run

STATISTICS = {"seed", "n_resamples", "n_permutations", "confidence", "ci_method", "alpha"}
STATISTICS |= {"binary_ci"}


def test_the_keywords_are_the_options_value() -> None:
    """The keywords name exactly the value's fields, with the same types."""
    names = [f.name for f in fields(CompareOptions)]
    assert set(RunsOptions.__optional_keys__) == set(names) and not RunsOptions.__required_keys__
    hints = typing.get_type_hints(RunsOptions)
    assert list(hints) == names and hints == typing.get_type_hints(CompareOptions)


def test_the_statistics_are_compare_arrays_own_with_its_defaults() -> None:
    own = inspect.signature(compare_arrays).parameters
    keywords = {n for n, p in own.items() if p.kind is p.KEYWORD_ONLY}
    # compare_arrays's keywords but those its callers set from the runs (k, metrics) or pass as
    # objects (kinds, clusters)
    assert keywords - {"metrics", "k", "kinds", "clusters"} == STATISTICS
    defaults = CompareOptions()
    assert {n: getattr(defaults, n) for n in STATISTICS} == {n: own[n].default for n in STATISTICS}


def test_the_defaults_are_the_documented_ones() -> None:
    assert CompareOptions() == CompareOptions(
        seed=0, n_resamples=10_000, n_permutations=10_000, confidence=0.95, ci_method="score",
        alpha=0.05, binary_ci="tango", k=5, metrics=None, level="chunk", by="category",
        cluster="auto", skip_stale=False, allow_changed_entries=False, allow_corpus_change=False,
        max_unknown_share=None, command="compare", allow_reuse=False, tiers=None, record=True,
        record_switch="record=False",
    )  # fmt: skip
    given = CompareOptions(k=10, by="format")
    assert CompareOptions.of(given, {"seed": 3}) == CompareOptions(k=10, by="format", seed=3)
    assert CompareOptions.of(None, {}) == CompareOptions() and CompareOptions.of(given, {}) is given
    with pytest.raises(FrozenInstanceError):
        given.k = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="n_resample"):
        CompareOptions.of(given, {"n_resample": 3})  # type: ignore[typeddict-unknown-key]


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
    # the same options as one value, or a value changed by keywords
    value = CompareOptions(k=3, seed=11, n_resamples=200, n_permutations=200, allow_reuse=True)
    assert compare_runs(data, b, c, options=value).to_dict() == pair.to_dict()
    changed = compare_runs(data, b, c, options=value, seed=12)
    assert changed.seed == 12 and changed.k == 3
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
