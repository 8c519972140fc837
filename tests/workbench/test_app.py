"""How the app schedules its store work: on SQLite the hot API calls run on the event loop unless
another writer holds the store, then on a small FIFO pool, as always on PostgreSQL; the session
read of a server store off the event loop; and uvicorn's fast engines when installed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.errors import UsageError
from assay.workbench import app as app_module
from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app, server_engines
from assay.workbench.db import Database
from assay.workbench.demo_store import load_demo
from assay.workbench.models import Label

from .conftest import judge_payload, login_client


def _record_threads(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    seen: list[str] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def _label_four(app: Any, client_prefix: str) -> None:
    c, csrf = login_client(app, "ana")
    with c:
        h = {"X-CSRF-Token": csrf}
        for i in range(4):
            task = c.post("/api/next/judge", headers=h).json()["task_id"]
            assert task is not None
            body = {"task_id": task, "payload": judge_payload(), "client_id": f"{client_prefix}{i}"}
            r = c.post("/api/labels", json=body, headers=h)
            assert r.status_code == 200, r.text
            assert r.json()["label_id"] > 0 and r.json()["created"] is True


@pytest.mark.parametrize("threads", [1, 3])
def test_hot_calls_run_on_the_loop_on_sqlite_and_on_the_bounded_pool_on_postgresql(
    db: Database, backend: str, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """SQLite with no other writer: the claim and the submission run directly on the event loop
    (a thread hand-over cost more than the work); PostgreSQL: on the pool of `threads`."""
    claims = _record_threads(monkeypatch, svc, "claim_next")
    submits = _record_threads(monkeypatch, svc, "submit_label")
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False, db_threads=threads), db=db)
    _label_four(app, "pool-")
    assert len(claims) == 4 and len(submits) == 4
    names = set(claims + submits)
    if backend == "sqlite":
        assert len(names) == 1 and not any(n.startswith("assay-db") for n in names), names
    else:
        assert all(n.startswith("assay-db") for n in names), names
        assert len(names) <= threads


@pytest.mark.parametrize("holder", ["thread", "process"])
def test_on_sqlite_a_store_held_by_another_writer_sends_the_hot_call_to_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, holder: str
) -> None:
    """While another writer (a thread of this process, or another process) holds the store, the
    submission does not wait on the event loop: it goes to the store pool, waits there, and
    lands once the writer lets go, exactly once."""
    db = Database(f"sqlite:///{tmp_path / 'held.db'}")
    load_demo(db, fast_hash=True)
    submits = _record_threads(monkeypatch, svc, "submit_label")
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False, db_threads=1), db=db)
    c, csrf = login_client(app, "ana")
    h = {"X-CSRF-Token": csrf}
    release = threading.Event()
    held = threading.Event()

    def hold_in_thread() -> None:
        with db.write():
            held.set()
            release.wait(10)

    proc: subprocess.Popen[bytes] | None = None
    with c:
        task = c.post("/api/next/judge", headers=h).json()["task_id"]
        if holder == "thread":
            t = threading.Thread(target=hold_in_thread)
            t.start()
            assert held.wait(10)
        else:
            proc = subprocess.Popen(
                [sys.executable, "-c", _FLOCK_HOLDER, str(tmp_path / "held.db.writelock")],
                stdout=subprocess.PIPE,
                stdin=subprocess.PIPE,
            )
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
        timer = threading.Timer(
            0.5, release.set if proc is None else lambda: proc.communicate(b"go\n")
        )
        timer.start()
        t0 = time.monotonic()
        body = {"task_id": task, "payload": judge_payload(), "client_id": "held-1"}
        r = c.post("/api/labels", json=body, headers=h)
        waited = time.monotonic() - t0
        timer.join()
        if holder == "thread":
            t.join()
        assert r.status_code == 200, r.text
    db.dispose()
    assert waited >= 0.3, f"the submission did not wait for the other writer ({waited:.2f} s)"
    # its group commit found the store held before running anything (`write_batch` raised
    # WouldBlock on the loop), so the submission ran once, on the pool
    assert len(submits) == 1 and submits[0].startswith("assay-db"), submits
    with db.read() as s:
        n = s.scalar(select(func.count()).select_from(Label).where(Label.client_id == "held-1"))
    assert n == 1


_FLOCK_HOLDER = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


def test_the_store_pool_has_two_threads_on_sqlite_and_four_on_postgresql_by_default(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's hot calls mostly run on the event loop: 2 threads. A PostgreSQL label's commit
    holds its thread during the WAL flush, and 4 gave more labels/s than 2 at 200 annotators
    (docs/workbench.md)."""
    sizes: list[int] = []
    real = app_module.ThreadPoolExecutor

    def spy(max_workers: int, **kw: Any) -> Any:
        sizes.append(max_workers)
        return real(max_workers=max_workers, **kw)

    monkeypatch.setattr(app_module, "ThreadPoolExecutor", spy)
    create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    create_app(WorkbenchConfig(db_url=db.url, migrate=False, db_threads=5), db=db)
    assert sizes == [4 if db.dialect == "postgresql" else 2, 5]


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
