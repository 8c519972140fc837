"""``--cluster`` on check, sweep and the explorer: the same default as compare and gate (by
evidence document when a dataset has more than one entry per document), each interval treating
a cluster as one draw, and the header saying how entries were clustered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.compare.room_runs import good_and_five
from typer.testing import CliRunner

import assay.cli.judge_cmds  # noqa: F401
from assay.cli import app
from assay.dataset import load_dataset
from assay.judge.checking import check_files

runner = CliRunner()


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return good_and_five(tmp_path_factory.mktemp("surfaces"))


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


def test_the_explorer_clusters_its_scores_checks_and_comparisons(
    case: dict[str, Any], tmp_path: Path
) -> None:
    from assay.explorer import export_bundle, render_site

    kw: dict[str, Any] = {"chunks": case["chunks"], "n_resamples": 200, "n_permutations": 200}
    runs = [case["good"], case["five"]]
    bundle = export_bundle(case["golden"], runs, metrics=["answer_correct"], **kw)
    clustered = bundle.data
    flat = export_bundle(case["golden"], runs, metrics=["answer_correct"], cluster="none", **kw)
    assert flat.data["clustering"] is None
    c = clustered["clustering"]
    assert c["field"] == "doc" and c["entries"] == 73 and c["clusters"] == 46
    # the check rates: a document is one draw, so the broken answers widen the interval
    cell = clustered["checks"]["five"]["rates"]["overall"]["answer_correct"]["interval"]
    flat_cell = flat.data["checks"]["five"]["rates"]["overall"]["answer_correct"]["interval"]
    assert cell["method"].startswith("cluster")
    assert cell["high"] - cell["low"] > flat_cell["high"] - flat_cell["low"]
    # the comparison: one cluster-level test
    mc = clustered["comparisons"]["five"]["overall"]["metrics"]["answer_correct"]
    assert mc["delta"]["method"] == "cluster sign-flip"
    flat_mc = flat.data["comparisons"]["five"]["overall"]["metrics"]["answer_correct"]
    assert flat_mc["delta"]["method"] != "cluster sign-flip"
    site = render_site(bundle, tmp_path / "site").index
    assert "Clustered by document: 73 entries in 46 clusters" in site.read_text()
