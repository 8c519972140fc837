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
    db: Database,
) -> None:
    ana = _user(db, "ana")
    seen, stop = _statements(db)
    try:
        first = svc.claim_next(db, ana, "judge")
        # the user's state and the claim in one statement (WITH state ... cand ... INSERT)
        assert first is not None and seen == ["WITH state AS"]
        svc.submit_label(db, ana, first, judge_payload(), client_id="one-1")
        seen.clear()
    finally:
        stop()

    # a rival claimer holds every open judging task's row: the one statement skips them all and
    # finds nothing; one more statement then waits for the best row (not the careful path's
    # transaction of six round trips, and never "queue empty")
    got: list[int | None] = []
    rival = db.engine.connect()
    try:
        rival.begin()
        rival.execute(
            text("SELECT id FROM tasks WHERE kind = 'judge' AND n_claimed < overlap FOR UPDATE")
        )
        seen, stop = _statements(db)
        t = threading.Thread(target=lambda: got.append(svc.claim_next(db, ana, "judge")))
        t.start()
        time.sleep(0.5)
        assert not got, "the claim answered while every candidate row was locked"
        assert seen == ["WITH state AS", "WITH cand AS"]  # skipped them, then waits
        rival.rollback()  # the rival let go without claiming
        t.join(10)
    finally:
        stop()
        rival.close()
    assert got and got[0] is not None and got[0] != first
    assert seen == ["WITH state AS", "WITH cand AS"]  # the waiting statement claimed it


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_claim_waiting_for_a_rival_that_takes_the_last_slots_finds_the_queue_empty(
    db: Database,
) -> None:
    # the rival fills every open judging task while the claim waits for its rows: the waiting
    # statement checks each row again once the rival is done, takes no slot past the overlap,
    # and the careful path then answers that the queue is empty
    ana = _user(db, "ana")
    got: list[int | None] = []
    rival = db.engine.connect()
    try:
        rival.begin()
        full = rival.execute(
            text(
                "UPDATE tasks SET n_claimed = overlap WHERE kind = 'judge' "
                "AND n_claimed < overlap RETURNING id"
            )
        ).all()
        assert full
        seen, stop = _statements(db)
        t = threading.Thread(target=lambda: got.append(svc.claim_next(db, ana, "judge")))
        t.start()
        time.sleep(0.5)
        assert not got and seen == ["WITH state AS", "WITH cand AS"]
        rival.commit()
        t.join(10)
    finally:
        stop()
        rival.close()
    assert got == [None]
    with db.read() as s:
        assert not s.scalars(select(Assignment).where(Assignment.user_id == ana.id)).all()
        over = s.scalars(select(Task.id).where(Task.n_claimed > Task.overlap)).all()
        assert not over


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgresql_claims_skip_the_wal_flush_labels_do_not_and_reads_need_no_transaction(
    db: Database,
) -> None:
    with db.direct(durable=False) as conn:
        assert conn.scalar(text("SHOW synchronous_commit")) == "off"
    with db.write_core() as conn:
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
    with db.quick_read() as conn:
        conn.exec_driver_sql("SELECT 1")
        assert conn.connection.dbapi_connection.autocommit is True  # type: ignore[union-attr]
    with db.write_core() as conn:  # the pooled connection is back in transaction mode
        assert conn.connection.dbapi_connection.autocommit is False  # type: ignore[union-attr]
    # a submission's one-statement write: autocommit, and its commit waits for the WAL flush
    with db.direct(durable=True) as conn:
        assert conn.scalar(text("SHOW synchronous_commit")) == "on"
        assert conn._dbapi.autocommit is True
    with db.write_core() as conn:
        assert conn.connection.dbapi_connection.autocommit is False  # type: ignore[union-attr]


def test_direct_statements_are_only_for_postgresql(tmp_path: Any) -> None:
    from assay.errors import UsageError

    db = Database(f"sqlite:///{tmp_path / 's.db'}")
    for durable in (False, True):
        with pytest.raises(UsageError, match="PostgreSQL"), db.direct(durable=durable):
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


# ------------------------------------------------- PostgreSQL: a new label in one durable statement


def _statements(db: Database) -> tuple[list[str], Any]:
    """Every statement the store's engines run from now on (first words), and the listener."""
    from sqlalchemy import event

    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        seen.append(" ".join(statement.split()[:3]))

    engines = [db.engine] + ([db._auto] if db._auto is not None else [])
    for e in engines:
        event.listen(e, "before_cursor_execute", record)

    def stop() -> None:
        for e in engines:
            event.remove(e, "before_cursor_execute", record)

    return seen, stop


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgresql_stores_a_new_label_in_one_statement_without_a_transaction_block(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the claim, the checks and the write are one statement (the task's kind is
    remembered from the claim): no BEGIN/COMMIT round trips, and the write goes through the
    durable connection (the store's synchronous commit), never through the claims' connection
    that skips the WAL flush."""
    ana = _user(db, "ana")
    task_id = svc.claim_next(db, ana, "judge")
    assert task_id is not None
    connections: list[bool] = []  # `durable` of each direct connection taken
    real = db.direct

    def spy(*, durable: bool) -> Any:
        connections.append(durable)
        return real(durable=durable)

    monkeypatch.setattr(db, "direct", spy)
    seen, stop = _statements(db)
    try:
        sub = svc.submit_label(db, ana, task_id, judge_payload(), client_id="two-1")
    finally:
        stop()
    assert seen == ["WITH mark AS"], seen
    assert sub.created and connections == [True]
    with db.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT l.id, a.submitted_at IS NOT NULL FROM labels l JOIN assignments a "
                "ON a.task_id = l.task_id AND a.user_id = l.user_id WHERE l.client_id = 'two-1'"
            )
        ).all()
        revisions = conn.execute(
            text("SELECT count(*) FROM label_revisions WHERE label_id = :i"), {"i": sub.label_id}
        ).scalar()
    assert rows == [(sub.label_id, True)] and revisions == 1
    # a retry answers the first label; a revision (a new client id) takes the careful path
    assert svc.submit_label(db, ana, task_id, judge_payload(), client_id="two-1").created is False
    again = svc.submit_label(db, ana, task_id, judge_payload(correct="x"), client_id="two-2")
    assert again.label_id == sub.label_id and not again.created
    with db.engine.connect() as conn:
        n = conn.execute(
            text("SELECT count(*) FROM label_revisions WHERE label_id = :i"), {"i": sub.label_id}
        ).scalar()
    assert n == 2


def _race_before_the_write(db: Database, action: Any) -> Any:
    """Run `action` once, on other connections, just before the submission writes its label
    (after its checks have read the store)."""
    from sqlalchemy import event

    done: list[int] = []

    def hook(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        head = " ".join(statement.split()[:3])
        if not done and head.startswith(("WITH mark", "INSERT INTO labels")):
            done.append(1)
            action()

    event.listen(db.engine, "before_cursor_execute", hook)
    return lambda: event.remove(db.engine, "before_cursor_execute", hook)


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_claim_released_between_the_check_and_the_write_stores_no_label(db: Database) -> None:
    """The blind-claim check holds on the write itself: a claim released (stale) after the
    submission read it is refused as not assigned, and nothing is written."""
    ana = _user(db, "ana")
    task_id = svc.claim_next(db, ana, "judge")
    assert task_id is not None
    stop = _race_before_the_write(db, lambda: svc.release_stale_claims(db, hours=0))
    try:
        with pytest.raises(svc.NotFound):
            svc.submit_label(db, ana, task_id, judge_payload(), client_id="late-1")
    finally:
        stop()
    with db.engine.connect() as conn:
        n = conn.execute(text("SELECT count(*) FROM labels WHERE client_id = 'late-1'")).scalar()
    assert n == 0


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_task_adjudicated_between_the_check_and_the_write_takes_no_new_label(
    db: Database,
) -> None:
    ana, root = _user(db, "ana"), _user(db, "adjudicator")
    task_id = svc.claim_next(db, ana, "judge")
    assert task_id is not None

    def adjudicate() -> None:
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO adjudications (task_id, adjudicator_id, payload, root_cause, "
                    "note, hard_case, created_at) VALUES (:t, :u, '{}', 'none', '', false, now())"
                ),
                {"t": task_id, "u": root.id},
            )

    stop = _race_before_the_write(db, adjudicate)
    try:
        with pytest.raises(svc.Conflict, match="adjudicated"):
            svc.submit_label(db, ana, task_id, judge_payload(), client_id="late-2")
    finally:
        stop()
    with db.engine.connect() as conn:
        n = conn.execute(text("SELECT count(*) FROM labels WHERE task_id = :t"), {"t": task_id})
        assert n.scalar() == 0


@pg_only
@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_concurrent_retry_that_wins_the_race_is_answered_not_duplicated(db: Database) -> None:
    """The same submission twice at once (a retry from another tab): the second write meets the
    first one's label and answers it (created False); one label, one revision."""
    ana = _user(db, "ana")
    task_id = svc.claim_next(db, ana, "judge")
    assert task_id is not None
    first: list[Any] = []

    def twin() -> None:
        first.append(svc.submit_label(db, ana, task_id, judge_payload(), client_id="twin-1"))

    stop = _race_before_the_write(db, twin)
    try:
        second = svc.submit_label(db, ana, task_id, judge_payload(), client_id="twin-1")
    finally:
        stop()
    assert first and first[0].created and not second.created
    assert second.label_id == first[0].label_id
    with db.engine.connect() as conn:
        n = conn.execute(
            text("SELECT count(*) FROM label_revisions WHERE label_id = :i"), {"i": second.label_id}
        )
        assert n.scalar() == 1
