"""SQLite's hot path: statements run by the driver (`LiteDirect`, the same values as
SQLAlchemy stores and reads), and the group commit of claims and submissions
(`Database.write_batch`, `routes._web._GroupCommit`): one transaction for the calls of one
event-loop turn, each call apart in its own savepoint, no one answered before the COMMIT."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.exc import IntegrityError

from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.auth import create_user
from assay.workbench.db import Database, LiteDirect, StoreRefused
from assay.workbench.models import Assignment, Chunk, Label, Task, User

from .conftest import judge_payload

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _user(db: Database, name: str) -> User:
    with db.read() as s:
        u = s.scalar(select(User).where(User.username == name))
        assert u is not None
        s.expunge(u)
        return u


def _statements(db: Database, head: str) -> list[str]:
    seen: list[str] = []

    @event.listens_for(db.engine, "before_cursor_execute")
    def _on(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        if statement.startswith(head):
            seen.append(statement)

    return seen


def _judge_task(db: Database) -> int:
    with db.read() as s:
        return int(s.scalars(select(Task.id).where(Task.kind == "judge").order_by(Task.id)).first())


def _labels(db: Database, client_id: str) -> int:
    with db.read() as s:
        return int(
            s.scalar(select(func.count()).select_from(Label).where(Label.client_id == client_id))
        )


def test_lite_direct_stores_and_reads_the_values_sqlalchemy_does(db: Database) -> None:
    ana = _user(db, "ana")
    tid = _judge_task(db)
    when = dt.datetime(2026, 3, 4, 5, 6, 7, 891011)
    payload = {"verdicts": {"correct": "pass"}, "note": "ünïcode ✓", "n": [1, 2.5, None]}
    with db.write_direct() as conn:
        assert isinstance(conn, LiteDirect)
        aid = conn.scalar(
            Assignment.__table__.insert().returning(Assignment.id),
            {"task_id": tid, "user_id": ana.id, "claimed_at": when},
        )
        lid = conn.scalar(
            Label.__table__.insert().returning(Label.id),
            {
                "task_id": tid,
                "user_id": ana.id,
                "client_id": "direct-1",
                "payload": payload,
                "seconds": 1.5,
                "created_at": when,
                "updated_at": when,
                "revised_after_seen": True,
                "drafted": None,
            },
        )
        back = conn.execute(
            select(Label.payload, Label.created_at, Label.revised_after_seen, Label.drafted).where(
                Label.id == lid
            )
        ).one()
    # read back through SQLAlchemy: exactly what a Connection would have stored
    with db.read() as s:
        label = s.get(Label, lid)
        asg = s.get(Assignment, aid)
        assert label is not None and asg is not None
        assert label.payload == payload and label.created_at == when
        assert label.revised_after_seen is True and label.drafted is None and label.seconds == 1.5
        assert asg.claimed_at == when and asg.submitted_at is None
    # and read by the driver: the same Python values, by attribute and by position
    assert back.payload == payload and back[1] == when and isinstance(back[1], dt.datetime)
    assert back.revised_after_seen is True and back.drafted is None


def test_lite_direct_runs_a_list_parameter_and_refuses_as_sqlalchemy_does(db: Database) -> None:
    with db.read() as s:
        ids = sorted(s.scalars(select(Chunk.chunk_id)).all())[:3]
    assert len(ids) == 3
    q = select(Chunk.chunk_id).where(Chunk.chunk_id.in_([*ids[:2], "no-such-chunk"]))
    with db.write_direct() as conn:
        assert sorted(conn.scalars(q)) == ids[:2]
        assert list(conn.scalars(select(Chunk.chunk_id).where(Chunk.chunk_id.in_([])))) == []
    tid = _judge_task(db)
    ana = _user(db, "ana")
    row = {"task_id": tid, "user_id": ana.id, "claimed_at": dt.datetime(2026, 1, 1)}
    with db.write_direct() as conn:
        aid = conn.scalar(Assignment.__table__.insert().returning(Assignment.id), row)
    with pytest.raises(IntegrityError), db.write_direct() as conn:  # the same primary key
        conn.execute(Assignment.__table__.insert(), row | {"id": aid})
    with pytest.raises(StoreRefused, match="no such table"), db.write_direct() as conn:
        conn.execute(text("SELECT x FROM no_such_table"))
    # nothing of the refused transactions stayed, and the store takes writes again
    with db.read() as s:
        assert s.scalar(select(func.count()).where(Assignment.id == aid)) == 1
    with db.write_direct() as conn:
        conn.execute(Assignment.__table__.delete().where(Assignment.id == aid))


def _insert_label(db: Database, user: User, task: int, client_id: str) -> int:
    now = dt.datetime(2026, 1, 1)
    with db.write_direct() as conn:
        return int(
            conn.scalar(
                Label.__table__.insert().returning(Label.id),
                {
                    "task_id": task,
                    "user_id": user.id,
                    "client_id": client_id,
                    "payload": {},
                    "created_at": now,
                    "updated_at": now,
                    "revised_after_seen": False,
                },
            )
        )


def test_a_batch_is_one_transaction_whose_calls_stand_or_fall_alone(db: Database) -> None:
    ana, ben = _user(db, "ana"), _user(db, "ben")
    tid = _judge_task(db)
    begins = _statements(db, "BEGIN")

    def fails_after_writing() -> None:
        _insert_label(db, ben, tid, "b-fails")
        raise svc.Conflict("refused after a write")

    def needs_its_own_transaction() -> None:
        _insert_label(db, ben, tid + 1, "b-again")
        with db.write():  # a write of its own: not inside the batch
            pass

    got = db.write_batch(
        [
            lambda: _insert_label(db, ana, tid, "b-ok-1"),
            fails_after_writing,
            needs_its_own_transaction,
            lambda: _insert_label(db, ana, tid + 1, "b-ok-2"),
        ]
    )
    assert begins == ["BEGIN IMMEDIATE"]  # one transaction for the four calls
    assert [r.again for r in got] == [False, False, True, False]
    assert isinstance(got[0].value, int) and got[0].error is None
    assert isinstance(got[1].error, svc.Conflict) and got[1].value is None
    assert got[3].error is None and got[3].value != got[0].value
    assert [_labels(db, c) for c in ("b-ok-1", "b-fails", "b-again", "b-ok-2")] == [1, 0, 0, 1]


def test_a_batch_whose_commit_fails_keeps_nothing_and_raises(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = _user(db, "ana")
    tid = _judge_task(db)
    real = LiteDirect.run

    def failing_commit(self: LiteDirect, sql: str, args: tuple[Any, ...] = ()) -> Any:
        if sql == "COMMIT":  # the store refuses the COMMIT (as a full disk would)
            return real(self, "COMMIT TO no_such_savepoint")
        return real(self, sql, args)

    monkeypatch.setattr(LiteDirect, "run", failing_commit)
    with pytest.raises(StoreRefused):
        db.write_batch([lambda: _insert_label(db, ana, tid, "lost-1")])
    monkeypatch.setattr(LiteDirect, "run", real)
    assert _labels(db, "lost-1") == 0
    db.write_batch([lambda: _insert_label(db, ana, tid, "kept-1")])  # the locks were let go
    assert _labels(db, "kept-1") == 1


def _gathered(web: Any, calls: list[Any]) -> list[Any]:
    async def main() -> list[Any]:
        return await asyncio.gather(*(web.in_write(*c) for c in calls), return_exceptions=True)

    return asyncio.run(main())


def test_claims_and_submissions_of_one_turn_share_one_commit(db: Database) -> None:
    for i in range(4):
        create_user(db, f"gc{i}", "tulip-basin-4821", fast_hash=True)
    users = [_user(db, n) for n in ("ana", "ben", "gc0", "gc1", "gc2", "gc3")]
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    web = app.state.web
    begins = _statements(db, "BEGIN IMMEDIATE")
    tasks = _gathered(web, [(svc.claim_next, db, u, "judge") for u in users])
    assert len(begins) == 1, begins  # six claims, one transaction
    assert all(isinstance(t, int) for t in tasks), tasks
    with db.read() as s:
        claimed = s.execute(select(Assignment.user_id, Assignment.task_id)).all()
    assert sorted(claimed) == sorted((u.id, t) for u, t in zip(users, tasks, strict=True))


def _submit(db: Database, user: User, task: int, client_id: str) -> Any:
    return svc.submit_label(db, user, task, judge_payload(), client_id=client_id)


def test_submissions_of_one_turn_share_one_commit_and_fail_alone(db: Database) -> None:
    for i in range(3):
        create_user(db, f"gs{i}", "tulip-basin-4821", fast_hash=True)
    users = [_user(db, n) for n in ("ana", "ben", "gs0", "gs1", "gs2")]
    tasks = [svc.claim_next(db, u, "judge") for u in users]
    assert all(isinstance(t, int) for t in tasks), tasks
    web = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db).state.web
    begins = _statements(db, "BEGIN IMMEDIATE")
    calls: list[Any] = [
        (_submit, db, u, t, f"gs-{u.username}") for u, t in zip(users, tasks, strict=True)
    ]
    calls.insert(2, (_submit, db, users[0], 999_999, "gs-bad"))  # not claimed: NotFound
    got = _gathered(web, calls)
    assert len(begins) == 1, begins
    assert isinstance(got[2], svc.NotFound)
    subs = got[:2] + got[3:]
    assert all(s.created for s in subs), subs
    assert len({s.label_id for s in subs}) == len(users)
    assert [_labels(db, f"gs-{u.username}") for u in users] == [1] * len(users)
    assert _labels(db, "gs-bad") == 0


def test_a_group_whose_commit_fails_acknowledges_no_one(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = [_user(db, n) for n in ("ana", "ben")]
    tasks = [svc.claim_next(db, u, "judge") for u in users]
    web = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db).state.web
    real = LiteDirect.run

    def failing_commit(self: LiteDirect, sql: str, args: tuple[Any, ...] = ()) -> Any:
        if sql == "COMMIT":  # the store refuses the COMMIT (as a full disk would)
            return real(self, "COMMIT TO no_such_savepoint")
        return real(self, sql, args)

    calls: list[Any] = [
        (_submit, db, u, t, f"gf-{u.username}") for u, t in zip(users, tasks, strict=True)
    ]
    monkeypatch.setattr(LiteDirect, "run", failing_commit)
    got = _gathered(web, calls)
    monkeypatch.setattr(LiteDirect, "run", real)
    # every caller gets the failure (none is told its label is stored), and none is stored
    assert all(isinstance(g, StoreRefused) for g in got), got
    assert [_labels(db, f"gf-{u.username}") for u in users] == [0, 0]
    # the same submissions again (the clients' retry): each stored once
    again = _gathered(web, calls)
    assert all(s.created for s in again), again
    assert [_labels(db, f"gf-{u.username}") for u in users] == [1, 1]
