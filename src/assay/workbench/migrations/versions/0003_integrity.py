"""Integrity: usernames unique regardless of letter case (`users.username_key`), the history of
every label (`label_revisions`), labels revised after their author could see the others
(`labels.revised_after_seen`), reference labels started from a draft (`labels.drafted`), and a
run's draft reference answer and tool calls on its outputs.

A store whose accounts differ only by letter case (`ANA` and `ana`) cannot be upgraded: this
migration refuses, naming them, and changes nothing; rename or deactivate one of each pair by
hand first (`assay.workbench.db.case_collisions` lists them). Accounts are never merged silently.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from assay.errors import UsageError
    from assay.workbench.db import case_collisions, collision_message

    conn = op.get_bind()
    users = [(int(i), str(n)) for i, n in conn.execute(sa.text("SELECT id, username FROM users"))]
    clashes = case_collisions(users)
    if clashes:
        raise UsageError(collision_message(clashes))
    from assay.workbench.models import username_key

    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("username_key", sa.String(100), nullable=True))
    for uid, name in users:
        conn.execute(
            sa.text("UPDATE users SET username_key = :k WHERE id = :i"),
            {"k": username_key(name), "i": uid},
        )
    with op.batch_alter_table("users") as batch:
        batch.alter_column("username_key", existing_type=sa.String(100), nullable=False)
        batch.create_unique_constraint("uq_users_username_key", ["username_key"])
    with op.batch_alter_table("labels") as batch:
        batch.add_column(
            sa.Column("revised_after_seen", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("drafted", sa.Boolean(), nullable=True))
    with op.batch_alter_table("outputs") as batch:
        batch.add_column(sa.Column("reference_draft", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("tool_calls", sa.JSON(), nullable=True))
    op.create_table(
        "label_revisions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "label_id",
            sa.Integer(),
            sa.ForeignKey("labels.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "task_id", sa.Integer(), sa.ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("seconds", sa.Float()),
        sa.Column("after_seen", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_label_revisions_label_id", "label_revisions", ["label_id"])
    op.create_index("ix_label_revisions_task_id", "label_revisions", ["task_id"])
    # the labels stored so far are their own first version
    conn.execute(
        sa.text(
            "INSERT INTO label_revisions "
            "(label_id, task_id, user_id, payload, seconds, after_seen, created_at) "
            "SELECT id, task_id, user_id, payload, seconds, :f, updated_at FROM labels"
        ),
        {"f": False},
    )


def downgrade() -> None:
    op.drop_index("ix_label_revisions_task_id", "label_revisions")
    op.drop_index("ix_label_revisions_label_id", "label_revisions")
    op.drop_table("label_revisions")
    with op.batch_alter_table("outputs") as batch:
        batch.drop_column("tool_calls")
        batch.drop_column("reference_draft")
    with op.batch_alter_table("labels") as batch:
        batch.drop_column("drafted")
        batch.drop_column("revised_after_seen")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_username_key", type_="unique")
        batch.drop_column("username_key")
