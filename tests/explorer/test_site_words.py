"""The explorer's pages say what the comparison did: the tests that gave its p and CI, in the
words of `assay compare`'s report (the cluster-level test on a clustered comparison, McNemar and
Wilcoxon on an unclustered one), and the key to a CI end shown as ``>0``/``<0`` once on every page
that shows one, and on no other."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from tests.conftest import write_case

from assay.compare.render import ROUNDS_TO_ZERO, cluster_line, delta_ci_words
from assay.explorer import export_bundle, render_site
from assay.stats.clusters import ClusterSummary

# 7 clusters of 3 (metadata.fact_id); one entry of each goes from one piece of two to both: all 7
# clusters move up, and recall@5's CI has its lower end just past 0, clustered (exact sign-flip
# p 2/128) or not (its end at 0 set by Wilcoxon's p)
UP = {"x": [(1, 2), (2, 2), (2, 2)] * 7}
PAGES = ("index.html", "compare-cand.html", "leaderboard.html")


def _site(tmp_path: Path, cluster: str) -> dict[str, str]:
    """The overview, comparison and leaderboard pages (markup left out, spaces collapsed) of
    the case's site: a baseline, a candidate and its twin (for the leaderboard)."""
    ds, base, cand = write_case(tmp_path, UP)
    twin = tmp_path / "twin.jsonl"
    twin.write_bytes(cand.read_bytes())
    ids = [f"x-{i:03d}-{p}" for i in range(len(UP["x"])) for p in "ab"]
    ids += [f"noise-{j}" for j in range(6)]  # every chunk the runs retrieve
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        "".join(
            json.dumps({"chunk_id": c, "doc_id": "d", "page": 1, "text": f"text of {c}"}) + "\n"
            for c in ids
        )
    )
    b = export_bundle(
        ds, [base, cand, twin], chunks=chunks, cluster=cluster, n_resamples=200,
        n_permutations=200,
    )  # fmt: skip
    site = render_site(b, tmp_path / "site").index.parent
    out = {}
    for name in PAGES:
        text = re.sub(r"<svg.*?</svg>", "", (site / name).read_text(), flags=re.S)
        out[name] = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))
    out["clustering"] = json.dumps(b.data["comparisons"]["cand"]["clustering"])
    return out


@pytest.mark.parametrize("cluster", ["metadata.fact_id", "none"])
def test_the_comparison_page_names_the_tests_the_comparison_used(
    tmp_path: Path, cluster: str
) -> None:
    pages = _site(tmp_path, cluster)
    page = pages["compare-cand.html"]
    clustering = json.loads(pages["clustering"])
    if cluster == "none":
        assert clustering is None
        tests = "McNemar exact on binary metrics, Wilcoxon over moved entries on graded ones"
        assert f"p from {tests};" in page  # the words of `assay compare`'s footer
        assert "Obuchowski" not in page and "sign-flip" not in page
    else:
        summary = ClusterSummary(**clustering)
        assert summary.clusters == 7 and summary.entries == 21
        assert cluster_line(summary) in page  # the words of `assay compare`'s header
        assert "p from that cluster-level test;" in page
        cis = delta_ci_words({"confidence": 0.95, "clustering": clustering})
        assert cis in page
        assert "McNemar exact" not in page and "McNemar's exact" not in page
        assert "Wilcoxon" not in page


@pytest.mark.parametrize("cluster", ["metadata.fact_id", "none"])
def test_every_page_showing_an_end_past_0_gives_its_key_once(tmp_path: Path, cluster: str) -> None:
    pages = _site(tmp_path, cluster)
    for name in PAGES:
        assert re.search(r"\+0\.167 \[>0, \+0\.\d{3}\]", pages[name]), name  # recall@5 overall
        assert pages[name].count(ROUNDS_TO_ZERO) == 1, (name, pages[name])


@pytest.mark.parametrize("cluster", ["metadata.fact_id", "none"])
def test_the_overview_sentences_are_apart(tmp_path: Path, cluster: str) -> None:
    index = _site(tmp_path, cluster)["index.html"]
    assert " 21 entries in 1 category, scored at k=5." in index
    assert "). Deltas are each candidate minus the baseline" in index
    assert ("). Clustered by metadata.fact_id: 21 entries in 7 clusters" in index) == (
        cluster != "none"
    )
    assert "compared. A delta's CI end shown as >0" in index
