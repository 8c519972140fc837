"""Benchmark of the filings pipeline's index and queries (not a test).

    PYTHONPATH=src python bench/bench_filings_query.py --corpus /work/fbcorpus \
        --questions ../shared/financebench/questions_dev.jsonl [--n-dense 32]

Measures, in one run, assay against a named peer:
1. BM25 index build over the corpus' chunks: assay (`FilingsIndex.bm25`, Snowball stems, stop
   words, numbers kept) vs bm25s with its own tokenizer (`bm25s.tokenize` + `BM25.index`).
2. Query latency, p50/p95 over the questions: assay BM25 with entity/period filters and query
   understanding, and hybrid with cached embeddings (a warm-up pass fills the cache first), vs a
   bare bm25s `retrieve` with no filters.
3. Dense embedding throughput: cold (empty cache), warm (every text cached) vs
   sentence-transformers `encode` on the same texts; cache hits and misses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--n-dense", type=int, default=32, help="texts embedded in the throughput test")
    ap.add_argument("--pool", type=int, default=20)
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="embedding cache for the hybrid latency test (default: a fresh one)",
    )
    args = ap.parse_args()

    import bm25s

    from assay.systems.filings.dense import DenseEncoder
    from assay.systems.filings.index import FilingsIndex
    from assay.systems.filings.system import FilingsSystem, RetrievalConfig

    questions = [json.loads(line)["question"] for line in args.questions.open() if line.strip()]
    idx = FilingsIndex.load(args.corpus)
    texts = [c.text for c in idx.chunks]
    print(f"corpus: {len(texts)} chunks, {len(idx.docs)} filings; {len(questions)} questions")

    # 1. index build
    t = time.perf_counter()
    idx.bm25  # noqa: B018 (builds the index)
    t_assay = time.perf_counter() - t
    t = time.perf_counter()
    peer = bm25s.BM25()
    peer.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    t_peer = time.perf_counter() - t
    print(
        f"BM25 index build: assay {t_assay:.1f} s, bm25s {t_peer:.1f} s, ratio {t_assay / t_peer:.2f}x"
    )

    # 2. query latency
    def lat(system: FilingsSystem) -> list[float]:
        out = []
        for q in questions:
            t0 = time.perf_counter()
            system.retrieve(q, as_of=None, k=5)
            out.append((time.perf_counter() - t0) * 1000)
        return out

    bm25_sys = FilingsSystem(
        idx, RetrievalConfig(filters=True, understand=True, per_page=1, latest_when_undated=True)
    )
    lat(bm25_sys)  # warm-up (plans, masks)
    l_bm25 = lat(bm25_sys)
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="assay-bench-emb-"))
    enc = DenseEncoder(cache_dir=cache)
    hyb = FilingsSystem(
        idx,
        RetrievalConfig(
            ranker="hybrid",
            filters=True,
            understand=True,
            per_page=1,
            latest_when_undated=True,
            pool=args.pool,
        ),
        encoder=enc,
    )
    t = time.perf_counter()
    lat(hyb)  # fills the embedding cache
    t_fill = time.perf_counter() - t
    encoded = enc.encoded
    l_hyb = lat(hyb)
    tok = [bm25s.tokenize(q, stopwords="en", show_progress=False) for q in questions]
    l_peer = []
    for qt in tok:
        t0 = time.perf_counter()
        peer.retrieve(qt, k=5, show_progress=False)
        l_peer.append((time.perf_counter() - t0) * 1000)
    p50_peer = statistics.median(l_peer)
    for name, xs in (
        ("assay BM25 + filters", l_bm25),
        ("assay hybrid + filters (cached)", l_hyb),
        ("bm25s retrieve, no filters", l_peer),
    ):
        print(
            f"query latency {name}: p50 {statistics.median(xs):.1f} ms, p95 {_pct(xs, 0.95):.1f} ms, "
            f"ratio to bm25s p50 {statistics.median(xs) / p50_peer:.2f}x"
        )
    print(
        f"hybrid cache fill: {encoded} candidate chunks embedded in {t_fill:.1f} s "
        f"({encoded / max(t_fill, 1e-9):.1f} chunks/s incl. retrieval)"
    )

    # 3. dense throughput and cache behaviour
    sample = texts[: args.n_dense]
    cold = DenseEncoder(cache_dir=Path(tempfile.mkdtemp(prefix="assay-bench-emb-")))
    cold.encode(["warm the model"])
    h0, m0 = cold.cache.hits, cold.cache.misses
    t = time.perf_counter()
    cold.encode(sample)
    t_cold = time.perf_counter() - t
    t = time.perf_counter()
    cold.encode(sample)
    t_warm = time.perf_counter() - t
    model = cold._load()
    t = time.perf_counter()
    model.encode(
        [s[: cold.max_chars] for s in sample],
        batch_size=32,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    t_st = time.perf_counter() - t
    n = len(sample)
    print(
        f"dense cold: {n / t_cold:.1f} chunks/s; sentence-transformers encode: {n / t_st:.1f} chunks/s; "
        f"ratio {t_cold / t_st:.2f}x"
    )
    print(
        f"dense warm (cached): {n / t_warm:.0f} chunks/s, {t_st / t_warm:.0f}x faster than encoding; "
        f"cache hits {cold.cache.hits - h0}, misses {cold.cache.misses - m0}"
    )


if __name__ == "__main__":
    main()
