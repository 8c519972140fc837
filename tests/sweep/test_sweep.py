from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.compare import compare_scores
from assay.corpus import build_corpus, load_chunks
from assay.dataset import clustering_for, load_dataset
from assay.errors import DataError, UsageError
from assay.runs import load_run
from assay.score import score_retrieval
from assay.stats import holm
from assay.sweep import load_grid, run_sweep
from assay.synth.generate import generate_room


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("room")
    generate_room(base / "room", formats=("html",), seed=11, companies=3, years=2)
    build_corpus(base / "room", meta=base / "room" / "documents.jsonl", out_dir=base / "corpus")
    return base


def test_grid_files(tmp_path: Path) -> None:
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"grid": {"mode": ["bm25"], "k": [10, 20], "pool": [5, 50]}}))
    configs, base = load_grid(g)
    assert configs == [
        {"mode": "bm25", "k": 10, "pool": 5},
        {"mode": "bm25", "k": 10, "pool": 50},
        {"mode": "bm25", "k": 20, "pool": 5},
        {"mode": "bm25", "k": 20, "pool": 50},
    ]
    assert base == configs[0]
    y = tmp_path / "g.yaml"
    y.write_text(
        "grid:\n  mode: [bm25]\n  rerank: [false, true]\nbaseline: {mode: bm25, rerank: true}\n"
    )
    configs, base = load_grid(y)
    assert len(configs) == 2 and base == {"mode": "bm25", "rerank": True}
    for bad, field in (
        ({"grid": {"colour": [1]}}, "grid.colour"),
        ({"grid": {"mode": ["bm25"]}, "baseline": {"mode": "full"}}, "baseline"),
        ({"grid": {"k": [0]}}, "grid.k"),
        ({"grid": {"mode": ["fancy"]}}, "grid.mode"),
        ({"nogrid": 1}, "grid"),
    ):
        g.write_text(json.dumps(bad))
        with pytest.raises(DataError) as ei:
            load_grid(g)
        assert ei.value.problems[0].field == field


def test_yaml_grid_without_pyyaml_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "yaml", None)
    (tmp_path / "g.yaml").write_text("grid: {mode: [bm25]}\n")
    with pytest.raises(UsageError, match=r"assay\[yaml\]"):
        load_grid(tmp_path / "g.yaml")


def test_sweep_on_the_synthetic_room(room: Path) -> None:
    grid = [
        {"mode": "bm25", "pool": 50},
        {"mode": "bm25", "pool": 3},
        {"mode": "bm25", "pool": 50, "drop_scope": True},
    ]
    out = room / "sweep"
    rep = run_sweep(
        room / "room" / "golden.jsonl",
        corpus=room / "corpus",
        grid=grid,
        out=out,
        score_k=5,
        skip_stale=True,  # an HTML-only room: the anchors on PDF-only pages are stale
    )
    assert {r.name for r in rep.rows} == {
        "mode=bm25,pool=50",
        "mode=bm25,pool=3",
        "mode=bm25,pool=50,drop_scope=true",
    }
    base = next(r for r in rep.rows if r.baseline)
    assert base.config == grid[0] and base.p_holm == {"complete@5": None, "recall@5": None}
    # the leaderboard is sorted by the first metric, best first
    firsts = [r.values["complete@5"] for r in rep.rows]
    assert firsts == sorted(firsts, reverse=True)
    # every figure is the existing scoring and two-run comparison, then Holm across candidates
    ds = load_dataset(room / "room" / "golden.jsonl")
    chunks = load_chunks(room / "corpus" / "chunks.jsonl")
    # by default a sweep clusters as `assay compare` does: by evidence document
    clusters = clustering_for(ds.entries)
    assert clusters is not None and rep.clustering is not None
    assert rep.clustering.field == "doc" and rep.clustering.clusters < rep.clustering.entries
    assert any(line.startswith("Clustered by document: ") for line in rep.tabular().footer)
    scored = {
        r.name: score_retrieval(ds, load_run(r.run), k=5, chunks=chunks, skip_stale=True)
        for r in rep.rows
    }
    cands = [r for r in rep.rows if not r.baseline]
    for m in ("complete@5", "recall@5"):
        ps = []
        for r in cands:
            cmp = compare_scores(
                scored[base.name],
                scored[r.name],
                metrics=["complete@5", "recall@5"],
                clusters=clusters,
            )
            assert r.deltas[m] == pytest.approx(
                cmp.overall.metrics[m].cand - cmp.overall.metrics[m].base
            )
            assert r.values[m] == pytest.approx(float(np.mean(scored[r.name].per_entry[m])))
            ps.append(cmp.overall.metrics[m].p)
        assert [r.p_holm[m] for r in cands] == pytest.approx(list(holm(np.array(ps))))
    # in bm25 mode the pool is at least k: pool=3 ranks the same 10 hits as pool=50
    small = next(r for r in rep.rows if r.name == "mode=bm25,pool=3")
    assert small.deltas == {"complete@5": 0.0, "recall@5": 0.0}
    assert load_run(small.run).hits("syn-0001") == load_run(base.run).hits("syn-0001")
    assert load_run(small.run).meta["sweep"]["config"] == {"mode": "bm25", "pool": 3}
    saved = json.loads((out / "leaderboard.json").read_text())
    assert [r["name"] for r in saved["rows"]] == [r.name for r in rep.rows]
    assert len(list((out / "comparisons").glob("*.json"))) == 2


def test_cli_sweep_json(room: Path) -> None:
    g = room / "grid.json"
    g.write_text(json.dumps({"grid": {"mode": ["bm25"], "k": [5, 10]}}))
    res = CliRunner().invoke(
        app,
        [
            "sweep",
            str(room / "room" / "golden.jsonl"),
            "--system",
            "filings",
            "--corpus",
            str(room / "corpus"),
            "--grid",
            str(g),
            "--out",
            str(room / "sw2"),
            "--skip-stale",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [r["config"]["k"] for r in doc["rows"] if r["baseline"]] == [5]
    assert doc["clustering"]["field"] == "doc"
    flat = CliRunner().invoke(
        app,
        ["sweep", str(room / "room" / "golden.jsonl"), "--system", "filings", "--corpus",
         str(room / "corpus"), "--grid", str(g), "--out", str(room / "sw3"), "--skip-stale",
         "--cluster", "none", "-f", "json"],
    )  # fmt: skip
    assert flat.exit_code == 0, flat.output
    assert json.loads(flat.stdout)["clustering"] is None
    bad = CliRunner().invoke(
        app,
        [
            "sweep",
            str(g),
            "--system",
            "bm25",
            "--corpus",
            str(room),
            "--grid",
            str(g),
            "--out",
            str(room / "x"),
        ],
    )
    assert bad.exit_code == 2 and "filings" in bad.output


def test_the_sweep_scores_the_entries_compare_would(room: Path) -> None:
    # the sweep read every entry whatever its tier (compare takes gold by default), at chunk
    # level only, and left entries out with --skip-stale without a word in its table: on
    # FinanceBench (all silver, gold resolving only at page level) it scored 64 entries at
    # chunk level where compare scored 70 at page level
    rows = [
        json.loads(line)
        for line in (room / "room" / "golden.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for i, r in enumerate(rows):
        r["label_tier"] = "gold" if i % 2 == 0 else "silver"
    golden = room / "tiered.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    grid = [{"mode": "bm25", "pool": 50}, {"mode": "bm25", "pool": 3}]
    kw: dict[str, object] = {"corpus": room / "corpus", "grid": grid, "score_k": 5}
    rep = run_sweep(golden, out=room / "tiered", skip_stale=True, level="page", **kw)
    base = next(r for r in rep.rows if r.baseline)
    ds = load_dataset(golden)
    gold = [e for e in ds.entries if e.label_tier == "gold"]
    chunks = load_chunks(room / "corpus" / "chunks.jsonl")
    want = score_retrieval(
        gold, load_run(base.run), k=5, chunks=chunks, level="page", skip_stale=True
    )
    assert base.values["complete@5"] == pytest.approx(float(np.mean(want.per_entry["complete@5"])))
    footer = rep.tabular().footer
    assert any(line.startswith("Label tiers gold: ") for line in footer), footer
    assert any("left out because their gold does not resolve" in line for line in footer), footer
    both = run_sweep(golden, out=room / "both", tiers="gold,silver", skip_stale=True, **kw)
    assert both.clustering is not None and rep.clustering is not None
    assert both.clustering.entries > rep.clustering.entries
    with pytest.raises(UsageError):
        run_sweep(golden, out=room / "bad", level="document", **kw)
