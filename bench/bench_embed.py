"""Benchmark of the embedding backends (not a test): torch vs ONNX fp32 vs ONNX int8.

    PYTHONPATH=src python bench/bench_embed.py --corpus /tmp/fbcorpus \
        --questions ../shared/financebench/questions_dev.jsonl [--n 512] [--seq 256]

One run, the same texts for every backend:
1. Throughput (chunks/s) embedding `--n` corpus chunks sampled with a seeded generator,
   truncated at `--seq` tokens: sentence-transformers (torch fp32, the peer) against assay's
   `OnnxEncoder` fp32 and int8 (no cache on any side; one warm-up batch each first, so model
   loading and the one-off export are not timed). The ratio is to sentence-transformers.
2. Agreement with the torch fp32 vectors: cosine per chunk (mean and minimum).
3. Ranking agreement: each question (FinanceBench dev) ranks the sampled chunks by cosine with
   each backend; against torch's top 10: overlap@10 (mean share of its top 10 also in the
   backend's top 10) and Kendall's tau (scipy.stats.kendalltau) of the two backends' scores over
   torch's top 10, averaged over questions.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--n", type=int, default=512, help="chunks embedded per backend")
    ap.add_argument("--seq", type=int, default=256, help="max sequence length (tokens)")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--cache-dir", type=Path, default=None, help="where the ONNX exports live")
    args = ap.parse_args()

    from scipy.stats import kendalltau

    from assay.corpus import load_chunks
    from assay.systems.filings.dense import DenseEncoder
    from assay.systems.filings.onnx_encoder import OnnxEncoder

    rng = np.random.default_rng(args.seed)
    chunks = list(load_chunks(args.corpus / "chunks.jsonl"))
    pick = rng.choice(len(chunks), size=min(args.n, len(chunks)), replace=False)
    texts = [chunks[int(i)].text[:1000] for i in pick]
    questions = [json.loads(x)["question"] for x in args.questions.open() if x.strip()]
    print(f"{len(texts)} chunks sampled (seed {args.seed}) from {len(chunks)}; seq {args.seq}; "
          f"{len(questions)} questions")  # fmt: skip

    export_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="assay-onnx-"))
    backends = {
        "sentence-transformers fp32": DenseEncoder(max_seq_length=args.seq),
        "assay onnx fp32": OnnxEncoder(variant="fp32", export_dir=export_dir, max_seq_length=args.seq),
        "assay onnx int8": OnnxEncoder(variant="int8", export_dir=export_dir, max_seq_length=args.seq),
    }  # fmt: skip
    vecs: dict[str, np.ndarray] = {}
    qvecs: dict[str, np.ndarray] = {}
    rate: dict[str, float] = {}
    for name, enc in backends.items():
        enc._embed(texts[:32])  # warm-up: load (and export) outside the timing
        t = time.perf_counter()
        vecs[name] = enc._embed(texts)
        rate[name] = len(texts) / (time.perf_counter() - t)
        qvecs[name] = enc._embed(questions)
    ref = "sentence-transformers fp32"
    print("\nthroughput (chunks/s):")
    for name in backends:
        print(f"  {name:28s} {rate[name]:8.1f}   ratio to sentence-transformers "
              f"{rate[name] / rate[ref]:.2f}x")  # fmt: skip
    print("\nagreement with torch fp32:")
    for name in backends:
        if name == ref:
            continue
        cos = (vecs[name] * vecs[ref]).sum(axis=1)
        overlaps, taus = [], []
        ref_scores = qvecs[ref] @ vecs[ref].T
        scores = qvecs[name] @ vecs[name].T
        for qi in range(len(questions)):
            top_ref = np.argsort(-ref_scores[qi], kind="stable")[:10]
            top = np.argsort(-scores[qi], kind="stable")[:10]
            overlaps.append(len(set(top_ref.tolist()) & set(top.tolist())) / 10)
            tau = kendalltau(ref_scores[qi, top_ref], scores[qi, top_ref]).statistic
            taus.append(float(tau))
        qcos = (qvecs[name] * qvecs[ref]).sum(axis=1)
        print(f"  {name:28s} cosine chunks mean {cos.mean():.4f} min {cos.min():.4f}; "
              f"questions mean {qcos.mean():.4f} min {qcos.min():.4f}; "
              f"overlap@10 {np.mean(overlaps):.3f}; Kendall tau (top 10) {np.nanmean(taus):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
