"""The gate's fast paths (entries built without the full model, runs read by the columnar
reader, series already in order) give byte for byte what the full paths give: the gate's JSON
and its table, on a dataset with chunk-id and anchor gold, two label tiers, several categories
and a sealed fresh sample among its entries."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.dataset.io as dataset_io
import assay.runs.jsonl as runs_jsonl
from assay.cli import _register as _  # noqa: F401  (every command registered)
from assay.cli import app
from assay.compare.series import Series
from assay.runs import _fast

CATEGORIES = ("revenue", "risk", "segment", "debt")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _case(tmp: Path) -> dict[str, Path]:
    rng = random.Random(7)
    chunks = [
        {
            "chunk_id": f"d{d}-c{c}",
            "doc_id": f"d{d}",
            "pages": [1 + c // 3],
            "text": f"Document {d} chunk {c}: net revenue rose {d * 7 + c} percent in fiscal 2023.",
        }
        for d in range(6)
        for c in range(12)
    ]
    entries: list[dict[str, Any]] = []
    for i in range(96):
        gold = rng.sample(chunks, rng.randint(1, 3))
        entry: dict[str, Any] = {
            "id": f"q{i}",
            "query": f"What did document {gold[0]['doc_id']} say about item {i}?",
            "category": CATEGORIES[i % len(CATEGORIES)],
            "label_tier": "gold" if i % 5 else "silver",
        }
        if i % 3 == 0:  # anchor gold: a quote on a page, resolved on the table
            c = gold[0]
            quote = str(c["text"]).split(": ", 1)[1]
            entry["evidence_paths"] = [
                [[{"doc": c["doc_id"], "page": c["pages"][0], "quote": quote}]]
            ]
        else:
            entry["evidence_paths"] = [[[str(g["chunk_id"])] for g in gold]]
        if i % 4 == 0:
            entry["as_of"] = "2024-03-31"
        entries.append(entry)
    runs = {}
    for name, flip in (("base", 0.0), ("cand", 0.3)):
        rows = []
        for i, e in enumerate(entries):
            hits = [str(c["chunk_id"]) for c in rng.sample(chunks, 8)]
            if (i % 7 < 5) != (rng.random() < flip):  # most entries find their gold
                first = e["evidence_paths"][0]
                named = [p[0] for p in first if isinstance(p[0], str)]
                hits = named + [h for h in hits if h not in named]
            rows.append(
                {
                    "id": e["id"],
                    "retrieved": [
                        {"chunk_id": h, "score": round(1 - j / 10, 3)}
                        for j, h in enumerate(hits[:8])
                    ],
                }
            )
        runs[name] = _write(tmp / f"{name}.jsonl", rows)
    return {
        "dataset": _write(tmp / "golden.jsonl", entries),
        "chunks": _write(tmp / "chunks.jsonl", chunks),
        "sample": _write(tmp / "sample.jsonl", entries[40:52]),
        **runs,
    }


def _gate(files: dict[str, Path], registry: Path, fmt: str, monkeypatch: Any) -> str:
    monkeypatch.setenv("ASSAY_FRESH_REGISTRY", str(registry))
    runner = CliRunner()
    sealed = runner.invoke(app, ["fresh", "seal", str(files["sample"])])
    assert sealed.exit_code == 0, sealed.output
    args = [str(files[k]) for k in ("dataset", "base", "cand")]
    opts = ["--chunks", str(files["chunks"]), "--tiers", "gold,silver", "--no-record"]
    opts += ["--resamples", "200", "--permutations", "200", "--format", fmt]
    res = runner.invoke(app, ["gate", *args, *opts])
    assert res.exit_code in (0, 1), res.output
    return res.stdout


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_the_fast_paths_gate_as_the_full_paths_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    files = _case(tmp_path)
    monkeypatch.setattr(_fast, "_MIN_BYTES", 0)  # the columnar run reader reads these small runs
    calls = {"fast_entry": 0, "read_jsonl_run": 0}

    def counted(name: str, real: Any) -> Any:
        def call(*a: Any, **kw: Any) -> Any:
            out = real(*a, **kw)
            calls[name] += out is not None
            return out

        return call

    monkeypatch.setattr(dataset_io, "fast_entry", counted("fast_entry", dataset_io.fast_entry))
    monkeypatch.setattr(
        runs_jsonl, "read_jsonl_run", counted("read_jsonl_run", _fast.read_jsonl_run)
    )
    fast = _gate(files, tmp_path / "fresh-a.sqlite", fmt, monkeypatch)
    # the fast paths did the reading: the 64 chunk-id entries of the dataset (read once) and
    # the 8 of the sample sealed, and both runs
    assert calls == {"fast_entry": 64 + 8, "read_jsonl_run": 2}
    monkeypatch.setattr(dataset_io, "fast_entry", lambda row, **kw: None)  # the full model: all
    monkeypatch.setattr(runs_jsonl, "read_jsonl_run", lambda path: None)  # the checked reader
    real_aligned = Series.aligned

    def by_position(self: Series, ids: Any) -> Any:  # the general alignment, never the shortcut
        return real_aligned(self, [*ids, "\x00absent"])[:-1]

    monkeypatch.setattr(Series, "aligned", by_position)
    full = _gate(files, tmp_path / "fresh-b.sqlite", fmt, monkeypatch)
    assert fast == full
    assert "revenue" in fast and "fresh" in fast.lower()
