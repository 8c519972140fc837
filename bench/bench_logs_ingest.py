"""Time `assay logs ingest` and `assay logs report` against DuckDB reading the same file.

    PYTHONPATH=src python bench/bench_logs_ingest.py [--lines 1000000] [--keep DIR] [--workers 2]

The log is generated (seeded): two months of queries drawn from 20,000 distinct analyst
queries, 10 hits each with scores, answers (5% refusals), feedback, latency. Past a million
lines, the first million is repeated with its years moved on (2027, 2028, ...), so every line
stays distinct. assay ingests it into its store (DuckDB over a Parquet dataset by month:
validating every line, hashing it for idempotency, classifying its category, running the
refusal check on its answer, writing Parquet) and then builds the monthly report (SQL).

The peer, in the same run, is DuckDB alone: `read_json` of the same file into a table, then
the same monthly figures (volume, no-hit rate, feedback-down rate, latency p50/p95) in one
GROUP BY. The bench prints assay/peer for ingest and for the report (wall and CPU). DuckDB does
less (no validation, no dedup, no classification, no refusal check, nothing written to disk):
a second peer line shows what DuckDB alone takes to read the file and write it as Parquet, the
floor of any durable store. Peak memory is each process's maximum resident set size (VmHWM);
each tool runs in its own subprocess so their peaks are measured apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def generate(path: Path, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    companies = [f"CO{i:03d}" for i in range(200)]
    asks = ["rev", "sub rev growth y/y", "NI", "op inc", "RPO at last FYE", "EIN", "capex",
            "restated EPS", "latest qtr rev", "risk factors"]  # fmt: skip
    years = ["FY22", "FY23", "FY24", "Q1 FY24", "Q2 FY24"]
    queries = [
        f"{companies[int(rng.integers(200))]} {asks[int(rng.integers(10))]} "
        f"{years[int(rng.integers(5))]}"
        for _ in range(20_000)
    ]
    t0 = 1788220800  # 2026-09-01T00:00:00Z
    span = 61 * 86400
    with open(path, "w", encoding="utf-8") as fh:
        block = 100_000
        for start in range(0, n, block):
            m = min(block, n - start)
            qi = rng.integers(0, len(queries), m)
            ts = np.sort(rng.integers(t0, t0 + span, m))
            scores = rng.gamma(2.0, 2.0, (m, 10))
            nohit = rng.random(m) < 0.03
            refuse = rng.random(m) < 0.05
            fb = rng.random(m)
            lat = rng.lognormal(6.5, 0.4, m)
            for i in range(m):
                line = {
                    "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(ts[i]))),
                    "query": queries[int(qi[i])],
                    "retrieved": []
                    if nohit[i]
                    else [
                        {"chunk_id": f"d{int(qi[i]) % 977}#c{j}", "score": round(float(s), 3)}
                        for j, s in enumerate(sorted(scores[i], reverse=True))
                    ],
                    "answer": "I could not find this in the filings I searched."
                    if refuse[i]
                    else f"It was ${int(qi[i])} million.",
                    "feedback": "down" if fb[i] < 0.06 else ("up" if fb[i] > 0.9 else None),
                    "latency_ms": round(float(lat[i]), 1),
                    "session": f"s{int(qi[i]) % 5000}",
                }
                fh.write(json.dumps(line) + "\n")


def replicate(path: Path, base: Path, n: int) -> None:
    """`n` lines: the base log, then copies of it with the years moved on by 1, 2, ..."""
    with open(base, "rb") as fh:
        data = fh.read()
    per = data.count(b"\n")
    with open(path, "wb") as out:
        done, k = 0, 0
        while done < n:
            block = (
                data if k == 0 else data.replace(b'"ts": "2026-', f'"ts": "{2026 + k}-'.encode())
            )
            take = min(per, n - done)
            if take < per:
                cut = 0
                for _ in range(take):
                    cut = block.index(b"\n", cut) + 1
                block = block[:cut]
            out.write(block)
            done += take
            k += 1


def _peak_mb() -> float:
    """This process's peak resident set size (MB): VmHWM, which starts afresh with the process's
    program; getrusage's ru_maxrss is kept across exec on Linux, so a child would report its
    parent's peak from before the fork (generating a 10-million-line log peaks at 1.7 GB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_assay(log: str, db: str, executor: str = "local", workers: int | None = None) -> None:
    import shutil

    from assay.executors import parse_executor
    from assay.logs import ingest_logs, traffic_report

    shutil.rmtree(db, ignore_errors=True)
    t, c = time.perf_counter(), time.process_time()
    ex = parse_executor(executor, workers=workers)
    rep = ingest_logs([log], db, progress=False, executor=ex)
    t_ingest, c_ingest = time.perf_counter() - t, time.process_time() - c
    mem_ingest = _peak_mb()
    t, c = time.perf_counter(), time.process_time()
    report = traffic_report(db)
    t_report, c_report = time.perf_counter() - t, time.process_time() - c
    print(
        json.dumps(
            {
                "ingest_s": t_ingest,
                "report_s": t_report,
                "ingest_cpu_s": c_ingest,
                "report_cpu_s": c_report,
                "peak_mb_after_ingest": mem_ingest,
                "peak_mb": _peak_mb(),
                "added": rep.total("added"),
                "bad": rep.total("bad"),
                "periods": [
                    {k: p.stats[k] for k in ("n", "no_hits_rate", "down_rate", "latency_p50")}
                    for p in report.periods
                ],
            }
        )
    )


def run_duckdb(log: str, parquet: str | None = None) -> None:
    import duckdb

    con = duckdb.connect()
    if parquet is not None:  # the floor of a durable store: read the file, write it as Parquet
        t, c = time.perf_counter(), time.process_time()
        con.execute(
            f"COPY (SELECT * FROM read_json('{log}', format='newline_delimited', "
            "columns={ts: 'TIMESTAMP', query: 'VARCHAR', retrieved: 'STRUCT(chunk_id VARCHAR, "
            "score DOUBLE)[]', answer: 'VARCHAR', feedback: 'VARCHAR', latency_ms: 'DOUBLE', "
            f"session: 'VARCHAR'}})) TO '{parquet}' (FORMAT PARQUET, COMPRESSION zstd)"
        )
        print(
            json.dumps(
                {
                    "ingest_s": time.perf_counter() - t,
                    "ingest_cpu_s": time.process_time() - c,
                    "peak_mb": _peak_mb(),
                }
            )
        )
        return
    t, c = time.perf_counter(), time.process_time()
    con.execute(
        f"CREATE TABLE q AS SELECT * FROM read_json('{log}', format='newline_delimited', "
        "columns={ts: 'TIMESTAMP', query: 'VARCHAR', retrieved: 'STRUCT(chunk_id VARCHAR, "
        "score DOUBLE)[]', answer: 'VARCHAR', feedback: 'VARCHAR', latency_ms: 'DOUBLE', "
        "session: 'VARCHAR'})"
    )
    t_load, c_load = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    rows = con.execute(
        "SELECT strftime(ts, '%Y-%m') AS m, count(*), avg((len(retrieved) = 0)::INT), "
        "avg(coalesce((feedback = 'down')::INT, 0)), quantile_cont(latency_ms, 0.5), "
        "quantile_cont(latency_ms, 0.95) FROM q GROUP BY m ORDER BY m"
    ).fetchall()
    t_report, c_report = time.perf_counter() - t, time.process_time() - c
    print(
        json.dumps(
            {
                "ingest_s": t_load,
                "report_s": t_report,
                "ingest_cpu_s": c_load,
                "report_cpu_s": c_report,
                "peak_mb": _peak_mb(),
                "rows": str(rows),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, default=None, help="Keep the log and store here.")
    ap.add_argument(
        "--reuse", action="store_true", help="With --keep: reuse the log generated there before."
    )
    ap.add_argument(
        "--executor",
        default="local",
        help="assay's ingest executor: local, ray, ray:ADDRESS (CPU figures are the driver's).",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="assay's ingest workers: blocks staged side by side (threads with local).",
    )
    ap.add_argument(
        "--_child", choices=["assay", "duckdb", "parquet"], default=None, help=argparse.SUPPRESS
    )
    ap.add_argument("--_log", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_db", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child == "assay":
        run_assay(args._log, args._db, args.executor, args.workers)
        return
    if args._child == "duckdb":
        run_duckdb(args._log)
        return
    if args._child == "parquet":
        run_duckdb(args._log, args._db)
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="assay-bench-logs-"))
    work.mkdir(parents=True, exist_ok=True)
    log, db = work / "traffic.jsonl", work / "logstore"
    t = time.perf_counter()
    if not (args.reuse and log.exists()):
        if args.lines > 1_000_000:
            base = work / "base.jsonl"
            generate(base, 1_000_000)
            replicate(log, base, args.lines)
            base.unlink()
        else:
            generate(log, args.lines)
    size = log.stat().st_size / 1e6
    with open(log, "rb") as fh:
        n_lines = sum(1 for _ in fh)
    print(f"log: {n_lines:,} lines ({size:.0f} MB), ready in {time.perf_counter() - t:.1f}s")

    def child(kind: str) -> dict[str, object]:
        cmd = [sys.executable, __file__, "--_child", kind, "--_log", str(log), "--_db", str(db)]
        cmd += ["--executor", args.executor]
        if args.workers is not None:
            cmd += ["--workers", str(args.workers)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    a = child("assay")
    d = child("duckdb")
    pq = work / "peer.parquet"
    cmd = [sys.executable, __file__, "--_child", "parquet", "--_log", str(log), "--_db", str(pq)]
    f = json.loads(
        subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
    )
    pq.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    print(
        f"assay  ingest {a['ingest_s']:.1f}s wall / {a['ingest_cpu_s']:.1f}s CPU "
        f"({n_lines / float(a['ingest_cpu_s']):,.0f} lines per CPU-second), "  # type: ignore[arg-type]
        f"report {a['report_s']:.1f}s wall / {a['report_cpu_s']:.1f}s CPU, peak RSS "
        f"{a['peak_mb_after_ingest']:.0f} MB after ingest, {a['peak_mb']:.0f} MB after report; "
        f"stored {a['added']:,}"
    )
    print(
        f"duckdb load {d['ingest_s']:.1f}s wall / {d['ingest_cpu_s']:.1f}s CPU, report "
        f"{d['report_s']:.2f}s wall / {d['report_cpu_s']:.2f}s CPU, peak RSS {d['peak_mb']:.0f} MB"
    )
    print(
        f"duckdb read_json -> Parquet (no checks): {f['ingest_s']:.1f}s wall / "
        f"{f['ingest_cpu_s']:.1f}s CPU, peak RSS {f['peak_mb']:.0f} MB"
    )
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores")
    ratio_i = float(a["ingest_s"]) / float(d["ingest_s"])  # type: ignore[arg-type]
    ratio_r = float(a["report_s"]) / float(d["report_s"])  # type: ignore[arg-type]
    print(f"ratio assay/duckdb (wall): ingest {ratio_i:.1f}x, report {ratio_r:.1f}x")
    cpu_i = float(a["ingest_cpu_s"]) / float(d["ingest_cpu_s"])  # type: ignore[arg-type]
    cpu_r = float(a["report_cpu_s"]) / float(d["report_cpu_s"])  # type: ignore[arg-type]
    print(f"ratio assay/duckdb (CPU): ingest {cpu_i:.1f}x, report {cpu_r:.1f}x")
    fi = float(a["ingest_s"]) / float(f["ingest_s"])
    fc = float(a["ingest_cpu_s"]) / float(f["ingest_cpu_s"])
    print(f"ratio assay ingest / duckdb read_json -> Parquet: {fi:.1f}x wall, {fc:.1f}x CPU")
    print(
        f"peak memory: assay {a['peak_mb']:.0f} MB for {n_lines:,} lines "
        f"({'under' if float(a['peak_mb']) < 1024 else 'OVER'} 1 GB)"  # type: ignore[arg-type]
    )
    print(f"assay periods: {a['periods']}")
    print(f"duckdb rows:   {d['rows']}")
    if args.keep is None or not args.reuse:
        import shutil

        shutil.rmtree(db, ignore_errors=True)
    if args.keep is None:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
