"""What every router shares: the `Web` context built once per app (the store, the policy, the
templates, the store threads of the hot calls) and the request bodies of the JSON API.

A route finds the context with `web(request)`; it never builds its own.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import ipaddress
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import HTTPException, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field, field_validator
from starlette.concurrency import run_in_threadpool

from assay.errors import UsageError
from assay.workbench import service as svc
from assay.workbench.auth import AuthPolicy, SessionInfo, csrf_ok, resolve_session
from assay.workbench.db import BatchResult, Database, WouldBlock
from assay.workbench.models import TASK_KINDS, User
from assay.workbench.payloads import bad_text

__all__ = [
    "DEVICE_COOKIE",
    "LOGIN_CSRF_COOKIE",
    "MAX_ID",
    "SESSION_COOKIE",
    "AdjudicationIn",
    "FlagIn",
    "GuidelineIn",
    "HotJSONResponse",
    "LabelId",
    "LabelIn",
    "LoginRequired",
    "TaskId",
    "Web",
    "client_address",
    "has_nul",
    "networks",
    "web",
]

_T = TypeVar("_T")
SESSION_COOKIE = "assay_session"
LOGIN_CSRF_COOKIE = "assay_login_csrf"
DEVICE_COOKIE = "assay_device"
MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL; larger ones cannot exist

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(specs: Sequence[str]) -> list[Network]:
    out = []
    for spec in specs:
        try:
            out.append(ipaddress.ip_network(spec.strip(), strict=False))
        except ValueError as exc:
            raise UsageError(f"--trusted-proxy: not an address or network: {spec!r}") from exc
    return out


def is_trusted(addr: str, nets: Sequence[Network]) -> bool:
    """`addr` is an address inside one of `nets` (a trusted proxy)."""
    return _in(addr, nets)


def _in(addr: str, nets: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(addr.strip())
    except ValueError:
        return False
    return any(ip in n for n in nets)


def client_address(
    peer: str | None,
    forwarded_for: str | Sequence[str] | None,
    trusted: Sequence[Network],
) -> str:
    """The client's address: the connection's peer, unless the peer is a trusted proxy; then the
    right-most address of X-Forwarded-For that is not itself a trusted proxy (the left part of
    the header is whatever the client sent, and is never believed). `forwarded_for` is every
    X-Forwarded-For line of the request, in order: a client can send its own line before the
    proxy appends one, so the lines are read as one list (RFC 9110 section 5.3)."""
    addr = peer or "?"
    if isinstance(forwarded_for, str):
        forwarded_for = [forwarded_for]
    if not trusted or not _in(addr, trusted) or not forwarded_for:
        return addr
    hops = [h.strip() for line in forwarded_for for h in line.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _in(hop, trusted):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return addr  # garbage in the header: fall back to the proxy itself
        addr = hop
    return addr


class HotJSONResponse(JSONResponse):
    """The hot calls' answers (claim, submit) rendered by orjson: the same compact UTF-8 JSON
    as `JSONResponse` (no spaces, no ASCII escaping), in a fraction of its time; what orjson
    cannot write (an integer past 64 bits) is written by `JSONResponse`."""

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content)
        except orjson.JSONEncodeError:  # an integer past 64 bits (in a calibration's gold)
            return super().render(content)


class LoginRequired(Exception):
    def __init__(self, api: bool, path: str) -> None:
        self.api, self.path = api, path


TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="a task id")]
LabelId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="a label id")]


def has_nul(value: Any) -> bool:
    """A NUL character or a lone surrogate anywhere in a value (strings, dict keys, lists): the
    store cannot hold either, so such input is refused as invalid before it reaches it
    (`assay.workbench.payloads.bad_text`)."""
    return bad_text(value) is not None


def refuse_bad_text(fields: Iterable[tuple[str, Any]]) -> None:
    """422 naming the first field whose value holds a NUL or a lone surrogate."""
    for name, value in fields:
        found = bad_text(value, name)
        if found is not None:
            raise HTTPException(422, f"{found[0]}: {found[1]}")


class _NoNul(BaseModel):
    """Refuses a NUL character or a lone surrogate in any field, naming it (422)."""

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        found = bad_text(value)
        if found is not None:
            where = "" if found[0] == "value" else f"{found[0]}: "
            raise ValueError(f"{where}{found[1]}")
        return value


class LabelIn(_NoNul):
    task_id: int = Field(ge=1, le=MAX_ID)
    payload: dict[str, Any] = Field(
        description="The label. Its shape depends on the task's kind: EvidencePayload "
        "(evidence), ReferencePayload (reference), JudgePayload (judge), SqlPayload (sql) or "
        "PolicyPayload (policy); see the schemas."
    )
    client_id: str = Field(min_length=1, max_length=64)
    seconds: float | None = Field(default=None, ge=0, le=7 * 24 * 3600)


class FlagIn(_NoNul):
    item_id: str = Field(max_length=200)
    flag: str
    note: str = ""


class AdjudicationIn(_NoNul):
    task_id: int = Field(ge=1, le=MAX_ID)
    payload: dict[str, Any]
    root_cause: str
    note: str = ""
    hard_case: bool = False
    guideline_change: str | None = None
    guideline_text: str | None = None


class GuidelineIn(_NoNul):
    text: str
    change: str


class _GroupCommit:
    """SQLite group commit of the hot writes (claims, submissions): the calls that arrive in
    one turn of the event loop are run together by `Database.write_batch` at the end of that
    turn, in one write transaction (one BEGIN IMMEDIATE and one COMMIT for all of them, each
    call in a savepoint of its own), and each caller is answered only after that COMMIT has
    returned: an acknowledged label is committed as surely as one written alone, and a label
    whose batch failed to commit was acknowledged to no one. A call that raises is answered
    with its own exception (its writes rolled back, the others' kept). When another writer
    holds the store (another `--workers` process, or a batch still on a store thread), the
    batch waits for it on a store thread instead of the event loop; a call that needs a
    write transaction of its own is run alone after (`BatchResult.again`). This saved about
    40% of the store's CPU per label at 50 calls a batch (docs/workbench.md)."""

    def __init__(self, db: Database, pool: ThreadPoolExecutor) -> None:
        self.db, self.pool = db, pool
        self._calls: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._scheduled = False

    async def run(self, fn: Callable[[], _T]) -> _T:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[_T] = loop.create_future()
        self._calls.append((fn, fut))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush, loop)  # after the calls ready in this turn
        return await fut

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = False
        calls, self._calls = self._calls, []
        fns = [fn for fn, _fut in calls]
        try:
            with self.db.no_wait():
                results = self.db.write_batch(fns)
        except WouldBlock:  # another writer holds the store: wait for it on a store thread
            waiting = loop.run_in_executor(self.pool, self.db.write_batch, fns)
            waiting.add_done_callback(lambda done: self._settle(loop, calls, done))
            return
        except Exception as exc:  # the batch did not commit: no call is acknowledged
            self._fail(calls, exc)
            return
        self._answer(loop, calls, results)

    def _settle(
        self,
        loop: asyncio.AbstractEventLoop,
        calls: list[tuple[Callable[[], Any], asyncio.Future[Any]]],
        done: asyncio.Future[list[BatchResult[Any]]],
    ) -> None:
        exc = done.exception()
        if exc is not None:
            self._fail(calls, exc)
        else:
            self._answer(loop, calls, done.result())

    @staticmethod
    def _fail(
        calls: list[tuple[Callable[[], Any], asyncio.Future[Any]]], exc: BaseException
    ) -> None:
        for _fn, fut in calls:
            if not fut.done():
                fut.set_exception(exc)

    def _answer(
        self,
        loop: asyncio.AbstractEventLoop,
        calls: list[tuple[Callable[[], Any], asyncio.Future[Any]]],
        results: list[BatchResult[Any]],
    ) -> None:
        for (fn, fut), got in zip(calls, results, strict=True):
            if fut.done():
                continue  # its request was cancelled (the client went away)
            if got.again:  # needs a write transaction of its own: alone, on a store thread
                alone = loop.run_in_executor(self.pool, fn)
                alone.add_done_callback(functools.partial(_chain, fut))
            elif got.error is not None:
                fut.set_exception(got.error)
            else:
                fut.set_result(got.value)


def _chain(fut: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    if fut.done():
        return
    exc = done.exception()
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(done.result())


@dataclass
class Web:
    """The app's shared state: the store, the login policy, the trusted proxies, whether cookies
    are Secure, the templates, and the store threads of the hot calls (see `in_db`)."""

    db: Database
    policy: AuthPolicy
    trusted: Sequence[Network]
    secure_cookies: bool
    templates: Jinja2Templates
    db_pool: ThreadPoolExecutor
    group_commit: bool = True  # SQLite: claims and submissions committed in groups
    _batches: _GroupCommit | None = field(default=None, init=False, repr=False)

    @property
    def sqlite(self) -> bool:
        return self.db.dialect == "sqlite"

    async def in_write(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run a hot write (a claim, a submission): on SQLite in a group commit with the others
        of this turn of the event loop (`_GroupCommit`), else as `in_db`."""
        if not (self.sqlite and self.group_commit):
            return await self.in_db(fn, *args, **kwargs)
        if self._batches is None:
            self._batches = _GroupCommit(self.db, self.db_pool)
        return await self._batches.run(functools.partial(fn, *args, **kwargs))

    async def in_db(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run a hot call's store work: on SQLite directly on the event loop when no other
        writer holds the store (a tenth to a half of a millisecond of local work; handing it
        to a thread cost about as much again, see docs/workbench.md), else on the pool; on
        PostgreSQL always on the pool (every statement waits on the network)."""
        if self.sqlite:
            try:
                with self.db.no_wait():
                    return fn(*args, **kwargs)
            except WouldBlock:
                pass  # another writer holds the store: wait for it on a thread, not here
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.db_pool, functools.partial(fn, *args, **kwargs))

    async def claim_response(self, info: SessionInfo, kind: str) -> JSONResponse:
        if kind not in TASK_KINDS:
            raise HTTPException(404)
        task_id = await self.in_write(svc.claim_next, self.db, info.user, kind)
        return HotJSONResponse({"task_id": task_id, "url": f"/task/{task_id}" if task_id else None})

    async def submit_response(self, info: SessionInfo, body: LabelIn) -> JSONResponse:
        sub = await self.in_write(
            svc.submit_label,
            self.db,
            info.user,
            body.task_id,
            body.payload,
            client_id=body.client_id,
            seconds=body.seconds,
        )
        return HotJSONResponse(sub.to_dict())

    def session_of(self, request: Request) -> SessionInfo:
        known = getattr(request.state, "session", None)
        if isinstance(known, SessionInfo):
            return known
        info = resolve_session(self.db, request.cookies.get(SESSION_COOKIE), self.policy)
        if info is None:
            raise LoginRequired(request.url.path.startswith("/api/"), request.url.path)
        return info

    def client_ip(self, request: Request) -> str:
        peer = request.client.host if request.client else None
        # every X-Forwarded-For line: a client's own line must not hide the proxy's
        return client_address(peer, request.headers.getlist("x-forwarded-for"), self.trusted)

    async def checked(self, request: Request) -> SessionInfo:
        """The session of a form POST, after checking its CSRF token (form field or header)."""
        info = await run_in_threadpool(self.session_of, request)
        given = request.headers.get("x-csrf-token")
        if given is None:
            form = await request.form()
            v = form.get("csrf_token")
            given = v if isinstance(v, str) else None
        if not csrf_ok(info.csrf, given):
            raise HTTPException(403, "missing or wrong CSRF token")
        ctype = request.headers.get("content-type", "")
        if ctype.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            form = await request.form()  # parsed once: the route reads the same form
            refuse_bad_text((k, v) for k, v in form.multi_items() if isinstance(v, str))
        return info

    def checked_api(self, request: Request) -> SessionInfo:
        """The session of a JSON API POST, after checking its X-CSRF-Token header."""
        info = self.session_of(request)
        if not csrf_ok(info.csrf, request.headers.get("x-csrf-token")):
            raise HTTPException(403, "missing or wrong CSRF token")
        return info

    @staticmethod
    def need(info: SessionInfo, role: str) -> User:
        if not info.user.can(role):
            raise HTTPException(403, f"this page needs the {role} role")
        return info.user

    def page(
        self, request: Request, name: str, info: SessionInfo | None, **ctx: Any
    ) -> HTMLResponse:
        ws = svc.current_work_session(self.db, info.user) if info else None
        session_end = (
            (ws.started_at + dt.timedelta(minutes=ws.minutes)).isoformat() + "Z" if ws else None
        )
        return self.templates.TemplateResponse(
            request,
            name,
            {
                "user": info.user if info else None,
                "csrf": info.csrf if info else "",
                "session_end": session_end,
                "work_session": ws,
                **ctx,
            },
        )


def web(request: Request) -> Web:
    """The app's `Web` context (set by `create_app`)."""
    ctx: Web = request.app.state.web
    return ctx
