"""``--cluster``: compare and gate treat questions on one document as one cluster.

On the synthetic room (73 gold entries on 46 evidence documents) the default clusters by
document and says so in the report header; ``cluster="none"`` restores the entry-level tests.
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
from assay.compare import compare_arrays, compare_runs, gate_files
from assay.compare.gate import GatePolicy
from assay.corpus import load_chunks
from assay.dataset import Entry, clustering_for, evidence_doc, load_dataset
from assay.errors import DataError
from assay.runs import load_run
from assay.stats.clusters import Clustering, clustered_delta
from assay.stats.multiple import holm

runner = CliRunner()


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return good_and_five(tmp_path_factory.mktemp("clusters"))


def _entry(i: str, evidence: list[Any], **meta: Any) -> Entry:
    return Entry(id=i, query="q?", category="c", evidence_paths=evidence, metadata=meta)


def test_the_evidence_document_and_what_auto_chooses() -> None:
    a = {"doc": "acme-2023-10k", "page": 3, "quote": "Revenue 10"}
    m = {"doc": "acme-2024-10k", "page": 2, "quote": "Revenue 10", "role": "mention"}
    assert evidence_doc(_entry("e1", [[[m, a]]])) == "acme-2023-10k"  # home before mention
    assert evidence_doc(_entry("e2", [[["acme-2023-10k/3/1~0badc0de"]]])) == "acme-2023-10k"
    assert evidence_doc(_entry("e3", [])) is None
    two_per_doc = [_entry(f"e{i}", [[[a]]] if i < 4 else []) for i in range(6)]
    auto = clustering_for(two_per_doc)
    assert auto is not None and auto.field == "doc"
    assert auto.summary([e.id for e in two_per_doc]).words() == (
        "clustered by document: 6 entries in 3 clusters"  # 4 on one document, 2 alone
    )
    one_per_doc = [
        _entry(f"e{i}", [[[{"doc": f"d{i}", "page": 1, "quote": "x"}]]]) for i in range(5)
    ]
    assert clustering_for(one_per_doc) is None
    assert clustering_for(two_per_doc, "none") is None
    by_company = clustering_for(
        [_entry("a", [], company="x"), _entry("b", [], company="x"), _entry("c", [])], "company"
    )
    assert by_company is not None
    assert by_company.labels(["a", "b", "c"]) == ["company:x", "company:x", "entry:c"]
    by_meta = clustering_for([_entry("a", [], filing="f1"), _entry("b", [])], "metadata.filing")
    assert by_meta is not None and by_meta.labels(["a", "b"]) == ["metadata.filing:f1", "entry:b"]
    with pytest.raises(DataError, match="nosuch"):
        clustering_for(two_per_doc, "nosuch")
    # a typo is named as a --cluster field, with what --cluster takes (it read as --by's)
    with pytest.raises(DataError) as err:
        clustering_for(two_per_doc, "metadata.compnay", file="fb.jsonl")
    problem = err.value.problems[0]
    assert (problem.file, problem.field) == ("fb.jsonl", "metadata.compnay")
    assert "cannot cluster by it (--cluster takes doc, company" in problem.message


def test_compare_arrays_takes_each_cells_p_and_ci_from_the_cluster_test_and_holms_them() -> None:
    rng = np.random.default_rng(4)
    n = 48
    ids = [f"e{i}" for i in range(n)]
    docs = [f"d{i // 4}" for i in range(n)]
    cats = ["a" if i < 24 else "b" for i in range(n)]
    base = (rng.random(n) < 0.5).astype(float)
    cand = np.where(np.arange(n) % 4 == 0, 1.0, base)  # one question per document fixed
    rec_b = rng.choice([0.0, 0.5, 1.0], n)
    rec_c = np.clip(rec_b + np.where(np.arange(n) < 8, 0.5, 0.0), 0, 1)
    clusters = Clustering("doc", dict(zip(ids, docs, strict=True)))
    cmp = compare_arrays(
        ids, cats, {"complete@5": base, "recall@5": rec_b},
        {"complete@5": cand, "recall@5": rec_c}, clusters=clusters, seed=3,
    )  # fmt: skip
    assert cmp.clustering is not None and cmp.clustering.clusters == 12
    assert cmp.header_lines()[0].startswith("Clustered by document: 48 entries in 12 clusters")
    assert cmp.to_dict()["clustering"] == {
        "field": "doc", "entries": 48, "clusters": 12, "largest": 4,
    }  # fmt: skip
    ps = []
    for row in cmp.rows:
        mask = np.array([c == row.category or row.category == "overall" for c in cats])
        for m, (b, c) in {"complete@5": (base, cand), "recall@5": (rec_b, rec_c)}.items():
            mc = row.metrics[m]
            want = clustered_delta(b[mask], c[mask], np.array(docs)[mask])
            assert mc.p == pytest.approx(want.test.pvalue)  # exact: at most 14 clusters
            assert (mc.delta.low, mc.delta.high) == (want.interval.low, want.interval.high)
            assert next(iter(mc.tests)) == (
                "clustered_mcnemar" if m == "complete@5" else "cluster_sign_flip"
            )
            ps.append(mc.p)
    got = [mc.p_holm for row in cmp.rows for mc in row.metrics.values()]
    assert got == pytest.approx(holm(ps).tolist())
    # entry-level, the same data look more certain: 12 fixed and none broken
    flat = compare_arrays(ids, cats, {"complete@5": base}, {"complete@5": cand}, seed=3)
    assert flat.clustering is None
    assert flat.overall.metrics["complete@5"].p <= cmp.overall.metrics["complete@5"].p


def test_compare_and_gate_cluster_the_room_by_document_by_default(case: dict[str, Any]) -> None:
    ds = load_dataset(case["golden"])
    good, five = load_run(case["good"]), load_run(case["five"])
    kw: dict[str, Any] = {"metrics": ["answer_correct"], "chunks": load_chunks(case["chunks"])}
    clustered = compare_runs(ds, good, five, n_resamples=200, **kw)
    flat = compare_runs(ds, good, five, n_resamples=200, cluster="none", **kw)
    assert clustered.clustering is not None and flat.clustering is None
    words = clustered.header_lines()[0]
    assert words.startswith("Clustered by document: 73 entries in 46 clusters")
    row, flat_row = (
        next(r for r in c.rows if r.category == "numeric_lookup") for c in (clustered, flat)
    )
    mc, fmc = row.metrics["answer_correct"], flat_row.metrics["answer_correct"]
    assert set(mc.broken) == set(case["lookups"][:5]) == set(fmc.broken)
    assert fmc.p == pytest.approx(2 * 0.5**5)  # five independent breaks: 0.0625
    # the five broken lookups sit on fewer documents, so the evidence is weaker
    labels = clustering_for(ds.entries)
    assert labels is not None
    docs = {labels.of[i] for i in case["lookups"][:5]}
    assert mc.p == pytest.approx(2 * 0.5 ** len(docs)) and len(docs) < 5
    # the gate: the same comparison, the same header
    res = gate_files(
        case["golden"], case["good"], case["five"], k=5, record=False, chunks=case["chunks"],
        policy=GatePolicy(metric="answer_correct", max_drop=0.02), n_resamples=200,
    )  # fmt: skip
    assert res.comparison.clustering is not None
    gated = next(r for r in res.rows if r.category == "numeric_lookup")
    assert gated.metric.p == pytest.approx(mc.p)


def test_cli_cluster_option_on_compare_and_gate(case: dict[str, Any], tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(Path(case["golden"]).read_bytes())
    common = ["--metrics", "answer_correct", "--chunks", str(case["chunks"]), "--resamples", "200"]
    out = tmp_path / "cmp.json"
    res = runner.invoke(
        app,
        ["compare", str(golden), str(case["good"]), str(case["five"]), *common, "--no-record",
         "--cluster", "company", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["clustering"]["clusters"] == 2
    assert "clustered by company" in res.output.lower()
    res = runner.invoke(
        app,
        ["gate", str(golden), str(case["good"]), str(case["five"]), "--metric", "answer_correct",
         "--chunks", str(case["chunks"]), "--resamples", "200", "--no-record", "--cluster", "none",
         "--format", "json"],
    )  # fmt: skip
    assert res.exit_code == 1, res.output
    assert '"clustering": null' in res.output
    res = runner.invoke(
        app,
        ["compare", str(golden), str(case["good"]), str(case["five"]), *common, "--no-record",
         "--cluster", "metadata.nosuch"],
    )  # fmt: skip
    assert res.exit_code == 2 and "metadata.nosuch" in res.output


def test_the_pytest_plugin_clusters_through_the_gate(case: dict[str, Any]) -> None:
    from assay.pytest_plugin import gate_or_fail

    kw: dict[str, Any] = {"metric": "answer_correct", "chunks": case["chunks"], "record": False}
    ok = gate_or_fail(case["golden"], case["good"], case["good"], max_abstain=1.0, **kw)
    assert ok.comparison.clustering is not None
    with pytest.raises(pytest.fail.Exception, match="Clustered by document: 73 entries"):
        gate_or_fail(case["golden"], case["good"], case["five"], cluster="doc", **kw)
    flat = gate_or_fail(
        case["golden"], case["good"], case["good"], max_abstain=1.0, cluster="none", **kw
    )
    assert flat.comparison.clustering is None


def test_a_renamed_copy_of_a_dataset_continues_its_ledger(
    case: dict[str, Any], tmp_path: Path
) -> None:
    from assay.compare import compare_files
    from assay.compare.ledger import ledger_count, read_ledger

    first = tmp_path / "a" / "golden.jsonl"
    first.parent.mkdir()
    first.write_bytes(Path(case["golden"]).read_bytes())
    kw: dict[str, Any] = {
        "metrics": ["answer_correct"],
        "chunks": case["chunks"],
        "n_resamples": 100,
    }
    one = compare_files(first, case["good"], case["five"], **kw)
    assert one.ledger_t == 1
    # the same content under another name: the count goes on, and the same comparison is a repeat
    copy = tmp_path / "b" / "renamed.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())
    again = compare_files(copy, case["good"], case["five"], **kw)
    assert again.ledger_t == 1 and again.ledger_repeat
    other = compare_files(copy, case["five"], case["good"], k=3, **kw)
    assert other.ledger_t == 2
    assert ledger_count(copy) == 2
    assert read_ledger(copy)[0]["continues"] == str(
        first.with_name("golden.ledger.jsonl").resolve()
    )


def _reencoded(rows: list[dict[str, Any]], how: str) -> bytes:
    if how == "crlf":
        return "".join(json.dumps(r) + "\r\n" for r in rows).encode()
    if how == "bom":
        return b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode()
    if how == "keys":
        return "".join(json.dumps(dict(reversed(r.items()))) + "\n" for r in rows).encode()
    # reformatted: no spaces, non-ASCII as it is, a blank line between entries
    return "\n\n".join(
        json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in rows
    ).encode()


@pytest.mark.parametrize("how", ["crlf", "bom", "keys", "reformatted"])
def test_a_reencoded_copy_continues_its_ledger_and_a_changed_one_does_not(
    case: dict[str, Any], tmp_path: Path, how: str
) -> None:
    # the ledger followed the file's bytes: a copy saved with CRLF line ends, a BOM, its keys
    # reordered or its JSON reformatted started again at comparison 1
    from assay.compare import compare_files

    first = tmp_path / "a" / "golden.jsonl"
    first.parent.mkdir()
    first.write_bytes(Path(case["golden"]).read_bytes())
    kw: dict[str, Any] = {
        "metrics": ["answer_correct"],
        "chunks": case["chunks"],
        "n_resamples": 100,
    }
    assert compare_files(first, case["good"], case["five"], **kw).ledger_t == 1
    rows = [json.loads(line) for line in first.read_text().splitlines() if line.strip()]
    copy = tmp_path / "b" / "copy.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(_reencoded(rows, how))
    assert load_dataset(copy).content_hash != load_dataset(first).content_hash
    # the same runs on the copy: a repeat of comparison 1; other runs: comparison 2
    again = compare_files(copy, case["good"], case["five"], **kw)
    assert (again.ledger_t, again.ledger_repeat) == (1, True)
    assert compare_files(copy, case["five"], case["good"], k=3, **kw).ledger_t == 2
    # a changed value is another dataset: its ledger starts at 1
    rows[0] = {**rows[0], "metadata": {**rows[0].get("metadata", {}), "edited": True}}
    changed = tmp_path / "c" / "changed.jsonl"
    changed.parent.mkdir()
    changed.write_bytes(_reencoded(rows, how))
    assert compare_files(changed, case["good"], case["five"], **kw).ledger_t == 1


def test_score_ci_treats_a_cluster_as_one_draw(case: dict[str, Any], tmp_path: Path) -> None:
    out = {}
    for how in ("auto", "none"):
        res = runner.invoke(
            app,
            ["score", str(case["golden"]), str(case["five"]), "--chunks", str(case["chunks"]),
             "--ci", "--cluster", how, "-f", "json"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        out[how] = json.loads(res.output[res.output.index("{") :])
    clustered, flat = out["auto"], out["none"]
    assert clustered["clustering"]["field"] == "doc" and flat["clustering"] is None
    for m in ("complete@5", "recall@5"):
        c, f = clustered["overall"][f"{m}_ci"], flat["overall"][f"{m}_ci"]
        assert c["low"] <= f["low"] and c["high"] >= f["high"]
        assert c["method"].startswith("cluster")


def test_the_leaderboard_clusters_each_candidate(case: dict[str, Any], tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(Path(case["golden"]).read_bytes())
    out = tmp_path / "board.json"
    res = runner.invoke(
        app,
        ["compare", str(golden), str(case["good"]), str(case["five"]), str(case["good"]),
         "--metrics", "answer_correct", "--chunks", str(case["chunks"]), "--resamples", "100",
         "--no-record", "--cluster", "company", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    board = json.loads(out.read_text())
    assert all(c["clustering"]["clusters"] == 2 for c in board["comparisons"].values())
    assert "Clustered by company" in res.output


def test_cluster_labels_as_integer_codes_give_the_same_statistics() -> None:
    # the comparison hands the cluster statistics integer codes of its labels: the codes (and
    # so every delta, interval and p) are those of the labels themselves
    import numpy as np

    from assay.compare.paired import _label_codes
    from assay.stats.clusters import cluster_codes, clustered_delta, describe_clusters

    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(1, 300))
        labels = [f"doc:d{int(x)}" for x in rng.integers(0, max(1, n // 3), size=n)]
        codes = _label_codes(labels)
        assert codes.tolist() == cluster_codes(labels)[0].tolist()
        mask = rng.random(n) < 0.5
        sub = [lb for lb, m in zip(labels, mask, strict=True) if m]
        assert cluster_codes(codes[mask])[0].tolist() == cluster_codes(sub)[0].tolist()
        assert describe_clusters("doc", codes) == describe_clusters("doc", labels)
    b = (rng.random(200) < 0.6).astype(float)
    c = (rng.random(200) < 0.5).astype(float)
    labels = [f"doc:d{i % 37}" for i in range(200)]
    for test in ("cluster_sign_flip", "clustered_mcnemar"):
        one = clustered_delta(b, c, labels, rng=np.random.default_rng(0), test=test)
        two = clustered_delta(b, c, _label_codes(labels), rng=np.random.default_rng(0), test=test)
        assert one == two
