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

from fastapi.testclient import TestClient  # noqa: E402

from assay.workbench.app import WorkbenchConfig, create_app  # noqa: E402
from assay.workbench.db import Database  # noqa: E402
from assay.workbench.demo import load_demo  # noqa: E402

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


def pg_schema_url(base: str) -> str:
    """A fresh schema on the test server, addressed through the connection's search_path."""
    from sqlalchemy import create_engine

    schema = "t_" + secrets.token_hex(6)
    eng = create_engine(base.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    eng.dispose()
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def make_url(backend: str, tmp_path: Path) -> str:
    if backend == "postgres":
        assert PG_URL
        return pg_schema_url(PG_URL)
    return f"sqlite:///{tmp_path / 'labels.db'}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store built once; each test gets a copy of the file (fast and isolated)."""
    path = tmp_path_factory.mktemp("template") / "labels.db"
    d = Database(f"sqlite:///{path}")
    load_demo(d, fast_hash=True)
    d.dispose()  # closing the last connection checkpoints the WAL into the main file
    return path


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db(backend: str, tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    if backend == "sqlite":
        target = tmp_path / "labels.db"
        shutil.copyfile(sqlite_template, target)
        d = Database(f"sqlite:///{target}")
    else:
        d = Database(make_url(backend, tmp_path))
        load_demo(d, fast_hash=True)
    yield d
    d.dispose()


@pytest.fixture
def app(db: Database) -> Any:
    return create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)


Login = Callable[[str], tuple[TestClient, str]]


def login_client(app: Any, username: str, password: str | None = None) -> tuple[TestClient, str]:
    """A TestClient logged in as `username` and its CSRF token."""
    from assay.workbench.demo import DEMO_USERS

    pw = password or {u: p for u, p, _ in DEMO_USERS}.get(username, "password-123")
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
    home = c.get("/")
    m = re.search(r'name="csrf-token" content="([^"]+)"', home.text)
    assert m
    return c, m.group(1)


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
    "verdicts": {"correct": "pass", "complete": "pass", "faithful": "pass", "policy": "pass"},
    "critiques": {},
}


def judge_payload(**fails: str) -> dict[str, Any]:
    v = dict(JUDGE_PASS["verdicts"])
    for c in fails:
        v[c] = "fail"
    return {"verdicts": v, "critiques": dict(fails)}
