"""The workbench web app (FastAPI): server-rendered pages plus a small JSON API used by them.

Every route needs a logged-in session except the login page and static files. Every state
change is a POST and needs the session's CSRF token (form field `csrf_token` or header
`X-CSRF-Token`); no GET changes state. Pages carry a strict Content-Security-Policy (scripts only
from this server, no inline script), and all text is rendered escaped by Jinja2's autoescaping.

Before any route runs: a request body larger than `max_body_bytes` (default 1 MB) is refused
with 413 before it is read (by its Content-Length, or while it streams in), and a JSON API POST
must carry a live session and its CSRF token before its body is parsed. The client address (for
the login throttle) is the connection's peer; `X-Forwarded-For` is believed only from the
addresses in `trusted_proxies`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import inspect
import ipaddress
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import DataError, UsageError
from assay.workbench import service as svc
from assay.workbench.agreement import agreement_panel
from assay.workbench.auth import (
    AuthPolicy,
    LoginRateLimited,
    SessionInfo,
    authenticate,
    create_user,
    csrf_ok,
    device_token,
    end_session,
    resolve_session,
    start_session,
)
from assay.workbench.db import Database, WouldBlock
from assay.workbench.models import ROLES, TASK_KINDS, Item, Label, Task, User
from assay.workbench.payloads import CRITERIA, FLAGS, PAYLOAD_MODELS, ROOT_CAUSES

__all__ = [
    "MAX_ID",
    "WorkbenchConfig",
    "app_from_env",
    "client_address",
    "config_from_env",
    "config_to_env",
    "create_app",
    "serve",
    "server_engines",
]

_HERE = Path(__file__).parent
_T = TypeVar("_T")
SESSION_COOKIE = "assay_session"
LOGIN_CSRF_COOKIE = "assay_login_csrf"
DEVICE_COOKIE = "assay_device"
MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL; larger ones cannot exist
DEFAULT_MAX_BODY = 1_000_000
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


@dataclass
class WorkbenchConfig:
    """How the app runs. `trusted_proxies`: addresses or networks (e.g. "127.0.0.1",
    "10.0.0.0/8") of reverse proxies whose X-Forwarded-For is believed; `max_body_bytes`: the
    largest request body accepted; `db_threads`: threads doing the store work of the hot API
    calls (claim, submit) per process, 2 by default; `hot_path`: serve those two calls
    directly instead of through FastAPI's routing (the same answers, 1.13-1.21x the labels/s in
    `bench/bench_workbench_submit.py --compare-routing`; off only to compare)."""

    db_url: str = "sqlite:///labels.db"
    policy: AuthPolicy = field(default_factory=AuthPolicy)
    secure_cookies: bool = False  # set when served over HTTPS
    migrate: bool = True
    trusted_proxies: Sequence[str] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY
    db_threads: int | None = None  # None: 2 (see create_app)
    hot_path: bool = True  # serve claim and submit outside FastAPI's routing (see _HotApi)


def _networks(
    specs: Sequence[str],
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    out = []
    for spec in specs:
        try:
            out.append(ipaddress.ip_network(spec.strip(), strict=False))
        except ValueError as exc:
            raise UsageError(f"--trusted-proxy: not an address or network: {spec!r}") from exc
    return out


def _in(addr: str, nets: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    try:
        ip = ipaddress.ip_address(addr.strip())
    except ValueError:
        return False
    return any(ip in n for n in nets)


def client_address(
    peer: str | None,
    forwarded_for: str | None,
    trusted: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network],
) -> str:
    """The client's address: the connection's peer, unless the peer is a trusted proxy; then the
    right-most address of X-Forwarded-For that is not itself a trusted proxy (the left part of
    the header is whatever the client sent, and is never believed)."""
    addr = peer or "?"
    if not trusted or not _in(addr, trusted) or not forwarded_for:
        return addr
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _in(hop, trusted):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return addr  # garbage in the header: fall back to the proxy itself
        addr = hop
    return addr


class _ApiGuard:
    """A JSON API request that changes state must carry a live session and its CSRF header
    before its body is read or parsed; the session found is handed to the route."""

    def __init__(
        self,
        app: ASGIApp,
        db: Database,
        policy: AuthPolicy,
        offload: Callable[..., Awaitable[SessionInfo | None]],
    ) -> None:
        self.app, self.db, self.policy, self.offload = app, db, policy, offload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"].startswith("/api/")
            and scope["method"] not in ("GET", "HEAD")
        ):
            request = Request(scope)
            token = request.cookies.get(SESSION_COOKIE)
            # on SQLite on the event loop (one indexed read of a local file), on PostgreSQL on
            # the store threads: the read waits on the network, which must not stall the loop
            info = await self.offload(resolve_session, self.db, token, self.policy)
            if info is None:
                await _send_json(send, 401, "login required")
                return
            if not csrf_ok(info.csrf, request.headers.get("x-csrf-token")):
                await _send_json(send, 403, "missing or wrong CSRF token")
                return
            scope.setdefault("state", {})["session"] = info
        await self.app(scope, receive, send)


_Handler = Callable[[Request, Any], Response | Awaitable[Response]]


class _HotApi:
    """The two calls every label makes, `POST /api/next/{kind}` and `POST /api/labels`, served
    without FastAPI's routing, dependency solving and exception middleware (1.13-1.21x the
    labels/s under load, docs/workbench.md). It runs inside the API guard (the session and its CSRF token are
    checked, and the body limit applies), reads and validates the body the way FastAPI does,
    calls the same handlers as the FastAPI routes (which stay for the API docs), and answers
    errors through the app's own exception handlers, so both paths give the same answers
    (`tests/workbench/test_hot_path.py` compares them). Other requests pass through."""

    def __init__(
        self,
        app: ASGIApp,
        claim: Callable[[SessionInfo, str], Awaitable[Response]],
        submit: Callable[[SessionInfo, LabelIn], Awaitable[Response]],
        handlers: dict[Any, _Handler],
    ) -> None:
        self.app, self.claim, self.submit, self.handlers = app, claim, submit, handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == "/api/labels":
            call: Callable[[SessionInfo, Request], Awaitable[Response]] = self._submit
        elif path.startswith("/api/next/") and path[10:] and "/" not in path[10:]:
            call = self._claim
        else:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            response = await call(scope["state"]["session"], request)
        except Exception as exc:
            handler = next(
                (self.handlers[t] for t in type(exc).__mro__ if t in self.handlers), None
            )
            if handler is None:
                raise
            answer = handler(request, exc)
            response = await answer if inspect.isawaitable(answer) else answer
        await response(scope, receive, send)

    async def _claim(self, info: SessionInfo, request: Request) -> Response:
        return await self.claim(info, request.scope["path"][10:])

    async def _submit(self, info: SessionInfo, request: Request) -> Response:
        try:
            raw = await request.body()
        except _BodyTooLarge:
            raise
        except Exception as exc:  # the client went away mid-body: as FastAPI answers it
            raise HTTPException(400, "There was an error parsing the body") from exc
        return await self.submit(info, _label_in(raw, request.headers.get("content-type")))


def _label_in(raw: bytes, content_type: str | None) -> LabelIn:
    """A submission's body validated as FastAPI validates a JSON body parameter: no body is a
    missing field, a body not declared JSON is not an object, and JSON that does not parse is
    a decode error at its position; every error is located under "body"."""
    body: Any = raw
    if not raw:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}]
        )
    if _is_json(content_type):
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RequestValidationError(
                [
                    {
                        "type": "json_invalid",
                        "loc": ("body", exc.pos),
                        "msg": "JSON decode error",
                        "input": {},
                        "ctx": {"error": exc.msg},
                    }
                ]
            ) from exc
    try:
        return LabelIn.model_validate(body, from_attributes=True)  # as FastAPI validates
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from exc


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False  # FastAPI's strict content type: an undeclared body is not JSON
    if content_type == "application/json":
        return True
    import email.message

    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


class _BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body too large (the limit is {limit} bytes)")


async def _send_json(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _BodyLimit:
    """Refuse request bodies over `limit` bytes before reading them: by Content-Length at once,
    and for a body without one (chunked), as soon as the bytes read pass the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _send_json(send, 400, "bad Content-Length")
                    return
                if declared > self.limit:
                    await _send_json(send, 413, str(_BodyTooLarge(self.limit).detail))
                    return
        seen = 0
        started = False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge(self.limit)
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if message["status"] == 413:  # stop the client sending the rest
                    MutableHeaders(scope=message)["connection"] = "close"
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except _BodyTooLarge as exc:
            if not started:
                await _send_json(send, 413, str(exc.detail))


class _Headers:
    """Security headers on every response (a plain ASGI middleware: no per-request task)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", CSP)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("Referrer-Policy", "same-origin")
                if not static:
                    headers.setdefault("Cache-Control", "no-store")
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _LoginRequired(Exception):
    def __init__(self, api: bool, path: str) -> None:
        self.api, self.path = api, path


TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="a task id")]
LabelId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="a label id")]


class LabelIn(BaseModel):
    task_id: int = Field(ge=1, le=MAX_ID)
    payload: dict[str, Any] = Field(
        description="The label. Its shape depends on the task's kind: EvidencePayload "
        "(evidence), ReferencePayload (reference) or JudgePayload (judge); see the schemas."
    )
    client_id: str = Field(min_length=1, max_length=64)
    seconds: float | None = Field(default=None, ge=0, le=7 * 24 * 3600)


class FlagIn(BaseModel):
    item_id: str = Field(max_length=200)
    flag: str
    note: str = ""


class AdjudicationIn(BaseModel):
    task_id: int = Field(ge=1, le=MAX_ID)
    payload: dict[str, Any]
    root_cause: str
    note: str = ""
    hard_case: bool = False
    guideline_change: str | None = None
    guideline_text: str | None = None


class GuidelineIn(BaseModel):
    text: str
    change: str


def create_app(config: WorkbenchConfig | None = None, *, db: Database | None = None) -> FastAPI:
    """Build the app over a store (migrated to the newest schema unless config.migrate is off)."""
    config = config or WorkbenchConfig()
    db = db or Database(config.db_url)
    if config.migrate:
        db.migrate()
    policy = config.policy
    trusted = _networks(config.trusted_proxies)
    sqlite = db.dialect == "sqlite"
    threads = config.db_threads or 2
    if threads < 1:
        raise UsageError("db_threads must be at least 1")
    # The hot API calls (claim a task, submit a label, and on PostgreSQL the session read) run
    # their store work on this small pool (on SQLite only when another writer holds the store),
    # not on the 40-thread default one: requests wait their turn in arrival order (the pool's
    # queue is FIFO) instead of racing for the store and the GIL, which made the tail under
    # load. More threads are worse: with 50 annotators on PostgreSQL and the CPU halved, p99
    # was 137-145 ms at 2 threads, 185 ms at 4 and 215 ms at 8 (docs/workbench.md).
    db_pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="assay-db")

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        db_pool.shutdown(wait=True)

    async def in_db(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run a hot call's store work: on SQLite directly on the event loop when no other
        writer holds the store (a tenth to a half of a millisecond of local work; handing it
        to a thread cost about as much again, see docs/workbench.md), else on the pool; on
        PostgreSQL always on the pool (every statement waits on the network)."""
        if sqlite:
            try:
                with db.no_wait():
                    return fn(*args, **kwargs)
            except WouldBlock:
                pass  # another writer holds the store: wait for it on a thread, not here
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(db_pool, functools.partial(fn, *args, **kwargs))

    app = FastAPI(
        title="assay workbench", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.db = db

    async def claim_response(info: SessionInfo, kind: str) -> JSONResponse:
        if kind not in TASK_KINDS:
            raise HTTPException(404)
        task_id = await in_db(svc.claim_next, db, info.user, kind)
        return JSONResponse({"task_id": task_id, "url": f"/task/{task_id}" if task_id else None})

    async def submit_response(info: SessionInfo, body: LabelIn) -> JSONResponse:
        sub = await in_db(
            svc.submit_label,
            db,
            info.user,
            body.task_id,
            body.payload,
            client_id=body.client_id,
            seconds=body.seconds,
        )
        return JSONResponse(sub.to_dict())

    # outermost first: security headers on every answer, then the body limit, then the API
    # guard, then the direct path of the two hot calls
    if config.hot_path:
        app.add_middleware(
            _HotApi,
            claim=claim_response,
            submit=submit_response,
            handlers=app.exception_handlers,  # the handlers registered below, by reference
        )
    app.add_middleware(_ApiGuard, db=db, policy=policy, offload=in_db)
    app.add_middleware(_BodyLimit, limit=config.max_body_bytes)
    app.add_middleware(_Headers)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    templates.env.globals.update(CRITERIA=CRITERIA, FLAGS=FLAGS, ROOT_CAUSES=ROOT_CAUSES)

    # ------------------------------------------------------------------ helpers

    def session_of(request: Request) -> SessionInfo:
        known = getattr(request.state, "session", None)
        if isinstance(known, SessionInfo):
            return known
        info = resolve_session(db, request.cookies.get(SESSION_COOKIE), policy)
        if info is None:
            raise _LoginRequired(request.url.path.startswith("/api/"), request.url.path)
        return info

    def client_ip(request: Request) -> str:
        peer = request.client.host if request.client else None
        return client_address(peer, request.headers.get("x-forwarded-for"), trusted)

    async def checked(request: Request) -> SessionInfo:
        """The session of a form POST, after checking its CSRF token (form field or header)."""
        info = await run_in_threadpool(session_of, request)
        given = request.headers.get("x-csrf-token")
        if given is None:
            form = await request.form()
            v = form.get("csrf_token")
            given = v if isinstance(v, str) else None
        if not csrf_ok(info.csrf, given):
            raise HTTPException(403, "missing or wrong CSRF token")
        return info

    def checked_api(request: Request) -> SessionInfo:
        """The session of a JSON API POST, after checking its X-CSRF-Token header."""
        info = session_of(request)
        if not csrf_ok(info.csrf, request.headers.get("x-csrf-token")):
            raise HTTPException(403, "missing or wrong CSRF token")
        return info

    def need(info: SessionInfo, role: str) -> User:
        if not info.user.can(role):
            raise HTTPException(403, f"this page needs the {role} role")
        return info.user

    def page(request: Request, name: str, info: SessionInfo | None, **ctx: Any) -> HTMLResponse:
        ws = svc.current_work_session(db, info.user) if info else None
        session_end = (
            (ws.started_at + dt.timedelta(minutes=ws.minutes)).isoformat() + "Z" if ws else None
        )
        return templates.TemplateResponse(
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

    @app.exception_handler(_LoginRequired)
    async def _login_required(request: Request, exc: _LoginRequired) -> Response:
        if exc.api:
            return JSONResponse({"detail": "login required"}, status_code=401)
        return RedirectResponse(f"/login?next={quote(exc.path)}", status_code=303)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/") or request.method != "GET":
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        resp = templates.TemplateResponse(
            request,
            "error.html",
            {"user": None, "csrf": "", "session_end": None, "detail": exc.detail},
        )
        resp.status_code = exc.status_code
        return resp

    @app.exception_handler(svc.NotFound)
    async def _not_found(request: Request, exc: svc.NotFound) -> Response:
        return JSONResponse({"detail": "not found"}, status_code=404)

    @app.exception_handler(svc.Conflict)
    async def _conflict(request: Request, exc: svc.Conflict) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(UsageError)
    async def _usage(request: Request, exc: UsageError) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(DataError)
    async def _data(request: Request, exc: DataError) -> Response:
        return JSONResponse({"detail": "; ".join(p.message for p in exc.problems)}, status_code=422)

    @app.exception_handler(ValidationError)
    async def _invalid(request: Request, exc: ValidationError) -> Response:
        return _validation_response(exc.errors(), prefix="payload")

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return _validation_response(exc.errors(), prefix="")

    # ------------------------------------------------------------------ login

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, next: str = "/", error: str = "") -> Response:
        token = secrets.token_urlsafe(24)
        resp = page(
            request, "login.html", None, login_csrf=token, next=_safe_next(next), error=error
        )
        resp.set_cookie(
            LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=config.secure_cookies
        )
        return resp

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        username, password = str(form.get("username", "")), str(form.get("password", ""))
        nxt = _safe_next(str(form.get("next", "/")))
        cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
        if not cookie or not csrf_ok(cookie, str(form.get("csrf_token", ""))):
            raise HTTPException(403, "missing or wrong CSRF token")
        ip = client_ip(request)
        device = request.cookies.get(DEVICE_COOKIE)
        try:
            user = await run_in_threadpool(authenticate, db, username, password, ip, policy, device)
        except LoginRateLimited as exc:
            wait = max(1, round(exc.retry_after))
            resp = _relogin(
                request, f"Too many failed attempts; try again in {_duration(wait)}.", 429
            )
            resp.headers["Retry-After"] = str(wait)
            return resp
        if user is None:
            return _relogin(request, "Wrong username or password.", 401)
        token, _csrf = await run_in_threadpool(start_session, db, user.id, policy)
        resp = RedirectResponse(nxt, status_code=303)
        resp.set_cookie(
            DEVICE_COOKIE,
            await run_in_threadpool(device_token, db, user.username),
            httponly=True,
            samesite="strict",
            secure=config.secure_cookies,
            max_age=180 * 24 * 3600,
        )
        resp.set_cookie(
            SESSION_COOKIE,
            token,
            httponly=True,
            samesite="lax",
            secure=config.secure_cookies,
            max_age=policy.max_hours * 3600,
        )
        resp.delete_cookie(LOGIN_CSRF_COOKIE)
        return resp

    def _relogin(request: Request, error: str, status: int) -> Response:
        token = secrets.token_urlsafe(24)
        resp = page(request, "login.html", None, login_csrf=token, next="/", error=error)
        resp.status_code = status
        resp.set_cookie(
            LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=config.secure_cookies
        )
        return resp

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await checked(request)
        await run_in_threadpool(end_session, db, request.cookies.get(SESSION_COOKIE))
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(SESSION_COOKIE)
        return resp

    # ------------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        info = session_of(request)
        counts = svc.queue_counts(db, info.user)
        n_adj = len(svc.adjudication_queue(db)) if info.user.can("adjudicator") else 0
        return page(request, "home.html", info, counts=counts, n_adjudication=n_adj)

    @app.post("/session/start")
    async def session_start(request: Request) -> Response:
        info = await checked(request)
        form = await request.form()
        kind = str(form.get("kind", "judge"))
        if kind not in TASK_KINDS:
            raise HTTPException(400, f"kind: must be one of {', '.join(TASK_KINDS)}")
        raw = str(form.get("minutes", "50")).strip() or "50"
        if not raw.isdigit() or len(raw) > 4:
            raise HTTPException(400, "minutes: a whole number of minutes, 5 to 240")
        await run_in_threadpool(svc.start_work_session, db, info.user, kind, int(raw))
        return await run_in_threadpool(_claim_and_go, request, info, kind)

    def _claim_and_go(request: Request, info: SessionInfo, kind: str) -> Response:
        task_id = svc.claim_next(db, info.user, kind)
        if task_id is None:
            return page(request, "empty.html", info, kind=kind)
        return RedirectResponse(f"/task/{task_id}", status_code=303)

    @app.get("/work/{kind}")
    def work(request: Request, kind: str) -> Response:
        """Your unfinished task of this kind, if any; else a page whose button (a POST) claims
        the next one. Looking never claims anything."""
        info = session_of(request)
        if kind not in TASK_KINDS:
            raise HTTPException(404)
        task_id = svc.open_task(db, info.user, kind)
        if task_id is not None:
            return RedirectResponse(f"/task/{task_id}", status_code=303)
        counts = svc.queue_counts(db, info.user)
        return page(request, "work.html", info, kind=kind, count=counts[kind])

    @app.post("/work/{kind}")
    async def work_next(request: Request, kind: str) -> Response:
        info = await checked(request)
        if kind not in TASK_KINDS:
            raise HTTPException(404)
        return await run_in_threadpool(_claim_and_go, request, info, kind)

    @app.get("/task/{task_id}", response_class=HTMLResponse)
    def task_page(request: Request, task_id: TaskId) -> Response:
        info = session_of(request)
        try:
            view = svc.task_view(db, info.user, task_id)
        except svc.NotFound:
            resp = page(request, "empty.html", info, kind=None)
            resp.status_code = 404
            return resp
        return page(request, f"task_{view.kind}.html", info, view=view, facets=svc.facets(db))

    @app.get("/adjudicate", response_class=HTMLResponse)
    def adjudicate_list(request: Request) -> Response:
        info = session_of(request)
        need(info, "adjudicator")
        return page(request, "adjudicate_list.html", info, queue=svc.adjudication_queue(db))

    @app.get("/adjudicate/{task_id}", response_class=HTMLResponse)
    def adjudicate_page(request: Request, task_id: TaskId) -> Response:
        info = session_of(request)
        need(info, "adjudicator")
        view = svc.adjudication_view(db, info.user, task_id)
        return page(request, "adjudicate.html", info, view=view, facets=svc.facets(db))

    @app.get("/agreement", response_class=HTMLResponse)
    def agreement_page(request: Request) -> Response:
        info = session_of(request)
        need(info, "adjudicator")
        return page(request, "agreement.html", info, panel=agreement_panel(db))

    @app.get("/guidelines", response_class=HTMLResponse)
    def guidelines_page(request: Request) -> Response:
        info = session_of(request)
        return page(request, "guidelines.html", info, versions=svc.guidelines(db))

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(
        request: Request,
        msg: str = "",
        rows: Annotated[int, Query(ge=0, le=10**7)] = 200,
        overlap: Annotated[float, Query(ge=0, le=1)] = 0.5,
        adjudication_minutes: Annotated[float, Query(ge=0, le=600)] = 10.0,
    ) -> Response:
        info = session_of(request)
        need(info, "admin")
        measured = svc.measured_time(db)
        budget = svc.plan_budget(
            rows, overlap=overlap, adjudication_minutes=adjudication_minutes, measured=measured
        )
        with db.read() as s:
            users = list(s.scalars(select(User).order_by(User.username)))
            stats = {
                "items": s.scalar(select(func.count()).select_from(Item)),
                "tasks": s.scalar(select(func.count()).select_from(Task)),
                "labels": s.scalar(select(func.count()).select_from(Label)),
            }
        return page(
            request,
            "admin.html",
            info,
            users=users,
            stats=stats,
            roles=ROLES,
            msg=msg,
            measured=measured,
            budget=budget,
        )

    @app.post("/admin/users")
    async def admin_add_user(request: Request) -> Response:
        info = await checked(request)
        need(info, "admin")
        form = await request.form()
        domains = [d.strip() for d in str(form.get("domains", "")).split(",") if d.strip()]
        try:
            await run_in_threadpool(
                create_user,
                db,
                str(form.get("username", "")),
                str(form.get("password", "")),
                str(form.get("role", "annotator")),
                domains=domains,
            )
            msg = "User added."
        except UsageError as exc:
            msg = str(exc)
        return RedirectResponse(f"/admin?msg={quote(msg)}", status_code=303)

    # ------------------------------------------------------------------ API docs

    def openapi_schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = app.openapi()
            comps = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in PAYLOAD_MODELS.values():
                js = model.model_json_schema(ref_template="#/components/schemas/{model}")
                comps.update(js.pop("$defs", {}))
                comps[model.__name__] = js
            app.openapi_schema = schema
        return app.openapi_schema

    @app.get("/api/openapi.json", include_in_schema=False)
    def api_openapi(request: Request) -> dict[str, Any]:
        session_of(request)
        return openapi_schema()

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> Response:
        info = session_of(request)
        schema = openapi_schema()
        comps = schema["components"]["schemas"]
        routes = []
        for path, methods in schema["paths"].items():
            for method, op in methods.items():
                body_ref = (
                    op.get("requestBody", {})
                    .get("content", {})
                    .get("application/json", {})
                    .get("schema", {})
                    .get("$ref", "")
                )
                routes.append(
                    {
                        "method": method.upper(),
                        "path": path,
                        "summary": op.get("description") or op.get("summary", ""),
                        "params": [
                            {
                                "name": p["name"],
                                "in": p["in"],
                                "required": p.get("required", False),
                                "type": _type_of(p.get("schema", {})),
                            }
                            for p in op.get("parameters", [])
                        ],
                        "body": body_ref.rsplit("/", 1)[-1] or None,
                    }
                )
        models = {
            name: _fields(comps[name], comps)
            for name in sorted(comps)
            if "properties" in comps[name] and not name.startswith(("HTTPValidation", "Validation"))
        }
        return page(
            request, "api_docs.html", info, routes=routes, models=models, kinds=PAYLOAD_MODELS
        )

    # ------------------------------------------------------------------ JSON API

    @app.get("/api/me")
    def api_me(request: Request) -> dict[str, Any]:
        info = session_of(request)
        u = info.user
        return {"username": u.username, "role": u.role, "domains": u.domains, "csrf": info.csrf}

    @app.get("/api/search")
    def api_search(
        request: Request,
        q: str = "",
        company: str = "",
        form: str = "",
        period: str = "",
        limit: int = 30,
    ) -> dict[str, Any]:
        session_of(request)
        hits = svc.search_chunks(
            db, q, company=company or None, form=form or None, period=period or None, limit=limit
        )
        return {"q": q, "hits": [h.to_dict() for h in hits]}

    @app.post("/api/next/{kind}", response_class=JSONResponse)
    async def api_next(request: Request, kind: str) -> JSONResponse:
        """Claim the next task of a kind (your unfinished one first)."""
        return await claim_response(session_of(request), kind)  # session: by the API guard

    @app.get("/api/tasks/{task_id}")
    def api_task(request: Request, task_id: TaskId) -> dict[str, Any]:
        return svc.task_view(db, session_of(request).user, task_id).to_dict()

    @app.get("/api/tasks/{task_id}/labels")
    def api_task_labels(request: Request, task_id: TaskId) -> dict[str, Any]:
        labels = svc.list_labels(db, session_of(request).user, task_id)
        return {"labels": [lab.to_dict() for lab in labels]}

    @app.get("/api/labels/{label_id}")
    def api_label(request: Request, label_id: LabelId) -> dict[str, Any]:
        return svc.get_label(db, session_of(request).user, label_id).to_dict()

    @app.post("/api/labels", response_class=JSONResponse)
    async def api_submit(request: Request, body: LabelIn) -> JSONResponse:
        return await submit_response(checked_api(request), body)  # session: by the API guard

    @app.post("/api/flags")
    def api_flag(request: Request, body: FlagIn) -> dict[str, Any]:
        info = checked_api(request)
        return {"flag_id": svc.add_flag(db, info.user, body.item_id, body.flag, body.note)}

    @app.get("/api/adjudication-queue")
    def api_adj_queue(request: Request) -> dict[str, Any]:
        need(session_of(request), "adjudicator")
        return {"queue": [q.to_dict() for q in svc.adjudication_queue(db)]}

    @app.post("/api/adjudications")
    def api_adjudicate(request: Request, body: AdjudicationIn) -> dict[str, Any]:
        info = checked_api(request)
        need(info, "adjudicator")
        return svc.adjudicate(
            db,
            info.user,
            body.task_id,
            body.payload,
            root_cause=body.root_cause,
            note=body.note,
            hard_case=body.hard_case,
            guideline_change=body.guideline_change,
            guideline_text=body.guideline_text,
        ).to_dict()

    @app.get("/api/agreement")
    def api_agreement(request: Request) -> dict[str, Any]:
        need(session_of(request), "adjudicator")
        return agreement_panel(db)

    @app.post("/api/guidelines")
    def api_guidelines(request: Request, body: GuidelineIn) -> dict[str, Any]:
        info = checked_api(request)
        need(info, "adjudicator")
        return {"version": svc.edit_guidelines(db, info.user, body.text, body.change)}

    return app


def app_from_env() -> FastAPI:
    """App factory for process managers (`uvicorn --factory assay.workbench.app:app_from_env`,
    several workers): the configuration comes from ASSAY_WORKBENCH_DB, _SECURE_COOKIES,
    _IDLE_MINUTES, _TRUSTED_PROXIES (comma-separated) and _MAX_BODY_BYTES. Run uvicorn with
    `--no-proxy-headers`: the app reads X-Forwarded-For itself, from trusted proxies only."""
    import os

    return create_app(config_from_env(os.environ))


_ENV = "ASSAY_WORKBENCH_"


def config_to_env(config: WorkbenchConfig) -> dict[str, str]:
    """The environment that hands `config` to worker processes (see `config_from_env`)."""
    return {
        _ENV + "DB": config.db_url,
        _ENV + "SECURE_COOKIES": "1" if config.secure_cookies else "0",
        _ENV + "IDLE_MINUTES": str(config.policy.idle_minutes),
        _ENV + "TRUSTED_PROXIES": ",".join(config.trusted_proxies),
        _ENV + "MAX_BODY_BYTES": str(config.max_body_bytes),
        _ENV + "DB_THREADS": str(config.db_threads or ""),
        _ENV + "HOT_PATH": "1" if config.hot_path else "0",
    }


def config_from_env(env: Any) -> WorkbenchConfig:
    proxies = [p for p in env.get(_ENV + "TRUSTED_PROXIES", "").split(",") if p.strip()]
    return WorkbenchConfig(
        db_url=env.get(_ENV + "DB", "sqlite:///labels.db"),
        secure_cookies=env.get(_ENV + "SECURE_COOKIES") == "1",
        policy=AuthPolicy(idle_minutes=int(env.get(_ENV + "IDLE_MINUTES", "480"))),
        trusted_proxies=tuple(proxies),
        max_body_bytes=int(env.get(_ENV + "MAX_BODY_BYTES", str(DEFAULT_MAX_BODY))),
        db_threads=int(env.get(_ENV + "DB_THREADS") or 0) or None,
        hot_path=env.get(_ENV + "HOT_PATH", "1") != "0",
        migrate=True,  # a no-op when current (`serve` migrates once before forking)
    )


def server_engines() -> dict[str, str]:
    """uvicorn's HTTP parser and event loop: httptools when installed (the workbench extra
    installs it; it halves the server's CPU per request), else the pure-Python h11 parser, which
    works the same, only slower. The loop is always asyncio's: uvloop runs due timers before it
    reads the sockets, so after a stall uvicorn's keep-alive timer could close a connection whose
    next request had already arrived (the 50-annotator load test saw resets)."""
    import importlib.util

    have_httptools = importlib.util.find_spec("httptools") is not None
    return {"http": "httptools" if have_httptools else "h11", "loop": "asyncio"}


def serve(config: WorkbenchConfig, *, host: str, port: int, workers: int = 1) -> None:
    """Run the app under uvicorn: one process, or `workers` processes sharing the port (each
    builds the app from the environment; the store is migrated once, here, first). Forwarding
    headers are never taken from uvicorn: the app reads X-Forwarded-For itself, and only from
    `config.trusted_proxies`."""
    import os

    import uvicorn

    if workers < 1:
        raise UsageError("--workers must be at least 1")
    common: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "access_log": False,
        "proxy_headers": False,
        **server_engines(),
    }
    if workers == 1:
        uvicorn.run(create_app(config), **common)
        return
    create_app(config)  # migrate once and fail early on a bad store, before forking
    os.environ.update(config_to_env(config))
    uvicorn.run("assay.workbench.app:app_from_env", factory=True, workers=workers, **common)


def _validation_response(errors: Sequence[Any], prefix: str) -> JSONResponse:
    """422 whose detail names the field of every problem ("payload.verdicts.correct: Input
    should be 'pass' or 'fail'"), and the same as a list under `errors`."""
    out: list[dict[str, Any]] = []
    parts: list[str] = []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ()) if x not in ("body",)]
        if prefix and (not loc or loc[0] != prefix):
            loc = [prefix, *loc]
        msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        where = ".".join(loc)
        out.append({"field": where or None, "message": msg})
        parts.append(f"{where}: {msg}" if where else msg)
    return JSONResponse({"detail": "; ".join(parts), "errors": out}, status_code=422)


def _type_of(schema: dict[str, Any]) -> str:
    """A short type for people: "integer (1 to 2147483647)", "pass | fail", "EvidencePayload"."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(str(x) for x in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type_of(x) for x in schema[key])
    t = str(schema.get("type", "any"))
    if t == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    if t == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type_of(schema['additionalProperties'])}"
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None or hi is not None:
        t += f" ({lo if lo is not None else '...'} to {hi if hi is not None else '...'})"
    if schema.get("maxLength") is not None:
        t += f" (at most {schema['maxLength']} characters)"
    return t


def _fields(schema: dict[str, Any], comps: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": _type_of(prop),
            "required": name in required,
            "default": prop.get("default"),
            "description": prop.get("description", ""),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def _duration(seconds: int) -> str:
    return f"{seconds} seconds" if seconds < 120 else f"{round(seconds / 60)} minutes"


def _safe_next(nxt: str) -> str:
    """Only same-site paths (no scheme, no //host) are followed after login."""
    return nxt if nxt.startswith("/") and not nxt.startswith("//") and "\\" not in nxt else "/"
