"""Bodies the JSON write routes cannot read as text or as numbers (issue 40): a body that is not
UTF-8, and an integer of more digits than Python converts (4,300), anywhere a route reads JSON
-- labels, flags, guidelines, adjudications, a SQL run. Each is a 4xx naming the body (and the
field where there is one), never a 500; nothing is stored and the server keeps answering."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.workbench.db import Database
from assay.workbench.models import Flag, Label

HUGE = b"1" * 5000
ROUTES = ["/api/labels", "/api/flags", "/api/guidelines", "/api/adjudications"]


def _bodies() -> dict[str, bytes]:
    return {
        "not UTF-8": b'{"task_id": 1, "payload": {"answer": "\xff\xfe"}, "client_id": "c"}',
        "latin-1 text": '{"task_id": 1, "note": "caf\u00e9", "client_id": "c"}'.encode("latin-1"),
        "huge task id": b'{"task_id": ' + HUGE + b', "payload": {}, "client_id": "c"}',
        "huge value": b'{"task_id": 1, "payload": {"n": ' + HUGE + b'}, "client_id": "c"}',
        "huge negative": b'{"task_id": -' + HUGE + b', "payload": {}, "client_id": "c"}',
    }


@pytest.mark.parametrize("route", ROUTES)
def test_an_unreadable_body_value_is_a_4xx_naming_the_body(
    login: Any, db: Database, route: str
) -> None:
    who = "adjudicator" if route in ("/api/guidelines", "/api/adjudications") else "ana"
    client, csrf = login(who)
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    for name, body in _bodies().items():
        r = client.post(route, content=body, headers=headers)
        assert r.status_code in (400, 422), (route, name, r.status_code, r.text[:300])
        named = r.status_code == 422 and r.json()["errors"][0]["field"]  # the field, or:
        assert named or "body" in r.text.lower(), (route, name, r.text[:300])
        assert "internal" not in r.text.lower(), (route, name, r.text[:300])
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Label)) == 0
        assert s.scalar(select(func.count()).select_from(Flag)) == 0
    assert client.get("/api/me").status_code == 200


def test_a_huge_int_names_its_field_on_labels(login: Any) -> None:
    client, csrf = login("ana")
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    r = client.post("/api/labels", content=_bodies()["huge task id"], headers=headers)
    assert r.status_code == 422, r.text[:300]
    (err,) = r.json()["errors"]
    assert err["field"] == "task_id" and "more than 4,300 digits" in err["message"], err
    r = client.post("/api/labels", content=_bodies()["not UTF-8"], headers=headers)
    assert r.status_code == 422, r.text[:300]
    (err,) = r.json()["errors"]
    assert err["field"] == "answer" and "not UTF-8" in err["message"], err


def test_an_unreadable_sql_run_body_is_a_4xx(login: Any) -> None:
    client, csrf = login("ana")
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    for body in (b'{"sql": "SELECT \xff"}', b'{"sql": "SELECT 1", "limit": ' + HUGE + b"}"):
        r = client.post("/api/tasks/1/sql/run", content=body, headers=headers)
        assert r.status_code in (400, 404, 422), (r.status_code, r.text[:300])
        assert "internal" not in r.text.lower()
