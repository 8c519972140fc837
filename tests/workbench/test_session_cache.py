"""The JSON API's session cache (`assay.workbench.auth.SessionCache`): a session read lately is
answered from memory, and a session that ended is never answered from it."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from sqlalchemy import delete, event, update

from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.auth import AuthPolicy, SessionCache, session_cache
from assay.workbench.db import Database
from assay.workbench.models import AuthSession

from .conftest import login_client


def _counting_reads(db: Database) -> list[str]:
    """The session reads that reach the store (`resolve_session`'s query on auth_sessions),
    on every engine of the store."""
    reads: list[str] = []

    def on_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM auth_sessions" in statement:
            reads.append(statement)

    for engine in {db.engine, getattr(db, "_auto", None) or db.engine}:
        event.listen(engine, "before_cursor_execute", on_execute)
    return reads


def _app(db: Database, seconds: float) -> Any:
    policy = AuthPolicy(session_cache_seconds=seconds)
    return create_app(WorkbenchConfig(db_url=db.url, migrate=False, policy=policy), db=db)


def test_the_api_reads_a_session_once_then_answers_from_memory(db: Database) -> None:
    c, csrf = login_client(_app(db, 60), "ana")
    reads = _counting_reads(db)
    with c:
        for _ in range(5):
            r = c.post("/api/next/judge", headers={"X-CSRF-Token": csrf})
            assert r.status_code == 200, r.text
    assert len(reads) == 1
    # a wrong CSRF token is refused by a cached session as by a read one
    assert c.post("/api/next/judge", headers={"X-CSRF-Token": "forged"}).status_code == 403


def test_with_the_cache_off_every_call_reads_the_session(db: Database) -> None:
    c, csrf = login_client(_app(db, 0), "ana")
    reads = _counting_reads(db)
    with c:
        for _ in range(3):
            assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 200
    assert len(reads) == 3
    assert len(session_cache(db)) == 0


def test_a_logout_ends_the_cached_session_at_once(db: Database) -> None:
    c, csrf = login_client(_app(db, 600), "ana")
    with c:
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 200
        assert len(session_cache(db)) == 1
        c.post("/logout", headers={"X-CSRF-Token": csrf}, data={"csrf_token": csrf})
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 401


def test_a_cached_session_expires_on_its_own_time(db: Database) -> None:
    """The idle expiry read with the session holds for the cached entry too: no hit after it."""
    c, csrf = login_client(_app(db, 600), "ana")
    with c:
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 200
        past = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
        cache = session_cache(db)
        (th,) = list(cache._entries)
        info, read_at, _ = cache._entries[th]
        cache._entries[th] = (info, read_at, past)  # as if it was read just before it expired
        with db.write() as s:
            s.execute(update(AuthSession).values(expires_at=past))
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 401
        assert len(cache) == 0


def test_a_session_ended_elsewhere_is_honoured_for_at_most_the_cache_time(db: Database) -> None:
    """A session deleted outside this process (another server process's logout) is refused
    once the cached entry is older than `session_cache_seconds`."""
    c, csrf = login_client(_app(db, 0.5), "ana")
    with c:
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 200
        with db.write() as s:
            s.execute(delete(AuthSession))
        time.sleep(0.6)
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 401


def test_pages_read_the_session_every_time(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    c, csrf = login_client(_app(db, 600), "ana")
    with c:
        assert c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).status_code == 200
        with db.write() as s:
            s.execute(delete(AuthSession))
        assert c.get("/api/me").status_code == 401


def test_the_cache_is_bounded_and_a_logout_is_not_undone_by_a_racing_read() -> None:
    from assay.workbench.auth import SessionInfo
    from assay.workbench.models import User

    cache = SessionCache(max_entries=3)
    later = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(hours=1)
    info = SessionInfo(user=User(id=1, username="ana", role="annotator"), csrf="x", session_id=1)
    for i in range(5):
        cache.put(f"h{i}", info, later)
    assert list(cache._entries) == ["h2", "h3", "h4"]  # the oldest went first
    cache.forget("h4", ended=True)
    cache.put("h4", info, later)  # a read that started before the logout finishes after it
    assert "h4" not in cache._entries
