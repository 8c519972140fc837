"""Under clustering every report names the interval method that made the intervals it shows.

On the synthetic room (several questions on each evidence document, so clustering is on by
default) `assay score --ci` used to print the unclustered methods ("Wilson ...") under a table
whose cells were the cluster intervals; the compare header said "exact with at most 14
clusters" where the rule is the number of clusters that moved; the planner named the plain
exact McNemar while planning in clusters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.compare.room_runs import good_and_five
from typer.testing import CliRunner

import assay.cli.core_cmds
import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare import plan_sample
from assay.compare.render import cluster_line
from assay.score import ci_words
from assay.stats.clusters import EXACT_CLUSTERS, cluster_sign_flip, clustered_delta
from assay.stats.clusters import describe_clusters as describe

runner = CliRunner()

UNCLUSTERED = ci_words("score", 0, "auto")


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return good_and_five(tmp_path_factory.mktemp("words"))


def _score(case: dict[str, Any], *extra: str) -> str:
    res = runner.invoke(
        app,
        ["score", str(case["golden"]), str(case["five"]), "--chunks", str(case["chunks"]),
         "--ci", *extra],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return res.output


def _footer(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("k=5, level="))


@pytest.mark.parametrize("method", ["score", "percentile"])
def test_score_footer_names_the_cluster_intervals_its_cells_carry(
    case: dict[str, Any], method: str
) -> None:
    data = json.loads((out := _score(case, "--ci-method", method, "-f", "json"))[out.index("{") :])
    assert data["clustering"]["field"] == "doc"
    foot = _footer(_score(case, "--ci-method", method, "-f", "markdown"))
    # not the entry-level methods: no cell was drawn by them
    assert UNCLUSTERED not in foot and "bootstrap" not in foot
    assert "each cluster one draw" in foot
    names = {"cluster wilson": "cluster Wilson", "cluster clopper-pearson": "cluster Clopper-Pearson",
             "cluster score": "the score interval over the cluster means"}  # fmt: skip
    seen = set()
    for row in [*data["categories"].values(), data["overall"]]:
        for key, cell in row.items():
            if key.endswith("_ci"):
                seen.add(cell["method"])
                assert names[cell["method"]] in foot, (key, cell["method"], foot)
    assert "cluster clopper-pearson" in seen  # the room's cells reach the exact fallback


def test_score_footer_unclustered_names_the_entry_level_methods(case: dict[str, Any]) -> None:
    foot = _footer(_score(case, "--cluster", "none", "-f", "markdown"))
    assert foot.endswith(UNCLUSTERED)
    assert "cluster" not in foot
    out = _score(case, "--cluster", "none", "-f", "json")
    data = json.loads(out[out.index("{") :])
    # a graded metric (mrr) whose values in a cell are all 0 or 1 gets the rate interval: the
    # footer says so rather than naming the score interval for every graded cell
    zero_one = [
        row["mrr_ci"]["method"]
        for row in [*data["categories"].values(), data["overall"]]
        if "mrr_ci" in row and row["mrr"] in (0.0, 1.0)
    ]
    assert zero_one and all(m in ("wilson", "clopper-pearson") for m in zero_one), zero_one
    assert "on binary metrics and on graded cells whose values are all 0 or 1" in foot


def test_the_explorer_overview_names_the_cluster_intervals() -> None:
    from assay.explorer.site import _score_ci_words

    ci = {"method": "score", "seed": 0, "rate_method": "auto"}
    clustering = {"field": "doc", "entries": 57, "clusters": 30, "largest": 9}
    clustered = {"baseline": "a", "scores": {"a": {"ci": ci, "clustering": clustering}}}
    flat = {"baseline": "a", "scores": {"a": {"ci": ci, "clustering": None}}}
    assert _score_ci_words(clustered) == ci_words("score", 0, "auto", clustered=True)
    assert _score_ci_words(flat) == UNCLUSTERED != _score_ci_words(clustered)


def test_compare_header_states_the_moved_clusters_rule_the_test_applies() -> None:
    # 20 clusters, 5 of them moved: more clusters than EXACT_CLUSTERS, yet the test is exact
    k = EXACT_CLUSTERS + 6
    labels = np.repeat(np.arange(k), 3)
    a = np.zeros(labels.size)
    b = a.copy()
    b[:15] = 1.0  # the first five clusters move
    res = cluster_sign_flip(a, b, labels)
    assert res.method == "exact (32 sign patterns of the 5 clusters that moved)"
    assert clustered_delta(a, b, labels).test.method.startswith("exact")
    # every cluster moved: Monte Carlo, though the clusters in all are the same number
    b[:] = 1.0
    many = cluster_sign_flip(a, b, labels, rng=np.random.default_rng(0), n_permutations=500)
    assert many.method == f"monte carlo (500 sign patterns of the {k} clusters that moved)"
    line = cluster_line(describe("doc", labels))
    assert f"with at most {EXACT_CLUSTERS} clusters" not in line
    assert (
        f"exact (every sign pattern) when at most {EXACT_CLUSTERS} of a cell's clusters moved"
        in line
    )
    assert "else seeded Monte Carlo" in line


def test_compare_cli_header_says_moved(case: dict[str, Any]) -> None:
    res = runner.invoke(
        app,
        ["compare", str(case["golden"]), str(case["good"]), str(case["five"]), "--chunks",
         str(case["chunks"]), "--resamples", "100", "--no-record", "-f", "markdown"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"when at most {EXACT_CLUSTERS} of a cell's clusters moved" in text


def test_plan_names_the_clustered_test_when_it_plans_clusters(case: dict[str, Any]) -> None:
    clustered = plan_sample(
        delta=0.05, dataset=case["golden"], base=case["good"], cand=case["five"],
        chunks=case["chunks"], lifetime_comparisons=0,
    )  # fmt: skip
    assert clustered.clustered
    title = clustered.tabular().title
    assert "clustered McNemar" in title and "effective size" in title
    given = plan_sample(delta=0.05, rate=0.8, icc=0.3, per_cluster=4)
    assert "clustered McNemar" in given.tabular().title
    flat = plan_sample(delta=0.05, rate=0.8)
    assert not flat.clustered
    assert "(exact McNemar," in flat.tabular().title
    assert "clustered" not in flat.tabular().title


def test_the_pytest_plugin_summary_names_the_cluster_test_and_its_rule(
    case: dict[str, Any], tmp_path: Path
) -> None:
    from assay.pytest_plugin import gate_or_fail

    summary = tmp_path / "summary.md"
    gate_or_fail(
        case["golden"], case["good"], case["good"], metric="answer_correct",
        chunks=case["chunks"], record=False, max_abstain=1.0, summary=summary,
    )  # fmt: skip
    text = " ".join(summary.read_text().split())
    assert "Clustered by document" in text
    assert "Obuchowski's statistic inverted against t(K-1)" in text
    assert f"when at most {EXACT_CLUSTERS} of a cell's clusters moved" in text
    assert "McNemar exact on binary metrics" not in text


def test_check_header_names_the_cluster_intervals_its_cells_carry(case: dict[str, Any]) -> None:
    # the header said "cluster Wilson ...; counts: bootstrap" where most of the room's check
    # cells are cluster Clopper-Pearson (the exact fallback below 4 effective passes or fails)
    args = ["check", str(case["golden"]), str(case["five"]), "--chunks", str(case["chunks"])]
    res = runner.invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{") :])
    seen: set[str] = set()
    for cells in data["rates"].values():
        for cell in cells.values():
            if cell["interval"]["low"] is not None:  # else no interval, no method of its own
                seen.add(cell["interval"]["method"])
    table = runner.invoke(app, args)
    header = " ".join(table.output.split())  # the table wraps its header lines
    names = {"cluster wilson": "cluster Wilson", "cluster clopper-pearson": "cluster Clopper-Pearson",
             "cluster score": "the score interval over the cluster means",
             "percentile": "counts: bootstrap over entries"}  # fmt: skip
    assert "cluster clopper-pearson" in seen, seen
    for method in seen:
        assert names[method] in header, (method, header)
