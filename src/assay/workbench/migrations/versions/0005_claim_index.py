"""A user's assignments indexed by (user, id): a claim reads the domain of the user's last task
(`ORDER BY id DESC LIMIT 1` over the user's assignments). With an index on the user alone that
read grew with the user's history (every assignment fetched and sorted) or with everyone's (the
primary key walked back past other users' claims); now it reads one index entry. The index on the
user alone goes: the new one serves its lookups (a user's cascade, a user's tasks) by its prefix,
and a claim writes one index fewer.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_assignments_user_id_id", "assignments", ["user_id", "id"])
    op.drop_index("ix_assignments_user_id", "assignments")


def downgrade() -> None:
    op.create_index("ix_assignments_user_id", "assignments", ["user_id"])
    op.drop_index("ix_assignments_user_id_id", "assignments")
