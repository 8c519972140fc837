"""Deeply nested JSON (issue 40): a body nested far past any parser's depth is a bad body, on
every route that parses a JSON body (labels, flags, adjudications, guidelines, SQL runs, the
claim of a task), answered 400 naming the body, on both stores; nothing is stored and the
server keeps answering. An importer reading JSON lines names the file and line of such a line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from assay._io import iter_jsonl, iter_jsonl_lenient, loads_line
from assay.errors import DataError, Problem
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import Flag, GuidelineVersion, Label

DEEP = 100_000


def _nested(depth: int, inner: bytes = b"1") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def _bodies() -> dict[str, bytes]:
    # a deep value where the route reads a field, and a deep body as a whole
    return {
        "whole body": _nested(DEEP),
        "deep field": b'{"task_id": 1, "payload": ' + _nested(DEEP) + b', "client_id": "c"}',
    }


ROUTES = ["/api/labels", "/api/flags", "/api/guidelines", "/api/adjudications"]


@pytest.mark.parametrize("route", ROUTES)
def test_a_deeply_nested_body_is_a_bad_body_on_every_json_route(
    login: Any, db: Database, route: str
) -> None:
    who = "adjudicator" if route in ("/api/guidelines", "/api/adjudications") else "ana"
    client, csrf = login(who)
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    for name, body in _bodies().items():
        r = client.post(route, content=body, headers=headers)
        assert r.status_code == 400, (route, name, r.status_code, r.text[:300])
        assert "body" in r.text.lower(), (route, name, r.text[:300])
        assert "nested too deeply" in r.text, (route, name, r.text[:300])
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Label)) == 0
        assert s.scalar(select(func.count()).select_from(Flag)) == 0
        assert s.scalar(select(func.count()).select_from(GuidelineVersion)) <= 1
    assert client.get("/api/me").status_code == 200  # the server keeps answering


def test_a_deeply_nested_sql_run_body_is_a_bad_body(login: Any) -> None:
    client, csrf = login("ana")
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    r = client.post("/api/tasks/1/sql/run", content=_nested(DEEP), headers=headers)
    assert r.status_code == 400, r.text[:300]
    assert "body" in r.text.lower()


@pytest.mark.parametrize("depth", [50, 900])
def test_a_nested_payload_json_reads_is_validated_not_crashed(login: Any, depth: int) -> None:
    # a depth json parses reaches the payload's validation (which walks it): an answer, not 500
    ana, csrf = login("ana")
    ev = ana.post("/api/next/evidence", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    for payload in (
        b'{"paths": ' + _nested(depth) + b"}",
        b'{"paths": [], "x": ' + _nested(depth) + b"}",
    ):
        body = b'{"task_id": %d, "payload": %s, "client_id": "c"}' % (ev, payload)
        r = ana.post("/api/labels", content=body, headers=headers)
        assert r.status_code in (400, 422), (depth, r.status_code, r.text[:300])
    adj, adj_csrf = login("adjudicator")
    body = b'{"task_id": %d, "payload": {"verdicts": %s}, "root_cause": "ambiguous_item"}' % (
        ev,
        _nested(depth),
    )
    r = adj.post(
        "/api/adjudications",
        content=body,
        headers={"X-CSRF-Token": adj_csrf, "Content-Type": "application/json"},
    )
    assert r.status_code in (400, 404, 409, 422), (depth, r.status_code, r.text[:300])


def test_a_deeply_nested_json_line_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n' + _nested(DEEP) + b"\n" + b'{"b": 2}\n')
    with pytest.raises(DataError) as exc:
        list(iter_jsonl(path))
    assert exc.value.problems[0].line == 2 and "nested too deeply" in str(exc.value)
    assert str(path) in str(exc.value)
    assert "(column 501)" in str(exc.value)  # the bracket that passed 500 levels
    quoted = b'{"a": "[[[\\"", "b": ' + _nested(DEEP) + b"}"  # brackets in a string: not levels
    with pytest.raises(json.JSONDecodeError) as err:
        loads_line(quoted)
    assert err.value.pos == 20 + 499
    problems: list[Problem] = []
    rows = list(iter_jsonl_lenient(path, problems))
    assert [n for n, _ in rows] == [1, 3]  # the bad line is skipped, the others read
    assert [p.line for p in problems] == [2]
    assert loads_line(_nested(500)) == loads_line(_nested(500))  # a depth json reads is read


@pytest.mark.parametrize("kind", ["corpus", "entries", "run"])
def test_every_importer_names_the_line_of_a_deeply_nested_row(
    empty_db: Database, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / f"{kind}.jsonl"
    good = {
        "corpus": b'{"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": "Revenue rose."}',
        "entries": b'{"id": "q1", "query": "What was revenue?", "reference_answer": "$4"}',
        "run": b'{"id": "q1", "answer": "Revenue was $4.", "retrieved": []}',
    }[kind]
    path.write_bytes(good + b"\n" + b'{"id": "q2", "text": ' + _nested(DEEP) + b"}\n")
    call = {
        "corpus": svc.import_corpus,
        "entries": svc.import_entries,
        "run": svc.import_run,
    }[kind]
    with pytest.raises(DataError) as exc:
        call(empty_db, path)
    assert f"{path}:2" in str(exc.value), str(exc.value)[:300]
    assert "nested too deeply" in str(exc.value)
