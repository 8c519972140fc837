"""Text fields, the next ring (issue 40): a lone surrogate or a NUL in a JSON *key* (not only a
value) is refused with 422 naming the field with the character escaped, on routes and in
importers (before: the error message itself held the surrogate, could not be encoded, and the
answer was a 500; an importer's error could not be printed); a CSRF token with non-ASCII
characters, in a header or a form, is a wrong token (403), not a 500 (`hmac.compare_digest`
refuses non-ASCII text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app as cli_app
from assay.errors import DataError
from assay.workbench import service as svc
from assay.workbench.db import Database

from .conftest import judge_payload


def _post(client: Any, path: str, body: dict[str, Any], csrf: str) -> Any:
    return client.post(
        path,
        content=json.dumps(body),
        headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"},
    )


@pytest.mark.parametrize("bad", ["\ud800", "\x00"])
def test_a_bad_key_in_a_payload_is_refused_naming_it_escaped(
    login: Any, db: Database, bad: str
) -> None:
    ana, csrf = login("ana")
    judge = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    payload = judge_payload()
    payload["verdicts"]["x" + bad] = "pass"
    r = _post(ana, "/api/labels", {"task_id": judge, "payload": payload, "client_id": "k1"}, csrf)
    assert r.status_code == 422, r.text
    escaped = bad.encode("unicode_escape").decode()
    assert f"verdicts.x{escaped}" in r.json()["detail"]
    adj, adj_csrf = login("adjudicator")
    body = {"task_id": judge, "payload": payload, "root_cause": "ambiguous_item", "note": ""}
    r = _post(adj, "/api/adjudications", body, adj_csrf)
    assert r.status_code == 422 and escaped in r.json()["detail"], r.text
    assert ana.get(f"/api/tasks/{judge}").status_code == 200


def test_an_importer_names_a_bad_key_escaped(db: Database, tmp_path: Path) -> None:
    rows = [{"id": "q1", "query": "What?", "category": "numeric", "metadata": {"k\ud800": 1}}]
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as err:
        svc.import_entries(db, path)
    (p,) = err.value.problems
    assert (p.line, p.field) == (1, "metadata.k\\ud800")
    res = CliRunner().invoke(
        cli_app,
        ["workbench", "import-entries", str(path), "--db", f"sqlite:///{tmp_path / 's.db'}"],
    )
    assert res.exit_code == 2, res.output
    assert "metadata.k\\ud800" in res.output and "internal error" not in res.output


def test_a_non_ascii_csrf_token_is_a_wrong_token(login: Any) -> None:
    ana, _ = login("ana")
    r = ana.post("/api/next/judge", headers={"X-CSRF-Token": "tök\u00e9n".encode()})
    assert r.status_code == 403, r.text
    r = ana.post(
        "/session/start",
        content=b"kind=judge&minutes=50&csrf_token=t%C3%B6k%ED%A0%80",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert r.status_code == 403, r.text
