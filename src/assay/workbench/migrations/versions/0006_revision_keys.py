"""A label revision's task and author are no longer foreign keys: the store's trigger on `labels`
(migration 0004) copies them from the label, whose own keys hold them, and deleting a task or
a user cascades to its labels and from there to their revisions through `label_id` (still a key,
ON DELETE CASCADE). Each label written checked its task and its author twice; now once.

SQLite cannot drop a constraint in place: the table is rebuilt (rows and ids kept), with the
triggers on `labels`, which name it, dropped and made again around the rebuild.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import importlib
from types import ModuleType

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# the columns that were keys to these tables
_KEYS = {"task_id": "tasks", "user_id": "users"}


def _table(*, keys: bool) -> sa.Table:
    """`label_revisions` as it is after this migration, or (`keys`) as it was before."""

    def ref(column: str) -> list[sa.ForeignKey]:
        return [sa.ForeignKey(f"{_KEYS[column]}.id", ondelete="CASCADE")] if keys else []

    return sa.Table(
        "label_revisions",
        sa.MetaData(),
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "label_id", sa.Integer(), sa.ForeignKey("labels.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("task_id", sa.Integer(), *ref("task_id"), nullable=False),
        sa.Column("user_id", sa.Integer(), *ref("user_id"), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("seconds", sa.Float()),
        sa.Column("after_seen", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Index("ix_label_revisions_label_id", "label_id"),
        sa.Index("ix_label_revisions_task_id", "task_id"),
    )


def _access() -> ModuleType:
    # 0004 holds the revision triggers; its module name starts with a digit
    return importlib.import_module("assay.workbench.migrations.versions.0004_access")


def _rebuild_sqlite(*, keys: bool) -> None:
    access = _access()
    access._drop_revision_triggers()
    with op.batch_alter_table("label_revisions", copy_from=_table(keys=keys), recreate="always"):
        pass
    access._revision_triggers()


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(keys=False)
        return
    for fk in sa.inspect(op.get_bind()).get_foreign_keys("label_revisions"):
        if fk["referred_table"] in _KEYS.values() and fk["name"]:
            op.drop_constraint(fk["name"], "label_revisions", type_="foreignkey")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(keys=True)
        return
    for column, table in _KEYS.items():
        op.create_foreign_key(
            f"label_revisions_{column}_fkey",
            "label_revisions",
            table,
            [column],
            ["id"],
            ondelete="CASCADE",
        )
