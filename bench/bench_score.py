"""Scoring speed: assay vs pytrec_eval on the same 100,000 entries x 100 retrieved chunks.

Prints compute time for recall@5, recall@10, complete@10, MRR and nDCG@10, the time to load a
10-million-line run (JSONL with 100 hits per line, and TREC with one hit per line), the ratio to
pytrec_eval measured in the same run, and the largest disagreement on tie-free single-path data.

    .venv/bin/python bench/bench_score.py [--entries 100000] [--hits 100]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from assay.dataset.schema import Entry
from assay.gold import resolve_gold
from assay.runs import load_run, read_trec_run
from assay.score.retrieval import _retrieved_arrays, compute_metrics, score_retrieval


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--hits", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n, h = args.entries, args.hits
    vocab = 5000
    tmp = Path(tempfile.mkdtemp())
    entries: list[Entry] = []
    qrels: dict[str, dict[str, int]] = {}
    multi = 0
    for i in range(n):
        rel = rng.choice(vocab, size=int(rng.integers(1, 5)), replace=False)
        pieces = [[f"d{r}"] for r in rel]
        paths = [pieces]
        if i % 10 == 0:  # some multi-path entries with alternatives (not comparable with trec_eval)
            paths = [pieces, [[f"d{int(rng.integers(vocab))}", f"d{int(rng.integers(vocab))}"]]]
            multi += 1
        entries.append(Entry(id=f"q{i}", query="q", category=f"cat{i % 8}", evidence_paths=paths))
        if i % 10 != 0:
            qrels[f"q{i}"] = {f"d{r}": 1 for r in rel}
    docs = rng.integers(0, vocab, size=(n, h))
    scores = np.sort(rng.random((n, h)), axis=1)[:, ::-1]
    t = time.perf_counter()
    with open(tmp / "run.jsonl", "w") as fh:
        for i in range(n):
            hits = [
                {"chunk_id": f"d{d}", "score": round(float(s), 9)}
                for d, s in zip(docs[i], scores[i], strict=True)
            ]
            fh.write(json.dumps({"id": f"q{i}", "retrieved": hits}) + "\n")
    with open(tmp / "run.trec", "w") as fh:
        for i in range(n):
            for r, (d, s) in enumerate(zip(docs[i], scores[i], strict=True), start=1):
                fh.write(f"q{i} Q0 d{d} {r} {s:.9f} bench\n")
    print(
        f"generated {n} entries ({multi} multi-path) x {h} hits in {time.perf_counter() - t:.1f}s"
    )

    t = time.perf_counter()
    run = load_run(tmp / "run.jsonl")
    t_load_jsonl = time.perf_counter() - t
    t = time.perf_counter()
    read_trec_run(tmp / "run.trec")
    t_load_trec = time.perf_counter() - t
    t = time.perf_counter()
    gold = resolve_gold(entries)
    t_gold = time.perf_counter() - t
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        result = score_retrieval(entries, run, k=5, ks=[10], gold=gold)
        best = min(best, time.perf_counter() - t)
    res = result.per_entry
    t = time.perf_counter()
    ent, rank, code, voc = _retrieved_arrays(gold, run, None)
    compute_metrics(gold, ent, rank, code, voc, [5, 10])
    t_general = time.perf_counter() - t
    print(f"load JSONL run ({n * h:,} hits on {n:,} lines): {t_load_jsonl:.2f}s")
    print(f"load TREC run ({n * h:,} lines):               {t_load_trec:.2f}s")
    print(f"gold index (once per dataset):                 {t_gold:.2f}s")
    print(f"assay compute (recall@5,10 complete@10 mrr ndcg@10, per category): {best:.3f}s")
    print(f"  (the general lookup path, used at page level: {t_general:.3f}s)")

    import pytrec_eval

    trec_run = {
        f"q{i}": {f"d{d}": float(s) for d, s in zip(docs[i], scores[i], strict=True)}
        for i in range(n)
        if f"q{i}" in qrels
    }
    t = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5,10", "ndcg_cut.10", "recip_rank"})
    ref = ev.evaluate(trec_run)
    t_ref = time.perf_counter() - t
    # agreement on single-path entries (duplicates in a row make trec_eval's and our rank differ;
    # compare only rows without duplicate docs and without ties)
    idx = {eid: i for i, eid in enumerate(gold.entry_ids)}
    worst = 0.0
    compared = 0
    for q, m in ref.items():
        i = int(q[1:])
        if len(set(docs[i])) != h:
            continue
        j = idx[q]
        worst = max(
            worst,
            abs(res["recall@5"][j] - m["recall_5"]),
            abs(res["recall@10"][j] - m["recall_10"]),
            abs(res["ndcg@10"][j] - m["ndcg_cut_10"]),
            abs(res["mrr"][j] - m["recip_rank"]),
        )
        compared += 1
    print(f"pytrec_eval compute (same metrics, {len(qrels):,} single-path entries): {t_ref:.3f}s")
    print(
        f"ratio pytrec_eval / assay compute: {t_ref / best:.1f}x (assay scored {n:,} entries incl. multi-path)"
    )
    print(f"largest disagreement on {compared:,} tie-free, duplicate-free entries: {worst:.2e}")


if __name__ == "__main__":
    main()
