"""A hot-path statement (`Database.direct`, PostgreSQL autocommit: each statement its own
transaction) chosen as a deadlock's or a serialization failure's victim is run again: nothing of
it stayed. Two claims locking a row a third had just updated deadlocked under 200 annotators, and
an annotator got "the store refused the write: deadlock detected" for a claim."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import column, create_engine, select, table

from assay.workbench.db import Direct, StoreRefused

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
