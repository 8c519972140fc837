"""Accounts, sessions, CSRF, rate limit, expiry: every route but login needs a session."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update

from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.auth import AuthPolicy, hash_password, verify_password
from assay.workbench.db import Database
from assay.workbench.models import AuthSession
from assay.workbench.routes import ROUTERS

from .conftest import JUDGE_PASS, login_client


def test_passwords_are_argon2id_hashes() -> None:
    h = hash_password("correct horse battery", fast=True)
    assert h.startswith("$argon2id$")
    assert verify_password(h, "correct horse battery")
    assert not verify_password(h, "wrong horse battery")
    assert not verify_password("not a hash", "x")


def test_every_route_but_login_requires_a_session(app: Any) -> None:
    c = TestClient(app)
    public = {"/login", "/static"}
    checked = 0
    # the app's own routes and every router's (FastAPI includes routers as one entry each)
    routes = [r for r in app.routes if isinstance(getattr(r, "path", None), str)]
    routes += [r for router in ROUTERS for r in router.routes]
    assert len({getattr(r, "path", "") for r in routes}) >= 25
    for route in routes:
        path = getattr(route, "path", "")
        if path in public or path.startswith("/static"):
            continue
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        for method in sorted(getattr(route, "methods", None) or ["GET"]):
            if method == "HEAD":
                continue
            r = c.request(method, concrete, follow_redirects=False)
            checked += 1
            if path.startswith("/api/"):
                # JSON bodies are parsed first: a body error may answer before the session check,
                # but never with data.
                assert r.status_code in (401, 422), (method, path, r.status_code)
                if method == "GET":
                    assert r.status_code == 401
            elif method == "GET":
                assert r.status_code == 303 and r.headers["location"].startswith("/login"), path
            else:
                assert r.status_code in (303, 401, 403), (method, path, r.status_code)
    assert checked >= 20


def test_login_needs_login_csrf_token(app: Any) -> None:
    c = TestClient(app)
    c.get("/login")
    r = c.post(
        "/login", data={"username": "ana", "password": "ana-demo-pw"}, follow_redirects=False
    )
    assert r.status_code == 403


def test_wrong_password_then_rate_limit(app: Any) -> None:
    c = TestClient(app)
    for i in range(6):
        page = c.get("/login").text
        tok = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert tok
        r = c.post(
            "/login",
            data={"username": "ana", "password": f"bad-{i}", "csrf_token": tok.group(1)},
            follow_redirects=False,
        )
        assert r.status_code == (401 if i < 5 else 429), (i, r.status_code)
    # even the right password is refused while the limit holds
    page = c.get("/login").text
    tok = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert tok
    r = c.post(
        "/login",
        data={"username": "ana", "password": "ana-demo-pw", "csrf_token": tok.group(1)},
        follow_redirects=False,
    )
    assert r.status_code == 429
    assert "Too many" in r.text


def test_state_changes_need_the_session_csrf_token(app: Any, login: Any) -> None:
    c, csrf = login("ana")
    nxt = c.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()
    body = {"task_id": nxt["task_id"], "payload": JUDGE_PASS, "client_id": "a"}
    assert c.post("/api/labels", json=body).status_code == 403
    assert c.post("/api/labels", json=body, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert c.post("/api/labels", json=body, headers={"X-CSRF-Token": csrf}).status_code == 200
    # form posts too
    assert c.post("/logout", data={}, follow_redirects=False).status_code == 403
    r = c.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303
    assert c.get("/api/me").status_code == 401


def test_sessions_expire(db: Database) -> None:
    app = create_app(WorkbenchConfig(db_url=db.url, policy=AuthPolicy(idle_minutes=30)), db=db)
    c, _ = login_client(app, "ana")
    assert c.get("/api/me").json()["username"] == "ana"
    with db.write() as s:
        s.execute(
            update(AuthSession).values(
                expires_at=dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
            )
        )
    assert c.get("/api/me").status_code == 401
    assert c.get("/", follow_redirects=False).headers["location"].startswith("/login")


def test_roles_gate_pages(app: Any, login: Any) -> None:
    ana, _ = login("ana")
    assert ana.get("/adjudicate").status_code == 403
    assert ana.get("/api/agreement").status_code == 403
    assert ana.get("/admin").status_code == 403
    adj, _ = login("adjudicator")
    assert adj.get("/adjudicate").status_code == 200
    assert adj.get("/admin").status_code == 403
    admin, csrf = login("admin")
    assert admin.get("/admin").status_code == 200
    r = admin.post(
        "/admin/users",
        data={
            "csrf_token": csrf,
            "username": "cleo",
            "password": "Ledger-Otter-Quarry-9",
            "role": "annotator",
        },
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert "cleo" in admin.get("/admin").text


def test_login_redirect_stays_on_site(app: Any) -> None:
    c = TestClient(app)
    page = c.get("/login?next=//evil.example/x").text
    assert 'name="next" value="/"' in page


def test_security_headers(app: Any, login: Any) -> None:
    c, _ = login("ana")
    r = c.get("/")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["cache-control"] == "no-store"
    cookie = c.cookies.get("assay_session")
    assert cookie and len(cookie) > 30


def test_forbidden_pages_render_html_and_unknown_tasks_404(app: Any, login: Any) -> None:
    ana, _ = login("ana")
    r = ana.get("/agreement")
    assert r.status_code == 403 and "text/html" in r.headers["content-type"]
    assert "adjudicator role" in r.text
    assert ana.get("/task/999999").status_code == 404
    assert ana.get("/api/agreement").json()["detail"]
