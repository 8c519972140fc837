"""Time the workbench's full-text search against SQLite FTS5 ranking the same query alone.

    python bench/bench_workbench_search.py [--chunks 60000] [--repeat 15] [--src DIR]

Builds a SQLite store (the workbench's schema, its FTS5 index filled by the store's trigger) of
`--chunks` chunks over 100 companies, 10% of them in restricted documents; each chunk is 60
words drawn from a 5,000-word vocabulary plus, in a third of them, "revenue growth". Then times
`search_chunks` (30 hits, snippets, the viewer's access and the filters applied) on four
queries, and, in the same run on the same file, the peer: SQLite FTS5 alone, `SELECT chunk_id
... WHERE chunk_fts MATCH ? ORDER BY bm25(chunk_fts) LIMIT 30` (no access, no filters, no
documents, no snippets: the floor). Prints the median milliseconds of each and their ratio.
`--src` times another tree's `assay` (a previous release from a worktree) on a store it builds
(one without access labels has every chunk public).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=60_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    import numpy as np

    from assay.workbench import service as svc
    from assay.workbench.db import Database
    from assay.workbench.models import Chunk, Document

    def access(key: str | None) -> dict[str, str | None]:
        # a release before access labels (then every chunk is public, and the restricted
        # company's query finds its chunks)
        return {"access_key": key} if hasattr(Chunk, "access_key") else {}

    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(5000)]
    work = Path(tempfile.mkdtemp(prefix="assay-bench-search-"))
    path = work / "wb.db"
    db = Database(f"sqlite:///{path}")
    db.migrate()
    t = time.perf_counter()
    per = max(1, args.chunks // 100)
    with db.write() as s:
        for c in range(100):
            key = "deal" if c % 10 == 0 else None
            doc = f"co{c:03d}-2023-10k"
            s.add(Document(doc_id=doc, company=f"Co {c:03d}", form="10-K", fiscal_year=2023,
                           **access(key)))  # fmt: skip
            words = rng.integers(0, len(vocab), (per, 60))
            common = rng.random(per) < 1 / 3
            s.add_all(
                Chunk(
                    chunk_id=f"{doc}#c{i}",
                    doc_id=doc,
                    seq=i,
                    text=" ".join(vocab[w] for w in words[i])
                    + (" revenue growth" if common[i] else ""),
                    **access(key),
                )
                for i in range(per)
            )
    print(f"store: {100 * per:,} chunks in {time.perf_counter() - t:.1f}s ({args.src})")
    queries = [
        ("common term", "revenue growth", {}),
        ("common term, one company", "revenue growth", {"company": "Co 007"}),
        ("common term, a restricted company", "revenue growth", {"company": "Co 010"}),
        ("rare term", "w4999 w17", {}),
    ]
    raw = sqlite3.connect(path)
    for name, q, filters in queries:
        mine, peer = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            hits = svc.search_chunks(db, q, limit=30, **filters)
            mine.append(time.perf_counter() - t)
            t = time.perf_counter()
            match = " AND ".join(f'"{w}"' for w in q.split())
            rows = raw.execute(
                "SELECT chunk_id FROM chunk_fts WHERE chunk_fts MATCH ? "
                "ORDER BY bm25(chunk_fts), chunk_id LIMIT 30",
                (match,),
            ).fetchall()
            peer.append(time.perf_counter() - t)
        a, b = statistics.median(mine) * 1e3, statistics.median(peer) * 1e3
        print(
            f"{name:36s} assay {a:7.1f} ms ({len(hits)} hits)   FTS5 alone {b:7.1f} ms "
            f"({len(rows)} hits)   ratio {a / b:.2f}x"
        )
    raw.close()
    db.dispose()


if __name__ == "__main__":
    main()
