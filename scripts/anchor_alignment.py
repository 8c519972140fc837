"""Anchor alignment rate of a FinanceBench import against a built corpus.

Usage: python scripts/anchor_alignment.py QUESTIONS.jsonl CORPUS_DIR [--show N]

Counts, for every evidence anchor whose document is in the corpus, whether some chunk of the
cited page holds it (>= 80% of the quote's normalised tokens, `assay.gold.align`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay.benchmarks.financebench import import_financebench
from assay.corpus.chunks import load_chunks
from assay.gold.align import resolve_anchor


def main(argv: list[str]) -> int:
    questions, corpus = Path(argv[0]), Path(argv[1])
    show = int(argv[argv.index("--show") + 1]) if "--show" in argv else 0
    table = load_chunks(corpus / "chunks.jsonl")
    entries = import_financebench(questions, documents=corpus / "documents.jsonl")
    total = held = page_missing = 0
    misses = []
    for e in entries:
        for a in e.anchors():
            if a.doc not in table.doc_ids:
                continue
            total += 1
            if not table.on_page(a.doc, a.page or 0):
                page_missing += 1
            r = resolve_anchor(a, table)
            if r.ok:
                held += 1
            else:
                misses.append((r.best, e.id, a))
    print(
        f"anchors in corpus: {total}; held by a chunk of the cited page: {held} ({held / max(total, 1):.1%}); "
        f"cited page has no chunk: {page_missing}"
    )
    for best, eid, a in sorted(misses, key=lambda m: m[0])[:show]:
        print(f"  {eid} {a.doc} p{a.page} best={best:.2f} quote={a.quote[:100]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
