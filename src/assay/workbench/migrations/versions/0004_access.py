"""Annotators' access: users' groups and clearance, access keys on documents, chunks and tasks,
and the grants that say which keys each user may see (`assay.workbench.service.access`). And
the revision history written by the store itself: a trigger on `labels` adds the
`label_revisions` row of every insert and every change of a label's payload, in the same
statement (a submission costs one statement fewer, and no write path can forget the history).

Existing users get no group and the lowest clearance (``public``): after the upgrade they see
nothing restricted until an admin sets their access. The keys of the corpus and of every task are
computed from the access labels already stored (chunk rows' ``access``, documents' metadata).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("groups", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(
            sa.Column("clearance", sa.String(20), nullable=False, server_default="public")
        )
    for table in ("documents", "chunks", "tasks"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("access_key", sa.String(64), nullable=True))
        op.create_index(f"ix_{table}_access_key", table, ["access_key"])
    op.create_table(
        "access_keys",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("labels", sa.JSON(), nullable=False),
    )
    op.create_table(
        "access_grants",
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "key",
            sa.String(64),
            sa.ForeignKey("access_keys.key", ondelete="CASCADE"),
            primary_key=True,
        ),
    )
    from assay.workbench.service.access import refresh_access

    refresh_access(op.get_bind(), doc_ids=None, task_ids=None)
    _revision_triggers()


_REVISION_COLUMNS = "label_id, task_id, user_id, payload, seconds, after_seen, created_at"
_REVISION_VALUES = (
    "NEW.id, NEW.task_id, NEW.user_id, NEW.payload, NEW.seconds, NEW.revised_after_seen, "
    "NEW.updated_at"
)


def _revision_triggers() -> None:
    """Every inserted label, and every update of a label's payload, adds its `label_revisions`
    row: the version as stored, `after_seen` being whether it was stored once its author could
    see the other labels (`labels.revised_after_seen`, which never goes back)."""
    insert = f"INSERT INTO label_revisions ({_REVISION_COLUMNS}) VALUES ({_REVISION_VALUES});"
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"CREATE TRIGGER labels_revision_ins AFTER INSERT ON labels BEGIN {insert} END")
        op.execute(
            "CREATE TRIGGER labels_revision_upd AFTER UPDATE OF payload ON labels "
            f"BEGIN {insert} END"
        )
    else:
        op.execute(
            "CREATE FUNCTION assay_label_revision() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {insert} RETURN NULL; END $$"
        )
        op.execute(
            "CREATE TRIGGER labels_revision AFTER INSERT OR UPDATE OF payload ON labels "
            "FOR EACH ROW EXECUTE FUNCTION assay_label_revision()"
        )


def _drop_revision_triggers() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS labels_revision_upd")
        op.execute("DROP TRIGGER IF EXISTS labels_revision_ins")
    else:
        op.execute("DROP TRIGGER IF EXISTS labels_revision ON labels")
        op.execute("DROP FUNCTION IF EXISTS assay_label_revision()")


def downgrade() -> None:
    _drop_revision_triggers()
    op.drop_table("access_grants")
    op.drop_table("access_keys")
    for table in ("tasks", "chunks", "documents"):
        op.drop_index(f"ix_{table}_access_key", table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("access_key")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("clearance")
        batch.drop_column("groups")
