"""Adjudication: the queue of disagreements, the side-by-side view, the final label with its
root cause, versioned guidelines, and the gold of a task."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.errors import DataError, UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    Adjudication,
    Chunk,
    Flag,
    GuidelineVersion,
    Item,
    Label,
    Task,
    User,
)
from assay.workbench.payloads import ROOT_CAUSES, agreement_key, current_criteria, validate_payload
from assay.workbench.service._common import (
    Conflict,
    LabelView,
    NotFound,
    chunk_rows,
    is_adjudicated,
    label_view,
    payload_chunk_ids,
)
from assay.workbench.service.access import (
    hidden_chunks,
    item_hidden,
    redact_hidden,
    redacting,
    task_hidden,
    text_hidden,
)
from assay.workbench.service.labels import TaskView, may_see_others, task_view
from assay.workbench.service.quotes import REDACTED
from assay.workbench.service.tools import check_tool_label, stored_panel

__all__ = [
    "AdjudicationResult",
    "AdjudicationView",
    "FinalLabel",
    "FlagView",
    "GuidelineView",
    "QueueRow",
    "adjudicate",
    "adjudication_queue",
    "adjudication_view",
    "edit_guidelines",
    "gold_for_task",
    "guidelines",
]


@dataclass(frozen=True)
class QueueRow:
    """A task whose experts all answered and disagree."""

    task_id: int
    kind: str
    item_id: str
    query: str
    domain: str
    n_labels: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "kind": self.kind,
            "item_id": self.item_id,
            "query": self.query,
            "domain": self.domain,
            "n_labels": self.n_labels,
        }


@dataclass(frozen=True)
class FinalLabel:
    payload: dict[str, Any]
    root_cause: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"payload": self.payload, "root_cause": self.root_cause, "note": self.note}


@dataclass(frozen=True)
class FlagView:
    flag: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"flag": self.flag, "note": self.note}


@dataclass(frozen=True)
class AdjudicationView:
    """The task as its page shows it, the experts' labels side by side (each with the chunks it
    names), the adjudication once there is one, and the item's quick flags."""

    task: TaskView
    labels: list[LabelView]
    adjudication: FinalLabel | None
    flags: list[FlagView]

    # the task page's fields, so templates read view.kind, view.item, view.output as before
    @property
    def task_id(self) -> int:
        return self.task.task_id

    @property
    def kind(self) -> str:
        return self.task.kind

    @property
    def domain(self) -> str:
        return self.task.domain

    @property
    def item(self) -> Any:
        return self.task.item

    @property
    def output(self) -> Any:
        return self.task.output

    @property
    def sql(self) -> dict[str, Any] | None:
        return self.task.sql

    @property
    def policy(self) -> dict[str, Any] | None:
        return self.task.policy

    @property
    def tool(self) -> dict[str, Any] | None:
        return self.task.tool

    def to_dict(self) -> dict[str, Any]:
        return self.task.to_dict() | {
            "labels": [lab.to_dict() for lab in self.labels],
            "adjudication": self.adjudication.to_dict() if self.adjudication else None,
            "flags": [f.to_dict() for f in self.flags],
        }


@dataclass(frozen=True)
class AdjudicationResult:
    """The stored adjudication; the guideline version it opened when the root cause was a
    guideline gap."""

    adjudication_id: int
    guideline_version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"adjudication_id": self.adjudication_id}
        if self.guideline_version is not None:
            out["guideline_version"] = self.guideline_version
        return out


@dataclass(frozen=True)
class GuidelineView:
    version: int
    text: str
    change: str
    author: str | None
    adjudication_id: int | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "text": self.text,
            "change": self.change,
            "author": self.author,
            "adjudication_id": self.adjudication_id,
            "created_at": self.created_at,
        }


def _labels_by_task(s: Session, task_ids: list[int] | None = None) -> dict[int, list[Label]]:
    q = select(Label).order_by(Label.id)
    if task_ids is not None:
        q = q.where(Label.task_id.in_(task_ids))
    out: dict[int, list[Label]] = defaultdict(list)
    for lab in s.scalars(q):
        out[lab.task_id].append(lab)
    return out


def _disagree(kind: str, labels: list[Label]) -> bool:
    """The labels disagree, or one of them was revised after its author could see the others
    (a copied answer is not agreement: such a task always goes to adjudication)."""
    if any(lab.revised_after_seen for lab in labels):
        return True
    return len({agreement_key(kind, lab.payload) for lab in labels}) > 1


def _hidden_from(s: Session, viewer: User, task: Task, labels: list[Label]) -> bool:
    """The task's material or one of its labels names a chunk the viewer may not see."""
    if task_hidden(s, viewer.id, task):
        return True
    ids = {c for lab in labels for c in payload_chunk_ids(task.kind, lab.payload)}
    if ids and hidden_chunks(s, viewer.id, ids):
        return True
    # others' free text on an item whose material the viewer may not all see may quote it
    # (a store that redacts shows them with what they quote from hidden chunks redacted)
    others = [lab.payload for lab in labels if lab.user_id != viewer.id]
    return (
        bool(others)
        and (item_hidden(s, viewer.id, task.item_id) or text_hidden(s, viewer.id, *others))
        and not redacting(s)
    )


def adjudication_queue(db: Database, viewer: User | None = None) -> list[QueueRow]:
    """Tasks whose experts all answered (overlap reached) and disagree (or one revised a label
    after seeing the others), not yet adjudicated; for `viewer`, without the tasks they
    labelled (whoever labelled a task never adjudicates it) and without the tasks whose
    material or labels name a chunk they may not see (`assay.workbench.service.access`)."""
    with db.read() as s:
        done = set(s.scalars(select(Adjudication.task_id)))
        tasks = {t.id: t for t in s.scalars(select(Task).where(Task.calibration.is_(False)))}
        out = []
        for tid, labels in sorted(_labels_by_task(s).items()):
            task = tasks.get(tid)
            if task is None or tid in done or len(labels) < max(2, task.overlap):
                continue
            if viewer is not None and any(lab.user_id == viewer.id for lab in labels):
                continue
            if _disagree(task.kind, labels):
                if viewer is not None and _hidden_from(s, viewer, task, labels):
                    continue
                item = s.get(Item, task.item_id)
                out.append(
                    QueueRow(
                        task_id=tid,
                        kind=task.kind,
                        item_id=task.item_id,
                        query=item.query if item else "",
                        domain=task.domain,
                        n_labels=len(labels),
                    )
                )
        return out


def _may_adjudicate(s: Session, viewer: User, task_id: int) -> Task:
    """The task, when `viewer` may open its adjudication: an adjudicator, every label in, not
    one of its labellers, and nothing in its material or labels hidden from them. Otherwise
    NotFound (blind, or hidden), or Conflict for one of its labellers (who may see the others'
    labels once every label is in, but never settles the task)."""
    task = s.get(Task, task_id)
    if task is None or not viewer.can("adjudicator") or not may_see_others(s, viewer, task):
        raise NotFound(f"task {task_id}")
    labels = list(s.scalars(select(Label).where(Label.task_id == task_id)))
    if _hidden_from(s, viewer, task, labels):
        raise NotFound(f"task {task_id}")
    labelled = s.scalar(
        select(Label.id).where(Label.task_id == task_id, Label.user_id == viewer.id)
    )
    if labelled is not None:
        raise Conflict("you labelled this task: another adjudicator settles it")
    return task


def _flags(s: Session, viewer: User, item_id: str) -> list[FlagView]:
    """The item's flags as the viewer may read them: another's note is hidden when the item's
    material is hidden from the viewer or the note quotes a chunk they may not see; a store that
    redacts (`access.redacting`) shows such a note with the quoted spans redacted."""
    out = []
    redact = None
    for f in s.scalars(select(Flag).where(Flag.item_id == item_id)):
        if f.user_id == viewer.id:
            out.append(FlagView(flag=f.flag, note=f.note))
            continue
        if not (item_hidden(s, viewer.id, item_id) or text_hidden(s, viewer.id, f.note)):
            out.append(FlagView(flag=f.flag, note=f.note))
            continue
        redact = redacting(s) if redact is None else redact
        if redact:
            out.append(FlagView(flag=f.flag, note=redact_hidden(s, viewer.id, f.note)))
    return out


def adjudication_view(
    db: Database, viewer: User, task_id: int, *, run_sql: bool = True
) -> AdjudicationView:
    """The adjudication page of a task (see `_may_adjudicate` for who may open it; `run_sql`
    as for `task_view`)."""
    with db.read() as s:
        _may_adjudicate(s, viewer, task_id)
    view = task_view(db, viewer, task_id, run_sql=run_sql)
    with db.read() as s:
        redact = redacting(s)
        labels = []
        for lab in s.scalars(select(Label).where(Label.task_id == task_id).order_by(Label.id)):
            lv = label_view(
                s, lab, chunk_rows(s, sorted(payload_chunk_ids(view.kind, lab.payload)))
            )
            if redact and lab.user_id != viewer.id:
                lv = replace(lv, payload=redact_hidden(s, viewer.id, lv.payload))
            labels.append(lv)
        adj = s.scalar(select(Adjudication).where(Adjudication.task_id == task_id))
        flags = _flags(s, viewer, view.item.id)
    return AdjudicationView(
        task=view,
        labels=labels,
        adjudication=None
        if adj is None
        else FinalLabel(payload=adj.payload, root_cause=adj.root_cause, note=adj.note),
        flags=flags,
    )


def adjudicate(
    db: Database,
    adjudicator: User,
    task_id: int,
    payload: dict[str, Any],
    *,
    root_cause: str,
    note: str = "",
    hard_case: bool = False,
    guideline_change: str | None = None,
    guideline_text: str | None = None,
) -> AdjudicationResult:
    """Record the final label of a task and why the experts disagreed.

    root_cause is one of annotator_error, guideline_gap, ambiguous_item, stale_documents. A
    guideline gap must describe the guideline change; it opens a new guideline version (the
    full new text when given, else the previous text with the change appended) whose changelog
    links back to this adjudication. `hard_case` marks the item as a judge few-shot example.
    """
    if not adjudicator.can("adjudicator"):
        raise NotFound(f"task {task_id}")
    if root_cause not in ROOT_CAUSES:
        raise UsageError(f"root_cause must be one of {', '.join(ROOT_CAUSES)}")
    if root_cause == "guideline_gap" and not (guideline_change or "").strip():
        raise UsageError("a guideline gap needs the guideline change it calls for")
    with db.read() as s:
        task = _may_adjudicate(s, adjudicator, task_id)
        kind = task.kind
        entry = s.get(Item, task.item_id).entry if kind == "sql" else None  # type: ignore[union-attr]
        panel = stored_panel(s, task_id) if kind == "tool" else None
    clean = validate_payload(kind, payload).model_dump(mode="json")
    if panel is not None:  # one verdict per call made, one answer per missing expected call
        check_tool_label(panel, clean, "<adjudication>")
    if entry is not None:  # an edited gold query is refused before it runs when unsafe
        from assay.workbench.service.sql import check_gold_edit

        check_gold_edit(entry, clean)
    ids = payload_chunk_ids(kind, clean)
    with db.write() as s:
        if is_adjudicated(s, task_id):
            raise Conflict("already adjudicated")
        if ids:  # as a submission: hidden chunks are answered exactly as missing ones
            known = set(s.scalars(select(Chunk.chunk_id).where(Chunk.chunk_id.in_(sorted(ids)))))
            unknown = sorted((ids - known) | hidden_chunks(s, adjudicator.id, ids))
            if unknown:
                raise DataError(
                    f"not in the corpus: {', '.join(unknown)}",
                    file="<adjudication>",
                    field="chunk_id",
                )
        adj = Adjudication(
            task_id=task_id,
            adjudicator_id=adjudicator.id,
            payload=clean,
            root_cause=root_cause,
            note=note.strip(),
            hard_case=hard_case,
        )
        s.add(adj)
        s.flush()
        version = None
        if root_cause == "guideline_gap":
            assert guideline_change is not None
            version = _new_guideline(
                s, adjudicator, guideline_change.strip(), guideline_text, adj.id
            )
        return AdjudicationResult(adjudication_id=adj.id, guideline_version=version)


def _new_guideline(
    s: Session, author: User, change: str, new_text: str | None, adj_id: int | None
) -> int:
    last = s.scalar(select(GuidelineVersion).order_by(GuidelineVersion.version.desc()).limit(1))
    version = (last.version if last else 0) + 1
    if new_text is None or not new_text.strip():
        base = last.text if last else ""
        new_text = (base + "\n\n" if base else "") + f"- {change}"
    s.add(
        GuidelineVersion(
            version=version,
            text=new_text,
            change=change,
            author_id=author.id,
            adjudication_id=adj_id,
        )
    )
    return version


def edit_guidelines(db: Database, author: User, text_: str, change: str) -> int:
    if not author.can("adjudicator"):
        raise NotFound("guidelines")
    if not change.strip():
        raise UsageError("describe the change (it goes into the changelog)")
    with db.write() as s:
        return _new_guideline(s, author, change.strip(), text_, None)


def guidelines(db: Database, viewer: User | None = None) -> list[GuidelineView]:
    """Every version of the guidelines, newest first. For a `viewer`, a version's text or
    change note that quotes a chunk they may not see (an adjudicator's example from a restricted
    document) is `REDACTED` whole, or, in a store that redacts (`access.redacting`), in its
    quoted spans only (`access.redact_hidden`)."""
    with db.read() as s:
        rows = s.execute(
            select(GuidelineVersion, User.username)
            .outerjoin(User, User.id == GuidelineVersion.author_id)
            .order_by(GuidelineVersion.version.desc())
        ).all()
        redact = viewer is not None and redacting(s)

        def shown(text: str) -> str:
            if viewer is None or not text_hidden(s, viewer.id, text):
                return text
            return str(redact_hidden(s, viewer.id, text)) if redact else REDACTED

        return [
            GuidelineView(
                version=g.version,
                text=shown(g.text),
                change=shown(g.change),
                author=name,
                adjudication_id=g.adjudication_id,
                created_at=g.created_at.isoformat(timespec="minutes"),
            )
            for g, name in rows
        ]


def gold_for_task(
    task: Task, labels: list[Label], adj: Adjudication | None
) -> dict[str, Any] | None:
    """The final label of a task: the adjudication when there is one; else, once `overlap`
    experts answered and agree (none revised after seeing the others), the earliest label
    (lowest id); else None (not settled)."""
    if adj is not None:
        return current_criteria(adj.payload)
    if not labels or len(labels) < task.overlap or _disagree(task.kind, labels):
        return None
    return current_criteria(labels[0].payload)
