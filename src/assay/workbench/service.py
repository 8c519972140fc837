"""The workbench's library layer: imports, queues, blind labels, search, adjudication, gold.

Every web route and CLI command is a thin wrapper over a function here.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import (
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from assay._io import iter_jsonl
from assay.dataset.schema import Entry
from assay.errors import DataError, Problem, UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    Adjudication,
    Assignment,
    Chunk,
    Document,
    Flag,
    GuidelineVersion,
    Item,
    Label,
    Output,
    Setting,
    Task,
    User,
    WorkSession,
    utcnow,
)
from assay.workbench.payloads import (
    FLAGS,
    ROOT_CAUSES,
    EvidencePayload,
    ReferencePayload,
    agreement_key,
    validate_payload,
)

__all__ = [
    "Conflict",
    "ImportSummary",
    "NotFound",
    "Submission",
    "add_flag",
    "adjudicate",
    "adjudication_queue",
    "can_view_label",
    "claim_next",
    "gold_for_task",
    "import_corpus",
    "import_entries",
    "import_run",
    "release_stale_claims",
    "search_chunks",
    "start_work_session",
    "submit_label",
    "task_view",
]


class NotFound(Exception):
    """The thing does not exist, or the user may not know that it does (blind labels)."""


class Conflict(Exception):
    """The request cannot be applied in the current state (e.g. the task is adjudicated)."""


@dataclass(frozen=True)
class ImportSummary:
    what: str
    added: int
    updated: int
    tasks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "added": self.added,
            "updated": self.updated,
            "tasks": self.tasks,
        }


# ---------------------------------------------------------------------------------------- imports

_DOC_FIELDS = (
    "company",
    "ticker",
    "sector",
    "form",
    "fiscal_year",
    "fiscal_quarter",
    "period_end",
    "version_date",
)


def _doc_from_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in _DOC_FIELDS:
        v = row.get(f)
        if f in ("fiscal_year", "fiscal_quarter"):
            out[f] = (
                int(v)
                if isinstance(v, int | float) or (isinstance(v, str) and v.isdigit())
                else None
            )
        else:
            out[f] = None if v is None else str(v)
    if out["version_date"] is None:
        out["version_date"] = row.get("accepted_at") and str(row["accepted_at"])
    return out


def import_corpus(
    db: Database, chunks_path: str | Path, documents_path: str | Path | None = None
) -> ImportSummary:
    """Load a chunk table (chunks.jsonl) and optional document metadata (documents.jsonl).

    Chunks need chunk_id, doc_id, text and page or pages; document fields (company, form,
    fiscal_year, version_date, ...) come from documents.jsonl or, failing that, from the chunk rows.
    Re-importing updates chunks in place. Nothing is written when any row is bad.
    """
    problems: list[Problem] = []
    docs: dict[str, dict[str, Any]] = {}
    if documents_path is not None:
        for line, row in iter_jsonl(documents_path):
            if not isinstance(row, dict) or not isinstance(row.get("doc_id"), str):
                problems.append(Problem(str(documents_path), line, "doc_id", "missing doc_id"))
                continue
            docs[row["doc_id"]] = _doc_from_row(row) | {"meta": row}
    chunks: list[dict[str, Any]] = []
    seen: set[str] = set()
    seq: dict[str, int] = defaultdict(int)
    for line, row in iter_jsonl(chunks_path):
        if not isinstance(row, dict):
            problems.append(Problem(str(chunks_path), line, None, "a chunk row must be an object"))
            continue
        for f in ("chunk_id", "doc_id", "text"):
            if not isinstance(row.get(f), str) or not row[f]:
                problems.append(Problem(str(chunks_path), line, f, "missing or not a string"))
        pages = row.get("pages", [row["page"]] if "page" in row else None)
        if not isinstance(pages, list) or not all(isinstance(p, int) and p >= 1 for p in pages):
            problems.append(
                Problem(str(chunks_path), line, "page", "need page (1-based int) or pages")
            )
            continue
        cid = row.get("chunk_id")
        if isinstance(cid, str) and cid in seen:
            problems.append(Problem(str(chunks_path), line, "chunk_id", f"duplicate {cid!r}"))
        if problems:
            continue
        seen.add(row["chunk_id"])
        doc_id = row["doc_id"]
        if doc_id not in docs:
            docs[doc_id] = _doc_from_row(row) | {"meta": {}}
        extra = {
            k: v
            for k, v in row.items()
            if k not in ("chunk_id", "doc_id", "text", "page", "pages", "kind", *_DOC_FIELDS)
        }
        chunks.append(
            {
                "chunk_id": row["chunk_id"],
                "doc_id": doc_id,
                "seq": seq[doc_id],
                "text": row["text"],
                "pages": pages,
                "kind": row.get("kind"),
                "extra": extra,
            }
        )
        seq[doc_id] += 1
    if problems:
        raise DataError(problems)
    added = updated = 0
    with db.write() as s:
        for doc_id, d in docs.items():
            s.merge(Document(doc_id=doc_id, **d))
        existing = set(s.scalars(select(Chunk.chunk_id)))
        for c in chunks:
            if c["chunk_id"] in existing:
                updated += 1
                s.merge(Chunk(**c))
            else:
                added += 1
                s.add(Chunk(**c))
    return ImportSummary("chunks", added, updated)


def _domain_of(entry: Entry, s: Session) -> str:
    md = entry.metadata
    for key in ("company", "domain", "sector"):
        if isinstance(md.get(key), str) and md[key]:
            return str(md[key])
    ids = sorted(entry.chunk_ids())
    if ids:
        doc_id = s.scalar(select(Chunk.doc_id).where(Chunk.chunk_id == ids[0]))
        if doc_id is not None:
            company = s.scalar(select(Document.company).where(Document.doc_id == doc_id))
            if company:
                return company
    return "general"


def import_entries(
    db: Database,
    path: str | Path,
    *,
    kinds: Iterable[str] = ("evidence", "reference"),
    overlap: int = 2,
    calibration: Iterable[str] = (),
) -> ImportSummary:
    """Import golden entries as items and open one task per kind, each labelled by `overlap` experts.

    The domain (queue batch) of an item is metadata.company, metadata.domain or metadata.sector,
    else the company of its first evidence chunk, else "general". Items named in `calibration`
    (or with metadata.calibration true) become calibration items: served first in each session to
    every expert, scored against the imported entry.
    """
    kinds = tuple(kinds)
    for k in kinds:
        if k not in ("evidence", "reference"):
            raise UsageError(f"entries open evidence or reference tasks, not {k!r}")
    if overlap < 1:
        raise UsageError("overlap must be at least 1")
    calib = set(calibration)
    problems: list[Problem] = []
    entries: list[Entry] = []
    for line, row in iter_jsonl(path):
        try:
            entries.append(Entry.model_validate(row))
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(x) for x in err["loc"])
                problems.append(Problem(str(path), line, loc or None, err["msg"]))
    if problems:
        raise DataError(problems)
    added = updated = ntasks = 0
    with db.write() as s:
        for e in entries:
            is_cal = e.id in calib or bool(e.metadata.get("calibration"))
            data = e.to_json_dict()
            item = s.get(Item, e.id)
            domain = _domain_of(e, s)
            if item is None:
                added += 1
                item = Item(
                    id=e.id,
                    query=e.query,
                    category=e.category,
                    domain=domain,
                    as_of=e.as_of.isoformat() if e.as_of else None,
                    entry=data,
                    calibration=is_cal,
                )
                s.add(item)
            else:
                updated += 1
                item.query, item.category, item.entry = e.query, e.category, data
                item.domain, item.calibration = domain, is_cal
            s.flush()
            for kind in kinds:
                gold = _entry_gold(e, kind) if is_cal else None
                task = s.scalar(
                    select(Task).where(
                        Task.item_id == e.id, Task.kind == kind, Task.output_id.is_(None)
                    )
                )
                if task is None:
                    ntasks += 1
                    s.add(
                        Task(
                            item_id=e.id,
                            kind=kind,
                            output_id=None,
                            domain=domain,
                            overlap=overlap,
                            n_claimed=0,
                            calibration=is_cal,
                            gold=gold,
                        )
                    )
                else:
                    task.calibration, task.gold, task.domain = is_cal, gold, domain
    return ImportSummary("entries", added, updated, ntasks)


def _entry_gold(e: Entry, kind: str) -> dict[str, Any] | None:
    if kind == "evidence":
        if any(not isinstance(a, str) for path in e.evidence_paths for p in path for a in p):
            return None  # anchors are compared after alignment, not here
        return {"paths": [[list(p) for p in path] for path in e.evidence_paths]}
    if kind == "reference" and e.reference_answer is not None:
        return {
            "reference_answer": e.reference_answer,
            "answerable": e.answerable,
            "expected_behavior": e.behavior().value,
        }
    return None


def import_run(
    db: Database,
    path: str | Path,
    *,
    run_name: str | None = None,
    overlap: int = 2,
    calibration: Iterable[str] = (),
) -> ImportSummary:
    """Import a run file's answers as system outputs and open a judging task for each.

    Rows need id (an imported item) and answer; retrieved chunks (ids or {chunk_id, score}) are
    shown inline. An optional `draft` object ({"verdicts": {...}, "critiques": {...}}) pre-fills
    the judging form. Rows named in `calibration` become calibration tasks whose known verdicts
    come from the row's `gold` object (else its draft); their draft is never shown.
    """
    name = run_name or Path(path).stem
    calib = set(calibration)
    problems: list[Problem] = []
    rows: list[tuple[int, dict[str, Any]]] = []
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            problems.append(Problem(str(path), line, "id", "missing id"))
            continue
        if not isinstance(row.get("answer"), str):
            continue  # retrieval-only rows have nothing to judge
        rows.append((line, row))
    if problems:
        raise DataError(problems)
    added = updated = ntasks = 0
    with db.write() as s:
        items = {i.id: i for i in s.scalars(select(Item))}
        for line, row in rows:
            item = items.get(row["id"])
            if item is None:
                problems.append(Problem(str(path), line, "id", f"no imported item {row['id']!r}"))
                continue
            retrieved = [
                r if isinstance(r, str) else r.get("chunk_id")
                for r in row.get("retrieved", [])
                if isinstance(r, str | dict)
            ]
            draft = row.get("draft") if isinstance(row.get("draft"), dict) else None
            out = s.scalar(select(Output).where(Output.item_id == item.id, Output.run_name == name))
            if out is None:
                added += 1
                out = Output(
                    item_id=item.id,
                    run_name=name,
                    answer=row["answer"],
                    retrieved=[r for r in retrieved if r],
                    citations=list(row.get("citations") or []),
                    draft=draft,
                )
                s.add(out)
                s.flush()
                is_cal = item.id in calib
                s.add(
                    Task(
                        item_id=item.id,
                        kind="judge",
                        output_id=out.id,
                        domain=item.domain,
                        overlap=overlap,
                        n_claimed=0,
                        calibration=is_cal,
                        gold=(row.get("gold") or draft) if is_cal else None,
                    )
                )
                ntasks += 1
            else:
                updated += 1
                out.answer, out.draft = row["answer"], draft
                out.retrieved = [r for r in retrieved if r]
        if problems:
            raise DataError(problems)
    return ImportSummary(f"run {name}", added, updated, ntasks)


# ------------------------------------------------------------------------------------------ queue

_UID: BindParameter[int] = bindparam("uid")
_TID: BindParameter[int] = bindparam("tid")


def start_work_session(
    db: Database, user: User, kind: str, minutes: int = 50, n_calibration: int = 2
) -> int:
    """Start a time-boxed session (the header shows its timer); its first items are calibration."""
    if not 5 <= minutes <= 240:
        raise UsageError("a session lasts 5 to 240 minutes")
    with db.write() as s:
        ws = WorkSession(user_id=user.id, kind=kind, minutes=minutes, n_calibration=n_calibration)
        s.add(ws)
        s.flush()
        return ws.id


def current_work_session(db: Database, user: User) -> WorkSession | None:
    with db.read() as s:
        ws = s.scalar(
            select(WorkSession)
            .where(WorkSession.user_id == user.id)
            .order_by(WorkSession.id.desc())
            .limit(1)
        )
    if ws is None or utcnow() > ws.started_at + dt.timedelta(minutes=ws.minutes):
        return None
    return ws


def _domain_filter(user: User) -> Any:
    return Task.domain.in_(list(user.domains)) if user.domains else True


_KIND: BindParameter[str] = bindparam("kind")
_NOT_MINE = ~exists().where(Assignment.task_id == Task.id, Assignment.user_id == _UID)
_Q_OPEN = (
    select(Assignment.task_id)
    .join(Task, Task.id == Assignment.task_id)
    .where(Assignment.user_id == _UID, Assignment.submitted_at.is_(None), Task.kind == _KIND)
    .order_by(Assignment.id)
    .limit(1)
)
_Q_LAST_WS = (
    select(WorkSession).where(WorkSession.user_id == _UID).order_by(WorkSession.id.desc()).limit(1)
)
_Q_CAL_DONE = (
    select(func.count())
    .select_from(Assignment)
    .join(Task, Task.id == Assignment.task_id)
    .where(
        Assignment.user_id == _UID,
        Task.calibration.is_(True),
        Assignment.claimed_at >= bindparam("since"),
    )
)
_Q_CAL_NEXT = (
    select(Task.id)
    .where(Task.kind == _KIND, Task.calibration.is_(True), _NOT_MINE)
    .order_by(Task.id)
    .limit(5)
)
_Q_LAST_DOMAIN = (
    select(Task.domain)
    .join(Assignment, Assignment.task_id == Task.id)
    .where(Assignment.user_id == _UID)
    .order_by(Assignment.id.desc())
    .limit(1)
)


def _q_candidates(with_domains: bool) -> Any:
    q = select(Task.id).where(
        Task.kind == _KIND, Task.calibration.is_(False), Task.n_claimed < Task.overlap, _NOT_MINE
    )
    if with_domains:
        q = q.where(Task.domain.in_(bindparam("domains", expanding=True)))
    # the domain of the user's last task first (batches stay together), then by domain, oldest
    first = case((Task.domain == bindparam("last_domain"), 0), else_=1)
    return q.order_by(first, Task.domain, Task.id).limit(20)


_Q_CANDIDATES = {True: _q_candidates(True), False: _q_candidates(False)}
_Q_CLAIM = (
    update(Task)
    .where(
        Task.id == _TID,
        or_(Task.calibration.is_(True), Task.n_claimed < Task.overlap),
    )
    .values(n_claimed=Task.n_claimed + 1)
)


def claim_next(db: Database, user: User, kind: str) -> int | None:
    """The task this user should label next, claiming a slot on it; None when the queue is empty.

    Order: an unfinished task of this user first; then, in a running work session, calibration
    tasks the user has not labelled (up to the session's count); then tasks of the user's domains
    with a free slot (fewer than `overlap` claims), batched by domain (the domain of the user's
    last task first, then alphabetical), oldest first. A slot is claimed with a conditional
    UPDATE, so two experts never take the last slot of a task together.
    """
    p: dict[str, Any] = {"uid": user.id, "kind": kind}
    with db.read() as s:
        open_task = s.scalar(_Q_OPEN, p)
        if open_task is not None:
            return int(open_task)
        candidates: list[int] = []
        ws = s.scalar(_Q_LAST_WS, p)
        if (
            ws is not None
            and ws.kind == kind
            and utcnow() <= ws.started_at + dt.timedelta(minutes=ws.minutes)
            and (s.scalar(_Q_CAL_DONE, p | {"since": ws.started_at}) or 0) < ws.n_calibration
        ):
            candidates = list(s.scalars(_Q_CAL_NEXT, p))
        if not candidates:
            params = p | {"last_domain": s.scalar(_Q_LAST_DOMAIN, p) or ""}
            if user.domains:
                params["domains"] = list(user.domains)
            candidates = list(s.scalars(_Q_CANDIDATES[bool(user.domains)], params))
    for task_id in candidates:
        try:
            with db.write() as s:
                if s.execute(_Q_CLAIM, {"tid": task_id}).rowcount != 1:  # type: ignore[attr-defined]
                    continue
                s.execute(
                    insert(Assignment).values(task_id=task_id, user_id=user.id, claimed_at=utcnow())
                )
        except IntegrityError:
            continue  # claimed it already from another tab
        return task_id
    return None


def release_stale_claims(db: Database, *, hours: float = 24.0) -> int:
    """Give back the slots of claims not submitted within `hours` (an expert who walked away),
    so that other experts can take them; returns how many were released."""
    cutoff = utcnow() - dt.timedelta(hours=hours)
    with db.write() as s:
        stale = list(
            s.execute(
                select(Assignment.id, Assignment.task_id).where(
                    Assignment.submitted_at.is_(None), Assignment.claimed_at < cutoff
                )
            )
        )
        for aid, tid in stale:
            s.execute(delete(Assignment).where(Assignment.id == aid))
            s.execute(
                update(Task)
                .where(Task.id == tid, Task.n_claimed > 0)
                .values(n_claimed=Task.n_claimed - 1)
            )
    return len(stale)


def queue_counts(db: Database, user: User) -> dict[str, dict[str, int]]:
    """Per kind: tasks open to this user and tasks this user has labelled."""
    out: dict[str, dict[str, int]] = {}
    with db.read() as s:
        mine = select(Assignment.task_id).where(Assignment.user_id == user.id)
        for kind in ("evidence", "reference", "judge"):
            open_n = s.scalar(
                select(func.count())
                .select_from(Task)
                .where(
                    Task.kind == kind,
                    Task.n_claimed < Task.overlap,
                    _domain_filter(user),
                    Task.id.not_in(mine),
                )
            )
            done = s.scalar(
                select(func.count())
                .select_from(Label)
                .join(Task, Task.id == Label.task_id)
                .where(Label.user_id == user.id, Task.kind == kind)
            )
            out[kind] = {"open": int(open_n or 0), "done": int(done or 0)}
    return out


# ------------------------------------------------------------------------------------- visibility


def _is_adjudicated(s: Session, task_id: int) -> bool:
    return s.scalar(select(Adjudication.id).where(Adjudication.task_id == task_id)) is not None


def can_view_label(s: Session, viewer: User, label: Label) -> bool:
    """Blind first pass: an annotator sees only their own labels, and the others' on a task they
    labelled only once that task is adjudicated. Adjudicators and admins see every label."""
    if label.user_id == viewer.id or viewer.can("adjudicator"):
        return True
    if not _is_adjudicated(s, label.task_id):
        return False
    return (
        s.scalar(select(Label.id).where(Label.task_id == label.task_id, Label.user_id == viewer.id))
        is not None
    )


def get_label(db: Database, viewer: User, label_id: int) -> dict[str, Any]:
    with db.read() as s:
        label = s.get(Label, label_id)
        if label is None or not can_view_label(s, viewer, label):
            raise NotFound(f"label {label_id}")
        return _label_dict(s, label)


def _label_dict(s: Session, label: Label) -> dict[str, Any]:
    user = s.get(User, label.user_id)
    return {
        "id": label.id,
        "task_id": label.task_id,
        "user": user.username if user else None,
        "payload": label.payload,
        "created_at": label.created_at.isoformat(),
        "updated_at": label.updated_at.isoformat(),
    }


def list_labels(db: Database, viewer: User, task_id: int) -> list[dict[str, Any]]:
    with db.read() as s:
        labels = s.scalars(select(Label).where(Label.task_id == task_id).order_by(Label.id))
        return [_label_dict(s, lab) for lab in labels if can_view_label(s, viewer, lab)]


def _chunk_rows(s: Session, ids: list[str]) -> list[dict[str, Any]]:
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
            out.append({"chunk_id": cid, "missing": True, "text": "", "doc_id": "", "pages": []})
            continue
        c, d = rows[cid]
        out.append(_chunk_dict(c, d))
    return out


def _chunk_dict(c: Chunk, d: Document | None, snippet: str | None = None) -> dict[str, Any]:
    return {
        "chunk_id": c.chunk_id,
        "doc_id": c.doc_id,
        "text": c.text,
        "snippet": snippet,
        "pages": c.pages,
        "kind": c.kind,
        "company": d.company if d else None,
        "form": d.form if d else None,
        "period": d.period() if d else "",
        "version_date": d.version_date if d else None,
    }


def task_view(db: Database, viewer: User, task_id: int) -> dict[str, Any]:
    """Everything the task page shows. Annotators see a task only once they have claimed it, and
    see only their own label on it. Evidence and reference tasks never show system output."""
    with db.read() as s:
        task = s.get(Task, task_id)
        if task is None:
            raise NotFound(f"task {task_id}")
        assigned = (
            s.scalar(
                select(Assignment.id).where(
                    Assignment.task_id == task_id, Assignment.user_id == viewer.id
                )
            )
            is not None
        )
        if not assigned and not viewer.can("adjudicator"):
            raise NotFound(f"task {task_id}")
        item = s.get(Item, task.item_id)
        assert item is not None
        own = s.scalar(select(Label).where(Label.task_id == task_id, Label.user_id == viewer.id))
        view: dict[str, Any] = {
            "task_id": task.id,
            "kind": task.kind,
            "calibration": task.calibration,
            "domain": task.domain,
            "item": {
                "id": item.id,
                "query": item.query,
                "category": item.category,
                "as_of": item.as_of,
            },
            "own_label": _label_dict(s, own) if own else None,
            "adjudicated": _is_adjudicated(s, task_id),
        }
        if task.kind == "judge" and task.output_id is not None:
            out = s.get(Output, task.output_id)
            assert out is not None
            view["output"] = {
                "run_name": out.run_name,
                "answer": out.answer,
                "citations": out.citations,
                "retrieved": _chunk_rows(s, list(out.retrieved)),
                "draft": None if task.calibration else out.draft,
            }
        if task.kind == "reference":
            own_ev = s.scalar(
                select(Label)
                .join(Task, Task.id == Label.task_id)
                .where(Task.item_id == item.id, Task.kind == "evidence", Label.user_id == viewer.id)
            )
            ids = (
                sorted(EvidencePayload.model_validate(own_ev.payload).chunk_ids()) if own_ev else []
            )
            view["own_evidence"] = _chunk_rows(s, ids)
        if own is not None:
            ids = sorted(_payload_chunk_ids(task.kind, own.payload))
            view["selected_chunks"] = _chunk_rows(s, ids)
        return view


def _payload_chunk_ids(kind: str, payload: dict[str, Any]) -> set[str]:
    if kind == "evidence":
        return EvidencePayload.model_validate(payload).chunk_ids()
    if kind == "reference":
        return ReferencePayload.model_validate(payload).chunk_ids()
    return set()


# ----------------------------------------------------------------------------------------- labels


@dataclass(frozen=True)
class Submission:
    label_id: int
    created: bool
    feedback: dict[str, Any]


# Everything a submission needs to know, in one statement (built once; executed with params).
_Q_SUBMIT = (
    select(
        Task.kind,
        Task.calibration,
        Task.gold,
        Assignment.id,
        Assignment.submitted_at,
        Label.id,
        Label.client_id,
        Adjudication.id,
    )
    .select_from(Task)
    .outerjoin(Assignment, and_(Assignment.task_id == Task.id, Assignment.user_id == _UID))
    .outerjoin(Label, and_(Label.task_id == Task.id, Label.user_id == _UID))
    .outerjoin(Adjudication, Adjudication.task_id == Task.id)
    .where(Task.id == _TID)
)
_Q_KNOWN_CHUNKS = select(Chunk.chunk_id).where(Chunk.chunk_id.in_(bindparam("ids", expanding=True)))
_Q_INSERT_LABEL = insert(Label).returning(Label.id)
_Q_MARK_SUBMITTED = (
    update(Assignment)
    .where(Assignment.id == bindparam("aid"))
    .values(submitted_at=bindparam("now"))
)
_Q_BY_CLIENT = select(Label.id, Label.task_id).where(
    Label.user_id == _UID, Label.client_id == bindparam("cid")
)


def submit_label(
    db: Database,
    user: User,
    task_id: int,
    payload: dict[str, Any],
    *,
    client_id: str,
    seconds: float | None = None,
) -> Submission:
    """Store a user's label on a task they claimed, in one short write transaction.

    Idempotent on `client_id`: a retried submission returns the first one's label id (created
    False). A submission with a new client_id revises the label until the task is adjudicated.
    Raises NotFound (no such task, or not claimed by this user: indistinguishable), Conflict
    (adjudicated), pydantic.ValidationError (bad payload) or DataError (chunk ids not in the
    corpus). On a calibration task the result carries feedback against the known gold.
    """
    if not client_id or len(client_id) > 64:
        raise UsageError("client_id needs 1 to 64 characters")
    now = utcnow()
    for _attempt in range(3):
        try:
            with db.write() as s:
                row = s.execute(_Q_SUBMIT, {"uid": user.id, "tid": task_id}).first()
                if row is None or row[3] is None:
                    raise NotFound(f"task {task_id} is not assigned to you")
                kind, calibration, gold, asg_id, submitted_at, label_id, old_cid, adj_id = row
                if label_id is not None and old_cid == client_id:
                    return Submission(label_id, False, {})  # a retry of the same submission
                prior = s.execute(_Q_BY_CLIENT, {"uid": user.id, "cid": client_id}).first()
                if prior is not None:
                    raise Conflict("client_id was used for another task")
                if adj_id is not None:
                    raise Conflict("this task is adjudicated; its labels are final")
                clean = validate_payload(kind, payload).model_dump(mode="json")
                ids = _payload_chunk_ids(kind, clean)
                if ids:
                    known = set(s.scalars(_Q_KNOWN_CHUNKS, {"ids": sorted(ids)}))
                    unknown = sorted(ids - known)
                    if unknown:
                        raise DataError(
                            Problem(
                                "<submission>",
                                None,
                                "chunk_id",
                                f"not in the corpus: {', '.join(unknown)}",
                            )
                        )
                if label_id is None:
                    label_id = s.execute(
                        _Q_INSERT_LABEL,
                        {
                            "task_id": task_id,
                            "user_id": user.id,
                            "client_id": client_id,
                            "payload": clean,
                            "seconds": seconds,
                            "created_at": now,
                            "updated_at": now,
                        },
                    ).scalar_one()
                    created = True
                else:
                    values: dict[str, Any] = {
                        "payload": clean,
                        "client_id": client_id,
                        "updated_at": now,
                    }
                    if seconds is not None:
                        values["seconds"] = seconds
                    s.execute(update(Label).where(Label.id == label_id).values(**values))
                    created = False
                if submitted_at is None:
                    s.execute(_Q_MARK_SUBMITTED, {"aid": asg_id, "now": now})
            feedback = _feedback(kind, gold, clean) if calibration and gold else {}
            return Submission(int(label_id), created, feedback)
        except IntegrityError:
            continue  # a concurrent retry of the same submission won the race: read it back
    raise Conflict("could not store the label (concurrent submissions of the same task)")


def add_flag(db: Database, user: User, item_id: str, flag: str, note: str = "") -> int:
    if flag not in FLAGS:
        raise UsageError(f"flag must be one of {', '.join(FLAGS)}")
    if len(note) > 2000:
        raise UsageError("a flag note has at most 2000 characters")
    with db.write() as s:
        if s.get(Item, item_id) is None:
            raise NotFound(f"item {item_id}")
        f = Flag(item_id=item_id, user_id=user.id, flag=flag, note=note.strip())
        s.add(f)
        s.flush()
        return f.id


def _feedback(kind: str, gold: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """How a calibration label compares with the task's known gold."""
    if kind == "judge" and "verdicts" in gold:
        return {
            "gold": gold,
            "matches": {
                c: payload["verdicts"].get(c) == gold["verdicts"].get(c) for c in gold["verdicts"]
            },
        }
    if kind == "evidence":
        mine = EvidencePayload.model_validate(payload).chunk_ids()
        want = EvidencePayload.model_validate(gold).chunk_ids()
        return {"gold": gold, "found": sorted(mine & want), "missed": sorted(want - mine)}
    return {"gold": gold}


# ----------------------------------------------------------------------------------------- search

_TOKEN = re.compile(r"[\w$%.]+", re.UNICODE)


def _fts_terms(q: str) -> list[str]:
    return [t.strip(".") for t in _TOKEN.findall(q) if t.strip(".")][:20]


def search_chunks(
    db: Database,
    q: str,
    *,
    company: str | None = None,
    form: str | None = None,
    period: str | None = None,
    limit: int = 30,
) -> list[dict[str, Any]]:
    """Full-text search over the corpus (SQLite FTS5 with BM25, PostgreSQL tsvector with
    ts_rank), filtered by company, form and fiscal year (`period`, e.g. "2023" or "FY2023").
    All terms must match; when nothing does, any term may. Ties break on chunk id."""
    terms = _fts_terms(q)
    filters = []
    if company:
        filters.append(Document.company == company)
    if form:
        filters.append(Document.form == form)
    if period:
        digits = re.sub(r"\D", "", period)
        if digits:
            filters.append(Document.fiscal_year == int(digits[:4]))
    limit = max(1, min(limit, 100))
    with db.read() as s:
        base = select(Chunk, Document).outerjoin(Document, Document.doc_id == Chunk.doc_id)
        if filters:
            base = base.where(and_(*filters))
        if not terms:
            rows = s.execute(base.order_by(Chunk.doc_id, Chunk.seq).limit(limit)).all()
            return [_chunk_dict(c, d) for c, d in rows]
        for joiner in (" AND ", " OR "):
            if db.dialect == "sqlite":
                match = joiner.join('"' + t.replace('"', "") + '"' for t in terms)
                hits = s.execute(
                    text(
                        "SELECT chunk_id, bm25(chunk_fts) AS r FROM chunk_fts "
                        "WHERE chunk_fts MATCH :m ORDER BY r, chunk_id LIMIT 2000"
                    ),
                    {"m": match},
                ).all()
            else:
                op = " & " if joiner == " AND " else " | "
                tsq = op.join("'" + t.replace("'", "").replace("\\", "") + "'" for t in terms)
                hits = s.execute(
                    text(
                        "SELECT chunk_id, -ts_rank(tsv, to_tsquery('english', :q)) AS r "
                        "FROM chunks WHERE tsv @@ to_tsquery('english', :q) "
                        "ORDER BY r, chunk_id LIMIT 2000"
                    ),
                    {"q": tsq},
                ).all()
            if not hits:
                continue
            rank = {str(h[0]): i for i, h in enumerate(hits)}
            rows = list(s.execute(base.where(Chunk.chunk_id.in_(list(rank)))).all())
            rows.sort(key=lambda r: (rank[r[0].chunk_id], r[0].chunk_id))
            return [_chunk_dict(c, d, _snippet(c.text, terms)) for c, d in rows[:limit]]
        return []


def _snippet(body: str, terms: list[str], width: int = 320) -> str:
    low = body.lower()
    pos = min((p for t in terms if (p := low.find(t.lower())) >= 0), default=0)
    start = max(0, pos - width // 3)
    out = body[start : start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(body) else "")


def facets(db: Database) -> dict[str, list[str]]:
    with db.read() as s:
        companies = sorted(x for x in s.scalars(select(Document.company).distinct()) if x)
        forms = sorted(x for x in s.scalars(select(Document.form).distinct()) if x)
        years = sorted(
            (str(x) for x in s.scalars(select(Document.fiscal_year).distinct()) if x), reverse=True
        )
    return {"companies": companies, "forms": forms, "periods": years}


# ----------------------------------------------------------------------------------- adjudication


def _labels_by_task(s: Session, task_ids: list[int] | None = None) -> dict[int, list[Label]]:
    q = select(Label).order_by(Label.id)
    if task_ids is not None:
        q = q.where(Label.task_id.in_(task_ids))
    out: dict[int, list[Label]] = defaultdict(list)
    for lab in s.scalars(q):
        out[lab.task_id].append(lab)
    return out


def _disagree(kind: str, labels: list[Label]) -> bool:
    return len({agreement_key(kind, lab.payload) for lab in labels}) > 1


def adjudication_queue(db: Database) -> list[dict[str, Any]]:
    """Tasks whose experts all answered (overlap reached) and disagree, not yet adjudicated."""
    with db.read() as s:
        done = set(s.scalars(select(Adjudication.task_id)))
        tasks = {t.id: t for t in s.scalars(select(Task).where(Task.calibration.is_(False)))}
        out = []
        for tid, labels in sorted(_labels_by_task(s).items()):
            task = tasks.get(tid)
            if task is None or tid in done or len(labels) < max(2, task.overlap):
                continue
            if _disagree(task.kind, labels):
                item = s.get(Item, task.item_id)
                out.append(
                    {
                        "task_id": tid,
                        "kind": task.kind,
                        "item_id": task.item_id,
                        "query": item.query if item else "",
                        "domain": task.domain,
                        "n_labels": len(labels),
                    }
                )
        return out


def adjudication_view(db: Database, viewer: User, task_id: int) -> dict[str, Any]:
    if not viewer.can("adjudicator"):
        raise NotFound(f"task {task_id}")
    view = task_view(db, viewer, task_id)
    with db.read() as s:
        labels = s.scalars(select(Label).where(Label.task_id == task_id).order_by(Label.id))
        view["labels"] = []
        for lab in labels:
            d = _label_dict(s, lab)
            d["chunks"] = _chunk_rows(s, sorted(_payload_chunk_ids(view["kind"], lab.payload)))
            view["labels"].append(d)
        adj = s.scalar(select(Adjudication).where(Adjudication.task_id == task_id))
        view["adjudication"] = (
            None
            if adj is None
            else {"payload": adj.payload, "root_cause": adj.root_cause, "note": adj.note}
        )
        view["flags"] = [
            {"flag": f.flag, "note": f.note}
            for f in s.scalars(select(Flag).where(Flag.item_id == view["item"]["id"]))
        ]
    return view


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
) -> dict[str, Any]:
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
        task = s.get(Task, task_id)
        if task is None:
            raise NotFound(f"task {task_id}")
        kind = task.kind
    clean = validate_payload(kind, payload).model_dump(mode="json")
    with db.write() as s:
        if _is_adjudicated(s, task_id):
            raise Conflict("already adjudicated")
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
        result: dict[str, Any] = {"adjudication_id": adj.id}
        if root_cause == "guideline_gap":
            assert guideline_change is not None
            result["guideline_version"] = _new_guideline(
                s, adjudicator, guideline_change.strip(), guideline_text, adj.id
            )
        return result


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


def guidelines(db: Database) -> list[dict[str, Any]]:
    with db.read() as s:
        rows = s.execute(
            select(GuidelineVersion, User.username)
            .outerjoin(User, User.id == GuidelineVersion.author_id)
            .order_by(GuidelineVersion.version.desc())
        ).all()
        return [
            {
                "version": g.version,
                "text": g.text,
                "change": g.change,
                "author": name,
                "adjudication_id": g.adjudication_id,
                "created_at": g.created_at.isoformat(timespec="minutes"),
            }
            for g, name in rows
        ]


# ------------------------------------------------------------------------------------------- gold


def gold_for_task(
    task: Task, labels: list[Label], adj: Adjudication | None
) -> dict[str, Any] | None:
    """The final label of a task: the adjudication when there is one; else, once `overlap`
    experts answered and agree, the earliest label (lowest id); else None (not settled)."""
    if adj is not None:
        return dict(adj.payload)
    if not labels or len(labels) < task.overlap or _disagree(task.kind, labels):
        return None
    return dict(labels[0].payload)


def settings_get(db: Database, key: str, default: str | None = None) -> str | None:
    with db.read() as s:
        row = s.get(Setting, key)
        return row.value if row else default


def settings_put(s: Session, key: str, value: str) -> None:
    s.merge(Setting(key=key, value=value))
