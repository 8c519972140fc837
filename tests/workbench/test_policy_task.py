"""The policy task kind (issue 28): a run's answer on a policy item opens a policy task showing
the principal and every retrieved chunk with its access label (a chunk the principal may not see
marked as a leak); experts pass or fail `policy_ok` blind, disagreements are adjudicated, and the
labels export as the `policy_ok` criterion that `assay judge calibrate` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.export import export_fewshot, export_gold, labels_long
from assay.workbench.models import Task, User

from .access_room import OUTSIDER, PUBLIC_CHUNK, ROOM_CHUNK, Room, plant_room
from .conftest import login_client

PW = "tulip-basin-4821"


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


@pytest.fixture
def room(db: Database, tmp_path: Path) -> Room:
    r = plant_room(db, tmp_path)
    for name in ("ben", "ana", "adjudicator"):
        svc.set_user_access(db, name, groups=["deal:ACME"], clearance="insider")
    return r


def _claim(db: Database, user: User, task_id: int) -> None:
    """Claim policy tasks until `task_id` is the user's (labelling the others pass)."""
    while (got := svc.claim_next(db, user, "policy")) != task_id:
        assert got is not None, f"task {task_id} never served to {user.username}"
        svc.submit_label(db, user, got, {"verdict": "pass"}, client_id=f"{user.username}-{got}")


def test_policy_items_open_policy_tasks_beside_judging_tasks(db: Database, room: Room) -> None:
    with db.read() as s:
        kinds = sorted(
            (t.item_id, t.kind)
            for t in s.scalars(select(Task).where(Task.item_id.in_(["pol-out", "pol-refused"])))
        )
    assert kinds == [
        ("pol-out", "judge"),
        ("pol-out", "policy"),
        ("pol-refused", "judge"),
        ("pol-refused", "policy"),
    ]
    # items that name no principal and expect an answer open no policy task
    with db.read() as s:
        assert len(s.scalars(select(Task).where(Task.kind == "policy")).all()) == 2


def test_policy_view_shows_the_principal_and_each_chunks_label(db: Database, room: Room) -> None:
    u = users(db)
    _claim(db, u["ben"], room.policy_leak)
    view = svc.task_view(db, u["ben"], room.policy_leak).to_dict()
    p = view["policy"]
    assert p["principal"] == OUTSIDER and p["as_of"] is None
    assert p["may_see"] == {ROOM_CHUNK: False, PUBLIC_CHUNK: True}
    assert p["leaked"] == [ROOM_CHUNK]
    retrieved = {c["chunk_id"]: c for c in view["output"]["retrieved"]}
    assert retrieved[ROOM_CHUNK]["restricted"] is True
    assert retrieved[ROOM_CHUNK]["access"][0]["label"] == "ACME deal team"
    assert (
        retrieved[PUBLIC_CHUNK]["restricted"] is False and retrieved[PUBLIC_CHUNK]["access"] == []
    )
    assert view["output"]["draft"] is None  # no judging draft on a policy task


def test_policy_page_marks_restricted_chunks_and_the_leak(
    app: Any, db: Database, room: Room
) -> None:
    u = users(db)
    _claim(db, u["ben"], room.policy_leak)
    ben, _ = login_client(app, "ben")
    page = ben.get(f"/task/{room.policy_leak}").text
    assert 'data-page="policy"' in page
    assert "Who asks" in page and "analyst" in page and "internal" in page
    assert f'class="chunk restricted leaked" data-chunk="{ROOM_CHUNK}"' in page
    assert "restricted: ACME deal team" in page and "a leak" in page
    assert f'class="chunk" data-chunk="{PUBLIC_CHUNK}"' in page


def test_policy_labels_blind_double_adjudicated_and_exported(
    db: Database, room: Room, tmp_path: Path
) -> None:
    u = users(db)
    from assay.workbench.payloads import validate_payload

    with pytest.raises(ValidationError, match="critique"):
        validate_payload("policy", {"verdict": "fail"})
    _claim(db, u["ana"], room.policy_leak)
    svc.submit_label(
        db,
        u["ana"],
        room.policy_leak,
        {"verdict": "fail", "critique": "States the deal price from the data room to an outsider."},
        client_id="ana-leak",
    )
    _claim(db, u["ben"], room.policy_leak)
    assert svc.list_labels(db, u["ben"], room.policy_leak) == []  # blind
    svc.submit_label(db, u["ben"], room.policy_leak, {"verdict": "pass"}, client_id="ben-leak")
    queue = {r.task_id: r.kind for r in svc.adjudication_queue(db, u["adjudicator"])}
    assert queue.get(room.policy_leak) == "policy"
    view = svc.adjudication_view(db, u["adjudicator"], room.policy_leak).to_dict()
    assert [lab["payload"]["verdict"] for lab in view["labels"]] == ["fail", "pass"]
    assert view["policy"]["leaked"] == [ROOM_CHUNK]
    svc.adjudicate(
        db,
        u["adjudicator"],
        room.policy_leak,
        {"verdict": "fail", "critique": "The price is only in the deal team's data room."},
        root_cause="annotator_error",
        hard_case=True,
    )
    assert room.policy_leak not in {r.task_id for r in svc.adjudication_queue(db)}
    rows = [r for r in labels_long(db) if r["criterion"] == "policy_ok"]
    assert sorted((r["item"], r["rater"], r["label"]) for r in rows) == [
        ("pol-out@room", "ana", "fail"),
        ("pol-out@room", "ben", "pass"),
    ]
    # the hard case is a few-shot example with its policy_ok verdict
    shots = tmp_path / "fewshot.jsonl"
    export_fewshot(db, shots)
    (ex,) = [json.loads(line) for line in shots.read_text(encoding="utf-8").splitlines()]
    assert ex["kind"] == "policy" and ex["verdicts"] == {"policy_ok": "fail"}
    assert ex["principal"]["role"] == "analyst" and ex["retrieved"] == [ROOM_CHUNK, PUBLIC_CHUNK]
    # the gold export leaves the entry's gold alone and keeps the case out of the test split
    out = tmp_path / "gold.jsonl"
    export_gold(db, out, include_unlabelled=True)
    entries = {e["id"]: e for e in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert entries["pol-out"]["split"] == "judge-fewshot"
    assert entries["pol-out"]["expected_behavior"] == "refuse"


def test_policy_labels_feed_judge_calibration(db: Database, room: Room, tmp_path: Path) -> None:
    """The exported labels are what `assay judge calibrate --criterion policy_ok` reads: the
    experts' verdicts against the `policy_ok` check's verdicts on the same items."""
    from assay.label_files import calibrate_files
    from assay.workbench.export import export_labels_long

    u = users(db)
    for name in ("ana", "ben"):
        _claim(db, u[name], room.policy_leak)
        svc.submit_label(
            db,
            u[name],
            room.policy_leak,
            {"verdict": "fail", "critique": "Leaks the price."},
            client_id=f"{name}-l",
        )
        _claim(db, u[name], room.policy_clean)
        svc.submit_label(db, u[name], room.policy_clean, {"verdict": "pass"}, client_id=f"{name}-c")
    human = tmp_path / "labels.jsonl"
    export_labels_long(db, human)
    judged = tmp_path / "judged.jsonl"
    judged.write_text(
        json.dumps({"id": "pol-out@room", "verdict": False, "judge_hash": "policy-check"})
        + "\n"
        + json.dumps({"id": "pol-refused@room", "verdict": True, "judge_hash": "policy-check"})
        + "\n",
        encoding="utf-8",
    )
    rep = calibrate_files(human, judged, criterion="policy_ok", n_resamples=200)
    assert rep.overall.n == 2 and rep.n_human_only == 0 and rep.n_judge_only == 0
    assert rep.human_file == str(human) and rep.judge_hash == "policy-check"


def test_sql_labels_are_exported_too(db: Database, tmp_path: Path) -> None:
    """labels_long covers every kind (a SQL label used to be read as an evidence label)."""
    import sqlite3

    con = sqlite3.connect(tmp_path / "w.sqlite")
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    (tmp_path / "e.jsonl").write_text(
        json.dumps(
            {
                "id": "s1",
                "query": "How many rows?",
                "category": "aggregation",
                "sql": {
                    "queries": ["SELECT COUNT(*) FROM t"],
                    "dialect": "sqlite",
                    "database": "w.sqlite",
                },
            }
        )
        + "\n",
        encoding="utf-8",
    )
    svc.import_entries(db, tmp_path / "e.jsonl", kinds=())
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"id": "s1", "answer": "SELECT 1", "sql": "SELECT 1", "retrieved": []}) + "\n",
        encoding="utf-8",
    )
    svc.import_run(db, tmp_path / "r.jsonl", run_name="t2s")
    u = users(db)
    tid = svc.claim_next(db, u["ana"], "sql")
    assert tid is not None
    svc.submit_label(
        db, u["ana"], tid, {"verdict": "fail", "critique": "Counts nothing."}, client_id="s"
    )
    rows = [r for r in labels_long(db) if r["item"] == "s1@t2s"]
    assert rows == [{"item": "s1@t2s", "rater": "ana", "label": "fail", "criterion": "sql_ok"}]


def test_uncleared_adjudicator_never_sees_the_policy_dispute(db: Database, room: Room) -> None:
    u = users(db)
    for name, verdict in (("ana", "fail"), ("ben", "pass")):
        _claim(db, u[name], room.policy_leak)
        payload = {"verdict": verdict, "critique": "Leak." if verdict == "fail" else ""}
        svc.submit_label(db, u[name], room.policy_leak, payload, client_id=f"{name}-x")
    create_user(db, "otto", PW, "adjudicator")  # no access
    u = users(db)
    assert room.policy_leak not in {r.task_id for r in svc.adjudication_queue(db, u["otto"])}
    with pytest.raises(svc.NotFound):
        svc.adjudication_view(db, u["otto"], room.policy_leak)
