"""A gate never passes on entries its check did not decide: a gated check that abstains on more
than ``max_abstain`` of a category's entries (or of all) fails the gate, naming the check, the
category and the count; abstentions on entries the check does not rate by design do not count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.compare.room_runs import room, write_chunks, write_run_file
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.compare import GatePolicy, compare_arrays, gate
from assay.pytest_plugin import gate_or_fail

NAN = float("nan")


def _cmp(values: dict[str, list[float]]) -> Any:
    ids = [f"{c}-{i}" for c, vs in values.items() for i in range(len(vs))]
    cats = [c for c, vs in values.items() for _ in vs]
    v = np.array([x for vs in values.values() for x in vs])
    return compare_arrays(ids, cats, {"answer_correct": v}, {"answer_correct": v}, n_resamples=200)


def test_a_category_the_check_mostly_abstains_on_fails_and_is_named() -> None:
    # a: 6 of 10 undecided; b: all 10 decided (and unchanged); overall 6 of 20
    cmp = _cmp({"a": [NAN] * 6 + [1.0] * 4, "b": [1.0] * 10})
    res = gate(cmp, GatePolicy(metric="answer_correct"))
    assert not res.passed and res.exit_code == 1
    assert res.failed_categories == ["a"]
    row = res.rows[0]
    assert row.too_few == (6, 10) and "answer_correct abstained on 6 of 10" in row.verdict
    assert res.headline() == ("FAIL: answer_correct abstained on too many entries in a (6 of 10).")
    assert "more than 0.5 of a row's entries" in res.rule()
    assert res.to_dict()["max_abstain"] == 0.5
    # the share is an option: 0.6 of 10 is within 0.6
    assert gate(cmp, GatePolicy(metric="answer_correct", max_abstain=0.6)).passed


def test_the_overall_share_fails_even_when_no_category_is_over() -> None:
    cmp = _cmp({"a": [NAN] * 5 + [1.0] * 5, "b": [NAN] * 5 + [1.0] * 5, "c": [NAN, 1.0]})
    res = gate(cmp, GatePolicy(metric="answer_correct", max_abstain=0.5))
    assert res.passed  # 11 of 22 is exactly half
    res = gate(cmp, GatePolicy(metric="answer_correct", max_abstain=0.45))
    assert not res.passed
    assert res.failed_categories == ["a", "b", "c", "overall"]
    assert res.overall.too_few == (11, 22) and res.overall.failed


def test_abstentions_where_the_check_does_not_rate_are_not_held_against_it() -> None:
    cmp = _cmp({"a": [NAN] * 6 + [1.0] * 4, "u": [NAN] * 4})
    unrated = {"answer_correct": [f"a-{i}" for i in range(5)] + [f"u-{i}" for i in range(4)]}
    res = gate(cmp, GatePolicy(metric="answer_correct"), unrated=unrated)
    # a: 1 of the 5 entries it rates undecided; u: rates none
    assert res.passed, res.headline()
    assert res.rows[1].verdict.startswith("not rated")
    assert not gate(cmp, GatePolicy(metric="answer_correct")).passed


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("abstain")
    golden = room(d / "room")
    gold = write_chunks(golden, d / "chunks.jsonl")
    return {"golden": golden, "good": write_run_file(golden, gold, d / "good.jsonl")}


def test_cli_gate_fails_on_a_check_that_cannot_decide_a_category(files: dict[str, Path]) -> None:
    # the room's conflict entries carry neither key facts nor a figure: answer_correct abstains
    # on all 4 (it does rate them); its unanswerable and refuse/escalate entries it does not rate
    g, run = str(files["golden"]), str(files["good"])
    fast = ["--resamples", "200", "--permutations", "200", "--no-record"]
    res = CliRunner().invoke(app, ["gate", g, run, run, "--metric", "answer_correct", *fast])
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    # the policy category's 10 undecided entries are the 10 it does not rate: not named
    assert "answer_correct abstained on too many entries in conflict (4 of 4)." in out
    res = CliRunner().invoke(
        app, ["gate", g, run, run, "--metric", "answer_correct", "--max-abstain", "1", *fast]
    )
    assert res.exit_code == 0, res.output


def test_the_pytest_plugin_applies_the_same_rule(files: dict[str, Path]) -> None:
    g, run = files["golden"], files["good"]
    kw: dict[str, Any] = {"metric": "answer_correct", "record": False, "n_resamples": 200}
    with pytest.raises(pytest.fail.Exception, match=r"abstained on too many entries in conflict"):
        gate_or_fail(g, run, run, **kw)
    assert gate_or_fail(g, run, run, max_abstain=1.0, **kw).passed
