"""Text fields (issue 40): a lone surrogate ("\\ud800" in JSON) or a NUL in any text is refused with
422 naming the field, on every write route and in every importer, on both stores, and nothing
is stored (the task, its labels and its adjudication page keep answering 200). A write the
store refuses says so in one line, never with the SQL statement or its parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from assay.errors import DataError
from assay.workbench import service as svc
from assay.workbench.db import Database, StoreRefused
from assay.workbench.models import Flag, GuidelineVersion, Label

from .conftest import judge_payload

BAD = ("\ud800", "\x00", "\udfff tail")


def _post(client: TestClient, path: str, body: dict[str, Any], csrf: str) -> Any:
    """POST JSON written with ASCII escapes, as a browser's JSON.stringify sends a lone
    surrogate ("\\ud800")."""
    return client.post(
        path,
        content=json.dumps(body),
        headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"},
    )


@pytest.mark.parametrize("bad", BAD)
def test_every_json_write_route_refuses_bad_text_naming_the_field(
    login: Any, db: Database, bad: str
) -> None:
    ana, csrf = login("ana")
    judge = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    ev = ana.post("/api/next/evidence", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    item = ana.get(f"/api/tasks/{judge}").json()["item"]["id"]
    critique = judge_payload(correct="wrong figure " + bad)
    cases = [
        ("/api/labels", {"task_id": judge, "payload": critique, "client_id": "c1"}, "correct"),
        (
            "/api/labels",
            {"task_id": ev, "payload": {"paths": [], "note": bad}, "client_id": "c2"},
            "note",
        ),
        ("/api/labels", {"task_id": ev, "payload": {"paths": []}, "client_id": bad}, "client_id"),
        ("/api/flags", {"item_id": item, "flag": "not_my_domain", "note": bad}, "note"),
        ("/api/flags", {"item_id": item + bad, "flag": "not_my_domain"}, "item_id"),
    ]
    for path, body, field in cases:
        r = _post(ana, path, body, csrf)
        assert r.status_code == 422, (path, field, r.text)
        assert field in r.json()["detail"], (field, r.json())
    adj, adj_csrf = login("adjudicator")
    r = _post(adj, "/api/guidelines", {"text": "Rule " + bad, "change": "x"}, adj_csrf)
    assert r.status_code == 422 and "text" in r.json()["detail"]
    r = _post(
        adj,
        "/api/adjudications",
        {"task_id": judge, "payload": judge_payload(), "root_cause": "ambiguous_item", "note": bad},
        adj_csrf,
    )
    assert r.status_code == 422 and "note" in r.json()["detail"]
    # nothing was stored, and every page of the task still answers
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Label)) == 0
        assert s.scalar(select(func.count()).select_from(Flag)) == 0
        assert s.scalar(select(func.count()).select_from(GuidelineVersion)) <= 1
    for path in (f"/api/tasks/{judge}", f"/task/{judge}", f"/api/tasks/{judge}/labels"):
        assert ana.get(path).status_code == 200


def test_every_form_refuses_nul_naming_the_field(login: Any) -> None:
    admin, csrf = login("admin")

    def post(path: str, body: str) -> Any:
        return admin.post(
            path,
            content=body + "&csrf_token=" + csrf,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            follow_redirects=False,
        )

    r = post("/admin/users", "username=eve%00&password=tulip-basin-4821&role=annotator")
    assert r.status_code == 422 and "username" in r.text
    r = post("/admin/users/access", "username=ana&groups=deal%3A%00&clearance=public")
    assert r.status_code == 422 and "groups" in r.text
    r = post("/session/start", "kind=judge&minutes=50&note=%00")
    assert r.status_code == 422 and "note" in r.text


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["\ud800", "\x00"])
def test_every_importer_refuses_bad_text_naming_line_and_field(
    db: Database, tmp_path: Path, bad: str
) -> None:
    chunks = [
        {"chunk_id": "d1#1", "doc_id": "d1", "page": 1, "text": "fine"},
        {"chunk_id": "d1#2" + bad, "doc_id": "d1", "page": 1, "text": "id"},
    ]
    with pytest.raises(DataError) as err:
        svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", chunks))
    (p,) = err.value.problems
    assert (p.line, p.field) == (2, "chunk_id")
    chunks[1] = {"chunk_id": "d1#2", "doc_id": "d1", "page": 1, "text": "t", "section": [bad]}
    with pytest.raises(DataError) as err:
        svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", chunks))
    assert err.value.problems[0].field == "section[0]"
    entries = [{"id": "q1", "query": "What " + bad + "?", "category": "numeric"}]
    with pytest.raises(DataError) as err:
        svc.import_entries(db, _jsonl(tmp_path / "e.jsonl", entries))
    assert err.value.problems[0].field == "query"
    run = [{"id": "demo-001", "answer": "It is " + bad, "retrieved": []}]
    with pytest.raises(DataError) as err:
        svc.import_run(db, _jsonl(tmp_path / "r.jsonl", run))
    assert (err.value.problems[0].line, err.value.problems[0].field) == (1, "answer")


def test_huge_chunks_are_refused_and_store_errors_never_print_sql(
    db: Database, tmp_path: Path
) -> None:
    big = [{"chunk_id": "d1#1", "doc_id": "d1", "page": 1, "text": "x" * 1_000_001}]
    with pytest.raises(DataError, match="longer than 1,000,000 characters"):
        svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", big))
    long_id = [{"chunk_id": "d1#" + "9" * 400, "doc_id": "d1", "page": 1, "text": "t"}]
    with pytest.raises(DataError, match="chunk_id"):
        svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", long_id))
    # a value the store refuses (PostgreSQL: longer than its column): one line, no SQL
    docs = [{"doc_id": "d1", "company": "C" * 300, "form": "10-K", "fiscal_year": 2023}]
    ok = [{"chunk_id": "d1#1", "doc_id": "d1", "page": 1, "text": "t"}]
    try:
        svc.import_corpus(db, _jsonl(tmp_path / "c.jsonl", ok), _jsonl(tmp_path / "d.jsonl", docs))
    except StoreRefused as exc:
        assert db.dialect == "postgresql"
        text = str(exc)
        assert "value too long" in text and "\n" not in text
        assert not re.search(r"INSERT|UPDATE|\[parameters|CCCCCCCC", text), text
    else:
        assert db.dialect == "sqlite"  # SQLite stores any length
