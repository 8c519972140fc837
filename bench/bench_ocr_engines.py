"""Compare the two OCR engines on the synthetic room's scans: token accuracy and pages per second.

    PYTHONPATH=src python bench/bench_ocr_engines.py [--scans 4] [--seed 7]

Generates a small room with `--scans` quarterly reports rendered as scans (alternately light and
heavy) and, from the same seed, the same room without scans, whose text layer is the truth for
each scanned page. Each engine (Debian's tesseract-ocr through pytesseract; rapidocr-onnxruntime)
reads every scanned page as `assay corpus build` does (`assay.corpus.ocr`), and the script prints
per engine and messiness: token recall and precision (normalised tokens with multiplicity, as
gold alignment counts them), the share of gold anchors on scanned pages that still align (by the
80% token rule or by box), and pages per second, plus the speed ratio.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

import pypdfium2

from assay.corpus import Chunk, ChunkTable, read_file
from assay.corpus.ocr import available, ocr_engine
from assay.dataset import Anchor
from assay.gold.align import normalize_tokens, resolve_anchor
from assay.synth.generate import generate_room


def _prf(truth: str, got: str) -> tuple[int, int, int]:
    t, g = Counter(normalize_tokens(truth)), Counter(normalize_tokens(got))
    hit = sum(min(n, g[k]) for k, n in t.items())
    return hit, sum(t.values()), sum(g.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scans", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assay-ocr-bench-"))
    scanned, clean = tmp / "scanned", tmp / "clean"
    generate_room(scanned, seed=args.seed, companies=2, years=1, scans=args.scans, formats=("pdf",))
    generate_room(clean, seed=args.seed, companies=2, years=1, scans=0, formats=("pdf",))
    rows = [json.loads(x) for x in (scanned / "documents.jsonl").read_text().splitlines()]
    pages = [
        (r["doc_id"], int(s["page"]), r["metadata"]["messiness"])
        for r in rows
        for s in r["metadata"].get("scan", [])
    ]
    golden = [json.loads(x) for x in (scanned / "golden.jsonl").read_text().splitlines()]
    anchors = [
        Anchor.model_validate(a)
        for e in golden
        for p in e.get("evidence_paths", [])
        for piece in p
        for a in piece
        if isinstance(a, dict) and (a["doc"], a["page"]) in {(d, p) for d, p, _ in pages}
    ]
    truth = {d: read_file(clean / "docs" / f"{d}.pdf").pages for d, _, _ in pages}
    engines = available()
    print(f"{len(pages)} scanned pages, {len(anchors)} gold anchors on them; engines: {engines}")
    speed: dict[str, float] = {}
    for name in engines:
        ocr = ocr_engine(name)
        assert ocr is not None
        ocr(pypdfium2.PdfDocument(scanned / "docs" / f"{pages[0][0]}.pdf")[0])  # warm up
        stats: dict[str, list[int]] = {}
        chunks: list[Chunk] = []
        t0 = time.perf_counter()
        for doc, pno, mess in pages:
            pdf = pypdfium2.PdfDocument(scanned / "docs" / f"{doc}.pdf")
            lines, boxes = ocr(pdf[pno - 1])
            pdf.close()
            hit, nt, ng = _prf(truth[doc][pno - 1], "\n".join(lines))
            s = stats.setdefault(mess, [0, 0, 0])
            s[0] += hit
            s[1] += nt
            s[2] += ng
            good = [[*b] for b in boxes if b is not None]
            chunks.append(
                Chunk(f"{doc}/{pno}/1", doc, "\n".join(lines), [pno], extra={"line_boxes": good})
            )
        elapsed = time.perf_counter() - t0
        speed[name] = len(pages) / elapsed
        table = ChunkTable(chunks)
        held = sum(resolve_anchor(a, table).ok for a in anchors)
        by_tokens = sum(
            resolve_anchor(a.model_copy(update={"box": None}), table).ok for a in anchors
        )
        for mess, (hit, nt, ng) in sorted(stats.items()):
            print(
                f"{name:10s} {mess:10s} token recall {hit / nt:.3f}  precision {hit / max(ng, 1):.3f}"
            )
        print(
            f"{name:10s} anchors aligned {held}/{len(anchors)} (without boxes: {by_tokens}); "
            f"{speed[name]:.2f} pages/s"
        )
    if len(speed) == 2:
        print(f"speed ratio tesseract/rapidocr: {speed['tesseract'] / speed['rapidocr']:.2f}")


if __name__ == "__main__":
    main()
