"""What every concern of the workbench service shares: its errors, the typed views of chunks and
labels, and small store helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from assay.workbench.db import Database
from assay.workbench.models import (
    Adjudication,
    Chunk,
    Document,
    Label,
    LabelRevision,
    Setting,
    User,
)
from assay.workbench.payloads import EvidencePayload, ReferencePayload, current_criteria

__all__ = [
    "ChunkView",
    "Conflict",
    "LabelView",
    "NotFound",
    "settings_get",
    "settings_put",
]

_UID: BindParameter[int] = bindparam("uid")
_TID: BindParameter[int] = bindparam("tid")


class NotFound(Exception):
    """The thing does not exist, or the user may not know that it does (blind labels)."""


class Conflict(Exception):
    """The request cannot be applied in the current state (e.g. the task is adjudicated)."""


@dataclass(frozen=True)
class ChunkView:
    """A chunk as the pages show it: its text with the document's company, form, period and
    version date; `snippet` around the search terms for search hits; `missing` when a label
    names a chunk the corpus no longer has."""

    chunk_id: str
    doc_id: str
    text: str
    pages: list[Any]
    snippet: str | None = None
    kind: str | None = None
    company: str | None = None
    form: str | None = None
    period: str = ""
    version_date: str | None = None
    missing: bool = False
    # the access labels that restrict the chunk (its own and its document's; empty: public)
    access: list[dict[str, Any]] = field(default_factory=list)

    @property
    def restricted(self) -> bool:
        return bool(self.access)

    def to_dict(self) -> dict[str, Any]:
        if self.missing:
            return {
                "chunk_id": self.chunk_id,
                "missing": True,
                "text": "",
                "doc_id": "",
                "pages": [],
            }
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "text": self.text,
            "snippet": self.snippet,
            "pages": self.pages,
            "kind": self.kind,
            "company": self.company,
            "form": self.form,
            "period": self.period,
            "version_date": self.version_date,
            "access": self.access,
            "restricted": self.restricted,
        }


@dataclass(frozen=True)
class LabelView:
    """One expert's label as a viewer allowed to see it gets it; `chunks` (the chunks it names)
    only in the adjudication view."""

    id: int
    task_id: int
    user: str | None
    payload: dict[str, Any]
    created_at: str
    updated_at: str
    chunks: list[ChunkView] | None = field(default=None)
    revised_after_seen: bool = False  # revised once its author could see the others
    drafted: bool | None = None  # a reference label started from the system's draft
    revisions: int = 1  # versions stored (1: never revised)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "task_id": self.task_id,
            "user": self.user,
            "payload": self.payload,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "revised_after_seen": self.revised_after_seen,
            "drafted": self.drafted,
            "revisions": self.revisions,
        }
        if self.chunks is not None:
            out["chunks"] = [c.to_dict() for c in self.chunks]
        return out


def chunk_view(c: Chunk, d: Document | None, snippet: str | None = None) -> ChunkView:
    from assay.workbench.service.access import chunk_labels

    labels = chunk_labels(c.extra, d.meta if d else None, where=c.chunk_id) if c.access_key else []
    return ChunkView(
        chunk_id=c.chunk_id,
        doc_id=c.doc_id,
        text=c.text,
        snippet=snippet,
        pages=c.pages,
        kind=c.kind,
        company=d.company if d else None,
        form=d.form if d else None,
        period=d.period() if d else "",
        version_date=d.version_date if d else None,
        access=[a.to_json_dict() for a in labels],
    )


def chunk_rows(s: Session, ids: list[str]) -> list[ChunkView]:
    """The chunks of `ids` in that order; ids the corpus lacks come back marked missing."""
    if not ids:
        return []
    rows = {
        c.chunk_id: (c, d)
        for c, d in s.execute(
            select(Chunk, Document)
            .outerjoin(Document, Document.doc_id == Chunk.doc_id)
            .where(Chunk.chunk_id.in_(ids))
        )
    }
    out = []
    for cid in ids:
        if cid not in rows:
            out.append(ChunkView(chunk_id=cid, doc_id="", text="", pages=[], missing=True))
            continue
        c, d = rows[cid]
        out.append(chunk_view(c, d))
    return out


def label_view(s: Session, label: Label, chunks: list[ChunkView] | None = None) -> LabelView:
    user = s.get(User, label.user_id)
    return LabelView(
        id=label.id,
        task_id=label.task_id,
        user=user.username if user else None,
        payload=current_criteria(label.payload),
        created_at=label.created_at.isoformat(),
        updated_at=label.updated_at.isoformat(),
        chunks=chunks,
        revised_after_seen=bool(label.revised_after_seen),
        drafted=label.drafted,
        revisions=int(
            s.scalar(
                select(func.count())
                .select_from(LabelRevision)
                .where(LabelRevision.label_id == label.id)
            )
            or 1
        ),
    )


def payload_chunk_ids(kind: str, payload: dict[str, Any]) -> set[str]:
    """The chunk ids a label of this kind names (verdict labels name none)."""
    if kind == "evidence":
        return EvidencePayload.model_validate(payload).chunk_ids()
    if kind == "reference":
        return ReferencePayload.model_validate(payload).chunk_ids()
    return set()


def remember_kind(db: Database, task_id: int, kind: str) -> None:
    """Remember the kind of a task seen not to be a calibration task (a claim, a submission),
    so that a label on it can be checked and written in one statement: a task's kind never
    changes, and the statement checks both again (`labels._submit_in_one`). At most 65,536
    tasks are remembered; then the memory starts again."""
    kinds = db.task_kinds
    if len(kinds) >= 65536:
        kinds.clear()
    kinds[task_id] = kind


def is_adjudicated(s: Session, task_id: int) -> bool:
    return s.scalar(select(Adjudication.id).where(Adjudication.task_id == task_id)) is not None


def settings_get(db: Database, key: str, default: str | None = None) -> str | None:
    with db.read() as s:
        row = s.get(Setting, key)
        return row.value if row else default


def settings_put(s: Session, key: str, value: str) -> None:
    s.merge(Setting(key=key, value=value))
