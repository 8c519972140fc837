"""`assay run` on 1 vs 2 Ray workers against the local executor, on the synthetic room.

Generates a room, builds its corpus, starts a local Ray (not timed), then times the same run
(the filings pipeline, a fresh request cache each time) with the local executor and with Ray on
1 and 2 workers (actor start-up and the index load on each worker included), and prints the
speed-ups.

    .venv/bin/python bench/bench_ray_run.py [--companies 6] [--years 3] [--mode bm25] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ray

from assay.cache import RequestCache
from assay.corpus.build import build_corpus
from assay.dataset.io import load_dataset
from assay.runner import run_system
from assay.synth.generate import generate_room


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--companies", type=int, default=6)
    ap.add_argument("--years", type=int, default=3)
    ap.add_argument("--mode", default="bm25")
    ap.add_argument("--repeat", type=int, default=3, help="the dataset is run this many times")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assay-ray-bench-"))
    generate_room(tmp / "room", formats=("html",), companies=args.companies, years=args.years)
    build_corpus(tmp / "room", meta=tmp / "room" / "documents.jsonl", out_dir=tmp / "corpus")
    ds = load_dataset(tmp / "room" / "golden.jsonl")
    entries = [
        e.model_copy(update={"id": f"{e.id}-{r}", "query": f"{e.query} ({r})"})
        for r in range(args.repeat)
        for e in ds.entries
    ]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    opts = {"corpus": tmp / "corpus", "mode": args.mode}
    times: dict[str, float] = {}
    for label, executor, workers in (
        ("local", None, None),
        ("ray, 1 worker", "ray", 1),
        ("ray, 2 workers", "ray", 2),
    ):
        cache = RequestCache(tmp / f"{label}.sqlite")
        t = time.perf_counter()
        run_system(
            entries,
            "filings",
            options=opts,
            cache=cache,
            progress=False,
            executor=executor,
            workers=workers,
        )
        times[label] = time.perf_counter() - t
        print(f"{label:16s} {len(entries)} queries: {times[label]:.1f}s")
    print(
        f"speed-up 2 workers vs 1: {times['ray, 1 worker'] / times['ray, 2 workers']:.2f}x; "
        f"2 workers vs local: {times['local'] / times['ray, 2 workers']:.2f}x"
    )
    ray.shutdown()


if __name__ == "__main__":
    main()
