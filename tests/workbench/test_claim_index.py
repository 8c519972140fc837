"""A claim reads the domain of the user's last task (`_Q_LAST_DOMAIN`: the user's assignments,
newest first, one row). The store indexes assignments by (user, id), so that read is one index
entry however long the user's history and however many others claim between (migration 0005)."""

from __future__ import annotations

from sqlalchemy import inspect

from assay.workbench.db import Database
from assay.workbench.service.queue import _Q_LAST_DOMAIN


def test_assignments_are_indexed_by_user_then_id(empty_db: Database) -> None:
    indexes = {
        ix["name"]: ix["column_names"] for ix in inspect(empty_db.engine).get_indexes("assignments")
    }
    assert indexes.get("ix_assignments_user_id_id") == ["user_id", "id"]
    # the index on the user alone is gone: the pair serves its lookups by its prefix
    assert "ix_assignments_user_id" not in indexes


def test_the_last_domain_read_walks_the_index_without_sorting(empty_db: Database) -> None:
    if empty_db.engine.dialect.name != "sqlite":
        return  # PostgreSQL's planner picks by statistics; the index itself is pinned above
    sql = str(
        _Q_LAST_DOMAIN.params(uid=1).compile(
            empty_db.engine, compile_kwargs={"literal_binds": True}
        )
    )
    with empty_db.engine.connect() as conn:
        plan = [str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql)]
    text = "\n".join(plan)
    assert "ix_assignments_user_id_id" in text, text
    assert "TEMP B-TREE" not in text, text
