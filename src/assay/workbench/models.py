"""The workbench store: SQLAlchemy 2 models (the schema itself lives in the Alembic migrations).

Nouns:

- `User` with a role (annotator < adjudicator < admin), the domains (companies or sectors)
  whose items they label, and their own access (`groups`, `clearance`: checked against the
  corpus's access labels by `assay.corpus.access.allows`); `AuthSession` rows are server-side
  login sessions with a CSRF token.
- `Document` and `Chunk`: the corpus, searchable with full-text search. A restricted one carries
  an `access_key`: the `AccessKey` row holding its access labels. `AccessGrant` rows say which
  keys each user may see (`assay.workbench.service.access` keeps them in step with the labels
  and the users' access; a key without a grant is hidden: the store fails closed).
- `Item`: one question (one golden entry, as imported). `Output`: one system's answer to an item.
- `Task`: a unit of work on an item (kind `evidence`, `reference`, `judge`, `sql`, `policy` or
  `tool`),
  labelled independently by `overlap` experts; its `access_key` holds the access labels of every
  chunk its material names (the entry's gold chunks, the output's retrieved and cited chunks); `Assignment` is one expert's claim on a task, `Label`
  their blind answer (at most one per assignment); `LabelRevision` keeps every version of it.
- `Flag`: a quick flag on an item. `Adjudication`: the final label of a task where experts
  disagreed, with its root cause. `GuidelineVersion`: the versioned guidelines with changelog.
- `DatasetVersion`: one export of gold, with its changelog entry.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "ROLES",
    "TASK_KINDS",
    "AccessGrant",
    "AccessKey",
    "Adjudication",
    "Assignment",
    "AuthSession",
    "Base",
    "Chunk",
    "DatasetVersion",
    "Document",
    "Flag",
    "GuidelineVersion",
    "Item",
    "Label",
    "LabelRevision",
    "LoginThrottle",
    "Output",
    "Setting",
    "Task",
    "User",
    "WorkSession",
    "username_key",
    "utcnow",
]

ROLES = ("annotator", "adjudicator", "admin")
TASK_KINDS = ("evidence", "reference", "judge", "sql", "policy", "tool")


def username_key(username: str) -> str:
    """The canonical form of a username: Unicode-normalised (NFKC) and case-folded. Names are
    unique by it (`ANA` and `ana` are one account), and every login counter and device cookie
    uses it, so no spelling of a name opens a second allowance of guesses."""
    return unicodedata.normalize("NFKC", username.strip()).casefold()


def utcnow() -> dt.datetime:
    """Naive UTC timestamp (stored the same way on SQLite and PostgreSQL)."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(100), unique=True)
    # the canonical name (assay.workbench.auth.username_key): unique, so names differ by more
    # than letter case; logins, counters and device cookies use it
    username_key: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(20))
    domains: Mapped[list[Any]] = mapped_column(JSON, default=list)
    # the user's own access, as a principal of `assay.corpus.access`: the groups they belong to
    # (a deal team, the board; compared exactly, letter case included) and their clearance tier
    groups: Mapped[list[Any]] = mapped_column(JSON, default=list)
    clearance: Mapped[str] = mapped_column(String(20), default="public")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)

    def rank(self) -> int:
        return ROLES.index(self.role)

    def can(self, role: str) -> bool:
        """True when this user's role is `role` or above it."""
        return self.rank() >= ROLES.index(role)


class AuthSession(Base):
    __tablename__ = "auth_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    last_seen: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)


class LoginThrottle(Base):
    """Recent failed logins of one key: `user:NAME` (from clients without a device cookie),
    `ip:ADDRESS`, or `device:ID` (a browser that logged in to that account before)."""

    __tablename__ = "login_throttle"
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, index=True)


class Document(Base):
    __tablename__ = "documents"
    doc_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    company: Mapped[str | None] = mapped_column(String(200), index=True)
    ticker: Mapped[str | None] = mapped_column(String(20))
    sector: Mapped[str | None] = mapped_column(String(100))
    form: Mapped[str | None] = mapped_column(String(20), index=True)
    fiscal_year: Mapped[int | None] = mapped_column(Integer)
    fiscal_quarter: Mapped[int | None] = mapped_column(Integer)
    period_end: Mapped[str | None] = mapped_column(String(10))
    version_date: Mapped[str | None] = mapped_column(String(10))
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    access_key: Mapped[str | None] = mapped_column(String(64), index=True, nullable=True)

    def period(self) -> str:
        if self.fiscal_year is None:
            return self.period_end or ""
        q = f" Q{self.fiscal_quarter}" if self.fiscal_quarter else ""
        return f"FY{self.fiscal_year}{q}"


class Chunk(Base):
    __tablename__ = "chunks"
    chunk_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(200), index=True)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    text: Mapped[str] = mapped_column(Text)
    pages: Mapped[list[Any]] = mapped_column(JSON, default=list)
    kind: Mapped[str | None] = mapped_column(String(20))
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # the chunk's access labels (its own and its document's), None when neither restricts
    access_key: Mapped[str | None] = mapped_column(String(64), index=True, nullable=True)


class Item(Base):
    __tablename__ = "items"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    query: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(100))
    domain: Mapped[str] = mapped_column(String(200), index=True)
    as_of: Mapped[str | None] = mapped_column(String(10))
    entry: Mapped[dict[str, Any]] = mapped_column(JSON)
    calibration: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class Output(Base):
    __tablename__ = "outputs"
    __table_args__ = (UniqueConstraint("item_id", "run_name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    run_name: Mapped[str] = mapped_column(String(200))
    answer: Mapped[str] = mapped_column(Text)
    retrieved: Mapped[list[Any]] = mapped_column(JSON, default=list)
    citations: Mapped[list[Any]] = mapped_column(JSON, default=list)
    draft: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # the run's answer and key facts as a draft reference answer ({"reference_answer",
    # "key_facts"}): prefills the item's reference task
    reference_draft: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # the run row's tool calls (its own, else its trace's): shown on the judging panel, labelled
    # call by call in its tool task (`assay.workbench.service.tools`)
    tool_calls: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)


class Task(Base):
    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("item_id", "kind", "output_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20), index=True)
    output_id: Mapped[int | None] = mapped_column(ForeignKey("outputs.id", ondelete="CASCADE"))
    domain: Mapped[str] = mapped_column(String(200), index=True)
    overlap: Mapped[int] = mapped_column(Integer, default=2)
    n_claimed: Mapped[int] = mapped_column(Integer, default=0)
    calibration: Mapped[bool] = mapped_column(Boolean, default=False)
    gold: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    # the access labels of every chunk the task's material names; None: all public
    access_key: Mapped[str | None] = mapped_column(String(64), index=True, nullable=True)


class AccessKey(Base):
    """One set of access labels (`assay.corpus.access.AccessLabel` as JSON, sorted): the key is
    the SHA-256 of its canonical JSON, so chunks, documents and tasks with the same labels share
    a row."""

    __tablename__ = "access_keys"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    labels: Mapped[list[Any]] = mapped_column(JSON)


class AccessGrant(Base):
    """A user may see what carries this key (every label of it allows the user's groups and
    clearance). Derived data: rebuilt whenever labels or a user's access change."""

    __tablename__ = "access_grants"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(
        ForeignKey("access_keys.key", ondelete="CASCADE"), primary_key=True
    )


class Assignment(Base):
    __tablename__ = "assignments"
    # (user, id): a claim reads the user's last assignment in one index entry (migration 0005);
    # lookups by task use the unique (task, user) index (migration 0007)
    __table_args__ = (
        UniqueConstraint("task_id", "user_id"),
        Index("ix_assignments_user_id_id", "user_id", "id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    claimed_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    submitted_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Label(Base):
    __tablename__ = "labels"
    # lookups by task or by user use the unique indexes' first column (migration 0007)
    __table_args__ = (
        UniqueConstraint("task_id", "user_id"),
        UniqueConstraint("user_id", "client_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    client_id: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    seconds: Mapped[float | None] = mapped_column(nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    # revised while its author could see the other labels: never counts as agreement
    revised_after_seen: Mapped[bool] = mapped_column(Boolean, default=False)
    # a reference label started from the system's draft (None: the task kind has no drafts)
    drafted: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class LabelRevision(Base):
    """Every version of every label, in the order stored (the first is the label as created).
    Written by the store itself: a trigger on `labels` adds one row per insert and per update of
    a label's payload (migration 0004), so no write path can skip it. `seconds` is the label's
    recorded time at that version. `task_id` and `user_id` are the label's, copied by the
    trigger, and not keys of their own (migration 0006): the label's keys hold them, and a
    deleted task or user takes its labels and with them their revisions (`label_id`)."""

    __tablename__ = "label_revisions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    label_id: Mapped[int] = mapped_column(ForeignKey("labels.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int] = mapped_column(Integer)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    seconds: Mapped[float | None] = mapped_column(nullable=True)
    # the author could see the other labels when this version was stored
    after_seen: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class Flag(Base):
    __tablename__ = "flags"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    flag: Mapped[str] = mapped_column(String(40))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class Adjudication(Base):
    __tablename__ = "adjudications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), unique=True)
    adjudicator_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    root_cause: Mapped[str] = mapped_column(String(40))
    note: Mapped[str] = mapped_column(Text, default="")
    hard_case: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class GuidelineVersion(Base):
    __tablename__ = "guideline_versions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, unique=True)
    text: Mapped[str] = mapped_column(Text)
    change: Mapped[str] = mapped_column(Text)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    adjudication_id: Mapped[int | None] = mapped_column(
        ForeignKey("adjudications.id"), nullable=True
    )
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class DatasetVersion(Base):
    __tablename__ = "dataset_versions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[str] = mapped_column(String(40), unique=True)
    change: Mapped[str] = mapped_column(Text)
    n_entries: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class WorkSession(Base):
    __tablename__ = "work_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    minutes: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    n_calibration: Mapped[int] = mapped_column(Integer, default=2)
