"""Conversation lines in the workbench: a line with ``turns`` gives one item per turn (ids
CONV#N), and a turn's task shows the conversation's earlier questions, on the page and in the
API, so an expert labels "And the year before?" knowing what it follows."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Item, Task, User

from .conftest import login_client

FIRST = "What was Averix's total revenue in fiscal 2023?"
SECOND = "And the year before?"
THIRD = "How did that change?"


def test_a_conversation_imports_as_turn_items_that_show_their_earlier_questions(
    empty_db: Database, tmp_path: Path
) -> None:
    conv = {
        "id": "conv-1",
        "category": "carried_context",
        "turns": [
            {"query": FIRST, "evidence_paths": [[["c1"]]]},
            {"query": SECOND, "depends_on": [1], "evidence_paths": [[["c2"]]]},
            {"query": THIRD, "depends_on": [1, 2], "evidence_paths": [[["c1", "c2"]]]},
        ],
    }
    plain = {"id": "q1", "query": "What is X?", "category": "lookup"}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps(conv) + "\n" + json.dumps(plain) + "\n", encoding="utf-8")
    svc.import_entries(empty_db, path, kinds=("reference",), overlap=1)
    create_user(empty_db, "ana", "x", fast_hash=True, check_policy=False)
    with empty_db.read() as s:
        assert sorted(s.scalars(select(Item.id))) == ["conv-1#1", "conv-1#2", "conv-1#3", "q1"]
        ana = s.scalars(select(User).where(User.username == "ana")).one()
        by_item = {t.item_id: t.id for t in s.scalars(select(Task))}
    seen = {}
    while (tid := svc.claim_next(empty_db, ana, "reference")) is not None:
        view = svc.task_view(empty_db, ana, tid)
        seen[view.item.id] = view.item.to_dict().get("earlier", [])
        svc.submit_label(
            empty_db,
            ana,
            tid,
            {"reference_answer": "x", "answerable": True, "expected_behavior": "answer"},
            client_id=f"c{tid}",
        )
    assert seen == {"conv-1#1": [], "conv-1#2": [FIRST], "conv-1#3": [FIRST, SECOND], "q1": []}
    assert set(by_item) == set(seen)
    # the page shows them above the question, in order
    app = create_app(WorkbenchConfig(db_url=empty_db.url, migrate=False), db=empty_db)
    client, _ = login_client(app, "ana", "x")
    page = client.get(f"/task/{by_item['conv-1#3']}").text
    earlier = page[page.index('id="earlier-turns"') : page.index('id="question"')]
    assert earlier.index("Averix&#39;s total revenue") < earlier.index(SECOND)
    assert "earlier-turns" not in client.get(f"/task/{by_item['conv-1#1']}").text
