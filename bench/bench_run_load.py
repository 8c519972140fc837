"""Run files at disk speed: assay's loaders against pandas on the same files, in the same run.

Generates a JSONL run of 100,000 lines x 100 hits and the equivalent 10,000,000-line TREC file,
then times:

- assay `load_run` on the JSONL (pyarrow fast path; and the checked line-by-line reader);
- assay `read_trec_run` on the TREC file (pyarrow fast path; and the checked reader);
- pandas `pd.read_json(lines=True)` on the JSONL and `pd.read_csv(sep=" ", header=None)` on the
  TREC file (the peer);
- assay `load_run` on the same run written as Parquet;

and prints the ratios. Goals: JSONL load <= 0.5x the time pandas takes to read the same hits as
TREC (issue 29; it was <= 1x); TREC load >= 2x faster than pandas. Then, in a subprocess, scores a run of 1,000,000 entries x 100 hits (built in
memory) and reports its peak resident memory (goal: under 8 GB).

    .venv/bin/python bench/bench_run_load.py [--lines 100000] [--hits 100] [--score-entries 1000000]
    .venv/bin/python bench/bench_run_load.py --trec-only   # the TREC file against pandas alone
    .venv/bin/python bench/bench_run_load.py --assay new=src --assay prev=/tmp/prev/src

With ``--assay NAME=SRC`` (repeatable) only the JSONL load is timed, once per release in turn,
``--repeat`` rounds, each in a fresh process with SRC first on the path: the first (cold) call,
with the lazy imports it triggers, and the second (warm) call, in wall and CPU time. On a
shared machine the CPU time is the steadier figure (a cold call's wall time there mostly
measures the other processes).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
        del out
    return best


def _generate(tmp: Path, n: int, h: int, rng: np.random.Generator) -> None:
    docs = rng.integers(0, 50_000, size=(n, h))
    scores = np.sort(rng.random((n, h)), axis=1)[:, ::-1]
    with open(tmp / "run.jsonl", "w") as fj, open(tmp / "run.trec", "w") as ft:
        for i in range(n):
            hits = [
                {"chunk_id": f"doc{d // 100}-c{d % 100}", "score": round(float(s), 6)}
                for d, s in zip(docs[i], scores[i], strict=True)
            ]
            fj.write(json.dumps({"id": f"q{i}", "retrieved": hits}) + "\n")
            ft.write(
                "".join(
                    f"q{i} Q0 {x['chunk_id']} {r} {x['score']} bench\n"
                    for r, x in enumerate(hits, start=1)
                )
            )


_SCORE_CHILD = """
import resource, sys, time
import numpy as np
from assay.dataset.schema import Entry
from assay.runs import Run
from assay.score.retrieval import score_retrieval

n, h = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
vocab = 50_000
entries = [
    Entry(id=f"q{i}", query="q", category=f"cat{i % 8}",
          evidence_paths=[[[f"d{int(x)}"] for x in rng.choice(vocab, size=2, replace=False)]])
    for i in range(n)
]
run = Run(
    [f"q{i}" for i in range(n)],
    np.arange(0, n * h + 1, h, dtype=np.int64),
    rng.integers(0, vocab, size=n * h, dtype=np.int64),
    [f"d{i}" for i in range(vocab)],
    np.tile(np.linspace(1.0, 0.0, h), n),
)
t = time.perf_counter()
res = score_retrieval(entries, run, k=10)
took = time.perf_counter() - t
# VmHWM (KiB) starts afresh with this program; ru_maxrss would carry the parent's peak across exec
with open("/proc/self/status", encoding="ascii") as fh:
    hwm = [int(x.split()[1]) for x in fh if x.startswith("VmHWM:")]
peak = (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024**2
print(f"{took:.2f} {peak:.2f}")
"""


def _trec_only(trec: Path, repeat: int, pd: Any) -> None:
    """assay's TREC load and pandas' read, alternated `repeat` times (so that both see the same
    machine load), with the 1-minute load average at each; the ratio of the best times."""
    import os

    from assay.runs import read_trec_run

    ours: list[float] = []
    theirs: list[float] = []
    for i in range(repeat):
        for label, fn, out in (
            ("assay read_trec_run TREC (pyarrow)", lambda: read_trec_run(trec), ours),
            (
                'pandas read_csv(sep=" ", header=None) TREC',
                lambda: pd.read_csv(trec, sep=" ", header=None),
                theirs,
            ),
        ):
            took = _best(fn, 1)
            out.append(took)
            print(f"{i + 1}: {label:44s} {took:6.2f}s (load average {os.getloadavg()[0]:.1f})")
    print(
        f"pandas TREC read / assay TREC load: {min(theirs) / min(ours):.2f}x (best of {repeat}; "
        f"goal >= 2); median {sorted(theirs)[repeat // 2] / sorted(ours)[repeat // 2]:.2f}x"
    )


_LOAD_CHILD = """
import sys, time
from assay.runs import load_run
times = []
for _ in range(2):
    t, c = time.perf_counter(), time.process_time()
    run = load_run(sys.argv[1])
    times += [time.perf_counter() - t, time.process_time() - c]
    del run
print(" ".join(f"{x:.4f}" for x in times))
"""


def _compare_releases(jsonl: Path, releases: list[str], repeat: int) -> None:
    """The JSONL load of each release (NAME=SRC) in turn, `repeat` rounds, fresh processes."""
    import os

    named = [r.split("=", 1) for r in releases]
    if any(len(r) != 2 for r in named):
        sys.exit("--assay takes NAME=SRC (a directory holding the assay package)")
    got: dict[str, list[list[float]]] = {name: [] for name, _ in named}
    for i in range(repeat):
        for name, src in named:
            env = {**os.environ, "PYTHONPATH": src}
            out = subprocess.run(
                [sys.executable, "-c", _LOAD_CHILD, str(jsonl)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout.split()
            row = [float(x) for x in out]
            got[name].append(row)
            print(
                f"{i + 1}: {name:8s} cold {row[0]:6.2f}s (CPU {row[1]:5.2f}s)  warm {row[2]:6.2f}s "
                f"(CPU {row[3]:5.2f}s)  load average {os.getloadavg()[0]:.1f}"
            )
    print(f"{'release':8s} {'best cold':>10s} {'CPU':>6s} {'best warm':>10s} {'CPU':>6s}")
    for name, rows in got.items():
        best = [min(r[j] for r in rows) for j in range(4)]
        print(f"{name:8s} {best[0]:10.2f} {best[1]:6.2f} {best[2]:10.2f} {best[3]:6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--hits", type=int, default=100)
    ap.add_argument("--score-entries", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--assay",
        action="append",
        default=[],
        metavar="NAME=SRC",
        help="time only the JSONL load of each release given (repeatable), in turn",
    )
    ap.add_argument(
        "--trec-only",
        action="store_true",
        help="time only the TREC readers (pyarrow path and pandas, interleaved) and skip scoring",
    )
    args = ap.parse_args()

    import pandas as pd
    import pyarrow

    from assay.runs import load_run, read_trec_run, write_run

    n, h = args.lines, args.hits
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    t = time.perf_counter()
    _generate(tmp, n, h, np.random.default_rng(args.seed))
    jsonl, trec = tmp / "run.jsonl", tmp / "run.trec"
    print(
        f"generated {n:,} lines x {h} hits: JSONL {jsonl.stat().st_size / 1e6:.0f} MB, TREC "
        f"{n * h:,} lines {trec.stat().st_size / 1e6:.0f} MB ({time.perf_counter() - t:.0f}s); "
        f"pandas {pd.__version__}, pyarrow {pyarrow.__version__}"
    )
    if args.trec_only or args.assay:
        if args.assay:
            _compare_releases(jsonl, args.assay, args.repeat)
        else:
            _trec_only(trec, args.repeat, pd)
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()
        return
    fast = load_run(jsonl)
    assert fast.offsets[-1] == n * h
    write_run(tmp / "run.parquet", fast)
    r = args.repeat
    t_jsonl = _best(lambda: load_run(jsonl), r)
    t_trec = _best(lambda: read_trec_run(trec), r)
    t_parquet = _best(lambda: load_run(tmp / "run.parquet"), r)
    t_pd_trec = _best(lambda: pd.read_csv(trec, sep=" ", header=None), r)
    t_pd_jsonl = _best(lambda: pd.read_json(jsonl, lines=True), 1)
    t_jsonl_checked = _best(lambda: load_run(jsonl, fast=False), 1)
    t_trec_checked = _best(lambda: read_trec_run(trec, fast=False), 1)
    print(f"{'':44s} {'seconds':>8s}")
    print(f"{'assay load_run JSONL (pyarrow)':44s} {t_jsonl:8.2f}")
    print(f"{'assay load_run JSONL (checked reader)':44s} {t_jsonl_checked:8.2f}")
    print(f"{'pandas read_json(lines=True) JSONL':44s} {t_pd_jsonl:8.2f}")
    print(f"{'assay read_trec_run TREC (pyarrow)':44s} {t_trec:8.2f}")
    print(f"{'assay read_trec_run TREC (checked reader)':44s} {t_trec_checked:8.2f}")
    peer = 'pandas read_csv(sep=" ", header=None) TREC'
    print(f"{peer:44s} {t_pd_trec:8.2f}")
    print(f"{'assay load_run Parquet':44s} {t_parquet:8.2f}")
    print(
        f"JSONL load / pandas TREC read: {t_jsonl / t_pd_trec:.2f} (goal <= 0.5); "
        f"pandas JSONL read / assay JSONL load: {t_pd_jsonl / t_jsonl:.1f}x"
    )
    print(f"pandas TREC read / assay TREC load: {t_pd_trec / t_trec:.2f}x (goal >= 2)")
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()

    if args.score_entries:
        out = subprocess.run(
            [sys.executable, "-c", _SCORE_CHILD, str(args.score_entries), str(h)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        print(
            f"score {args.score_entries:,} entries x {h} hits (recall, complete, mrr, ndcg at "
            f"5 and 10): {float(out[0]):.1f}s, peak RSS {float(out[1]):.2f} GiB (goal < 8)"
        )


if __name__ == "__main__":
    main()
