"""The direct path of the two hot API calls (`POST /api/next/{kind}`, `POST /api/labels`) answers
exactly as FastAPI's routing does, for good requests and for every kind of bad one, and is the
path actually taken (FastAPI's router never sees those calls)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.workbench.app import MAX_ID, WorkbenchConfig, create_app
from assay.workbench.db import Database

from .conftest import judge_payload, login_client

_CT = "content-type"


def _cases(task: int, other_task: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, path, request arguments): every answer below must be the same on both paths."""
    good = {"task_id": task, "payload": judge_payload(), "client_id": "c-1"}
    raw_json = {_CT: "application/json"}
    return [
        ("label", "/api/labels", {"json": good}),
        ("retry of the same label", "/api/labels", {"json": good}),
        ("revision", "/api/labels", {"json": good | {"client_id": "c-2", "seconds": 12.5}}),
        ("client id of another task", "/api/labels", {"json": good | {"client_id": "first"}}),
        ("revising my other task", "/api/labels", {"json": good | {"task_id": other_task}}),
        (
            "bad verdict",
            "/api/labels",
            {"json": good | {"payload": judge_payload(x="maybe"), "client_id": "c-7"}},
        ),
        (
            "bad verdict value",
            "/api/labels",
            {
                "json": good
                | {
                    "payload": {"verdicts": {"correct": "maybe"}, "critiques": {}},
                    "client_id": "c3",
                }
            },
        ),
        ("payload not an object", "/api/labels", {"json": good | {"payload": [1, 2]}}),
        ("missing task id", "/api/labels", {"json": {"payload": {}, "client_id": "c-4"}}),
        ("task id 0", "/api/labels", {"json": good | {"task_id": 0}}),
        ("task id past 32 bits", "/api/labels", {"json": good | {"task_id": MAX_ID + 1}}),
        ("task id a string", "/api/labels", {"json": good | {"task_id": "seven"}}),
        ("20-digit task id", "/api/labels", {"json": good | {"task_id": 10**20}}),
        ("client id too long", "/api/labels", {"json": good | {"client_id": "x" * 65}}),
        ("empty client id", "/api/labels", {"json": good | {"client_id": ""}}),
        ("negative seconds", "/api/labels", {"json": good | {"seconds": -1}}),
        ("not my task", "/api/labels", {"json": good | {"task_id": MAX_ID, "client_id": "c-5"}}),
        ("a list", "/api/labels", {"content": b"[1, 2]", "headers": raw_json}),
        ("a string", "/api/labels", {"content": b'"label"', "headers": raw_json}),
        ("broken JSON", "/api/labels", {"content": b'{"task_id": 1,', "headers": raw_json}),
        ("no body", "/api/labels", {"headers": raw_json}),
        ("no content type", "/api/labels", {"content": json.dumps(good).encode()}),
        (
            "text/plain",
            "/api/labels",
            {"content": json.dumps(good).encode(), "headers": {_CT: "text/plain"}},
        ),
        (
            "a +json type",
            "/api/labels",
            {
                "content": json.dumps(good | {"client_id": "c-6"}).encode(),
                "headers": {_CT: "application/vnd.api+json; charset=utf-8"},
            },
        ),
        # bodies orjson refuses and json takes: the hot path's parser must fall back to json
        (
            "a lone surrogate in a critique",
            "/api/labels",
            {
                "content": json.dumps(
                    good | {"payload": judge_payload() | {"critiques": {"policy": "\ud800"}}}
                ).encode(),
                "headers": raw_json,
            },
        ),
        (
            "NaN seconds",
            "/api/labels",
            {
                "content": json.dumps(
                    good | {"seconds": float("nan"), "client_id": "c-8"}
                ).encode(),
                "headers": raw_json,
            },
        ),
        ("claim", "/api/next/judge", {}),
        ("claim of a kind with no task", "/api/next/evidence", {}),
        ("unknown kind", "/api/next/nonsense", {}),
        ("no kind", "/api/next/", {}),
        ("deeper path", "/api/next/judge/more", {}),
        ("trailing slash", "/api/labels/", {"json": good}),
    ]


def _normal(body: Any) -> Any:
    """An answer with the ids that differ between two users' tasks blanked out."""
    if isinstance(body, dict):
        return {k: "<id>" if k in ("label_id", "task_id", "url") else v for k, v in body.items()}
    return body


def _run(app: Any, username: str) -> tuple[list[tuple[str, int, Any]], int]:
    c, csrf = login_client(app, username)
    with c:
        h = {"X-CSRF-Token": csrf}
        task = c.post("/api/next/judge", headers=h).json()["task_id"]
        # a second claimed task, to reuse a client id across tasks
        c.post(
            "/api/labels",
            headers=h,
            json={"task_id": task, "payload": judge_payload(), "client_id": "first"},
        )
        other = c.post("/api/next/judge", headers=h).json()["task_id"]
        assert task and other and task != other
        out = []
        for name, path, kw in _cases(other, task):
            headers = h | kw.pop("headers", {})
            r = c.post(path, headers=headers, follow_redirects=False, **kw)
            try:
                body: Any = r.json()
            except ValueError:
                body = r.text
            out.append((name, r.status_code, _normal(body)))
        # the guard still comes first on the direct path
        out.append(("no CSRF token", c.post("/api/labels", json={}).status_code, None))
        out.append(("no session", TestClient(app).post("/api/next/judge").status_code, None))
        return out, other


def test_the_direct_path_answers_exactly_as_fastapi_routing(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    routed = create_app(WorkbenchConfig(db_url=db.url, migrate=False, hot_path=False), db=db)
    seen: list[str] = []
    inner = direct.router.middleware_stack

    async def spy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(f"{scope['method']} {scope['path']}")
        await inner(scope, receive, send)

    direct.router.middleware_stack = spy
    got, _ = _run(direct, "ana")
    want, _ = _run(routed, "ben")
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g == w, g[0]
    statuses = {name: status for name, status, _ in got}
    assert statuses["label"] == 200 and statuses["retry of the same label"] == 200
    assert statuses["bad verdict"] == 422 and statuses["broken JSON"] == 422
    assert statuses["not my task"] == 404 and statuses["client id of another task"] == 409
    assert statuses["unknown kind"] == 404 and statuses["no session"] == 401
    assert statuses["a lone surrogate in a critique"] == 422 and statuses["NaN seconds"] == 422
    assert statuses["no CSRF token"] == 403
    details = {name: body for name, _, body in got}
    assert details["missing task id"]["detail"] == "task_id: Field required"
    assert details["bad verdict value"]["detail"].startswith("payload.verdicts.correct: ")
    # FastAPI's router saw none of the hot calls the direct path served, only what it passes on
    hot = [s for s in seen if s in ("POST /api/labels", "POST /api/next/judge")]
    assert not hot, hot
    assert "POST /api/next/" in seen and "POST /api/labels/" in seen


def test_the_api_docs_still_describe_the_hot_calls(db: Database) -> None:
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    c, _csrf = login_client(app, "ana")
    with c:
        paths = c.get("/api/openapi.json").json()["paths"]
    assert "post" in paths["/api/labels"] and "post" in paths["/api/next/{kind}"]


@pytest.mark.parametrize(
    "content",
    [
        {"task_id": 7, "url": "/task/7"},
        {"task_id": None, "url": None},
        {"label_id": 3, "created": True, "feedback": {"gold": {"q": "Ünïcode — 10-K", "n": 1.5}}},
        {"gold": {"big": 10**20}},  # past 64 bits: orjson cannot, JSONResponse writes it
    ],
)
def test_the_hot_answers_are_the_bytes_json_response_writes(content: Any) -> None:
    from fastapi.responses import JSONResponse

    from assay.workbench.routes._web import HotJSONResponse

    hot, plain = HotJSONResponse(content), JSONResponse(content)
    assert hot.body == plain.body
    assert hot.headers["content-type"] == plain.headers["content-type"]
