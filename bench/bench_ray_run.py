"""`assay run` on 1 vs 2 Ray workers against the local executor, on the synthetic room.

Generates a room, builds its corpus, starts a local Ray (not timed), then times the same run
(the filings pipeline, a fresh request cache each time) with the local executor and with Ray on
1 and 2 workers (actor start-up and the index load on each worker included), and prints the
speed-ups: of the wall time, and of the steady state (rows/s over the second half of the rows,
when every worker is up), apart from the start-up (the time to the first row), the driver's CPU
time per row (cache, journal, Ray's calls: what bounds a large cluster), and the load average
before and after each run.

    .venv/bin/python bench/bench_ray_run.py [--companies 6] [--years 3] [--mode bm25] [--repeat 3]

With ``--light N`` it measures instead what one driver sustains on a CPU-light system (a
microsecond-scale `retrieve`, ten hits): N entries on Ray with 1 and 2 workers, a fresh request
cache and a journal each time, and prints the driver's rows/s over the whole run and in the
steady state, against the target of 3,000 rows/s (the driver keeps the cache, the journal and the
order; Ray's calls carry batches sized to the measured cost of a call).

    .venv/bin/python bench/bench_ray_run.py --light 30000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import ray

from assay.cache import RequestCache
from assay.corpus import build_corpus
from assay.dataset import load_dataset
from assay.runner import run_system
from assay.synth.generate import generate_room


class Light:
    """A CPU-light system: ten hits made from the query, no index, no wait."""

    identity: ClassVar[dict[str, Any]] = {"kind": "light", "version": 1}

    def retrieve(self, query: str, *, as_of: Any = None, k: int = 10) -> Any:
        return [{"chunk_id": f"{query}#c{i}", "score": float(k - i)} for i in range(k)]


def light(n: int, tmp: Path) -> None:
    import datetime as dt

    from assay.dataset import Entry

    entries = [
        Entry(id=f"e{i}", query=f"query {i}", category="c", as_of=dt.date(2026, 1, 1))
        for i in range(n)
    ]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    for workers in (1, 2):
        stamps: list[float] = []
        cpu = time.process_time()
        t = time.perf_counter()
        run_system(
            entries,
            Light(),
            k=10,
            cache=RequestCache(tmp / f"light-{workers}.sqlite"),
            out=tmp / f"light-{workers}.jsonl",
            progress=False,
            executor="ray",
            workers=workers,
            on_row=lambda _row, s=stamps: s.append(time.perf_counter()),
        )
        wall = time.perf_counter() - t
        driver_ms = (time.process_time() - cpu) / n * 1000
        half = len(stamps) // 2
        steady = (len(stamps) - 1 - half) / (stamps[-1] - stamps[half])
        print(
            f"light system, ray {workers} worker(s), {n} rows: {wall:.1f}s wall, "
            f"{n / wall:,.0f} rows/s overall, {steady:,.0f} rows/s steady state "
            f"(target 3,000: {steady / 3000:.2f}x), driver CPU {driver_ms:.3f} ms/row, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    ray.shutdown()


class Waiting:
    """The filings pipeline plus a fixed wait per call. Shipped to each worker as its options
    (the pipeline is built on the worker's first call, as a system given by its spec is)."""

    def __init__(self, opts: dict[str, Any], wait: float) -> None:
        from assay.systems import load_system

        self.opts, self.wait = opts, wait
        self._inner: Any = load_system("filings", **opts)
        self.identity = {"waiting": wait, **self._inner.identity()}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_inner": None}

    @property
    def inner(self) -> Any:
        if self._inner is None:
            from assay.systems import load_system

            self._inner = load_system("filings", **self.opts)
        return self._inner

    def retrieve(self, query: str, *, as_of: Any = None, k: int = 10) -> Any:
        time.sleep(self.wait)
        return self.inner.retrieve(query, as_of=as_of, k=k)

    def answer(self, query: str, *, as_of: Any = None, hits: Any = None) -> Any:
        return self.inner.answer(query, as_of=as_of, hits=hits)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--companies", type=int, default=6)
    ap.add_argument("--years", type=int, default=3)
    ap.add_argument("--mode", default="bm25")
    ap.add_argument("--repeat", type=int, default=3, help="the dataset is run this many times")
    ap.add_argument(
        "--wait-ms",
        type=float,
        default=0.0,
        help="add this wait to every call (a system that waits on a model server)",
    )
    ap.add_argument(
        "--light", type=int, default=0, help="measure the driver on N rows of a CPU-light system"
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assay-ray-bench-"))
    if args.light:
        light(args.light, tmp)
        return
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
    system: Any = "filings"
    if args.wait_ms:
        system = Waiting(opts, args.wait_ms / 1000.0)
    times: dict[str, float] = {}
    rates: dict[str, float] = {}
    for label, executor, workers in (
        ("local", None, None),
        ("ray, 1 worker", "ray", 1),
        ("ray, 2 workers", "ray", 2),
    ):
        cache = RequestCache(tmp / f"{label}.sqlite")
        stamps: list[float] = []
        load_before = os.getloadavg()[0]
        cpu = time.process_time()
        t = time.perf_counter()
        run_system(
            entries,
            system,
            options=opts if isinstance(system, str) else None,
            spec="filings",
            cache=cache,
            progress=False,
            executor=executor,
            workers=workers,
            on_row=lambda _row, s=stamps: s.append(time.perf_counter()),
        )
        times[label] = time.perf_counter() - t
        driver_ms = (time.process_time() - cpu) / len(entries) * 1000
        # steady state: the second half of the rows (start-up and the index loads are over)
        half = len(stamps) // 2
        rate = (len(stamps) - 1 - half) / (stamps[-1] - stamps[half])
        rates[label] = rate
        print(
            f"{label:16s} {len(entries)} queries: {times[label]:.1f}s "
            f"(start-up: first row after {stamps[0] - t:.1f}s; steady state {rate:.0f} rows/s; "
            f"driver CPU {driver_ms:.2f} ms/row; "
            f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f})"
        )
    print(
        f"speed-up 2 workers vs 1: {times['ray, 1 worker'] / times['ray, 2 workers']:.2f}x; "
        f"2 workers vs local: {times['local'] / times['ray, 2 workers']:.2f}x; steady-state "
        f"throughput 2 workers vs 1: {rates['ray, 2 workers'] / rates['ray, 1 worker']:.2f}x"
    )
    ray.shutdown()


if __name__ == "__main__":
    main()
