"""How the app schedules its store work: the hot API calls on a small FIFO pool, the session read
of a server store off the event loop, and uvicorn's fast engines when installed."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from assay.errors import UsageError
from assay.workbench import app as app_module
from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app, server_engines
from assay.workbench.db import Database

from .conftest import judge_payload, login_client


def _record_threads(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    seen: list[str] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


@pytest.mark.parametrize("threads", [1, 3])
def test_claims_and_submissions_run_on_the_bounded_store_pool(
    db: Database, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    claims = _record_threads(monkeypatch, svc, "claim_next")
    submits = _record_threads(monkeypatch, svc, "submit_label")
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False, db_threads=threads), db=db)
    c, csrf = login_client(app, "ana")
    with c:
        h = {"X-CSRF-Token": csrf}
        for i in range(4):
            task = c.post("/api/next/judge", headers=h).json()["task_id"]
            assert task is not None
            body = {"task_id": task, "payload": judge_payload(), "client_id": f"pool-{i}"}
            r = c.post("/api/labels", json=body, headers=h)
            assert r.status_code == 200, r.text
            assert r.json()["label_id"] > 0 and r.json()["created"] is True
    assert len(claims) == 4 and len(submits) == 4
    names = set(claims + submits)
    assert all(n.startswith("assay-db") for n in names), names
    assert len(names) <= threads


def test_a_bad_pool_size_is_refused(db: Database) -> None:
    with pytest.raises(UsageError, match="db_threads"):
        create_app(WorkbenchConfig(db_url=db.url, migrate=False, db_threads=-1), db=db)


def test_the_session_of_a_server_store_is_read_off_the_event_loop(
    db: Database, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite the API guard reads the session on the loop (a local file read is cheaper than
    a thread hand-over); on PostgreSQL the read waits on the network and goes to the pool."""
    seen = _record_threads(monkeypatch, app_module, "resolve_session")
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    c, csrf = login_client(app, "ana")
    with c:
        seen.clear()
        r = c.post("/api/next/judge", headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200, r.text
    assert seen, "the guard did not read the session"
    if backend == "sqlite":
        assert not seen[0].startswith("assay-db")
    else:
        assert seen[0].startswith("assay-db")


def test_the_guard_still_refuses_a_dead_session(db: Database) -> None:
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    c, csrf = login_client(app, "ana")
    with c:
        c.post("/logout", headers={"X-CSRF-Token": csrf}, data={"csrf_token": csrf})
        r = c.post("/api/next/judge", headers={"X-CSRF-Token": csrf})
        assert r.status_code == 401


def test_uvicorn_gets_httptools_when_installed_and_always_asyncio(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    assert server_engines() == {"http": "httptools", "loop": "asyncio"}  # the workbench extra
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "httptools" else real(name, *a),
    )
    assert server_engines() == {"http": "h11", "loop": "asyncio"}
