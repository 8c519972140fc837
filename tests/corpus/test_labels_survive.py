"""Labels survive a parser change: one golden set scored on the text layer and on OCR of scans,
and on two chunkers, with zero stale labels; without OCR the scanned pages' labels are stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.corpus import ChunkSettings, build_corpus, load_chunks
from assay.corpus.ocr import available
from assay.dataset import load_dataset
from assay.gold import resolve_gold
from assay.runs import Run
from assay.score import score_retrieval
from assay.synth.generate import generate_room

pytestmark = pytest.mark.skipif("tesseract" not in available(), reason="needs tesseract-ocr")


@pytest.fixture(scope="module")
def rooms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("survive")
    scanned, clean = base / "scanned", base / "clean"
    generate_room(scanned, seed=4, companies=2, years=1, scans=2, formats=("pdf",))
    generate_room(clean, seed=4, companies=2, years=1, scans=0, formats=("pdf",))
    return scanned, clean


def _stale(golden: Path, chunks: Path) -> dict[str, str]:
    ds = load_dataset(golden)
    table = load_chunks(chunks)
    return dict(resolve_gold(ds.entries, chunks=table, level="chunk", skip_stale=True).excluded)


def test_one_golden_set_on_text_layer_ocr_and_two_chunkers(
    rooms: tuple[Path, Path], tmp_path: Path
) -> None:
    scanned, clean = rooms
    golden = scanned / "golden.jsonl"
    rows = [json.loads(x) for x in (scanned / "documents.jsonl").read_text().splitlines()]
    scans = {r["doc_id"] for r in rows if r["metadata"]["messiness"] != "clean"}
    assert len(scans) == 2
    boxed = [
        a
        for e in (json.loads(x) for x in golden.read_text().splitlines())
        for p in e.get("evidence_paths", [])
        for piece in p
        for a in piece
        if "box" in a
    ]
    assert boxed and {a["doc"] for a in boxed} <= scans

    builds = {
        "text layer": (clean, "none", None),
        "ocr": (scanned, "tesseract", None),
        "ocr, small chunks": (
            scanned,
            "tesseract",
            ChunkSettings(target_tokens=120, max_tokens=160),
        ),
    }
    for name, (src, ocr, settings) in builds.items():
        out = tmp_path / name.split(",")[0].replace(" ", "_")  # both OCR builds share one cache
        m = build_corpus(src, meta=src / "documents.jsonl", out_dir=out, ocr=ocr, settings=settings)
        if settings is not None:  # the OCR output came from the cache, by file content
            assert scans <= set(m.reused) and not m.parsed
        assert _stale(golden, out / "chunks.jsonl") == {}, name
        # scoring starts (it refuses on stale gold) and every answerable entry is scored
        ds = load_dataset(golden)
        table = load_chunks(out / "chunks.jsonl")
        first = table.chunks[0].chunk_id
        run = Run.from_rows([{"id": e.id, "retrieved": [first]} for e in ds.entries])
        s = score_retrieval(ds, run, k=5, chunks=table)
        assert s.overall is not None and s.overall.n == sum(e.is_answerable for e in ds.entries)
    table = load_chunks(tmp_path / "ocr" / "chunks.jsonl")
    assert any(c.extra.get("ocr") for c in table if c.doc_id in scans)

    # without OCR the scanned pages are empty, and their labels are stale, by name
    none = tmp_path / "no_ocr"
    build_corpus(scanned, meta=scanned / "documents.jsonl", out_dir=none, ocr="none")
    stale = _stale(golden, none / "chunks.jsonl")
    assert stale and all(any(d in why for d in scans) for why in stale.values())
