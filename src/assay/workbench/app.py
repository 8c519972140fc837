"""The workbench web app (FastAPI): server-rendered pages plus a small JSON API used by them.

Every route needs a logged-in session except the login page and static files. Every state
change is a POST and needs the session's CSRF token (form field `csrf_token` or header
`X-CSRF-Token`); no GET changes state. Pages carry a strict Content-Security-Policy (scripts only
from this server, no inline script), and all text is rendered escaped by Jinja2's autoescaping.

Before any route runs: a request body larger than `max_body_bytes` (default 1 MB) is refused
with 413 before it is read (by its Content-Length, or while it streams in), and a JSON API POST
must carry a live session and its CSRF token before its body is parsed. The client address (for
the login throttle) is the connection's peer; `X-Forwarded-For` (every line of it) is believed
only from the addresses in `trusted_proxies`. Served by `serve`, connections also have header
and body timeouts and a per-address cap (`assay.workbench.protect`).

The routes live in `assay.workbench.routes`, one router per concern; this module assembles
them with the middlewares, the exception handlers and the fast path of the two hot API calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay._io import too_long
from assay.errors import DataError, UsageError
from assay.workbench import service as svc
from assay.workbench.auth import (
    AuthPolicy,
    SessionInfo,
    csrf_ok,
    resolve_session,
    session_cache,
)
from assay.workbench.db import Database, StoreRefused
from assay.workbench.payloads import CRITERIA, FLAGS, ROOT_CAUSES
from assay.workbench.routes import ROUTERS
from assay.workbench.routes._web import (
    DEVICE_COOKIE,
    LOGIN_CSRF_COOKIE,
    MAX_ID,
    SESSION_COOKIE,
    LabelIn,
    LoginRequired,
    Web,
    client_address,
    networks,
)
from assay.workbench.sqlpool import SqlBusy, SqlLimits, configure_sql_pool

__all__ = [
    "DEVICE_COOKIE",
    "LOGIN_CSRF_COOKIE",
    "MAX_ID",
    "SESSION_COOKIE",
    "WorkbenchConfig",
    "app_from_env",
    "client_address",
    "config_from_env",
    "config_to_env",
    "create_app",
    "networks",
    "serve",
    "server_engines",
]

_HERE = Path(__file__).parent
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
    calls (claim, submit) per process, 2 on SQLite and 4 on PostgreSQL by default; `hot_path`:
    serve those two calls
    directly instead of through FastAPI's routing (the same answers, 1.13-1.21x the labels/s in
    `bench/bench_workbench_submit.py --compare-routing`; off only to compare);
    `header_timeout`, `body_timeout`, `max_per_address`: the server's connection limits
    (`assay.workbench.protect`; applied by `serve`, not by an app run some other way); `sql`:
    the bounds of SQL tasks' queries (`assay.workbench.sqlpool`)."""

    db_url: str = "sqlite:///labels.db"
    policy: AuthPolicy = field(default_factory=AuthPolicy)
    secure_cookies: bool = False  # set when served over HTTPS
    migrate: bool = True
    trusted_proxies: Sequence[str] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY
    db_threads: int | None = None  # None: 2 on SQLite, 4 on PostgreSQL (see create_app)
    hot_path: bool = True  # serve claim and submit outside FastAPI's routing (see _HotApi)
    # connection limits of the server (assay.workbench.protect), in seconds and connections
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_per_address: int = 100
    write_timeout: float = 30.0  # seconds a full send buffer may wait for the client to read
    max_pipelined: int = 32  # requests a connection may send ahead of their replies
    # the bounds of SQL tasks' queries: workers, per-user and server queues, memory, result size
    sql: SqlLimits = field(default_factory=SqlLimits)


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
        self.sessions = session_cache(db)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"].startswith("/api/")
            and scope["method"] not in ("GET", "HEAD")
        ):
            request = Request(scope)
            token = request.cookies.get(SESSION_COOKIE)
            # a session this process read lately: from memory (`auth.SessionCache`); else read
            # on SQLite on the event loop (one indexed read of a local file), on PostgreSQL on
            # the store threads: the read waits on the network, which must not stall the loop
            info = self.sessions.get(token, self.policy.session_cache_seconds)
            if info is None:
                info = await self.offload(resolve_session, self.db, token, self.policy, cached=True)
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
        try:  # json, not orjson: FastAPI's parser (orjson reads big integers otherwise)
            body = json.loads(raw)
        except RecursionError as exc:  # deeper than json goes: a bad body, as on other routes
            raise HTTPException(400, BODY_TOO_DEEP) from exc
        except UnicodeDecodeError as exc:
            where = raw[: exc.start].decode("utf-8", "replace")
            raise _json_invalid(where, len(where), f"not UTF-8 ({exc.reason})") from exc
        except json.JSONDecodeError as exc:
            raise _json_invalid(exc.doc, exc.pos, exc.msg, field=False) from exc
        except ValueError as exc:  # an integer of more digits than Python converts
            err = too_long(raw)
            raise _json_invalid(err.doc, err.pos, err.msg) from exc
    try:
        return LabelIn.model_validate(body, from_attributes=True)  # as FastAPI validates
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from exc


_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*-?\s*"?[^"]*$')


def _json_invalid(doc: str, pos: int, error: str, *, field: bool = True) -> RequestValidationError:
    """FastAPI's error for a body that does not decode at character `pos` of `doc`: without
    `field`, FastAPI's own words located at `pos` (a body FastAPI's routing refuses alike); with
    it, located at the field whose value it is in (where there is one) and saying why."""
    key = _KEY_BEFORE.search(doc[max(0, pos - 200) : pos]) if field else None
    return RequestValidationError(
        [
            {
                "type": "json_invalid",
                "loc": ("body", key.group(1) if key else pos),
                "msg": f"JSON decode error: {error}" if field else "JSON decode error",
                "input": {},
                "ctx": {"error": error},
            }
        ]
    )


BODY_TOO_DEEP = "There was an error parsing the body: its JSON is nested too deeply"


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


def create_app(config: WorkbenchConfig | None = None, *, db: Database | None = None) -> FastAPI:
    """Build the app over a store (migrated to the newest schema unless config.migrate is off):
    the routers of `assay.workbench.routes`, its exception handlers and its middlewares."""
    config = config or WorkbenchConfig()
    db = db or Database(config.db_url)
    if config.migrate:
        db.migrate()
    threads = config.db_threads or (4 if db.dialect == "postgresql" else 2)
    if threads < 1:
        raise UsageError("db_threads must be at least 1")
    # The hot API calls (claim a task, submit a label, and on PostgreSQL the session read) run
    # their store work on this small pool (on SQLite only when another writer holds the store),
    # not on the 40-thread default one: requests wait their turn in arrival order (the pool's
    # queue is FIFO) instead of racing for the store and the GIL, which made the tail under
    # load. On PostgreSQL a label's commit holds its thread while the WAL is flushed (3-5 ms
    # on this disk), so with 2 threads the flushes alone filled about one thread at 200
    # annotators; 4 threads gave 1.4-2x the labels/s of 2 there (docs/workbench.md).
    db_pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="assay-db")
    configure_sql_pool(config.sql)
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    templates.env.globals.update(CRITERIA=CRITERIA, FLAGS=FLAGS, ROOT_CAUSES=ROOT_CAUSES)
    web = Web(
        db=db,
        policy=config.policy,
        trusted=networks(config.trusted_proxies),
        secure_cookies=config.secure_cookies,
        templates=templates,
        db_pool=db_pool,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        refusals = None
        if _protected():  # served by `serve`: refused accepts are one log line per interval
            from assay.workbench.protect import GuardedHttpProtocol, install_accept_log

            refusals = GuardedHttpProtocol.refusals
            install_accept_log(asyncio.get_running_loop(), refusals)
        yield
        if refusals is not None:
            refusals.flush()  # what the last interval refused
        db_pool.shutdown(wait=True)

    app = FastAPI(
        title="assay workbench", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.db = db
    app.state.web = web
    _add_exception_handlers(app, templates)
    # outermost first: security headers on every answer, then the body limit, then the API
    # guard, then the direct path of the two hot calls
    if config.hot_path:
        app.add_middleware(
            _HotApi,
            claim=web.claim_response,
            submit=web.submit_response,
            handlers=app.exception_handlers,  # the handlers registered above, by reference
        )
    app.add_middleware(_ApiGuard, db=db, policy=config.policy, offload=web.in_db)
    app.add_middleware(_BodyLimit, limit=config.max_body_bytes)
    app.add_middleware(_Headers)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")
    for router in ROUTERS:
        app.include_router(router)
    return app


def _add_exception_handlers(app: FastAPI, templates: Jinja2Templates) -> None:
    """How errors answer: 401 or a redirect to the login page for a missing session, JSON for
    the API and every POST, an error page for a page, 422 naming each invalid field."""

    @app.exception_handler(LoginRequired)
    async def _login_required(request: Request, exc: LoginRequired) -> Response:
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

    @app.exception_handler(StarletteHTTPException)
    async def _body_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
            # FastAPI's body parser answers any failure to parse with a bare 400: say which
            return JSONResponse({"detail": BODY_TOO_DEEP}, status_code=400)
        return await http_exception_handler(request, exc)  # FastAPI's own answer

    @app.exception_handler(svc.NotFound)
    async def _not_found(request: Request, exc: svc.NotFound) -> Response:
        return JSONResponse({"detail": "not found"}, status_code=404)

    @app.exception_handler(svc.Conflict)
    async def _conflict(request: Request, exc: svc.Conflict) -> Response:
        return await _http_error(request, HTTPException(409, str(exc)))

    @app.exception_handler(StoreRefused)
    async def _store_refused(request: Request, exc: StoreRefused) -> Response:
        if exc.unavailable:  # a full disk: the server's state, not the request's
            return JSONResponse(
                {"detail": str(exc)}, status_code=503, headers={"Retry-After": "30"}
            )
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(SqlBusy)
    async def _sql_busy(request: Request, exc: SqlBusy) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=429, headers={"Retry-After": "5"})

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


def app_from_env() -> FastAPI:
    """App factory for process managers (`uvicorn --factory assay.workbench.app:app_from_env`,
    several workers): the configuration comes from ASSAY_WORKBENCH_DB, _SECURE_COOKIES,
    _IDLE_MINUTES, _TRUSTED_PROXIES (comma-separated) and _MAX_BODY_BYTES. Run uvicorn with
    `--no-proxy-headers`: the app reads X-Forwarded-For itself, from trusted proxies only."""
    import os

    config = config_from_env(os.environ)
    _protect(config)
    app = create_app(config)
    _server_gc()
    return app


def _server_gc() -> None:
    """Set a server process's garbage collector for request traffic, once its app is built:
    what exists now is collected and then frozen (full collections no longer walk the loaded
    modules and the app), and a young collection waits for 10,000 new objects instead of 700.
    A request's objects are freed by their reference counts; the collector only looks for
    cycles, and at 700 it ran after every few requests: 6% of the server's CPU at 200
    annotators on PostgreSQL (0.35 s of collections in 4,000 labels, 0.004 s after;
    docs/workbench.md#speed)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


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
        _ENV + "HEADER_TIMEOUT": str(config.header_timeout),
        _ENV + "BODY_TIMEOUT": str(config.body_timeout),
        _ENV + "MAX_PER_ADDRESS": str(config.max_per_address),
        _ENV + "WRITE_TIMEOUT": str(config.write_timeout),
        _ENV + "MAX_PIPELINED": str(config.max_pipelined),
        _ENV + "SQL": json.dumps(asdict(config.sql)),
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
        header_timeout=float(env.get(_ENV + "HEADER_TIMEOUT", "10")),
        body_timeout=float(env.get(_ENV + "BODY_TIMEOUT", "30")),
        max_per_address=int(env.get(_ENV + "MAX_PER_ADDRESS", "100")),
        write_timeout=float(env.get(_ENV + "WRITE_TIMEOUT", "30")),
        max_pipelined=int(env.get(_ENV + "MAX_PIPELINED", "32")),
        sql=SqlLimits(**json.loads(env.get(_ENV + "SQL") or "{}")),
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
    engines = server_engines()
    if engines["http"] == "httptools":
        engines["http"] = "assay.workbench.protect:GuardedHttpProtocol"
    common: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "access_log": False,
        "proxy_headers": False,
        # idle keep-alive connections close after the header timeout (h11 too)
        "timeout_keep_alive": max(1, round(config.header_timeout)),
        **engines,
    }
    _protect(config)
    if workers == 1:
        app = create_app(config)
        _server_gc()
        uvicorn.run(app, **common)
        return
    create_app(config)  # migrate once and fail early on a bad store, before forking
    os.environ.update(config_to_env(config))
    uvicorn.run("assay.workbench.app:app_from_env", factory=True, workers=workers, **common)


def _protect(config: WorkbenchConfig) -> None:
    """Set this process's connection limits (when httptools serves: see `server_engines`)."""
    if config.header_timeout <= 0 or config.body_timeout <= 0:
        raise UsageError("--header-timeout and --body-timeout must be positive")
    if config.max_per_address < 1:
        raise UsageError("--max-per-address must be at least 1")
    if config.write_timeout <= 0 or config.max_pipelined < 1:
        raise UsageError("--write-timeout must be positive and --max-pipelined at least 1")
    if server_engines()["http"] != "httptools":
        return
    from assay.workbench.protect import ConnectionLimits, GuardedHttpProtocol

    GuardedHttpProtocol.configure(
        ConnectionLimits(
            header_timeout=config.header_timeout,
            body_timeout=config.body_timeout,
            max_per_address=config.max_per_address,
            write_timeout=config.write_timeout,
            max_pipelined=config.max_pipelined,
            trusted=tuple(config.trusted_proxies),
        )
    )
    global _PROTECTED
    _PROTECTED = True


_PROTECTED = False


def _protected() -> bool:
    return _PROTECTED


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
