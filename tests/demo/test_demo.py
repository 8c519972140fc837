from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app


def test_demo_runs_the_whole_loop_on_a_small_room(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    res = CliRunner().invoke(app, ["demo", "--out", str(out), "--companies", "2", "--years", "1"])
    assert res.exit_code == 0, res.output
    for rel in (
        "room/golden.jsonl",
        "corpus/chunks.jsonl",
        "runs/bm25.jsonl",
        "runs/filings.jsonl",
        "scores/bm25.json",
        "scores/filings.md",
        "compare.md",
        "demo.json",
        "bundle.json",
        "site/index.html",
        "site/compare-filings.html",
    ):
        assert (out / rel).exists(), rel
    summary = json.loads((out / "demo.json").read_text())
    filings = summary["scores"]["filings"]
    assert filings["ci"]["seed"] == 7
    assert filings["overall"]["n"] > 20
    assert all("complete@5_ci" in row for row in filings["categories"].values() if row["n"])
    # the pipeline must beat plain BM25 overall on the room it was built for
    assert filings["overall"]["complete@5"] > summary["scores"]["bm25"]["overall"]["complete@5"]
    assert f"site: wrote the explorer to {out / 'site' / 'index.html'}" in res.output
    # the last line says where the site is
    assert res.output.rstrip().splitlines()[-1] == (
        f"explorer: open {out / 'site' / 'index.html'} in a browser (no server)"
    )
    assert "Reference filings pipeline" in res.stdout and "Paired comparison" in res.stdout
    # the policy step: the leaky variant looks better by retrieval and the leak gate fails it
    verdict = next(x for x in res.output.splitlines() if "the leaky variant's retrieval" in x)
    assert "scores go up (complete@5 " in verdict and "the leak gate fails it" in verdict
    assert "exit 1" in verdict
    lines = {
        x.split()[0]: x for x in res.output.splitlines() if x.startswith("  f") or "leaky  " in x
    }
    assert "leaked 0 " in lines["filings"] and "leaked 0 " not in lines["leaky"]
    # the run recorded as_of for every entry that has one
    golden = [json.loads(x) for x in (out / "room/golden.jsonl").read_text().splitlines()]
    rows = {
        json.loads(x)["id"]: json.loads(x)
        for x in (out / "runs/filings.jsonl").read_text().splitlines()
    }
    assert all(rows[e["id"]].get("as_of") == e.get("as_of") for e in golden)


def test_demo_without_ocr_says_what_the_extra_adds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A core install has no OCR engine: the room then has no scans, and the demo says what the
    `ocr` extra would add; with an engine, it does not."""
    import sys

    from assay.demo import run_demo

    for module in ("pytesseract", "rapidocr_onnxruntime"):
        monkeypatch.setitem(sys.modules, module, None)
    res = run_demo(tmp_path / "a", companies=2, years=1, progress=False, log=lambda _: None)
    assert any("'ocr' extra" in n for n in res.notes)
    docs = (tmp_path / "a" / "room" / "documents.jsonl").read_text()
    assert '"messiness":"scan' not in docs.replace(" ", "")
