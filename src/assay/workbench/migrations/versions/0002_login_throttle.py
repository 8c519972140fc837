"""Login throttle: one row per key (account, client address, trusted device) with its recent
failures, updated atomically; replaces the per-attempt log.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_throttle",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_login_throttle_last_at", "login_throttle", ["last_at"])
    op.drop_index("ix_login_attempts_at", "login_attempts")
    op.drop_index("ix_login_attempts_key", "login_attempts")
    op.drop_table("login_attempts")


def downgrade() -> None:
    op.create_table(
        "login_attempts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_login_attempts_key", "login_attempts", ["key"])
    op.create_index("ix_login_attempts_at", "login_attempts", ["at"])
    op.drop_index("ix_login_throttle_last_at", "login_throttle")
    op.drop_table("login_throttle")
