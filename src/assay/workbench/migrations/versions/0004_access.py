"""Annotators' access: users' groups and clearance, access keys on documents, chunks and tasks,
and the grants that say which keys each user may see (`assay.workbench.service.access`).

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


def downgrade() -> None:
    op.drop_table("access_grants")
    op.drop_table("access_keys")
    for table in ("tasks", "chunks", "documents"):
        op.drop_index(f"ix_{table}_access_key", table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("access_key")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("clearance")
        batch.drop_column("groups")
