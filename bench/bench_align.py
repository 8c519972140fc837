"""Anchor alignment speed on real filings: FinanceBench's dev quotes resolved onto chunks.

The chunk table is every cited filing in ``pdfs/`` parsed and chunked by the project (chunks of
at most ``--max-tokens`` whitespace tokens; built once and kept in ``--chunks``). Timed, best of
``--repeat`` with the token caches emptied before each run:

* ``page``: every dev anchor resolved at chunk level on its own page (how gold is labelled);
* ``doc``: the same anchors without their page, so every chunk of the filing is a candidate (the
  worst case of the whitespace-insensitive comparison, which runs where the token one fails).

It also prints how many anchors resolve, and how many only with whitespace ignored.

    .venv/bin/python bench/bench_align.py [--financebench /work/shared/financebench]
        [--chunks /tmp/fb_chunks512.jsonl] [--max-tokens 512] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from assay import _tokens
from assay.benchmarks.financebench.importer import import_financebench
from assay.corpus import (
    Chunk,
    ChunkSettings,
    ChunkTable,
    chunk_document,
    load_chunks,
    parse_pdf,
    write_chunks,
)
from assay.dataset import Anchor
from assay.gold import GoldResolver


def build_chunks(root: Path, docs: set[str], max_tokens: int, out: Path) -> ChunkTable:
    settings = ChunkSettings(
        target_tokens=max_tokens - 32,
        max_tokens=max_tokens,
        overlap_tokens=40,
        table_max_tokens=max_tokens,
    )
    chunks: list[Chunk] = []
    for d in sorted(docs):
        pdf = root / "pdfs" / f"{d}.pdf"
        if pdf.is_file():
            pages = parse_pdf(pdf)
            chunks += [Chunk.from_dict(c.to_row()) for c in chunk_document(d, pages, settings)]
    write_chunks(out, chunks)
    return load_chunks(out)


def _clear() -> None:
    for name in dir(_tokens):
        fn = getattr(_tokens, name)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def timed(anchors: list[Anchor], table: ChunkTable, repeat: int) -> tuple[float, int, int]:
    best = float("inf")
    ok = spaced = 0
    for _ in range(repeat):
        _clear()
        t = time.perf_counter()
        r = GoldResolver(table)
        res = [r.resolve(a) for a in anchors]
        best = min(best, time.perf_counter() - t)
        ok = sum(x.ok for x in res)
        spaced = sum(bool(getattr(x, "whitespace_insensitive", False)) for x in res)
    return best, ok, spaced


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--financebench", type=Path, default=Path("/work/shared/financebench"))
    ap.add_argument("--chunks", type=Path, default=Path("/tmp/fb_chunks512.jsonl"))
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    entries = import_financebench(args.financebench / "questions_dev.jsonl", split="dev")
    anchors = [a for e in entries for a in e.anchors()]
    docs = {a.doc for a in anchors}
    if args.chunks.is_file():
        table = load_chunks(args.chunks)
    else:
        t = time.perf_counter()
        table = build_chunks(args.financebench, docs, args.max_tokens, args.chunks)
        print(f"built {args.chunks} ({len(table)} chunks) in {time.perf_counter() - t:.1f} s")
    present = [a for a in anchors if table.of_doc(a.doc)]
    print(f"{len(present)} anchors on {len(table)} chunks of {len(table.doc_ids)} filings")
    for name, batch in (
        ("page", present),
        ("doc", [a.model_copy(update={"page": None}) for a in present]),
    ):
        secs, ok, spaced = timed(batch, table, args.repeat)
        print(
            f"{name:5} {secs * 1000:8.1f} ms  ({secs / len(batch) * 1e3:.2f} ms per anchor); "
            f"{ok} resolve, {spaced} only with whitespace ignored"
        )


if __name__ == "__main__":
    main()
