"""Work queues: timed work sessions, claiming the next task (overlap, domains, calibration
first), releasing abandoned claims, and the per-kind counts on the home page."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import BindParameter

from assay.errors import UsageError
from assay.workbench.db import Database
from assay.workbench.models import (
    TASK_KINDS,
    Assignment,
    Label,
    Task,
    User,
    WorkSession,
    utcnow,
)
from assay.workbench.service._common import _TID, _UID, remember_kind
from assay.workbench.service.access import visible_to

__all__ = [
    "QueueCount",
    "claim_next",
    "current_work_session",
    "open_task",
    "queue_counts",
    "release_stale_claims",
    "start_work_session",
]


@dataclass(frozen=True)
class QueueCount:
    """Tasks of one kind open to a user, and how many that user has labelled."""

    open: int
    done: int

    def to_dict(self) -> dict[str, int]:
        return {"open": self.open, "done": self.done}


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


# not "kind": SQLAlchemy takes a parameter named like a column as one more value for an UPDATE
# inside a statement (the one-statement claim of PostgreSQL)
_KIND: BindParameter[str] = bindparam("task_kind")
_NOT_MINE = ~exists().where(Assignment.task_id == Task.id, Assignment.user_id == _UID)
# the task's material holds nothing the user may not see (`assay.workbench.service.access`)
_VISIBLE = visible_to(Task.access_key, _UID)
_Q_OPEN = (
    select(Assignment.task_id)
    .join(Task, Task.id == Assignment.task_id)
    .where(
        Assignment.user_id == _UID,
        Assignment.submitted_at.is_(None),
        Task.kind == _KIND,
        _VISIBLE,
    )
    .order_by(Assignment.id)
    .limit(1)
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
    .where(Task.kind == _KIND, Task.calibration.is_(True), _NOT_MINE, _VISIBLE)
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


# the latest work session's fields, read once (NULL when the user has none): a subquery
# outer-joined to a one-row one, not a scalar subquery per field (each a plan of its own that
# PostgreSQL sets up at every claim)
_LAST_WS = (
    select(
        WorkSession.kind.label("ws_kind"),
        WorkSession.started_at.label("ws_started_at"),
        WorkSession.minutes.label("ws_minutes"),
        WorkSession.n_calibration.label("ws_n_calibration"),
    )
    .where(WorkSession.user_id == _UID)
    .order_by(WorkSession.id.desc())
    .limit(1)
    .subquery("ws")
)
_Q_STATE = select(
    _Q_OPEN.scalar_subquery().label("open_id"),
    _Q_LAST_DOMAIN.scalar_subquery().label("last_domain"),
    *_LAST_WS.c,
).select_from(select(literal(1).label("one")).subquery("one").outerjoin(_LAST_WS, true()))


def _q_candidate(
    with_domains: bool,
    n_skip: int,
    postgres: bool,
    last_domain: Any = None,
    *where: Any,
    wait: bool = False,
) -> Any:
    """The best task with a free slot for the user, skipping `n_skip` ids that rivals took;
    on PostgreSQL the row is locked (rows other claimers hold are skipped, not waited for;
    with `wait`, the best row is waited for, and checked again once its holder is done).
    `last_domain` is the domain of the user's last task (default: the parameter of that name);
    `where`, further conditions."""
    q = select(Task.id).where(
        Task.kind == _KIND,
        Task.calibration.is_(False),
        Task.n_claimed < Task.overlap,
        _NOT_MINE,
        _VISIBLE,
        *where,
    )
    if with_domains:
        q = q.where(Task.domain.in_(bindparam("domains", expanding=True)))
    if n_skip:
        q = q.where(Task.id.not_in(bindparam("skip", expanding=True)))
    # the domain of the user's last task first (batches stay together), then by domain, oldest
    last = bindparam("last_domain") if last_domain is None else last_domain
    first = case((Task.domain == last, 0), else_=1)
    q = q.order_by(first, Task.domain, Task.id).limit(1)
    # FOR NO KEY UPDATE: claimers exclude each other as with FOR UPDATE, but a label being
    # stored on the task (its foreign key takes KEY SHARE on the row) need not wait for them
    return q.with_for_update(of=Task, skip_locked=not wait, key_share=True) if postgres else q


def _q_claim_in_one(with_domains: bool, state: Any = None, *, wait: bool = False) -> Any:
    """PostgreSQL: choose, lock, count and record a claim in one statement (the first try of
    `claim_next`; a single statement is atomic without a transaction block): the best candidate
    no rival holds, its slot count raised, the assignment inserted; no row when every candidate
    is taken or locked by a rival claiming it right now. With `wait`, the best candidate even
    if a rival holds it: the statement waits for the rival's (one statement, autocommit) and
    checks the row again, so it misses only when no slot is free. With `state` (the user's
    state, a CTE of `_Q_STATE`'s columns), only when that state leaves the choice to the queue
    (no open task, no work session of this kind running), and with its last domain."""
    if state is None:
        cand = _q_candidate(with_domains, 0, True, wait=wait).cte("cand")
    else:
        running = func.coalesce(  # (no work session: NULL, not running)
            and_(
                state.c.ws_kind == _KIND,
                bindparam("now", type_=WorkSession.started_at.type)
                <= state.c.ws_started_at + func.make_interval(0, 0, 0, 0, 0, state.c.ws_minutes),
            ),
            False,
        )
        free = select(state.c.open_id).where(state.c.open_id.is_(None), ~running).exists()
        last = func.coalesce(select(state.c.last_domain).scalar_subquery(), "")
        cand = _q_candidate(with_domains, 0, True, last, free).cte("cand")
    took = (
        update(Task)
        .where(Task.id == cand.c.id, Task.n_claimed < Task.overlap)
        .values(n_claimed=Task.n_claimed + 1)
        .returning(Task.id)
        .cte("took")
    )
    rows = select(
        took.c.id,
        bindparam("uid", type_=Assignment.user_id.type),
        bindparam("now", type_=Assignment.claimed_at.type),
    )
    return (
        insert(Assignment)
        .from_select([Assignment.task_id, Assignment.user_id, Assignment.claimed_at], rows)
        .returning(Assignment.task_id)
    )


_Q_CLAIM = (
    update(Task)
    .where(
        Task.id == _TID,
        or_(Task.calibration.is_(True), Task.n_claimed < Task.overlap),
    )
    .values(n_claimed=Task.n_claimed + 1)
)


def open_task(db: Database, user: User, kind: str) -> int | None:
    """The user's claimed, unsubmitted task of this kind, if any (reads only)."""
    with db.read() as s:
        t = s.scalar(_Q_OPEN, {"uid": user.id, "task_kind": kind})
    return None if t is None else int(t)


def _take(db: Database, user: User, task_id: int) -> bool:
    with db.write_core() as conn:
        if conn.execute(_Q_CLAIM, {"tid": task_id}).rowcount != 1:
            return False
        conn.execute(
            _INSERT_ASSIGNMENT, {"task_id": task_id, "user_id": user.id, "claimed_at": utcnow()}
        )
    return True


_CANDIDATE = {
    (domains, skip, pg): _q_candidate(domains, int(skip), pg)
    for domains in (False, True)
    for skip in (False, True)
    for pg in (False, True)
}
_INSERT_ASSIGNMENT = insert(Assignment)
_CLAIM_IN_ONE = {domains: _q_claim_in_one(domains) for domains in (False, True)}
_CLAIM_WAITING = {domains: _q_claim_in_one(domains, wait=True) for domains in (False, True)}


def _q_state_and_claim(with_domains: bool) -> Any:
    """PostgreSQL, one round trip: the user's state (`_Q_STATE`) and, when it leaves the choice
    to the queue, the claim of `_q_claim_in_one` made on it (`claimed`, NULL when none)."""
    state = _Q_STATE.cte("state")
    claim = _q_claim_in_one(with_domains, state).cte("claim")
    return select(*state.c, select(claim.c.task_id).scalar_subquery().label("claimed"))


_STATE_AND_CLAIM = {domains: _q_state_and_claim(domains) for domains in (False, True)}


def claim_next(db: Database, user: User, kind: str) -> int | None:
    """The task this user should label next, claiming a slot on it; None when the queue is empty.

    Order: an unfinished task of this user first; then, in a running work session, calibration
    tasks the user has not labelled (up to the session's count); then tasks of the user's domains
    with a free slot (fewer than `overlap` claims), batched by domain (the domain of the user's
    last task first, then alphabetical), oldest first. A task whose material names a chunk the
    user may not see is never served (`assay.workbench.service.access`); neither is an open
    claim on one, should the user's access have narrowed since. The choice and the claim happen in one
    write transaction (SQLite serialises writers; PostgreSQL locks the chosen row and skips rows
    other claimers hold), and a conditional UPDATE guards the slot count, so two experts never
    take the last slot of a task together, and None is answered only when no slot is free.
    """
    p: dict[str, Any] = {"uid": user.id, "task_kind": kind}
    if db.dialect == "sqlite":
        got = _claim_sqlite(db, user, kind, p)
        if got is not _CAREFUL:
            return got  # type: ignore[return-value]
    calibration: list[int] = []
    postgres = db.dialect == "postgresql"
    # on PostgreSQL the state read and the claim run on one autocommit connection run by the
    # driver itself (`Database.direct`), committed without waiting for the WAL flush (a claim
    # lost in a crash only frees its slot again); on SQLite (here only when `_claim_sqlite`
    # left it to this path) plain reads, then the careful path
    with db.direct(durable=False) if postgres else db.quick_read() as conn:
        # one round trip for the user's state: open task, last domain, latest work session; on
        # PostgreSQL, when no task is open and no work session of this kind runs, the claim
        # is made in the same statement (the common case: one round trip for the whole call;
        # when it finds nothing, the careful path below decides)
        state, tried = None, False
        if postgres:
            q = _STATE_AND_CLAIM[bool(user.domains)]
            if user.domains:
                p["domains"] = list(user.domains)
            try:
                state = conn.execute(q, p | {"now": utcnow()}).one()
                tried = state.open_id is None
                if state.claimed is not None:
                    remember_kind(db, state.claimed, kind)
                    return int(state.claimed)
            except IntegrityError:
                pass  # claimed from another tab meanwhile: the steps below skip it
        if state is None:
            state = conn.execute(_Q_STATE, p).one()
        if state.open_id is not None:
            return int(state.open_id)
        running = _running(state, kind)
        if (
            running
            and (conn.scalar(_Q_CAL_DONE, p | {"since": state.ws_started_at}) or 0)
            < state.ws_n_calibration
        ):
            calibration = list(conn.scalars(_Q_CAL_NEXT, p))
        params = p | {"last_domain": state.last_domain or ""}
        if user.domains:
            params["domains"] = list(user.domains)
        if postgres and not calibration:
            # the claim in one round trip in the common case; when it finds nothing, every
            # candidate is taken or a rival is claiming it right now: one statement that waits
            # for the best one (a rival holds it for one statement), not the careful path's six
            # round trips, which 200 annotators converging on one task made the pool's queue
            # (their labels waited behind them); when that finds nothing either, the careful
            # path below decides
            try:
                got = None
                now = utcnow()
                if running or not tried:
                    got = conn.scalar(_CLAIM_IN_ONE[bool(user.domains)], params | {"now": now})
                if got is None:
                    got = conn.scalar(_CLAIM_WAITING[bool(user.domains)], params | {"now": now})
                if got is not None:
                    remember_kind(db, got, kind)
                    return int(got)
            except IntegrityError:
                pass  # claimed from another tab meanwhile: the careful path skips it
    for task_id in calibration:  # calibration tasks have no slot limit
        try:
            if _take(db, user, task_id):
                return task_id
        except IntegrityError:
            continue  # claimed it already from another tab
    skip: list[int] = []
    while True:
        try:
            with db.write_core() as conn:
                if postgres:
                    # a claim need not survive a crash (its slot would simply be free again), so
                    # it does not wait for the WAL flush; labels are committed durably
                    conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
                p2 = params | ({"skip": skip} if skip else {})
                task_id = conn.scalar(_CANDIDATE[bool(user.domains), bool(skip), postgres], p2)
                if task_id is None and postgres:
                    # SKIP LOCKED passes over rows that rivals are claiming right now: the queue
                    # is empty only when no candidate is visible even without locking; when one
                    # is, the conditional UPDATE below waits for its lock and re-checks the slot
                    task_id = conn.scalar(_CANDIDATE[bool(user.domains), bool(skip), False], p2)
                if task_id is None:
                    return None
                if conn.execute(_Q_CLAIM, {"tid": task_id}).rowcount != 1:
                    skip.append(task_id)
                    continue
                conn.execute(
                    _INSERT_ASSIGNMENT,
                    {"task_id": task_id, "user_id": user.id, "claimed_at": utcnow()},
                )
            remember_kind(db, task_id, kind)
            return int(task_id)
        except IntegrityError:
            skip.append(task_id)  # claimed it already from another tab


def _running(state: Any, kind: str) -> bool:
    """Whether the user's latest work session (in `state`) is of this kind and still runs."""
    return bool(
        state.ws_kind == kind
        and utcnow() <= state.ws_started_at + dt.timedelta(minutes=state.ws_minutes)
    )


_CAREFUL = object()  # `_claim_sqlite` leaves the claim to the general path


def _claim_sqlite(db: Database, user: User, kind: str, p: dict[str, Any]) -> int | object | None:
    """SQLite: the whole of `claim_next` in one write transaction (the user's state, the
    calibration and candidate choice, the slot count and the assignment): one connection, one
    BEGIN IMMEDIATE and one COMMIT instead of a read transaction and then a write one. SQLite
    serialises writers, so what the transaction reads is what it writes on: the conditional
    slot update cannot miss, and `_CAREFUL` (the general path decides) is answered should it
    ever do."""
    with db.write_direct() as conn:
        state = conn.execute(_Q_STATE, p).one()
        if state.open_id is not None:
            return int(state.open_id)
        now = utcnow()
        if (
            state.ws_kind == kind
            and now <= state.ws_started_at + dt.timedelta(minutes=state.ws_minutes)
            and (conn.scalar(_Q_CAL_DONE, p | {"since": state.ws_started_at}) or 0)
            < state.ws_n_calibration
        ):
            for cal_id in list(conn.scalars(_Q_CAL_NEXT, p)):  # no slot limit; never mine
                if conn.execute(_Q_CLAIM, {"tid": cal_id}).rowcount == 1:
                    conn.execute(
                        _INSERT_ASSIGNMENT,
                        {"task_id": cal_id, "user_id": user.id, "claimed_at": now},
                    )
                    return int(cal_id)
        params = p | {"last_domain": state.last_domain or ""}
        if user.domains:
            params["domains"] = list(user.domains)
        task_id = conn.scalar(_CANDIDATE[bool(user.domains), False, False], params)
        if task_id is None:
            return None
        if conn.execute(_Q_CLAIM, {"tid": task_id}).rowcount != 1:
            return _CAREFUL
        conn.execute(
            _INSERT_ASSIGNMENT, {"task_id": task_id, "user_id": user.id, "claimed_at": now}
        )
    return int(task_id)


def release_stale_claims(db: Database, *, hours: float = 24.0) -> int:
    """Give back the slots of claims not submitted within `hours` (an expert who walked away),
    so that other experts can take them; returns how many were released. `hours` must be a
    finite number, zero or more: a negative age would release work still in progress."""
    if not math.isfinite(hours) or hours < 0:
        raise UsageError(
            f"--hours: must be zero or more (got {hours}); a negative age would "
            "release claims made in the last hours, work still in progress"
        )
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


def queue_counts(db: Database, user: User) -> dict[str, QueueCount]:
    """Per kind: tasks open to this user and tasks this user has labelled."""
    out: dict[str, QueueCount] = {}
    with db.read() as s:
        mine = select(Assignment.task_id).where(Assignment.user_id == user.id)
        for kind in TASK_KINDS:
            open_n = s.scalar(
                select(func.count())
                .select_from(Task)
                .where(
                    Task.kind == kind,
                    Task.n_claimed < Task.overlap,
                    _domain_filter(user),
                    Task.id.not_in(mine),
                    visible_to(Task.access_key, user.id),
                )
            )
            done = s.scalar(
                select(func.count())
                .select_from(Label)
                .join(Task, Task.id == Label.task_id)
                .where(Label.user_id == user.id, Task.kind == kind)
            )
            out[kind] = QueueCount(open=int(open_n or 0), done=int(done or 0))
    return out
