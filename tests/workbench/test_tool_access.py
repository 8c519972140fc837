"""Access follows content on tool tasks too (issue 40, the next ring): a tool call's result or
arguments are text the system was given, so a call that returned the deal room's chunk (by its
id or by quoting it) makes its tasks the deal room's, even when the row retrieved and cited
nothing. Attack: a public question's agent run whose search tool returned the data room's memo;
the uncleared annotator was served the tool task and read the acquisition price in the call's
result (page and API), while `/api/chunks/<that chunk>` answered 404 for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import Task, User
from tests.conftest import write_jsonl

from .access_room import ROOM_CHUNK, plant_room
from .conftest import login_client

PRICE = "the acquisition price for Acme Target is $412 million"


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


@pytest.mark.parametrize(
    "result",
    [
        {"chunk_id": ROOM_CHUNK, "text": "Project Falcon: " + PRICE + "."},  # by id and quote
        "Found: Project Falcon: " + PRICE + ".",  # quoted only
        {"hits": [ROOM_CHUNK]},  # by id only
    ],
    ids=["id-and-quote", "quote", "id"],
)
def test_a_tool_call_that_returned_restricted_text_is_hidden_from_the_uncleared(
    db: Database, app: Any, tmp_path: Path, result: Any
) -> None:
    plant_room(db, tmp_path)
    entry = {
        "id": "pub-agent",
        "query": "Is Northwind buying anything?",
        "category": "agent",
        "metadata": {"domain": "Falcon"},
        "expected_tool_calls": {"calls": [{"name": "search", "arguments": {}}]},
    }
    svc.import_entries(db, write_jsonl(tmp_path / "agent-e.jsonl", [entry]), kinds=())
    row = {
        "id": "pub-agent",
        "answer": "I could not find a public answer.",
        "retrieved": [],
        "tool_calls": [{"name": "search", "arguments": {"q": "Falcon"}, "result": result}],
    }
    svc.import_run(db, write_jsonl(tmp_path / "agent-r.jsonl", [row]), run_name="agent")
    with db.read() as s:
        tool = s.scalars(select(Task.id).where(Task.item_id == "pub-agent", Task.kind == "tool"))
        tool_id = tool.one()
    u = _users(db)
    assert svc.claim_next(db, u["ana"], "tool") is None  # never served to the uncleared
    ana, csrf = login_client(app, "ana")
    assert ana.get("/api/chunks/" + quote(ROOM_CHUNK, safe="")).status_code == 404
    assert ana.post("/api/next/tool", headers={"X-CSRF-Token": csrf}).json()["task_id"] is None
    for path in (f"/api/tasks/{tool_id}", f"/task/{tool_id}", "/work/tool"):
        r = ana.get(path)
        assert "412 million" not in r.text and ROOM_CHUNK not in r.text, path
    # the cleared annotator is served it and reads the result
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    assert svc.claim_next(db, _users(db)["ben"], "tool") == tool_id
    ben, _ = login_client(app, "ben")
    expect = "412 million" if "412 million" in str(result) else ROOM_CHUNK
    assert expect in ben.get(f"/api/tasks/{tool_id}").text
