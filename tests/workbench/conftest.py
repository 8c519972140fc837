"""Fixtures: a fresh store per test (SQLite file; PostgreSQL too when ASSAY_TEST_PG_URL is set),
the demo data loaded into it, and logged-in in-process clients."""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient
from sqlalchemy import Integer, select

from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.db import Database
from assay.workbench.demo_store import load_demo
from assay.workbench.models import Base, Task

PG_URL = os.environ.get("ASSAY_TEST_PG_URL")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL"),
        ],
    ),
]


def _pg_admin(base: str) -> Any:
    from sqlalchemy import create_engine

    return create_engine(base, isolation_level="AUTOCOMMIT")


def _with_dbname(base: str, name: str) -> str:
    from sqlalchemy.engine import make_url as sa_url

    return sa_url(base).set(database=name).render_as_string(hide_password=False)


class PgStore:
    """One scratch PostgreSQL database for the whole run; each test starts from the same
    snapshot of its rows (DELETE + bulk insert + sequence reset: much faster than CREATE
    DATABASE, which checkpoints)."""

    def __init__(self, base: str) -> None:
        self.name = "assay_test_" + secrets.token_hex(5)
        self.admin = _pg_admin(base)
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {self.name}")
        self.url = _with_dbname(base, self.name)
        d = Database(self.url)
        load_demo(d, fast_hash=True)
        self.snapshot: dict[str, list[dict[str, Any]]] = {}
        with d.engine.connect() as conn:
            for table in Base.metadata.sorted_tables:
                cols = [c for c in table.columns]
                self.snapshot[table.name] = [dict(r._mapping) for r in conn.execute(select(*cols))]
        d.dispose()

    def reset(self, *, empty: bool = False) -> None:
        d = Database(self.url)
        tables = Base.metadata.sorted_tables
        with d.engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
            for t in reversed(tables):
                conn.execute(t.delete())
            if not empty:
                for t in tables:
                    rows = self.snapshot[t.name]
                    if rows:
                        conn.execute(t.insert(), rows)
                    pk = list(t.primary_key.columns)
                    if len(pk) == 1 and isinstance(pk[0].type, Integer):
                        conn.exec_driver_sql(
                            f"SELECT setval(pg_get_serial_sequence('{t.name}', '{pk[0].name}'), "
                            f"COALESCE((SELECT MAX({pk[0].name}) FROM {t.name}), 0) + 1, false)"
                        )
        d.dispose()

    def close(self) -> None:
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
        self.admin.dispose()


@pytest.fixture(scope="session")
def pg_store() -> Iterator[PgStore | None]:
    if not PG_URL:
        yield None
        return
    store = PgStore(PG_URL)
    yield store
    store.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store built once; each test gets a copy of the file (fast and isolated)."""
    path = tmp_path_factory.mktemp("template") / "labels.db"
    d = Database(f"sqlite:///{path}")
    load_demo(d, fast_hash=True)
    d.dispose()  # closing the last connection checkpoints the WAL into the main file
    return path


def demo_store(
    backend: str, folder: Path, sqlite_template: Path, pg_store: PgStore | None
) -> Database:
    """A store holding the demo data: a copy of the template in `folder` (SQLite), or the test
    server's database reset (PostgreSQL)."""
    if backend == "sqlite":
        target = folder / "labels.db"
        shutil.copyfile(sqlite_template, target)
        return Database(f"sqlite:///{target}")
    assert pg_store is not None
    pg_store.reset()
    return Database(pg_store.url)


def task_id(db: Database, item: str, kind: str) -> int:
    """The id of the task of that kind on that item (the one there is)."""
    with db.read() as s:
        return int(s.scalars(select(Task.id).where(Task.item_id == item, Task.kind == kind)).one())


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db(
    backend: str, tmp_path: Path, sqlite_template: Path, pg_store: PgStore | None
) -> Iterator[Database]:
    """A store holding the demo data (users ana, ben, adjudicator, admin)."""
    d = demo_store(backend, tmp_path, sqlite_template, pg_store)
    yield d
    d.dispose()


@pytest.fixture
def empty_db(backend: str, tmp_path: Path, pg_store: PgStore | None) -> Iterator[Database]:
    """A migrated store with no rows."""
    if backend == "sqlite":
        d = Database(f"sqlite:///{tmp_path / 'empty.db'}")
        d.migrate()
    else:
        assert pg_store is not None
        pg_store.reset(empty=True)
        d = Database(pg_store.url)
    yield d
    d.dispose()


@pytest.fixture
def app(db: Database) -> Any:
    return create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)


Login = Callable[[str], tuple[TestClient, str]]


def login_client(app: Any, username: str, password: str | None = None) -> tuple[TestClient, str]:
    """A TestClient logged in as `username` and its CSRF token."""
    from assay.workbench.demo_store import DEMO_USERS

    pw = password or {u: p for u, p, _ in DEMO_USERS}.get(username, "tulip-basin-4821")
    c = TestClient(app, base_url="http://testserver")
    r = c.get("/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
    assert token
    r = c.post(
        "/login",
        data={"username": username, "password": pw, "csrf_token": token.group(1), "next": "/"},
        follow_redirects=False,
    )
    assert r.status_code == 303, r.text
    return c, str(c.get("/api/me").json()["csrf"])


@pytest.fixture
def login(app: Any) -> Iterator[Login]:
    clients: list[TestClient] = []

    def _login(username: str) -> tuple[TestClient, str]:
        c, t = login_client(app, username)
        clients.append(c)
        return c, t

    yield _login
    for c in clients:
        c.close()


JUDGE_PASS = {
    "verdicts": {"correct": "pass", "comprehensive": "pass", "faithful": "pass", "policy": "pass"},
    "critiques": {},
}


def judge_payload(**fails: str) -> dict[str, Any]:
    v = dict(JUDGE_PASS["verdicts"])
    for c in fails:
        v[c] = "fail"
    return {"verdicts": v, "critiques": dict(fails)}
