"""Claims and submissions on the hot path: what they write (and nothing else), the one-statement
claim of a PostgreSQL store and the careful path behind it, and the store's transaction modes."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from sqlalchemy import select, text

from assay.workbench import service as svc
from assay.workbench.db import Database, WouldBlock
from assay.workbench.models import Assignment, Label, Task, User

from .conftest import PG_URL, judge_payload

pg_only = pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL")


def _user(db: Database, name: str) -> User:
    with db.read() as s:
        u = s.scalar(select(User).where(User.username == name))
        assert u is not None
        return u


def _rows(db: Database, model: Any) -> dict[Any, dict[str, Any]]:
    with db.engine.connect() as conn:
        cols = list(model.__table__.columns)
        return {r.id: dict(r._mapping) for r in conn.execute(select(*cols))}


def test_a_claim_changes_only_the_slot_count_and_records_one_assignment(db: Database) -> None:
    """On PostgreSQL the claim is one statement whose parameters must not leak into the UPDATE
    (SQLAlchemy takes a parameter named like a column as a value to set): every other column of
    every task stays as it was."""
    ana = _user(db, "ana")
    tasks_before, asg_before = _rows(db, Task), _rows(db, Assignment)
    task_id = svc.claim_next(db, ana, "judge")
    assert task_id is not None
    tasks_after, asg_after = _rows(db, Task), _rows(db, Assignment)
    for tid, row in tasks_before.items():
        want = row | ({"n_claimed": row["n_claimed"] + 1} if tid == task_id else {})
        assert tasks_after[tid] == want, tid
    new = [a for aid, a in asg_after.items() if aid not in asg_before]
    assert len(new) == 1 and new[0]["task_id"] == task_id and new[0]["user_id"] == ana.id
    assert new[0]["submitted_at"] is None and new[0]["claimed_at"] is not None
    # and the submission then writes the label and marks the assignment, nothing else
    tasks_before = _rows(db, Task)
    sub = svc.submit_label(db, ana, task_id, judge_payload(), client_id="only-1")
    assert sub.created
    assert _rows(db, Task) == tasks_before
    labels = _rows(db, Label)
    assert labels[sub.label_id]["task_id"] == task_id and labels[sub.label_id]["user_id"] == ana.id
    assert _rows(db, Assignment)[new[0]["id"]]["submitted_at"] is not None


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgresql_claims_in_one_statement_and_waits_only_when_rivals_hold_every_row(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = _user(db, "ana")
    calls: list[int] = []
    real = db.fast_claims

    def spy() -> Any:
        calls.append(1)
        return real()

    monkeypatch.setattr(db, "fast_claims", spy)
    first = svc.claim_next(db, ana, "judge")
    assert first is not None and calls == [1]
    svc.submit_label(db, ana, first, judge_payload(), client_id="one-1")

    # a rival claimer holds every open judging task's row: the one statement skips them all and
    # finds nothing; the careful path must then wait for the rows, not answer "queue empty"
    got: list[int | None] = []
    rival = db.engine.connect()
    try:
        rival.begin()
        rival.execute(
            text("SELECT id FROM tasks WHERE kind = 'judge' AND n_claimed < overlap FOR UPDATE")
        )
        t = threading.Thread(target=lambda: got.append(svc.claim_next(db, ana, "judge")))
        t.start()
        time.sleep(0.5)
        assert not got, "the claim answered while every candidate row was locked"
        assert len(calls) == 2
        rival.rollback()  # the rival let go without claiming
        t.join(10)
    finally:
        rival.close()
    assert got and got[0] is not None and got[0] != first


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgresql_claims_skip_the_wal_flush_labels_do_not_and_reads_need_no_transaction(
    db: Database,
) -> None:
    with db.fast_claims() as conn:
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "off"
    with db.write_core() as conn:
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
    with db.quick_read() as conn:
        conn.exec_driver_sql("SELECT 1")
        assert conn.connection.dbapi_connection.autocommit is True  # type: ignore[union-attr]
    with db.write_core() as conn:  # the pooled connection is back in transaction mode
        assert conn.connection.dbapi_connection.autocommit is False  # type: ignore[union-attr]


def test_fast_claims_are_only_for_postgresql(tmp_path: Any) -> None:
    from assay.errors import UsageError

    db = Database(f"sqlite:///{tmp_path / 's.db'}")
    with pytest.raises(UsageError, match="PostgreSQL"), db.fast_claims():
        pass
    db.dispose()


@pytest.mark.parametrize("how", ["write", "write_core"])
def test_no_wait_raises_when_another_writer_holds_a_sqlite_store(tmp_path: Any, how: str) -> None:
    db = Database(f"sqlite:///{tmp_path / 's.db'}")
    db.migrate()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.write():
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert held.wait(10)
    try:
        with pytest.raises(WouldBlock), db.no_wait(), getattr(db, how)() as conn:
            conn.execute(text("CREATE TABLE never (x INTEGER)"))
    finally:
        release.set()
        t.join()
    with db.no_wait(), getattr(db, how)() as conn:  # free again: no raise, and it writes
        conn.execute(text("CREATE TABLE now_free (x INTEGER)"))
    with db.engine.connect() as conn:
        names = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master")}
    assert "now_free" in names and "never" not in names
    db.dispose()
