"""`assay corpus embed` on 1 vs 2 Ray workers against the local executor, on the synthetic room.

Generates a room, builds its corpus, starts a local Ray (not timed), then embeds every chunk
with all-MiniLM-L6-v2 (a fresh cache each time) with the local executor (torch on this
process's threads) and with Ray on 1 and 2 workers (one model per worker, one torch thread
each: Ray's default for an actor of one CPU), and prints the wall time, the start-up (time to
the first batch back: actor start, model load, one batch), the steady-state rate over the
second half of the chunks, the load average, and how far each matrix is from the local one.

    PYTHONPATH=src python bench/bench_ray_embed.py [--companies 6] [--years 3] [--batch 64]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import ray

from assay.corpus import build_corpus
from assay.executors import parse_executor
from assay.synth.generate import generate_room
from assay.systems.filings.dense import DenseEncoder
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.vectors import corpus_vectors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--companies", type=int, default=6)
    ap.add_argument("--years", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="chunks per batch (one Ray call)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assay-ray-embed-"))
    generate_room(tmp / "room", formats=("html",), companies=args.companies, years=args.years)
    build_corpus(tmp / "room", meta=tmp / "room" / "documents.jsonl", out_dir=tmp / "corpus")
    index = FilingsIndex.load(tmp / "corpus")
    n = len(index.chunks)
    print(f"{n} chunks; torch threads here: {__import__('torch').get_num_threads()}")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ref: np.ndarray | None = None
    times: dict[str, float] = {}
    rates: dict[str, float] = {}
    for label, spec in (
        ("local", "local"),
        ("ray, 1 worker", parse_executor("ray", workers=1)),
        ("ray, 2 workers", parse_executor("ray", workers=2)),
    ):
        cache = tmp / f"cache-{label.replace(' ', '').replace(',', '')}"
        enc = DenseEncoder(cache_dir=cache)
        stamps: list[tuple[float, int]] = []
        load_before = os.getloadavg()[0]
        t = time.perf_counter()
        m = corpus_vectors(
            index,
            enc,
            batch=args.batch,
            executor=spec,
            progress=lambda done, _n, _s, st=stamps: st.append((time.perf_counter(), done)),
        )
        times[label] = time.perf_counter() - t
        half = next(i for i, (_, d) in enumerate(stamps) if d >= n // 2)
        rates[label] = (stamps[-1][1] - stamps[half][1]) / (stamps[-1][0] - stamps[half][0])
        if ref is None:
            ref = m
        diff = float(np.abs(m - ref).max())
        print(
            f"{label:16s} {times[label]:.1f}s (start-up: first batch back after "
            f"{stamps[0][0] - t:.1f}s; steady state {rates[label]:.0f} chunks/s; load average "
            f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}); max |diff| from local {diff:.2e}, "
            f"bit-equal: {bool(np.array_equal(m, ref))}"
        )
    print(
        f"steady state 2 workers vs 1: {rates['ray, 2 workers'] / rates['ray, 1 worker']:.2f}x; "
        f"2 workers vs local: {rates['ray, 2 workers'] / rates['local']:.2f}x; wall time local / "
        f"2 workers: {times['local'] / times['ray, 2 workers']:.2f}x"
    )
    ray.shutdown()


if __name__ == "__main__":
    main()
