"""`Database.direct`: the hot path's statements run by psycopg itself (PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import JSON, String, bindparam, cast, insert, select, text
from sqlalchemy.exc import IntegrityError

from assay.workbench.db import Database, StoreRefused
from assay.workbench.models import Setting, Task

from .conftest import PG_URL

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL"),
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]

_AS_TEXT = select(cast(bindparam("j", type_=JSON), String))
_TASKS_IN = select(Task.id).where(Task.id.in_(bindparam("ids", expanding=True))).order_by(Task.id)
_PUT = insert(Setting)


def test_direct_answers_as_sqlalchemy_does(db: Database) -> None:
    with db.engine.connect() as conn:
        ids = list(conn.scalars(select(Task.id).order_by(Task.id).limit(3)))
        want = list(conn.scalars(_TASKS_IN, {"ids": ids[:2]}))
    assert len(ids) == 3
    with db.direct(durable=False) as conn:
        # a JSON parameter is sent as json, not jsonb: its text is stored as given (key order)
        assert conn.scalar(_AS_TEXT, {"j": {"b": 1, "a": [2]}}) == '{"b":1,"a":[2]}'
        assert conn.scalar(_AS_TEXT, {"j": None}) is None
        # a list parameter (an expanding IN), empty or not
        assert list(conn.scalars(_TASKS_IN, {"ids": ids[:2]})) == want == ids[:2]
        assert list(conn.scalars(_TASKS_IN, {"ids": []})) == []
        row = conn.execute(select(Task.id, Task.kind).where(Task.id == ids[0])).one()
        assert (row.id, row.kind) == tuple(row) and row.id == ids[0]
        assert conn.execute(select(Task.id).where(Task.id == -1)).first() is None
        # a statement without rows
        assert conn.execute(text("SELECT set_config('application_name', 'x', false)")).rowcount


def test_direct_raises_as_the_store_paths_do_and_keeps_the_connection(db: Database) -> None:
    with db.direct(durable=True) as conn:
        conn.execute(_PUT, {"key": "direct-1", "value": "v"})
        with pytest.raises(IntegrityError):  # a race the callers resolve, as on a Connection
            conn.execute(_PUT, {"key": "direct-1", "value": "w"})
        with pytest.raises(StoreRefused, match="NUL"):
            conn.execute(_PUT, {"key": "direct-2", "value": "a\x00b"})
        assert conn.scalar(select(Setting.value).where(Setting.key == "direct-1")) == "v"
    with db.engine.connect() as conn:  # committed (autocommit), and nothing of the refusals
        rows = conn.execute(select(Setting.key).where(Setting.key.like("direct-%"))).all()
        assert [r[0] for r in rows] == ["direct-1"]
        assert conn.connection.dbapi_connection.autocommit is False  # type: ignore[union-attr]
