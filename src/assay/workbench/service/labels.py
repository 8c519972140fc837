"""Blind labels: who may see which label, the task page's view, submitting a label (idempotent,
revisable until adjudicated, with calibration feedback) and quick flags on items."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError
from sqlalchemy import and_, bindparam, cast, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from assay.errors import DataError, UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    Adjudication,
    Assignment,
    Chunk,
    Document,
    Flag,
    Item,
    Label,
    Output,
    Task,
    User,
    utcnow,
)
from assay.workbench.payloads import FLAGS, EvidencePayload, current_criteria, validate_payload
from assay.workbench.service._common import (
    _TID,
    _UID,
    ChunkView,
    Conflict,
    LabelView,
    NotFound,
    chunk_rows,
    is_adjudicated,
    label_view,
    payload_chunk_ids,
    remember_kind,
)
from assay.workbench.service.access import (
    hidden_chunks,
    item_hidden,
    material_hidden,
    redact_hidden,
    redacting,
    task_hidden,
    text_hidden,
    visible_to,
)

__all__ = [
    "Feedback",
    "ItemView",
    "OutputView",
    "Submission",
    "TaskView",
    "add_flag",
    "can_view_label",
    "get_label",
    "labels_complete",
    "list_labels",
    "may_see_others",
    "submit_label",
    "task_view",
]


@dataclass(frozen=True)
class ItemView:
    id: str
    query: str
    category: str
    as_of: str | None
    # a conversation turn's earlier questions, oldest first (the context the turn is asked in)
    earlier: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "query": self.query,
            "category": self.category,
            "as_of": self.as_of,
        }
        if self.earlier:
            out["earlier"] = list(self.earlier)
        return out


def _earlier_turns(s: Session, item: Item) -> tuple[str, ...]:
    """The questions of the turns before this one in its conversation, as imported (a turn
    whose earlier turns were not imported shows those it has)."""
    ref = item.entry.get("conversation") if isinstance(item.entry, dict) else None
    if not isinstance(ref, dict) or not isinstance(ref.get("turn"), int) or ref["turn"] < 2:
        return ()
    ids = [f"{ref['id']}#{n}" for n in range(1, ref["turn"])]
    found = {i: q for i, q in s.execute(select(Item.id, Item.query).where(Item.id.in_(ids)))}
    return tuple(found[i] for i in ids if i in found)


@dataclass(frozen=True)
class OutputView:
    """A system's answer on a judging task, its retrieved chunks inline; the draft judgement
    (never on calibration tasks)."""

    run_name: str
    answer: str
    citations: list[Any]
    retrieved: list[ChunkView]
    draft: dict[str, Any] | None
    tool_calls: list[dict[str, Any]] | None = None  # from the run row's trace, when it has them

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_name": self.run_name,
            "answer": self.answer,
            "citations": self.citations,
            "retrieved": [c.to_dict() for c in self.retrieved],
            "draft": self.draft,
            "tool_calls": self.tool_calls,
        }


@dataclass(frozen=True)
class TaskView:
    """Everything the task page shows. `output` only on judging tasks; `own_evidence` (the
    viewer's own evidence for the item) only on reference tasks; `selected_chunks` only once
    the viewer has labelled the task; `draft` on a reference task (never a calibration one)
    whose item has a system answer: the draft reference answer and key facts that prefill the
    form, from the run named in `draft["run_name"]`."""

    task_id: int
    kind: str
    calibration: bool
    domain: str
    item: ItemView
    own_label: LabelView | None
    adjudicated: bool
    output: OutputView | None = None
    own_evidence: list[ChunkView] | None = None
    selected_chunks: list[ChunkView] | None = None
    draft: dict[str, Any] | None = None
    sql: dict[str, Any] | None = None  # a SQL task's panel (`assay.workbench.service.sql`)
    # a policy task's panel (`assay.workbench.service.policy`)
    policy: dict[str, Any] | None = None
    # a reference task's facts-table search for the 'not disclosed' lookup (`_facts_panel`)
    facts: dict[str, Any] | None = None
    # a tool task's panel (`assay.workbench.service.tools`)
    tool: dict[str, Any] | None = None
    # a SQL task's panel and the queries still to run for it (`assay.workbench.service.sql`)
    sql_pending: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)

    def run_sql(self, user: str) -> None:
        """Run the SQL panel's queries in the SQL workers, blocking, and fill the panel in."""
        if self.sql_pending is None or self.sql is None:
            return
        from assay.workbench.service.sql import fill_sql
        from assay.workbench.sqlpool import sql_pool

        panel, plan = self.sql_pending
        try:
            results = sql_pool().run(user, plan.database, plan.queries)
        except UsageError as exc:
            self.sql["note"] = str(exc)
            return
        fill_sql(self.sql, panel, plan, results)

    async def arun_sql(self, user: str) -> None:
        """`run_sql` from the event loop: the waiting happens on the SQL pool's threads, never
        on those that serve pages."""
        if self.sql_pending is None or self.sql is None:
            return
        from assay.workbench.service.sql import fill_sql
        from assay.workbench.sqlpool import sql_pool

        panel, plan = self.sql_pending
        try:
            results = await sql_pool().arun(user, plan.database, plan.queries)
        except UsageError as exc:
            self.sql["note"] = str(exc)
            return
        fill_sql(self.sql, panel, plan, results)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "task_id": self.task_id,
            "kind": self.kind,
            "calibration": self.calibration,
            "domain": self.domain,
            "item": self.item.to_dict(),
            "own_label": self.own_label.to_dict() if self.own_label else None,
            "adjudicated": self.adjudicated,
        }
        if self.output is not None:
            out["output"] = self.output.to_dict()
        if self.own_evidence is not None:
            out["own_evidence"] = [c.to_dict() for c in self.own_evidence]
        if self.selected_chunks is not None:
            out["selected_chunks"] = [c.to_dict() for c in self.selected_chunks]
        if self.kind == "reference":
            out["draft"] = self.draft
        if self.sql is not None:
            out["sql"] = self.sql
        if self.policy is not None:
            out["policy"] = self.policy
        if self.facts is not None:
            out["facts"] = self.facts
        if self.tool is not None:
            out["tool"] = self.tool
        return out


@dataclass(frozen=True)
class Feedback:
    """How a calibration label compares with the task's known gold: per criterion on judging
    tasks, per call made and per missing expected call on tool tasks (`matches`), found and
    missed chunks on evidence tasks."""

    gold: dict[str, Any]
    matches: dict[str, bool] | None = None
    found: list[str] | None = None
    missed: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"gold": self.gold}
        if self.matches is not None:
            out["matches"] = self.matches
        if self.found is not None:
            out["found"] = self.found
        if self.missed is not None:
            out["missed"] = self.missed
        return out


@dataclass(frozen=True)
class Submission:
    label_id: int
    created: bool
    feedback: Feedback | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label_id": self.label_id,
            "created": self.created,
            "feedback": self.feedback.to_dict() if self.feedback else {},
        }


# ------------------------------------------------------------------------------------- visibility


def labels_complete(s: Session, task: Task) -> bool:
    """Every label of the task is in: it is adjudicated, or (not a calibration task) as many
    experts labelled it as its overlap asks (at least two)."""
    if is_adjudicated(s, task.id):
        return True
    if task.calibration:
        return False
    n = s.scalar(select(func.count()).select_from(Label).where(Label.task_id == task.id)) or 0
    return n >= max(2, task.overlap)


def may_see_others(s: Session, viewer: User, task: Task) -> bool:
    """Whether `viewer` may see the other experts' labels on `task`.

    Blindness follows being a labeller of the task, whatever the role. Someone who claimed the
    task sees the others' labels only after submitting their own, and then only once the task
    is adjudicated, or (an adjudicator) once every label is in. Someone who did not claim it
    sees them only as an adjudicator and only once every label is in; an annotator never."""
    asg = s.execute(
        select(Assignment.submitted_at).where(
            Assignment.task_id == task.id, Assignment.user_id == viewer.id
        )
    ).first()
    if asg is not None:  # a labeller of this task
        if asg[0] is None:
            return False
        if is_adjudicated(s, task.id):
            return True
        return viewer.can("adjudicator") and labels_complete(s, task)
    return viewer.can("adjudicator") and labels_complete(s, task)


def names_hidden(s: Session, viewer: User, kind: str, payload: dict[str, Any]) -> bool:
    """The label names a chunk the viewer may not see (`assay.workbench.service.access`)."""
    ids = payload_chunk_ids(kind, payload)
    return bool(ids) and bool(hidden_chunks(s, viewer.id, ids))


def can_view_label(s: Session, viewer: User, label: Label, redacted: bool = False) -> bool:
    """A viewer sees their own label, another's only as `may_see_others` allows; and neither
    when its task's material, or the label itself, names a chunk the viewer may not see.
    `redacted`: may see it once what its free text quotes is redacted (`others_text_hidden`
    not asked)."""
    task = s.get(Task, label.task_id)
    if task is None or task_hidden(s, viewer.id, task):
        return False
    if label.user_id != viewer.id and not may_see_others(s, viewer, task):
        return False
    if not redacted and others_text_hidden(s, viewer, task, label.user_id, label.payload):
        return False
    return not names_hidden(s, viewer, task.kind, label.payload)


def get_label(db: Database, viewer: User, label_id: int) -> LabelView:
    with db.read() as s:
        label = s.get(Label, label_id)
        if label is None:
            raise NotFound(f"label {label_id}")
        if can_view_label(s, viewer, label):
            return label_view(s, label)
        if label.user_id != viewer.id and redacting(s) and can_view_label(s, viewer, label, True):
            return _redacted_view(s, viewer, label)
        raise NotFound(f"label {label_id}")


def visible_draft(conn: Any, viewer_id: int, item_id: str) -> tuple[str, dict[str, Any]] | None:
    """(run name, draft) of the first run (by name) whose answer on the item drafts its reference
    answer and was built only from material the viewer may see: a draft whose run retrieved or
    cited a chunk hidden from the viewer, or that quotes one (`access.quoted_chunks`), is never
    offered to them. A store that redacts (`access.redacting`) offers, when no draft is clear,
    the first one with what it quotes from hidden chunks replaced by "[restricted]"."""
    q = (
        select(Output.run_name, Output.reference_draft, Output.retrieved, Output.citations)
        .where(Output.item_id == item_id, Output.reference_draft.is_not(None))
        .order_by(Output.run_name)
    )
    first_hidden: tuple[str, dict[str, Any]] | None = None
    for name, draft, retrieved, citations in conn.execute(q):
        if not draft:
            continue
        if not material_hidden(conn, viewer_id, None, retrieved or (), citations or (), [draft]):
            return str(name), dict(draft)
        if first_hidden is None:
            first_hidden = (str(name), dict(draft))
    if first_hidden is not None and redacting(conn):
        return first_hidden[0], redact_hidden(conn, viewer_id, first_hidden[1]) | {"redacted": True}
    return None


def others_text_hidden(s: Any, viewer: User, task: Task, author_id: int, text: Any = None) -> bool:
    """Another expert's free text on the task (a label's critique or answer, a note) is hidden
    from the viewer when the item's material names something the viewer may not see: its
    author may have seen, and quoted, what the viewer may not (`item_hidden`); or when the text
    itself quotes a chunk the viewer may not see (`text_hidden`)."""
    if author_id == viewer.id:
        return False
    return item_hidden(s, viewer.id, task.item_id) or text_hidden(s, viewer.id, text)


def list_labels(db: Database, viewer: User, task_id: int) -> list[LabelView]:
    """The labels of a task the viewer may see (`can_view_label`), in the order stored."""
    with db.read() as s:
        task = s.get(Task, task_id)
        if task is None or task_hidden(s, viewer.id, task):
            return []
        others = may_see_others(s, viewer, task)
        redact = others and redacting(s)
        if not redact:
            others = others and not item_hidden(s, viewer.id, task.item_id)
        labels = s.scalars(select(Label).where(Label.task_id == task_id).order_by(Label.id))
        out = []
        for lab in labels:
            mine = lab.user_id == viewer.id
            if not (others or mine) or names_hidden(s, viewer, task.kind, lab.payload):
                continue
            if mine:
                out.append(label_view(s, lab))
            elif redact:
                out.append(_redacted_view(s, viewer, lab))
            elif not text_hidden(s, viewer.id, lab.payload):
                out.append(label_view(s, lab))
        return out


def _redacted_view(s: Session, viewer: User, lab: Label) -> LabelView:
    """Another's label as the viewer may read it: what it quotes from hidden chunks redacted."""
    view = label_view(s, lab)
    return replace(view, payload=redact_hidden(s, viewer.id, view.payload))


def task_view(db: Database, viewer: User, task_id: int, *, run_sql: bool = True) -> TaskView:
    """Everything the task page shows. Annotators see a task only once they have claimed it, and
    see only their own label on it. Evidence and reference tasks never show system output. A
    task whose material names a chunk the viewer may not see is NotFound, whoever asks
    (`assay.workbench.service.access`). A SQL task's queries run in the SQL workers once the
    store is read (`assay.workbench.sqlpool`); without `run_sql` the caller runs them
    (`TaskView.arun_sql`)."""
    with db.read() as s:
        task = s.get(Task, task_id)
        if task is None or task_hidden(s, viewer.id, task):
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
        if own is not None and names_hidden(s, viewer, task.kind, own.payload):
            raise NotFound(f"task {task_id}")  # access taken away since the label was made
        output = own_evidence = selected = None
        draft: dict[str, Any] | None = None
        sql: dict[str, Any] | None = None
        policy: dict[str, Any] | None = None
        facts: dict[str, Any] | None = None
        tool: dict[str, Any] | None = None
        sql_pending: tuple[Any, Any] | None = None
        if task.kind == "sql":
            from assay.workbench.service.sql import sql_view

            out_row = s.get(Output, task.output_id) if task.output_id else None
            sql_panel, plan = sql_view(item, out_row)
            sql = sql_panel.to_dict()
            if plan is not None:
                sql_pending = (sql_panel, plan)
        if task.kind in ("judge", "policy", "tool") and task.output_id is not None:
            out = s.get(Output, task.output_id)
            assert out is not None
            output = OutputView(
                run_name=out.run_name,
                answer=out.answer,
                citations=out.citations,
                retrieved=chunk_rows(s, list(out.retrieved)),
                draft=None  # a tool task never shows the judging draft (blind)
                if task.calibration or task.kind != "judge" or out.draft is None
                else current_criteria(out.draft),
                tool_calls=out.tool_calls,
            )
            if task.kind == "policy":
                from assay.workbench.service.policy import policy_view

                shown = set(out.retrieved)
                cited = [c for c in dict.fromkeys(out.citations) if isinstance(c, str)]
                policy = policy_view(
                    item.entry,
                    output.retrieved,
                    chunk_rows(s, [c for c in cited if c not in shown]),
                ).to_dict()
            if task.kind == "tool":
                tool = _tool_view(s, viewer, task, item.entry, out.tool_calls, own is not None)
        if task.kind == "reference":
            own_ev = s.scalar(
                select(Label)
                .join(Task, Task.id == Label.task_id)
                .where(Task.item_id == item.id, Task.kind == "evidence", Label.user_id == viewer.id)
            )
            ids = (
                sorted(EvidencePayload.model_validate(own_ev.payload).chunk_ids()) if own_ev else []
            )
            hidden = hidden_chunks(s, viewer.id, ids)
            own_evidence = chunk_rows(s, [c for c in ids if c not in hidden])
            if not task.calibration:
                source = visible_draft(s, viewer.id, item.id)
                if source is not None:
                    draft = dict(source[1]) | {"run_name": source[0]}
                else:  # key facts drafted from the imported reference (`assay keyfacts`)
                    draft = _drafted_facts(item.entry)
            facts = _facts_panel(s, viewer.id, item.entry, task.domain)
        if own is not None:
            selected = chunk_rows(s, sorted(payload_chunk_ids(task.kind, own.payload)))
        view = TaskView(
            task_id=task.id,
            kind=task.kind,
            calibration=task.calibration,
            domain=task.domain,
            item=ItemView(
                id=item.id,
                query=item.query,
                category=item.category,
                as_of=item.as_of,
                earlier=_earlier_turns(s, item),
            ),
            own_label=label_view(s, own) if own else None,
            adjudicated=is_adjudicated(s, task_id),
            output=output,
            own_evidence=own_evidence,
            selected_chunks=selected,
            draft=draft,
            sql=sql,
            facts=facts,
            policy=policy,
            tool=tool,
            sql_pending=sql_pending,
        )
    if run_sql:
        view.run_sql(f"user:{viewer.id}")
    return view


def _tool_view(
    s: Session,
    viewer: User,
    task: Task,
    entry: dict[str, Any],
    calls: list[dict[str, Any]] | None,
    labelled: bool,
) -> dict[str, Any]:
    """A tool task's panel; the automatic checks' verdicts only for a viewer who labelled the
    task, or one who did not claim it and may see its labels (an adjudicator once every label is
    in): an expert labels blind of them."""
    from assay.workbench.service.tools import automatic_checks, tool_panel

    panel = tool_panel(entry, calls).to_dict()
    if labelled or (
        s.scalar(
            select(Assignment.id).where(
                Assignment.task_id == task.id, Assignment.user_id == viewer.id
            )
        )
        is None
        and may_see_others(s, viewer, task)
    ):
        panel["checks"] = automatic_checks(entry, calls)
    return panel


_YEAR = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|fy\s*)?((?:19|20)\d\d)\b", re.I)


def _drafted_facts(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The entry's reference answer and its drafted key facts (`assay.judge.keyfacts`), as a
    draft for the expert to confirm or edit (figures and the yes/no critical); None without."""
    meta = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
    drafts = meta.get("draft_key_facts") if meta else None
    ref = entry.get("reference_answer")
    if not isinstance(drafts, list) or not drafts or not isinstance(ref, str):
        return None
    facts = [
        {"fact": str(f["fact"])[:1000], "critical": f.get("kind") in ("figure", "polarity")}
        for f in drafts
        if isinstance(f, dict) and isinstance(f.get("fact"), str) and f["fact"].strip()
    ]
    return {"reference_answer": ref[:10000], "key_facts": facts, "source": "reference"}


def _facts_panel(
    s: Session, viewer_id: int, entry: dict[str, Any], domain: str
) -> dict[str, Any] | None:
    """The facts-table search beside a reference form (`assay.corpus.factsearch`): the facts of
    the item's company (its ``metadata.company``, else the task's domain) for the one fiscal year
    the question names (every year when it names none or several), as the viewer may see them,
    and the ``searched`` / ``found`` that prefill the 'not disclosed' lookup. None when the store
    holds no facts for the company."""
    from assay.corpus import Fact, search_facts

    meta = entry.get("metadata") or {}
    company = meta.get("company") if isinstance(meta.get("company"), str) else None
    company = company or (domain if domain != "general" else None)
    if not company:
        return None
    rows = [
        f
        for m in s.scalars(select(Document.meta).where(Document.company == company))
        for f in ((m or {}).get("facts") or [])
    ]
    if not rows:
        return None
    hidden = hidden_chunks(s, viewer_id, {str(f["chunk_id"]) for f in rows})
    years = {int(y) for y in _YEAR.findall(str(entry.get("query", "")))}
    found = search_facts(
        (Fact(**f) for f in rows if f["chunk_id"] not in hidden),
        company=company,
        fiscal_year=years.pop() if len(years) == 1 else None,
    )
    return {
        "company": company,
        "fiscal_year": found.fiscal_year,
        "searched": found.searched,
        "found": found.found if not found.period else "",
        "facts": [
            {
                "line_item": f.line_item,
                "fiscal_year": f.fiscal_year,
                "figure": f.figure(),
                "doc_id": f.doc_id,
                "page": f.page,
                "statement": f.statement,
            }
            for f in found.period
        ],
    }


# ----------------------------------------------------------------------------------------- submit


# Everything a submission needs to know, in one statement (built once; executed with params).
_PRIOR = aliased(Label, name="prior")
_Q_SUBMIT = (
    select(
        Task.kind,
        Task.calibration,
        Task.gold,
        Task.overlap,
        Task.item_id,
        Assignment.id,
        Assignment.submitted_at,
        Label.id,
        Label.client_id,
        Adjudication.id,
        # the task's material is visible to the user (`assay.workbench.service.access`)
        visible_to(Task.access_key, _UID).label("visible"),
        # a label of this user carrying this client id (on this task or another)
        select(_PRIOR.id)
        .where(_PRIOR.user_id == _UID, _PRIOR.client_id == bindparam("cid"))
        .limit(1)
        .scalar_subquery(),
    )
    .select_from(Task)
    .outerjoin(Assignment, and_(Assignment.task_id == Task.id, Assignment.user_id == _UID))
    .outerjoin(Label, and_(Label.task_id == Task.id, Label.user_id == _UID))
    .outerjoin(Adjudication, Adjudication.task_id == Task.id)
    .where(Task.id == _TID)
)
# chunks a label may name: in the corpus, and visible to its author (a hidden one is answered
# exactly as a missing one, so a submission cannot probe which restricted ids exist)
_Q_KNOWN_CHUNKS = select(Chunk.chunk_id).where(
    Chunk.chunk_id.in_(bindparam("ids", expanding=True)), visible_to(Chunk.access_key, _UID)
)
_Q_INSERT_LABEL = insert(Label).returning(Label.id)


def _q_new_label(chunks: bool) -> Any:
    """PostgreSQL, one statement for a new label: mark the user's assignment on task `tid`
    submitted and insert the label, only while that claim stands unsubmitted, the task is of
    kind `task_kind` and calibration `cal`, its material is visible to the user, it has no
    adjudication and (with `chunks`) every chunk of `ids` is in the corpus and visible to the
    user (`n_ids` of them); the new label's id, or no row (nothing written). Without `chunks`
    the statement has no list parameter, so PostgreSQL keeps one generic plan for it (with
    one, it estimates the generic plan dearer and plans every execution anew). The UPDATE locks the claim's
    row, so a claim released or a twin submission committed meanwhile is seen, not missed.
    The label's columns are parameters prefixed `new_` (unprefixed, the UPDATE would also set
    the assignment's columns of those names)."""
    where = [
        Assignment.task_id == _TID,
        Assignment.user_id == _UID,
        Assignment.submitted_at.is_(None),
        Task.id == _TID,
        Task.kind == bindparam("task_kind"),
        Task.calibration == bindparam("cal"),
        visible_to(Task.access_key, _UID),
        ~exists().where(Adjudication.task_id == _TID),
    ]
    if chunks:
        known = select(func.count()).where(
            Chunk.chunk_id.in_(bindparam("ids", expanding=True)),
            visible_to(Chunk.access_key, _UID),
        )
        where.append(known.scalar_subquery() == bindparam("n_ids"))
    mark = (
        update(Assignment)
        .where(*where)
        .values(submitted_at=bindparam("new_created_at"))
        .returning(Assignment.task_id, Assignment.user_id)
        .cte("mark")
    )
    # the label's task and author are the claim's; the other columns typed casts (INSERT ...
    # SELECT would read an untyped NULL parameter as text)
    cols = [c for c in Label.__table__.columns if c.key not in ("id", "task_id", "user_id")]
    row = select(
        mark.c.task_id,
        mark.c.user_id,
        *(cast(bindparam("new_" + c.key, type_=c.type), c.type) for c in cols),
    )
    new = insert(Label).from_select([Label.task_id, Label.user_id, *cols], row)
    return select(new.returning(Label.id).cte("new_label").c.id)


_Q_NEW_LABEL = {chunks: _q_new_label(chunks) for chunks in (False, True)}
_Q_N_LABELS = select(func.count()).select_from(Label).where(Label.task_id == _TID)
_Q_ADJUDICATED = select(Adjudication.id).where(Adjudication.task_id == _TID)
_Q_MARK_SUBMITTED = (
    update(Assignment)
    .where(Assignment.id == bindparam("aid"))
    .values(submitted_at=bindparam("now"))
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
    Every version is kept (`LabelRevision`, written by the store's trigger on `labels` in the
    same statement). A revision made while its author could see the
    other labels (an adjudicator once every label is in, see `may_see_others`) is flagged
    `revised_after_seen`: such a label never counts as agreement, so the task goes to another
    adjudicator. A reference label records whether the system's draft was offered (`drafted`).
    Raises NotFound (no such task, or not claimed by this user: indistinguishable), Conflict
    (adjudicated), pydantic.ValidationError (bad payload) or DataError (chunk ids not in the
    corpus). On a calibration task the result carries feedback against the known gold.
    """
    if not client_id or len(client_id) > 64:
        raise UsageError("client_id needs 1 to 64 characters")
    now = utcnow()
    if db.dialect == "postgresql":
        done = _submit_in_one(db, user, task_id, payload, client_id, seconds, now)
        if done is not None:
            return done
    for _attempt in range(3):
        try:
            # Core statements only, run by the driver on SQLite (`Database.write_direct`)
            with db.write_direct() as conn:
                plan = _plan(conn, user, task_id, payload, client_id)
                if isinstance(plan, Submission):
                    return plan  # a retry of the same submission
                label_id = plan.label_id
                if label_id is None:
                    row = _label_row(
                        plan.clean, plan.drafted, user, task_id, client_id, seconds, now
                    )
                    label_id = conn.execute(_Q_INSERT_LABEL, row).scalar_one()
                    created = True
                else:
                    # could the author see the other labels before this revision?
                    seen = _saw_others(conn, user, task_id, plan.calibration, plan.overlap)
                    values: dict[str, Any] = {
                        "payload": plan.clean,
                        "client_id": client_id,
                        "updated_at": now,
                    }
                    if seconds is not None:
                        values["seconds"] = seconds
                    if seen:
                        values["revised_after_seen"] = True
                    conn.execute(update(Label).where(Label.id == label_id).values(**values))
                    created = False
                # the revision row (`LabelRevision`) is written by the store's trigger on labels
                if plan.submitted_at is None:
                    conn.execute(_Q_MARK_SUBMITTED, {"aid": plan.asg_id, "now": now})
            return Submission(int(label_id), created, _plan_feedback(plan))
        except IntegrityError:
            continue  # a concurrent retry of the same submission won the race: read it back
    raise Conflict("could not store the label (concurrent submissions of the same task)")


@dataclass(frozen=True)
class _Plan:
    """What a checked submission writes: the task's facts, the user's assignment and label (if
    any), the validated payload and, for a new reference label, whether a draft was offered."""

    kind: str
    calibration: bool
    gold: dict[str, Any] | None
    overlap: int
    asg_id: int
    submitted_at: Any
    label_id: int | None
    clean: dict[str, Any]
    drafted: bool | None


def _plan(
    conn: Any, user: User, task_id: int, payload: dict[str, Any], client_id: str
) -> _Plan | Submission:
    """Check a submission against the store (read only): the Submission of an earlier one
    with this client id, or the plan of the write. Raises as `submit_label` says."""
    row = conn.execute(_Q_SUBMIT, {"uid": user.id, "tid": task_id, "cid": client_id}).first()
    if row is None or row[5] is None or not row[10]:  # not assigned, or hidden
        raise NotFound(f"task {task_id} is not assigned to you")
    (
        kind,
        calibration,
        gold,
        overlap,
        item_id,
        asg_id,
        submitted_at,
        label_id,
        old_cid,
        adj_id,
        _visible,
        prior,
    ) = row
    if label_id is not None and old_cid == client_id:
        return Submission(label_id, False)  # a retry of the same submission
    if prior is not None:
        raise Conflict("client_id was used for another task")
    if adj_id is not None:
        raise Conflict("this task is adjudicated; its labels are final")
    clean = validate_payload(kind, payload).model_dump(mode="json")
    if kind == "sql" and clean.get("gold_query"):  # refused before it runs
        from assay.workbench.service.sql import check_gold_edit

        entry = conn.scalar(select(Item.entry).where(Item.id == item_id))
        check_gold_edit(dict(entry or {}), clean)
    if kind == "tool":  # one verdict per call made, one answer per missing expected call
        from assay.workbench.service.tools import check_tool_label, stored_panel

        check_tool_label(stored_panel(conn, task_id), clean)
    ids = payload_chunk_ids(kind, clean)
    if ids:
        known = set(conn.scalars(_Q_KNOWN_CHUNKS, {"ids": sorted(ids), "uid": user.id}))
        unknown = sorted(ids - known)
        if unknown:
            raise DataError(
                f"not in the corpus: {', '.join(unknown)}", file="<submission>", field="chunk_id"
            )
    drafted = None
    if label_id is None and kind == "reference":
        drafted = not calibration and visible_draft(conn, user.id, item_id) is not None
    return _Plan(kind, calibration, gold, overlap, asg_id, submitted_at, label_id, clean, drafted)


def _label_row(
    clean: dict[str, Any],
    drafted: bool | None,
    user: User,
    task_id: int,
    client_id: str,
    seconds: float | None,
    now: Any,
) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "user_id": user.id,
        "client_id": client_id,
        "payload": clean,
        "seconds": seconds,
        "created_at": now,
        "updated_at": now,
        "revised_after_seen": False,
        "drafted": drafted,
    }


def _plan_feedback(plan: _Plan) -> Feedback | None:
    return _feedback(plan.kind, plan.gold, plan.clean) if plan.calibration and plan.gold else None


def _quick(kind: str | None, payload: dict[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """A new label's payload validated for the task's kind as remembered (`remember_kind`),
    and the chunks it names, when nothing else needs reading before the write: not a reference
    label (its draft), a tool label (the calls made) or a SQL label that edits the gold query.
    None when the kind is not known, or the payload is not valid for it (the careful checks
    then say why, in their order)."""
    if kind is None or kind in ("reference", "tool"):
        return None
    try:
        clean = validate_payload(kind, payload).model_dump(mode="json")
    except ValidationError:
        return None
    if kind == "sql" and clean.get("gold_query"):
        return None
    return clean, sorted(payload_chunk_ids(kind, clean))


def _submit_in_one(
    db: Database,
    user: User,
    task_id: int,
    payload: dict[str, Any],
    client_id: str,
    seconds: float | None,
    now: Any,
) -> Submission | None:
    """PostgreSQL: a new label in one statement, `_Q_NEW_LABEL`, in autocommit and committed
    durably, when the task's kind is remembered from its claim (or an earlier submission) and
    `_quick` passes the payload: the statement itself checks what `_plan` would read (the claim
    stands unsubmitted, the kind, no calibration, visibility, no adjudication, the chunks the
    label names). Otherwise in two: `_plan`'s checks (each its own snapshot), then the same
    statement. None hands the submission to the careful path of `submit_label` (a revision, a
    retry, a claim released or a task adjudicated meanwhile, a remembered kind gone stale, a
    chunk not in the corpus), which reads again and answers as always."""
    quick = _quick(db.task_kinds.get(task_id), payload)
    with db.direct(durable=True) as conn:
        if quick is not None:
            kind, calibration, gold = db.task_kinds[task_id], False, None
            (clean, ids), drafted = quick, None
        else:
            plan = _plan(conn, user, task_id, payload, client_id)
            if isinstance(plan, Submission):
                return plan
            if plan.label_id is not None:
                return None  # a revision: may need the other labels counted in one snapshot
            if not plan.calibration:
                remember_kind(db, task_id, plan.kind)
            kind, calibration, gold = plan.kind, plan.calibration, plan.gold
            clean, ids, drafted = plan.clean, [], plan.drafted  # (its chunks checked)
        row = _label_row(clean, drafted, user, task_id, client_id, seconds, now)
        try:
            label_id = conn.scalar(
                _Q_NEW_LABEL[bool(ids)],
                {f"new_{k}": v for k, v in row.items()}
                | {"uid": user.id, "tid": task_id, "task_kind": kind, "cal": calibration}
                | ({"ids": ids, "n_ids": len(ids)} if ids else {}),
            )
        except IntegrityError:
            return None
    if label_id is None:
        return None
    feedback = _feedback(kind, gold, clean) if calibration and gold else None
    return Submission(int(label_id), True, feedback)


def _saw_others(conn: Any, user: User, task_id: int, calibration: bool, overlap: int) -> bool:
    """Whether `user`, who labelled the task, can see its other labels now (`may_see_others`
    for a labeller who submitted: the task is adjudicated, or they are an adjudicator and
    every label is in)."""
    if conn.execute(_Q_ADJUDICATED, {"tid": task_id}).first() is not None:
        return True
    if not user.can("adjudicator") or calibration:
        return False
    n = conn.execute(_Q_N_LABELS, {"tid": task_id}).scalar_one()
    return bool(n >= max(2, overlap))


def add_flag(db: Database, user: User, item_id: str, flag: str, note: str = "") -> int:
    """Flag an item the user has claimed a task on. Any other item id, whether it exists or not,
    is the same NotFound, so flags neither reach unclaimed work nor reveal which ids exist."""
    if flag not in FLAGS:
        raise UsageError(f"flag must be one of {', '.join(FLAGS)}")
    if len(note) > 2000:
        raise UsageError("a flag note has at most 2000 characters")
    if "\x00" in item_id or "\x00" in note:
        raise UsageError("item_id and note must not contain NUL characters")
    with db.write() as s:
        mine = s.scalar(
            select(Assignment.id)
            .join(Task, Task.id == Assignment.task_id)
            .where(Task.item_id == item_id, Assignment.user_id == user.id)
            .limit(1)
        )
        if mine is None:
            raise NotFound(f"item {item_id}")
        f = Flag(item_id=item_id, user_id=user.id, flag=flag, note=note.strip())
        s.add(f)
        s.flush()
        return f.id


def _feedback(kind: str, gold: dict[str, Any], payload: dict[str, Any]) -> Feedback:
    """How a calibration label compares with the task's known gold."""
    if kind == "judge" and "verdicts" in gold:
        gold, payload = current_criteria(gold), current_criteria(payload)
        return Feedback(
            gold=gold,
            matches={
                c: payload["verdicts"].get(c) == gold["verdicts"].get(c) for c in gold["verdicts"]
            },
        )
    if kind in ("policy", "sql") and "verdict" in gold:
        return Feedback(gold=gold, matches={"verdict": payload.get("verdict") == gold["verdict"]})
    if kind == "tool" and "calls" in gold:
        from assay.workbench.service.tools import tool_feedback

        return Feedback(gold=gold, matches=tool_feedback(gold, payload))
    if kind == "evidence":
        mine = EvidencePayload.model_validate(payload).chunk_ids()
        want = EvidencePayload.model_validate(gold).chunk_ids()
        return Feedback(gold=gold, found=sorted(mine & want), missed=sorted(want - mine))
    return Feedback(gold=gold)
