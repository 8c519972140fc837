"""The session read's share of a label's store work, in process (docs/workbench.md, "Sessions
from memory"), and the session cache against it:

    PYTHONPATH=src python bench/bench_session_read.py [--labels 400] [--db sqlite|postgresql+psycopg://...]

One annotator claims and submits `--labels` judge labels through the service (`claim_next`,
`submit_label`), each preceded by the session read the JSON API's guard makes
(`resolve_session`, the store read); CPU time of this process (`time.process_time`) per label
for the whole and for the session read alone, and the share. The peer: the same session row
read by the driver alone (`sqlite3` or `psycopg`, the same SQL on a connection of its own, in
autocommit on PostgreSQL as the guard's read), CPU per read and the ratio assay / driver; and,
for scale, the session answered from memory (`session_cache(db).get`, what the guard does
within `AuthPolicy.session_cache_seconds`). On PostgreSQL the server's own CPU is not counted
(this process's only).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_workbench_submit import PASS, prepare, store

from assay.workbench import service as svc
from assay.workbench.auth import (
    _Q_SESSION,
    AuthPolicy,
    _token_hash,
    resolve_session,
    session_cache,
    start_session,
)
from assay.workbench.models import User


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=int, default=400)
    ap.add_argument("--db", default="sqlite")
    args = ap.parse_args()
    policy = AuthPolicy()
    with tempfile.TemporaryDirectory() as tmp, store(args.db, Path(tmp), "session") as db:
        (name,) = prepare(db, Path(tmp), 1, args.labels)
        with db.read() as s:
            user = s.query(User).filter(User.username == name).one()
            s.expunge(user)
        token, _csrf = start_session(db, user.id, policy)
        read = work = 0.0
        done = 0
        for k in range(args.labels):
            t0 = time.process_time()
            info = resolve_session(db, token, policy, cached=True)
            t1 = time.process_time()
            assert info is not None
            task = svc.claim_next(db, info.user, "judge")
            if task is None:
                break
            svc.submit_label(db, info.user, task, PASS, client_id=f"s-{k}")
            t2 = time.process_time()
            read += t1 - t0
            work += t2 - t0
            done += 1
        cache = session_cache(db)
        n = 20_000
        t0 = time.process_time()
        for _ in range(n):
            assert cache.get(token, 3600.0) is not None
        cached = (time.process_time() - t0) / n
        driver = _driver_read(db, _token_hash(token), done)
    per_read, per_label = read / done * 1e3, work / done * 1e3
    store_name = "SQLite" if args.db == "sqlite" else "PostgreSQL"
    print(f"{store_name}, {done} labels, CPU of this process per label (claim + submit + session):")
    print(
        f"  assay: session read {per_read:.3f} ms of {per_label:.3f} ms ({per_read / per_label:.0%})"
    )
    print(
        f"  peer (the driver alone, {'sqlite3' if args.db == 'sqlite' else 'psycopg'}, the same "
        f"session read): {driver * 1e3:.3f} ms; assay / driver {per_read / (driver * 1e3):.2f}x"
    )
    print(
        f"  the session from memory (SessionCache.get): {cached * 1e3:.4f} ms; "
        f"read / cached {per_read / (cached * 1e3):.0f}x"
    )


def _driver_read(db: object, token_hash: str, n: int) -> float:
    """CPU seconds per read of the same session row by the driver alone (no SQLAlchemy)."""
    from assay.workbench.db import Database

    assert isinstance(db, Database)
    sql = str(_Q_SESSION.compile(dialect=db.engine.dialect))
    if db.dialect == "sqlite":
        import sqlite3

        conn: Any = sqlite3.connect(str(db.engine.url.database), isolation_level=None)
        params: Any = (token_hash,)
    else:
        import psycopg

        url = db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        conn = psycopg.connect(url, autocommit=True)
        params = {"th": token_hash}
    try:
        cur = conn.cursor()
        cur.execute(sql, params)
        assert cur.fetchone() is not None
        t0 = time.process_time()
        for _ in range(n):
            cur.execute(sql, params)
            cur.fetchone()
        return (time.process_time() - t0) / n
    finally:
        conn.close()


if __name__ == "__main__":
    main()
