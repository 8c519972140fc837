"""Benchmark of whole-corpus dense search (not a test): exact numpy vs a usearch HNSW index.

    PYTHONPATH=src python bench/bench_dense_search.py [--sizes 10000 50000 100000] [--dim 384]

For each corpus size, random unit vectors (seeded generator) stand in for chunk embeddings (the
cost of a search depends on the size and dimension, not on the values). Times, in one run:
- assay `DenseSearch` exact path (matrix-vector product + partial sort), p50 over the queries,
  wall and CPU time (on a shared machine the CPU time is the stable figure; run it with
  OPENBLAS_NUM_THREADS=1, as the pipeline's single-query search gains nothing from threads);
- assay `DenseSearch` approximate path (usearch HNSW, cosine), index build time and p50 query;
- usearch `Index.search` alone (the peer), p50;
and the recall@10 of the approximate path against the exact one. The ratio printed is exact
p50 / approximate p50: where it passes 1 the index starts to pay (its build time aside).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument(
        "--embeddings",
        default=None,
        help="an embeddings.sqlite cache: use its vectors (real chunk embeddings; queries are "
        "rows held out of the corpus) instead of random ones",
    )
    args = ap.parse_args()

    from assay.systems.filings.vectors import DenseSearch

    rng = np.random.default_rng(args.seed)
    real = None
    if args.embeddings:
        import sqlite3

        con = sqlite3.connect(args.embeddings)
        blobs = [b for (b,) in con.execute("SELECT vec FROM emb ORDER BY key")]
        real = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
        real = real[rng.permutation(len(real))]
        print(f"{len(real)} real vectors of dimension {real.shape[1]} from {args.embeddings}")
    for n in args.sizes:
        if real is not None:
            if n + args.queries > len(real):
                print(f"n={n}: only {len(real)} vectors; skipped")
                continue
            m = np.ascontiguousarray(real[:n])
            qs = real[n : n + args.queries]
        else:
            m = rng.standard_normal((n, args.dim), dtype=np.float32)
            m /= np.linalg.norm(m, axis=1, keepdims=True)
            qs = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
            qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        exact = DenseSearch(m, ann=False)
        ann = DenseSearch(m, ann=True, exact_limit=0)
        t = time.perf_counter()
        ann.index  # noqa: B018 (builds the HNSW index)
        build = time.perf_counter() - t
        te, ce, ta, tp, recall = [], [], [], [], []
        for q in qs:
            t, c = time.perf_counter(), time.process_time()
            rows_e, _ = exact.search(q, 10)
            te.append(time.perf_counter() - t)
            ce.append(time.process_time() - c)
            t = time.perf_counter()
            rows_a, _ = ann.search(q, 10)
            ta.append(time.perf_counter() - t)
            t = time.perf_counter()
            ann.index.search(q, 10)
            tp.append(time.perf_counter() - t)
            recall.append(len(set(rows_e.tolist()) & set(rows_a.tolist())) / 10)
        pe, pa, pp, pc = (statistics.median(x) * 1000 for x in (te, ta, tp, ce))
        print(
            f"n={n:>7} dim={args.dim}: exact p50 {pe:.2f} ms (CPU {pc:.2f} ms); ann p50 {pa:.2f} ms "
            f"(usearch alone {pp:.2f} ms, build {build:.1f} s, recall@10 {np.mean(recall):.3f}); "
            f"ratio exact/ann {pe / pa:.2f}x"
        )


if __name__ == "__main__":
    main()
