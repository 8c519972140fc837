"""A hot-path statement (`Database.direct`, PostgreSQL autocommit: each statement its own
transaction) chosen as a deadlock's or a serialization failure's victim is run again: nothing of
it stayed. Two claims locking a row a third had just updated deadlocked under 200 annotators, and
an annotator got "the store refused the write: deadlock detected" for a claim."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import column, create_engine, select, table

from assay.workbench.db import Database, Direct, StoreRefused
from tests.workbench.conftest import PG_URL

psycopg = pytest.importorskip("psycopg")


class _Cursor:
    def __init__(self, errors: list[BaseException]) -> None:
        self.errors, self.calls, self.rowcount, self.pgresult = errors, 0, 1, None

    def execute(self, sql: str, values: Any) -> None:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)


class _Conn:
    broken = closed = False


def _direct(cursor: _Cursor) -> Direct:
    engine = create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # never connects
    return Direct(_Conn(), engine, cursor)


STMT = select(column("id")).select_from(table("tasks"))


@pytest.mark.parametrize(
    "error", [psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure]
)
def test_a_deadlock_victim_is_run_again(error: type[BaseException]) -> None:
    cur = _Cursor([error("deadlock detected"), error("deadlock detected")])
    assert _direct(cur).execute(STMT).rowcount == 1
    assert cur.calls == 3


def test_a_statement_that_keeps_losing_is_refused_with_the_stores_words() -> None:
    cur = _Cursor([psycopg.errors.DeadlockDetected("deadlock detected")] * 4)
    with pytest.raises(StoreRefused, match="the store refused the write: deadlock detected"):
        _direct(cur).execute(STMT)
    assert cur.calls == 4


def test_other_refusals_are_not_run_again() -> None:
    cur = _Cursor([psycopg.errors.StringDataRightTruncation("value too long")])
    with pytest.raises(StoreRefused, match="value too long"):
        _direct(cur).execute(STMT)
    assert cur.calls == 1


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL")
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_real_deadlock_loses_nothing_and_refuses_nothing(empty_db: Database) -> None:
    """On PostgreSQL itself: a hot-path statement locks row 2 then waits for row 1, which another
    transaction holds and which then waits for row 2. The statement, waiting longest, is the
    deadlock's victim; run again, it waits for the other to commit and completes: both updates
    of both rows are there."""
    import threading
    import time

    from sqlalchemy import text

    with empty_db.engine.begin() as conn:
        conn.execute(text("CREATE TABLE deadlock_probe (id int PRIMARY KEY, v int NOT NULL)"))
        conn.execute(text("INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)"))
    other = empty_db.engine.connect()  # a second transaction, holding row 1
    other.execute(text("SET deadlock_timeout = '10s'"))  # the statement below detects it first
    other.execute(text("UPDATE deadlock_probe SET v = v + 1 WHERE id = 1"))
    both = text(
        "WITH a AS (UPDATE deadlock_probe SET v = v + 1 WHERE id = 2 RETURNING id) "
        "UPDATE deadlock_probe SET v = v + 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM a)"
    )
    failed: list[BaseException] = []

    def statement() -> None:
        try:
            with empty_db.direct(durable=True) as direct:
                direct.execute(both)
        except BaseException as exc:
            failed.append(exc)

    t = threading.Thread(target=statement)
    t.start()
    time.sleep(0.5)  # it holds row 2 and waits for row 1
    other.execute(text("UPDATE deadlock_probe SET v = v + 1 WHERE id = 2"))  # one of the two loses
    other.commit()
    t.join(30)
    other.close()
    assert not t.is_alive() and failed == []
    with empty_db.engine.connect() as conn:
        rows = conn.execute(text("SELECT id, v FROM deadlock_probe ORDER BY id")).all()
    assert [tuple(r) for r in rows] == [(1, 2), (2, 2)]
