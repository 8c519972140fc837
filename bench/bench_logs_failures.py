"""Time `assay logs failures` on a month of traffic against DuckDB's exact grouping alone.

    python bench/bench_logs_failures.py [--lines 1000000] [--keep DIR] [--src DIR]

Generates the log of `bench/bench_logs_ingest.py` (seeded: two months, 20,000 distinct analyst
queries, 5% refusals, 6% feedback down, 3% no hits) unless `--keep DIR` holds one, ingests it,
then times `find_failures` on its second month: failing queries (feedback down, abstained, no
hits, a top score under the month's 5th percentile), grouped by normalised query and as_of,
near-duplicates merged (token-set Jaccard >= 0.8), one draft each. The peer, on the same store in
the same run: DuckDB selecting the same failing rows and grouping them by normalised query and
as_of (no near-duplicate merge, no drafts): the floor. Prints both and the ratio. `--src` times
another tree's `assay` (a previous release from a worktree) on the same store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, default=None, help="Keep (or reuse) the log and store.")
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    ap.add_argument("--month", default="2026-10")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_logs_ingest import generate

    from assay.logs import ingest_logs
    from assay.logs.failures import find_failures
    from assay.logs.store import connect

    work = args.keep or Path(tempfile.mkdtemp(prefix="assay-bench-failures-"))
    work.mkdir(parents=True, exist_ok=True)
    log, db = work / "traffic.jsonl", work / "logstore"
    if not log.exists():
        generate(log, args.lines)
    if not db.exists():
        ingest_logs([log], db, progress=False)
    t, c = time.perf_counter(), time.process_time()
    rep = find_failures(db, month=args.month)
    mine_wall, mine_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    with connect(db) as con:
        (p5,) = con.execute(
            "SELECT quantile_cont(top_score, 0.05) FROM queries WHERE month = ?", [args.month]
        ).fetchone()
        (groups,) = con.execute(
            "SELECT count(*) FROM (SELECT norm, as_of FROM queries WHERE month = ? AND "
            "(feedback = 'down' OR abstained OR n_hits = 0 OR top_score < ?) GROUP BY ALL)",
            [args.month, p5],
        ).fetchone()
    peer_wall, peer_cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"assay find_failures ({args.src}): {mine_wall:.2f}s wall / {mine_cpu:.2f}s CPU; "
        f"{rep.considered:,} queries, {rep.failing:,} failing, {len(rep.entries):,} drafts"
    )
    print(
        f"DuckDB, failing rows grouped by query and as_of: {peer_wall:.2f}s wall / "
        f"{peer_cpu:.2f}s CPU; {groups:,} groups"
    )
    print(f"ratio assay/DuckDB: {mine_wall / peer_wall:.1f}x wall, {mine_cpu / peer_cpu:.1f}x CPU")


if __name__ == "__main__":
    main()
