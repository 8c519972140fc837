"""A label revision's task and author are copied from its label by the store's trigger, and are
not foreign keys of their own (migration 0006): the label's keys hold them, so each label
written checks its task and author once, not twice. Deleting a task or a user still removes
every revision of theirs (through their labels, `label_id` ON DELETE CASCADE), on both stores,
and the upgrade keeps every revision row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import inspect, text

from assay.workbench import service as svc
from assay.workbench.db import HEAD, Database, schema_version
from assay.workbench.models import Base, User

from .conftest import JUDGE_PASS, judge_payload

_MIGRATIONS = Path(__file__).resolve().parents[2] / "src/assay/workbench/migrations"


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.query(User)}


def _keys(db: Database, table: str) -> set[tuple[tuple[str, ...], str, str | None]]:
    """The table's foreign keys as the store has them: (columns, referred table, on delete)."""
    return {
        (
            tuple(fk["constrained_columns"]),
            str(fk["referred_table"]),
            (fk.get("options") or {}).get("ondelete"),
        )
        for fk in inspect(db.engine).get_foreign_keys(table)
    }


def _alembic(db: Database, action: str, target: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, action)(cfg, target)
        conn.commit()


def _label_twice(db: Database) -> dict[str, Any]:
    """ana and ben label one judge task, ana twice (two versions): the task, and both users."""
    u = _users(db)
    t = svc.claim_next(db, u["ana"], "judge")
    assert t is not None
    assert svc.claim_next(db, u["ben"], "judge") == t
    svc.submit_label(db, u["ana"], t, JUDGE_PASS, client_id="k1")
    svc.submit_label(db, u["ana"], t, judge_payload(policy="Gives advice."), client_id="k2")
    svc.submit_label(db, u["ben"], t, JUDGE_PASS, client_id="k3")
    return {"task": t, "ana": u["ana"].id, "ben": u["ben"].id}


def _count(db: Database, sql: str, **params: Any) -> int:
    with db.engine.connect() as conn:
        return int(conn.execute(text(sql), params).scalar_one())


def _orphans(db: Database) -> int:
    """Revisions whose label, task or author is gone."""
    return _count(
        db,
        "SELECT count(*) FROM label_revisions r WHERE NOT EXISTS "
        "(SELECT 1 FROM labels l WHERE l.id = r.label_id) "
        "OR NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = r.task_id) "
        "OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = r.user_id)",
    )


def test_revisions_key_only_their_label(empty_db: Database) -> None:
    assert schema_version(empty_db.engine) == HEAD >= "0006"
    assert _keys(empty_db, "label_revisions") == {(("label_id",), "labels", "CASCADE")}
    # the label's own keys, which the trigger's copies rely on, are still there
    assert {(("task_id",), "tasks", "CASCADE"), (("user_id",), "users", "CASCADE")} <= _keys(
        empty_db, "labels"
    )


def test_every_table_has_the_keys_of_its_model(empty_db: Database) -> None:
    """The migrated schema and the models agree on every foreign key (columns, target, cascade)."""
    for table in Base.metadata.sorted_tables:
        want = {
            (
                tuple(c.name for c in fk.columns),
                fk.referred_table.name,
                fk.ondelete,
            )
            for fk in table.foreign_key_constraints
        }
        assert _keys(empty_db, table.name) == want, table.name


def test_deleting_a_task_removes_its_revisions(db: Database) -> None:
    ids = _label_twice(db)
    q = "SELECT count(*) FROM label_revisions WHERE task_id = :t"
    assert _count(db, q, t=ids["task"]) == 3
    with db.write() as s:
        s.execute(text("DELETE FROM tasks WHERE id = :t"), {"t": ids["task"]})
    assert _count(db, q, t=ids["task"]) == 0
    assert _orphans(db) == 0


def test_deleting_a_user_removes_their_revisions(db: Database) -> None:
    ids = _label_twice(db)
    q = "SELECT count(*) FROM label_revisions WHERE user_id = :u"
    assert (_count(db, q, u=ids["ana"]), _count(db, q, u=ids["ben"])) == (2, 1)
    with db.write() as s:
        s.execute(text("DELETE FROM users WHERE id = :u"), {"u": ids["ana"]})
    assert (_count(db, q, u=ids["ana"]), _count(db, q, u=ids["ben"])) == (0, 1)
    assert _orphans(db) == 0


def test_upgrade_from_0005_keeps_every_revision_and_downgrade_restores_the_keys(
    db: Database,
) -> None:
    ids = _label_twice(db)
    every = "SELECT * FROM label_revisions ORDER BY id"
    with db.engine.connect() as conn:
        before = [tuple(r) for r in conn.execute(text(every))]
    assert len(before) >= 3
    try:
        _alembic(db, "downgrade", "0005")
        assert schema_version(db.engine) == "0005"
        assert _keys(db, "label_revisions") == {
            (("label_id",), "labels", "CASCADE"),
            (("task_id",), "tasks", "CASCADE"),
            (("user_id",), "users", "CASCADE"),
        }
        with db.engine.connect() as conn:
            assert [tuple(r) for r in conn.execute(text(every))] == before
    finally:
        db.migrate()
    assert schema_version(db.engine) == HEAD
    assert _keys(db, "label_revisions") == {(("label_id",), "labels", "CASCADE")}
    with db.engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(text(every))] == before
    # the store still writes every version itself after the rebuild
    ben = _users(db)["ben"]
    svc.submit_label(db, ben, ids["task"], judge_payload(correct="Wrong year."), client_id="k4")
    q = "SELECT count(*) FROM label_revisions WHERE user_id = :u"
    assert _count(db, q, u=ids["ben"]) == 2
    assert _orphans(db) == 0
