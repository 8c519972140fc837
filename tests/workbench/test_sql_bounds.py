"""SQL tasks cannot take the server down (issue 40): their queries run in worker processes with a
DuckDB memory limit and no spilling, results capped in bytes as well as rows and never cached, a
per-user and a server-wide queue, and the waiting done off the threads that serve pages."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from assay.errors import UsageError
from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.db import Database
from assay.workbench.models import Task, User
from assay.workbench.service.sql import run_gold_edit
from assay.workbench.sqlpool import SqlBusy, SqlLimits, SqlPool, configure_sql_pool

from .conftest import login_client

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("sqlglot")

PW = "tulip-basin-4821"
GOLD = "SELECT region, COUNT(*) AS n FROM customers GROUP BY region ORDER BY region"
# 9,000 rows (under the row cap) of 512 characters: 4.6 MB, over the byte cap
BIG = "SELECT " + " || ".join(["md5(i::VARCHAR)"] * 16) + " AS s FROM range(9000) t(i)"
SORT = "SELECT count(*) FROM (SELECT md5(i::VARCHAR) AS m FROM range(3000000) t(i) ORDER BY m)"
SLOW = "SELECT sum(hash(i)) FROM range(100000000000) t(i)"


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the store does not matter here: the queries run on the item's database


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE customers AS SELECT i AS id, ['NA','EMEA'][i % 2 + 1] AS region "
        "FROM range(10) t(i)"
    )
    con.close()
    return path


@pytest.fixture
def sql_task(db: Database, tmp_path: Path, warehouse: Path) -> int:
    entry = {
        "id": "sql:regions",
        "query": "How many customers per region?",
        "category": "aggregation",
        "metadata": {"domain": "Northwind Bancorp"},
        "sql": {"queries": [GOLD], "dialect": "duckdb", "database": warehouse.name},
    }
    (tmp_path / "golden.jsonl").write_text(json.dumps(entry) + "\n", encoding="utf-8")
    svc.import_entries(db, tmp_path / "golden.jsonl", kinds=())
    row = {"id": "sql:regions", "answer": GOLD, "sql": GOLD, "dialect": "duckdb"}
    (tmp_path / "run.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    svc.import_run(db, tmp_path / "run.jsonl", run_name="t2s")
    with db.read() as s:
        return int(s.scalars(select(Task.id).where(Task.kind == "sql")).one())


@pytest.fixture(scope="module")
def limits() -> Iterator[SqlLimits]:
    lim = SqlLimits(workers=2, per_user=2, queued=2, wait=10, timeout=1.0, memory_mb=64)
    configure_sql_pool(lim)
    yield lim
    configure_sql_pool(SqlLimits())


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def test_results_are_capped_in_bytes_and_memory_is_limited(
    db: Database, sql_task: int, limits: SqlLimits
) -> None:
    """A result of 4.6 MB in 9,000 rows is refused (the row cap never saw it), and a sort that needs
    more than the connection's memory limit fails cleanly instead of growing the process."""
    u = _users(db)
    assert svc.claim_next(db, u["ana"], "sql") == sql_task
    with pytest.raises(UsageError, match="byte_cap"):
        run_gold_edit(db, u["ana"], sql_task, BIG)
    with pytest.raises(UsageError, match=r"(?i)out of memory"):
        run_gold_edit(db, u["ana"], sql_task, SORT)
    ok = run_gold_edit(db, u["ana"], sql_task, GOLD)
    assert ok["matches_gold"] is True and ok["n_rows"] == 2
    # the task page's panel ran in the workers too
    view = svc.task_view(db, u["ana"], sql_task).to_dict()["sql"]
    assert view["system_result"]["rows"] == [["EMEA", 5], ["NA", 5]]
    assert view["gold_result"]["n_rows"] == 2


def test_nothing_spills_beside_the_gold_database(
    db: Database, sql_task: int, limits: SqlLimits, warehouse: Path
) -> None:
    u = _users(db)
    assert svc.claim_next(db, u["ana"], "sql") == sql_task
    with pytest.raises(UsageError):
        run_gold_edit(db, u["ana"], sql_task, SORT)
    assert sorted(p.name for p in warehouse.parent.iterdir() if "shop" in p.name) == ["shop.duckdb"]


def test_a_user_has_at_most_per_user_queries_and_a_timeout_frees_the_worker(
    warehouse: Path,
) -> None:
    pool = SqlPool(SqlLimits(workers=2, per_user=1, queued=1, wait=10, timeout=0.5))
    try:
        got: list[Any] = []
        t = threading.Thread(
            target=lambda: got.append(pool.run("u1", warehouse, [(SLOW, "duckdb")]))
        )
        t.start()
        time.sleep(0.2)
        with pytest.raises(SqlBusy, match="already have 1"):
            pool.run("u1", warehouse, [(GOLD, "duckdb")])
        # another user is served meanwhile, and after the timeout the worker is free again
        assert pool.run("u2", warehouse, [(GOLD, "duckdb")])[0]["rows"] == [["EMEA", 5], ["NA", 5]]
        t.join(30)
        assert got and got[0][0]["error"] == "timeout"
        assert pool.run("u1", warehouse, [(GOLD, "duckdb")])[0]["columns"] == ["region", "n"]
    finally:
        pool.close()


def test_the_server_queue_is_bounded(warehouse: Path) -> None:
    pool = SqlPool(SqlLimits(workers=1, per_user=5, queued=0, wait=10, timeout=0.5))
    try:
        t = threading.Thread(target=lambda: pool.run("u1", warehouse, [(SLOW, "duckdb")]))
        t.start()
        time.sleep(0.2)
        with pytest.raises(SqlBusy, match="queue is full"):
            pool.run("u2", warehouse, [(GOLD, "duckdb")])
        t.join(30)
    finally:
        pool.close()


def test_slow_sql_never_starves_the_pages(
    db: Database, sql_task: int, limits: SqlLimits, monkeypatch: pytest.MonkeyPatch
) -> None:
    """48 slow queries in flight from two users: another user's search still answers at once;
    the queries past the per-user limit are refused with 429 instead of holding a thread, and
    no user ever has more than the limit admitted at once (read at every admission: how many
    are admitted in all depends on how the 48 requests spread over the timeout on a busy
    machine, the per-user bound does not)."""
    from fastapi.testclient import TestClient

    peak: dict[str, int] = {}
    admit = SqlPool._admit

    @contextlib.contextmanager
    def counted(self: SqlPool, user: str) -> Iterator[None]:
        with admit(self, user):
            with self._lock:
                peak[user] = max(peak.get(user, 0), self._per_user[user])
            yield

    monkeypatch.setattr(SqlPool, "_admit", counted)
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False, sql=limits), db=db)
    clients = [login_client(app, "adjudicator"), login_client(app, "admin")]
    reader, _ = login_client(app, "ana")
    codes: list[int] = []

    def slow(c: TestClient, csrf: str) -> None:
        r = c.post(
            f"/api/tasks/{sql_task}/sql/run",
            json={"query": SLOW},
            headers={"X-CSRF-Token": csrf},
        )
        codes.append(r.status_code)

    threads = [threading.Thread(target=slow, args=ck) for ck in clients for _ in range(24)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    t0 = time.perf_counter()
    r = reader.get("/api/search", params={"q": "net income"})
    took = time.perf_counter() - t0
    for t in threads:
        t.join(60)
    assert r.status_code == 200 and took < 1.5, took
    assert len(codes) == 48 and set(codes) == {400, 429}  # 400: stopped at the timeout
    assert codes.count(429) >= 48 - 2 * limits.per_user * 4, codes  # most were refused
    assert peak and max(peak.values()) <= limits.per_user, peak
