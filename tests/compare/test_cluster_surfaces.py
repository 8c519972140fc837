"""``--cluster`` on check, sweep and the explorer: the same default as compare and gate (by
evidence document when a dataset has more than one entry per document), each interval treating
a cluster as one draw, and the header saying how entries were clustered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.compare.room_runs import ids_of, room, write_chunks, write_run_file
from typer.testing import CliRunner

import assay.cli.judge_cmds  # noqa: F401
from assay.cli import app
from assay.dataset.io import load_dataset
from assay.judge.checks import check_files

runner = CliRunner()


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("surfaces")
    golden = room(d / "room")
    chunks = d / "chunks.jsonl"
    gold = write_chunks(golden, chunks)
    lookups = ids_of(golden, "numeric_lookup")
    five = write_run_file(golden, gold, d / "five.jsonl", broken=lookups[:5])
    good = write_run_file(golden, gold, d / "good.jsonl")
    return {"golden": golden, "chunks": chunks, "five": five, "good": good}


def test_check_rates_treat_a_document_as_one_draw_by_default(case: dict[str, Any]) -> None:
    kw: dict[str, Any] = {"chunks": case["chunks"], "checks": "answer_correct"}
    clustered = check_files(case["golden"], case["five"], **kw)
    flat = check_files(case["golden"], case["five"], cluster="none", **kw)
    assert flat.clustering is None and clustered.clustering is not None
    n = len(clustered.rows)
    entries = len(load_dataset(case["golden"]).entries)
    assert clustered.clustering.entries == n and clustered.clustering.clusters < entries
    words = f"Clustered by document: {n} entries in {clustered.clustering.clusters} clusters"
    assert clustered.to_markdown().startswith(f"> {words}")
    assert words not in flat.to_markdown()
    c = clustered.rates["overall"]["answer_correct"].interval
    f = flat.rates["overall"]["answer_correct"].interval
    assert c.value == f.value
    assert c.low is not None and f.low is not None and c.high is not None and f.high is not None
    # the broken answers share documents: the design effect widens the interval
    assert c.high - c.low > f.high - f.low
    assert (c.method or "").startswith("cluster")
    assert clustered.to_dict()["clustering"]["field"] == "doc"


def test_check_cli_cluster_option(case: dict[str, Any]) -> None:
    out = {}
    for how in ("auto", "company", "none"):
        res = runner.invoke(
            app,
            ["check", str(case["golden"]), str(case["five"]), "--chunks", str(case["chunks"]),
             "--checks", "answer_correct", "--cluster", how, "-f", "json"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        out[how] = json.loads(res.output[res.output.index("{") :])
    assert out["auto"]["clustering"]["field"] == "doc"
    assert out["company"]["clustering"]["clusters"] == 2
    assert out["none"]["clustering"] is None
    res = runner.invoke(
        app,
        ["check", str(case["golden"]), str(case["five"]), "--chunks", str(case["chunks"]),
         "--checks", "answer_correct", "-f", "markdown"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Clustered by document:" in res.output
