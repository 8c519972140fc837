"""What the revision history costs a label submission, in process (no HTTP, no other clients).

    PYTHONPATH=src python bench/bench_workbench_revisions.py [--labels 1500] [--rounds 3]
        [--db sqlite|postgresql+psycopg://...]

Every version of every label is kept (`label_revisions`), written by the store's trigger on
`labels` in the same statement as the label. Peer, measured in the same run on a store built the
same way: the same store with the trigger dropped, which keeps no history (what a submission
cost before the history existed). Each round builds both stores (one user, `--labels` judging
tasks with overlap 1), claims every task and times `submit_label` only: wall and CPU time per
submission (CPU time is far steadier on a busy machine). Rounds alternate the two, and the
medians over rounds are printed with their ratio. On PostgreSQL each store is a scratch database
created and dropped by the run.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sqlalchemy import create_engine, select  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from assay.workbench import service as svc  # noqa: E402
from assay.workbench.auth import create_user  # noqa: E402
from assay.workbench.db import Database  # noqa: E402
from assay.workbench.models import LabelRevision, User  # noqa: E402

PASS = {
    "verdicts": {"correct": "pass", "complete": "pass", "faithful": "pass", "policy": "fail"},
    "critiques": {"policy": "Recommends buying the stock."},
}


def _drop_history(db: Database) -> None:
    with db.engine.begin() as conn:
        if db.dialect == "sqlite":
            conn.exec_driver_sql("DROP TRIGGER labels_revision_ins")
            conn.exec_driver_sql("DROP TRIGGER labels_revision_upd")
        else:
            conn.exec_driver_sql("DROP TRIGGER labels_revision ON labels")


def one_store(url: str, n: int, history: bool, tmp: Path) -> tuple[float, float, int]:
    """(wall us, cpu us) per submission, and the revision rows stored."""
    db = Database(url)
    db.migrate()
    if not history:
        _drop_history(db)
    (tmp / "e.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "query": f"q {i}", "category": "c"}) + "\n" for i in range(n)
        )
    )
    (tmp / "r.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "answer": "a", "retrieved": []}) + "\n" for i in range(n)
        )
    )
    svc.import_entries(db, tmp / "e.jsonl", kinds=())
    svc.import_run(db, tmp / "r.jsonl", run_name="r", overlap=1)
    create_user(db, "u", "tulip-basin-4821", fast_hash=True, check_policy=False)
    with db.read() as s:
        user = s.scalars(select(User)).one()
    wall = cpu = 0.0
    for i in range(n):
        task = svc.claim_next(db, user, "judge")
        assert task is not None
        w0, c0 = time.perf_counter(), time.process_time()
        svc.submit_label(db, user, task, PASS, client_id=f"c{i}", seconds=3.0)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    with db.read() as s:
        revisions = len(s.scalars(select(LabelRevision.id)).all())
    db.dispose()
    return wall / n * 1e6, cpu / n * 1e6, revisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--labels", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", default="sqlite", help="sqlite, or a PostgreSQL URL")
    args = ap.parse_args()
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    admin: Any = None
    if args.db != "sqlite":
        admin = create_engine(args.db, isolation_level="AUTOCOMMIT")
    for _ in range(args.rounds):
        for history in (True, False):
            with tempfile.TemporaryDirectory() as d:
                tmp = Path(d)
                if admin is None:
                    url = f"sqlite:///{tmp / 'store.db'}"
                else:
                    name = "bench_" + secrets.token_hex(5)
                    with admin.connect() as conn:
                        conn.exec_driver_sql(f"CREATE DATABASE {name}")
                    url = make_url(args.db).set(database=name).render_as_string(hide_password=False)
                try:
                    wall, cpu, revisions = one_store(url, args.labels, history, tmp)
                finally:
                    if admin is not None:
                        with admin.connect() as conn:
                            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                assert revisions == (args.labels if history else 0)
                results[history].append((wall, cpu))
    store = "SQLite (WAL)" if admin is None else "PostgreSQL"
    print(f"label submission in process, {args.labels} labels x {args.rounds} rounds, {store}")
    print(f"{'':34}{'wall us':>10}{'cpu us':>10}")
    med = {}
    for history, name in ((True, "assay (history by trigger)"), (False, "peer: no history")):
        wall = statistics.median(w for w, _ in results[history])
        cpu = statistics.median(c for _, c in results[history])
        med[history] = (wall, cpu)
        print(f"{name:34}{wall:10.0f}{cpu:10.0f}")
    print(
        f"ratio assay / peer: wall {med[True][0] / med[False][0]:.2f}, "
        f"cpu {med[True][1] / med[False][1]:.2f}"
    )


if __name__ == "__main__":
    main()
