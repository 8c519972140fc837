"""Conversations end to end: a system that resolves "the year before" from its history passes
more follow-up turns with history "own" than with "none"; score and check roll the turns up per
conversation (checked against a pandas groupby); compare clusters by conversation by default and
pairs by conversation when asked, in every output format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tests.conftest import write_jsonl
from tests.runner import history_systems as hs
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.compare import compare_files
from assay.dataset import load_dataset
from assay.judge import check_run
from assay.runner import run_system
from assay.runs import load_run

N = 12


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("conv")
    ds_path = write_jsonl(tmp / "conv.jsonl", hs.conversations(N))
    ds = load_dataset(ds_path)
    out = {"ds": ds_path}
    for mode in ("own", "none"):
        out[mode] = tmp / f"{mode}.jsonl"
        run_system(
            ds, hs.YearBefore(), history=mode, out=out[mode], progress=False,
            cache=RequestCache(tmp / "c.sqlite", enabled=False),
        )  # fmt: skip
    return out


def _follow_ups_passed(report: Any) -> int:
    return sum(1 for r in report.rows if r["id"].endswith("#2") and r["kept_context"] is True)


def test_history_own_passes_more_follow_ups_than_none(made: dict[str, Path]) -> None:
    checks = ["answer_correct", "kept_context", "no_contradiction"]
    ds = load_dataset(made["ds"])
    own = check_run(ds, load_run(made["own"]), checks=checks)
    none = check_run(ds, load_run(made["none"]), checks=checks)
    assert _follow_ups_passed(own) == N and _follow_ups_passed(none) == 0
    # the roll-up per conversation, against a pandas groupby of the per-turn rows
    for rep in (own, none):
        df = pd.DataFrame(rep.rows)
        df["conv"] = df["id"].str.split("#").str[0]
        df["ok"] = df["answer_correct"].astype(float)
        per = df.groupby("conv")["ok"]
        got = rep.conversations.values["answer_correct"]
        assert got["mean"] == pytest.approx(per.mean().mean())
        assert got["every_turn"] == pytest.approx((per.min() == 1.0).mean())
        assert (rep.conversations.conversations, rep.conversations.turns) == (N, 2 * N)
    # without history every follow-up is answered for fiscal 2023: half of each conversation
    assert none.conversations.values["answer_correct"]["mean"] == 0.5
    # the clustering says it is by conversation
    assert own.clustering is not None and own.clustering.field == "conversation"
    assert own.clustering.clusters == N


def test_compare_clusters_by_conversation_and_pairs_by_it(made: dict[str, Path]) -> None:
    cmp = compare_files(made["ds"], made["none"], made["own"], metrics=["kept_context"],
                        record=False)  # fmt: skip
    assert cmp.clustering is not None and cmp.clustering.field == "conversation"
    mc = cmp.overall.metrics["kept_context"]
    assert (len(mc.up), len(mc.down)) == (N, 0)
    assert mc.p_holm < 0.01
    paired = compare_files(made["ds"], made["none"], made["own"],
                           metrics=["kept_context", "recall@5"], record=False,
                           pair="conversation")  # fmt: skip
    assert paired.clustering is None
    assert any("Paired by conversation" in n and f"{N} pairs" in n for n in paired.notes)
    pk = paired.overall.metrics["kept_context"]
    assert (len(pk.up), len(pk.down), pk.n) == (N, 0, N)
    # recall@5 per conversation is the mean of its two turns: 1.0 with own, 0.5 with none
    rc = paired.overall.metrics["recall@5"]
    assert rc.n == N and rc.base == 0.5 and rc.cand == 1.0


def test_the_command_line_shows_the_roll_up_in_every_format(made: dict[str, Path]) -> None:
    runner = CliRunner()
    for fmt in ("table", "markdown", "json"):
        res = runner.invoke(
            app, ["score", str(made["ds"]), str(made["own"]), "--format", fmt, "--ci"]
        )
        assert res.exit_code == 0, res.output
        if fmt == "json":
            data = json.loads(res.output)
            assert data["conversations"]["conversations"] == N
            assert data["conversations"]["scores"]["complete@5"]["every_turn"] == 1.0
            assert data["clustering"]["field"] == "conversation"
        else:
            said = " ".join(res.output.split())  # the table's caption wraps
            assert f"{N} conversations, {2 * N} turns" in said
            assert "every turn passes in 12 of 12 conversations" in said
        res = runner.invoke(
            app, ["check", str(made["ds"]), str(made["none"]), "--format", fmt,
                  "--checks", "kept_context"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        if fmt == "json":
            rolled = json.loads(res.output)["conversations"]["scores"]["kept_context"]
            assert (rolled["passed"], rolled["n"]) == (0, N)
        else:
            assert "every turn passes in 0 of 12 conversations" in " ".join(res.output.split())
    res = runner.invoke(
        app, ["compare", str(made["ds"]), str(made["none"]), str(made["own"]), "--metrics",
              "kept_context", "--pair", "conversation", "--no-record"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Paired by conversation" in res.output
    bad = runner.invoke(
        app, ["compare", str(made["ds"]), str(made["none"]), str(made["own"]), "--pair", "x",
              "--no-record"],
    )  # fmt: skip
    assert bad.exit_code == 2 and "--pair must be turn or conversation" in bad.output


def test_the_gate_counts_unrated_conversations_in_conversation_units(tmp_path: Path) -> None:
    """With --pair conversation a check's by-design abstentions are conversations none of
    whose turns it rates (a one-turn conversation for kept_context), not turn ids."""
    from assay.compare.gate import unrated_entries
    from assay.compare.pairing import unrated_units

    rows = hs.conversations(2)
    single = json.loads(json.dumps(rows[0]))
    single["id"], single["turns"] = "conv-solo", single["turns"][:1]
    plain = {"id": "q1", "query": "What is X?", "category": "carried_context"}
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", [*rows, single, plain]))
    by_turn = unrated_entries(ds.entries, ["kept_context"])
    assert by_turn["kept_context"] == {"conv-0#1", "conv-1#1", "conv-solo#1", "q1"}
    assert unrated_units(by_turn, ds.entries) == {"kept_context": {"conv-solo", "q1"}}


def test_a_failure_counting_check_rolls_up_as_any_turn_failing() -> None:
    """A check whose 1 is the failure (``higher_is_better=False``, such as
    abstained_when_should_answer): a conversation fails it when any turn does, in the paired
    series and in the report's roll-up ("every turn passes" counts conversations with no
    failure), not when every turn does."""
    import numpy as np

    from assay.compare import RunSeries, Series, per_conversation
    from assay.dataset import parse_entries, rollup

    entries, _, problems = parse_entries(enumerate(hs.conversations(3), start=1), file="conv.jsonl")
    assert not problems
    ids = [e.id for e in entries]  # conv-0#1, conv-0#2, conv-1#1, ...
    err = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]  # conv-0 fails one turn, conv-1 none, conv-2 both
    ok = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    rs = RunSeries(
        series={
            "abstained_when_should_answer": Series.from_values(
                "abstained_when_should_answer",
                "binary",
                dict(zip(ids, err, strict=True)),
                higher_is_better=False,
                source="check",
            ),
            "answer_correct": Series.from_values(
                "answer_correct", "binary", dict(zip(ids, ok, strict=True)), source="check"
            ),
        },
        groups={i: "carried_context" for i in ids},
    )
    rolled = per_conversation(rs, entries)
    np.testing.assert_array_equal(rolled["abstained_when_should_answer"].values, [1, 0, 1])
    assert not rolled["abstained_when_should_answer"].higher_is_better
    np.testing.assert_array_equal(rolled["answer_correct"].values, [0, 1, 0])
    report = rollup(
        ids,
        {"abstained_when_should_answer": err, "answer_correct": ok},
        entries,
        binary=["abstained_when_should_answer", "answer_correct"],
        failures=["abstained_when_should_answer"],
    )
    assert report is not None
    assert report.values["abstained_when_should_answer"]["passed"] == 1  # conv-1 alone
    assert report.values["answer_correct"]["passed"] == 1
    assert any("every turn passes in 1 of 3" in line for line in report.lines())
