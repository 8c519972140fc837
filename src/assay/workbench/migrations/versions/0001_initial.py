"""Initial workbench schema: accounts, corpus with full-text search, items, tasks, labels.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _ts(name: str, nullable: bool = False) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, sa.DateTime(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("username", sa.String(100), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("domains", sa.JSON(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        _ts("created_at"),
    )
    op.create_table(
        "auth_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        _ts("created_at"),
        _ts("last_seen"),
        _ts("expires_at"),
    )
    op.create_index("ix_auth_sessions_user_id", "auth_sessions", ["user_id"])
    op.create_table(
        "login_attempts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(200), nullable=False),
        _ts("at"),
    )
    op.create_index("ix_login_attempts_key", "login_attempts", ["key"])
    op.create_index("ix_login_attempts_at", "login_attempts", ["at"])
    op.create_table(
        "documents",
        sa.Column("doc_id", sa.String(200), primary_key=True),
        sa.Column("company", sa.String(200)),
        sa.Column("ticker", sa.String(20)),
        sa.Column("sector", sa.String(100)),
        sa.Column("form", sa.String(20)),
        sa.Column("fiscal_year", sa.Integer()),
        sa.Column("fiscal_quarter", sa.Integer()),
        sa.Column("period_end", sa.String(10)),
        sa.Column("version_date", sa.String(10)),
        sa.Column("meta", sa.JSON(), nullable=False),
    )
    op.create_index("ix_documents_company", "documents", ["company"])
    op.create_index("ix_documents_form", "documents", ["form"])
    op.create_table(
        "chunks",
        sa.Column("chunk_id", sa.String(300), primary_key=True),
        sa.Column("doc_id", sa.String(200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("pages", sa.JSON(), nullable=False),
        sa.Column("kind", sa.String(20)),
        sa.Column("extra", sa.JSON(), nullable=False),
    )
    op.create_index("ix_chunks_doc_id", "chunks", ["doc_id"])
    op.create_table(
        "items",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("category", sa.String(100), nullable=False),
        sa.Column("domain", sa.String(200), nullable=False),
        sa.Column("as_of", sa.String(10)),
        sa.Column("entry", sa.JSON(), nullable=False),
        sa.Column("calibration", sa.Boolean(), nullable=False),
        _ts("created_at"),
    )
    op.create_index("ix_items_domain", "items", ["domain"])
    op.create_table(
        "outputs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "item_id", sa.String(200), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("run_name", sa.String(200), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("retrieved", sa.JSON(), nullable=False),
        sa.Column("citations", sa.JSON(), nullable=False),
        sa.Column("draft", sa.JSON()),
        sa.UniqueConstraint("item_id", "run_name"),
    )
    op.create_index("ix_outputs_item_id", "outputs", ["item_id"])
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "item_id", sa.String(200), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("output_id", sa.Integer(), sa.ForeignKey("outputs.id", ondelete="CASCADE")),
        sa.Column("domain", sa.String(200), nullable=False),
        sa.Column("overlap", sa.Integer(), nullable=False),
        sa.Column("n_claimed", sa.Integer(), nullable=False),
        sa.Column("calibration", sa.Boolean(), nullable=False),
        sa.Column("gold", sa.JSON()),
        _ts("created_at"),
        sa.UniqueConstraint("item_id", "kind", "output_id"),
    )
    op.create_index("ix_tasks_item_id", "tasks", ["item_id"])
    op.create_index("ix_tasks_kind", "tasks", ["kind"])
    op.create_index("ix_tasks_domain", "tasks", ["domain"])
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "task_id", sa.Integer(), sa.ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        _ts("claimed_at"),
        _ts("submitted_at", nullable=True),
        sa.UniqueConstraint("task_id", "user_id"),
    )
    op.create_index("ix_assignments_task_id", "assignments", ["task_id"])
    op.create_index("ix_assignments_user_id", "assignments", ["user_id"])
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "task_id", sa.Integer(), sa.ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("seconds", sa.Float()),
        _ts("created_at"),
        _ts("updated_at"),
        sa.UniqueConstraint("task_id", "user_id"),
        sa.UniqueConstraint("user_id", "client_id"),
    )
    op.create_index("ix_labels_task_id", "labels", ["task_id"])
    op.create_index("ix_labels_user_id", "labels", ["user_id"])
    op.create_table(
        "flags",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "item_id", sa.String(200), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("flag", sa.String(40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        _ts("created_at"),
    )
    op.create_index("ix_flags_item_id", "flags", ["item_id"])
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "task_id",
            sa.Integer(),
            sa.ForeignKey("tasks.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("adjudicator_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("root_cause", sa.String(40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("hard_case", sa.Boolean(), nullable=False),
        _ts("created_at"),
    )
    op.create_table(
        "guideline_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False, unique=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("change", sa.Text(), nullable=False),
        sa.Column("author_id", sa.Integer(), sa.ForeignKey("users.id")),
        sa.Column("adjudication_id", sa.Integer(), sa.ForeignKey("adjudications.id")),
        _ts("created_at"),
    )
    op.create_table(
        "dataset_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.String(40), nullable=False, unique=True),
        sa.Column("change", sa.Text(), nullable=False),
        sa.Column("n_entries", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        _ts("created_at"),
    )
    op.create_table(
        "work_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        _ts("started_at"),
        sa.Column("n_calibration", sa.Integer(), nullable=False),
    )
    op.create_index("ix_work_sessions_user_id", "work_sessions", ["user_id"])

    # Full-text search over chunk text.
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE chunk_fts USING fts5("
            "chunk_id UNINDEXED, text, tokenize='porter unicode61')"
        )
        op.execute(
            "CREATE TRIGGER chunks_fts_ins AFTER INSERT ON chunks BEGIN "
            "INSERT INTO chunk_fts(chunk_id, text) VALUES (new.chunk_id, new.text); END"
        )
        op.execute(
            "CREATE TRIGGER chunks_fts_del AFTER DELETE ON chunks BEGIN "
            "DELETE FROM chunk_fts WHERE chunk_id = old.chunk_id; END"
        )
        op.execute(
            "CREATE TRIGGER chunks_fts_upd AFTER UPDATE OF text ON chunks BEGIN "
            "DELETE FROM chunk_fts WHERE chunk_id = old.chunk_id; "
            "INSERT INTO chunk_fts(chunk_id, text) VALUES (new.chunk_id, new.text); END"
        )
    else:
        op.execute(
            "ALTER TABLE chunks ADD COLUMN tsv tsvector "
            "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
        )
        op.execute("CREATE INDEX ix_chunks_tsv ON chunks USING GIN (tsv)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trig in ("chunks_fts_ins", "chunks_fts_del", "chunks_fts_upd"):
            op.execute(f"DROP TRIGGER IF EXISTS {trig}")
        op.execute("DROP TABLE IF EXISTS chunk_fts")
    for table in (
        "work_sessions",
        "dataset_versions",
        "guideline_versions",
        "adjudications",
        "flags",
        "labels",
        "assignments",
        "tasks",
        "outputs",
        "items",
        "chunks",
        "documents",
        "login_attempts",
        "auth_sessions",
        "users",
        "settings",
    ):
        op.drop_table(table)
