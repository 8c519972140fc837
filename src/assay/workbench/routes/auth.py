"""Logging in and out: the login page, the login form (throttled per account, address and
device), logout, and `GET /api/me`."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.workbench.auth import (
    LoginRateLimited,
    authenticate,
    csrf_ok,
    device_token,
    end_session,
    start_session,
)
from assay.workbench.routes._web import (
    DEVICE_COOKIE,
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    Web,
    refuse_bad_text,
    web,
)

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/", error: str = "") -> Response:
    w = web(request)
    token = secrets.token_urlsafe(24)
    resp = w.page(request, "login.html", None, login_csrf=token, next=safe_next(next), error=error)
    resp.set_cookie(
        LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=w.secure_cookies
    )
    return resp


@router.post("/login")
async def login(request: Request) -> Response:
    w = web(request)
    form = await request.form()
    username, password = str(form.get("username", "")), str(form.get("password", ""))
    nxt = safe_next(str(form.get("next", "/")))
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not cookie or not csrf_ok(cookie, str(form.get("csrf_token", ""))):
        raise HTTPException(403, "missing or wrong CSRF token")
    refuse_bad_text((("username", username), ("password", password)))
    ip = w.client_ip(request)
    device = request.cookies.get(DEVICE_COOKIE)
    try:
        user = await run_in_threadpool(authenticate, w.db, username, password, ip, w.policy, device)
    except LoginRateLimited as exc:
        wait = max(1, round(exc.retry_after))
        resp = _relogin(
            w, request, f"Too many failed attempts; try again in {_duration(wait)}.", 429
        )
        resp.headers["Retry-After"] = str(wait)
        return resp
    if user is None:
        return _relogin(w, request, "Wrong username or password.", 401)
    token, _csrf = await run_in_threadpool(start_session, w.db, user.id, w.policy)
    resp = RedirectResponse(nxt, status_code=303)
    resp.set_cookie(
        DEVICE_COOKIE,
        await run_in_threadpool(device_token, w.db, user.username),
        httponly=True,
        samesite="strict",
        secure=w.secure_cookies,
        max_age=180 * 24 * 3600,
    )
    resp.set_cookie(
        SESSION_COOKIE,
        token,
        httponly=True,
        samesite="lax",
        secure=w.secure_cookies,
        max_age=w.policy.max_hours * 3600,
    )
    resp.delete_cookie(LOGIN_CSRF_COOKIE)
    return resp


def _relogin(w: Web, request: Request, error: str, status: int) -> Response:
    token = secrets.token_urlsafe(24)
    resp = w.page(request, "login.html", None, login_csrf=token, next="/", error=error)
    resp.status_code = status
    resp.set_cookie(
        LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=w.secure_cookies
    )
    return resp


@router.post("/logout")
async def logout(request: Request) -> Response:
    w = web(request)
    await w.checked(request)
    await run_in_threadpool(end_session, w.db, request.cookies.get(SESSION_COOKIE))
    resp = RedirectResponse("/login", status_code=303)
    resp.delete_cookie(SESSION_COOKIE)
    return resp


@router.get("/api/me")
def api_me(request: Request) -> dict[str, Any]:
    info = web(request).session_of(request)
    u = info.user
    return {"username": u.username, "role": u.role, "domains": u.domains, "csrf": info.csrf}


def _duration(seconds: int) -> str:
    return f"{seconds} seconds" if seconds < 120 else f"{round(seconds / 60)} minutes"


def safe_next(nxt: str) -> str:
    """Only same-site paths (no scheme, no //host) are followed after login."""
    return nxt if nxt.startswith("/") and not nxt.startswith("//") and "\\" not in nxt else "/"
