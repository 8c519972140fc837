"""On SQLite a claim is one write transaction (`assay.workbench.service.queue._claim_sqlite`):
the user's state, the choice, the slot count and the assignment under one BEGIN IMMEDIATE."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, select

from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import Assignment, Task, User


def _begins(db: Database) -> list[str]:
    """Every transaction begun on the store from now on: "write" (BEGIN IMMEDIATE) or "read"
    (a deferred BEGIN), seen as statements (the hot path runs its own on the driver)."""
    seen: list[str] = []

    @event.listens_for(db.engine, "before_cursor_execute")
    def _on_statement(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        words = statement.split()
        if words and words[0].upper() == "BEGIN":
            seen.append("write" if words[1:2] == ["IMMEDIATE"] else "read")

    return seen


def _user(db: Database, name: str) -> User:
    with db.read() as s:
        u = s.scalar(select(User).where(User.username == name))
        assert u is not None
        s.expunge(u)
        return u


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_sqlite_claim_is_one_write_transaction(db: Database) -> None:
    ana = _user(db, "ana")
    begins = _begins(db)
    first = svc.claim_next(db, ana, "judge")
    assert first is not None
    assert begins == ["write"]
    begins.clear()
    assert svc.claim_next(db, ana, "judge") == first  # the open task again: still one
    assert begins == ["write"]
    with db.read() as s:
        mine = s.scalars(select(Assignment.task_id).where(Assignment.user_id == ana.id)).all()
        n_claimed = s.scalar(select(Task.n_claimed).where(Task.id == first))
    assert list(mine) == [first] and n_claimed == 1


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_sqlite_calibration_claim_is_one_write_transaction_and_comes_first(
    db: Database,
) -> None:
    ana = _user(db, "ana")
    svc.start_work_session(db, ana, "judge", minutes=30, n_calibration=1)
    begins = _begins(db)
    got = svc.claim_next(db, ana, "judge")
    assert begins == ["write"]
    with db.read() as s:
        task = s.get(Task, got)
        assert task is not None and task.calibration
