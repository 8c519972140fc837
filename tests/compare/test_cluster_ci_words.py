"""The clustered report says how its CI is drawn as docs/statistics.md does: p from the cluster
sign-flip (clustered McNemar) test, the CI by inverting Obuchowski's statistic against t(K-1),
with only its end at 0 following the permutation p (it is not "the same test")."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_case

from assay.compare import compare_files
from assay.compare.render import cluster_line, delta_ci_words
from assay.stats.clusters import FLOOR_MOVED, ClusterSummary

SUMMARY = ClusterSummary(field="doc", entries=21, clusters=7, largest=3)


def test_the_cluster_line_says_what_the_ci_inverts() -> None:
    line = cluster_line(SUMMARY)
    assert "the CI inverts the same test" not in line
    assert "p and CI of each cell from one cluster-level test" not in line
    assert "p of each cell from one cluster-level test" in line
    assert "the CI is every shift Obuchowski's statistic does not reject against t(K-1)" in line
    assert f"score interval over the clusters' mean changes when fewer than {FLOOR_MOVED}" in line
    assert "its end at 0 set by p, so it excludes 0 exactly when p < 1 - its level" in line


def test_the_compare_header_does_not_call_the_ci_the_p_columns_test(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, {"x": [(1, 2), (2, 2), (2, 2)] * 7})
    cmp = compare_files(
        ds, base, cand, record=False, cluster="metadata.fact_id", n_permutations=200
    )
    words = delta_ci_words({"confidence": 0.95, "clustering": SUMMARY.to_dict()})
    assert words.startswith("95% CI: Obuchowski's statistic inverted against t(K-1)")
    assert "its end at 0 set by the p of the cell's cluster-level test" in words
    text = "\n".join(cmp.header_lines())
    assert "inverting each cell's cluster-level test" not in text
    assert "p: the same test" not in text
    assert "p: that cluster-level test" in text
