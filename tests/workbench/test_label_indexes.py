"""A label's write maintains no index that another index of its table already serves (migration
0007): labels by task and by user, and assignments by task, are read through the first column
of their unique indexes, and a revision's task through its label. Lookups still walk an index
(SQLite's plan pinned); the store's indexes are the models'."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import inspect

from assay.workbench.db import HEAD, Database, schema_version
from assay.workbench.models import Base

from .test_revision_keys import _alembic

DROPPED = {
    "labels": {"ix_labels_task_id", "ix_labels_user_id"},
    "assignments": {"ix_assignments_task_id"},
    "label_revisions": {"ix_label_revisions_task_id"},
}


def _indexes(db: Database, table: str) -> dict[str, tuple[str, ...]]:
    """The table's indexes that no constraint made: name -> columns."""
    return {
        str(ix["name"]): tuple(str(c) for c in ix["column_names"])
        for ix in inspect(db.engine).get_indexes(table)
        if "duplicates_constraint" not in ix
    }


def test_a_label_write_maintains_no_redundant_index(empty_db: Database) -> None:
    assert schema_version(empty_db.engine) == HEAD == "0007"
    for table, names in DROPPED.items():
        assert not names & _indexes(empty_db, table).keys(), table
    assert _indexes(empty_db, "label_revisions") == {"ix_label_revisions_label_id": ("label_id",)}


def test_the_store_has_the_indexes_of_its_models(empty_db: Database) -> None:
    for table in ("labels", "assignments", "label_revisions", "tasks", "users"):
        want = {
            str(ix.name): tuple(c.name for c in ix.columns)
            for ix in Base.metadata.tables[table].indexes
        }
        assert _indexes(empty_db, table) == want, table


@pytest.mark.parametrize(
    ("table", "column"),
    [("labels", "task_id"), ("labels", "user_id"), ("assignments", "task_id")],
)
def test_lookups_by_task_or_user_still_walk_an_index(
    empty_db: Database, table: str, column: str
) -> None:
    if empty_db.engine.dialect.name != "sqlite":
        return  # PostgreSQL's planner picks by statistics; the indexes are pinned above
    sql = f"SELECT id FROM {table} WHERE {column} = 1"
    with empty_db.engine.connect() as conn:
        plan = "\n".join(str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
    assert plan.startswith(f"SEARCH {table} USING") and f"({column}=?)" in plan, plan


def test_downgrade_restores_the_indexes_and_upgrade_drops_them(db: Database) -> None:
    before: dict[str, Any] = {t: _indexes(db, t) for t in DROPPED}
    try:
        _alembic(db, "downgrade", "0006")
        for table, names in DROPPED.items():
            assert names <= _indexes(db, table).keys(), table
    finally:
        db.migrate()
    assert {t: _indexes(db, t) for t in DROPPED} == before
