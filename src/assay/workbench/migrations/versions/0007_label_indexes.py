"""Indexes a label's write no longer maintains: each served only lookups that another index of
its table serves by its prefix, or none. `labels` by task (the unique (task, user) index) and
by user (the unique (user, client id) index), `assignments` by task (the unique (task, user)
index), and `label_revisions` by task, which nothing reads since its task is no longer a
foreign key (migration 0006): a revision's task is found through its label. A claim writes
one index entry fewer and a label three fewer.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# index -> (table, column)
_DROPPED = {
    "ix_labels_task_id": ("labels", "task_id"),
    "ix_labels_user_id": ("labels", "user_id"),
    "ix_assignments_task_id": ("assignments", "task_id"),
    "ix_label_revisions_task_id": ("label_revisions", "task_id"),
}


def upgrade() -> None:
    for name, (table, _column) in _DROPPED.items():
        op.drop_index(name, table)


def downgrade() -> None:
    for name, (table, column) in _DROPPED.items():
        op.create_index(name, table, [column])
