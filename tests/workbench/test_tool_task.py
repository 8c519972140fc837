"""The tool-call task kind (issue 41): opened on import for each (entry, run) with tool calls or
tool-call gold; the gold beside the calls made, differences marked; Pass/Fail per call with a
critique, needed or not per missing call; blind (of the other labels and of the automatic
checks); double-annotated, adjudicated per call, in agreement per call and in the label export
with each annotator's rows; access as everywhere. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select

from assay.checks.tools import TOOL_CHECKS
from assay.dataset import Entry, matching
from assay.errors import DataError
from assay.judge import check_entry
from assay.runs import RunRow
from assay.workbench import service as svc
from assay.workbench.agreement import TOOL_CALL, agreement_panel, tool_label_records
from assay.workbench.db import Database
from assay.workbench.export import labels_long
from assay.workbench.models import Adjudication, Label, Task, User
from assay.workbench.payloads import agreement_key
from assay.workbench.service.tools import tool_panel

from .access_room import ROOM_CHUNK, plant_room
from .tool_room import GOLD, MARGIN_CALLS, ToolRoom, plant_tools, tool_label


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def _label(db: Database, name: str, target: int, payload: dict[str, Any]) -> int:
    """`name` claims tool tasks until `target` is served (labelling those before it with a pass
    per call), then labels `target`."""
    user = _users(db)[name]
    while (got := svc.claim_next(db, user, "tool")) != target:
        assert got is not None, f"{target} never served to {name}"
        _pass_all(db, user, got)
    return svc.submit_label(db, user, target, payload, client_id=f"{name}-{target}").label_id


def _pass_all(db: Database, user: User, task_id: int) -> None:
    """Pass every call of a task, every missing call needed."""
    view = svc.task_view(db, user, task_id).tool
    assert view is not None
    payload = tool_label(*["pass"] * len(view["calls"]), missing=(True,) * len(view["missing"]))
    svc.submit_label(db, user, task_id, payload, client_id=f"{user.username}-{task_id}")


@pytest.fixture
def room(db: Database, tmp_path: Path) -> ToolRoom:
    return plant_tools(db, tmp_path)


# ------------------------------------------------------------------------------------ import


def test_import_opens_one_tool_task_per_entry_and_run(
    db: Database, room: ToolRoom, tmp_path: Path
) -> None:
    with db.read() as s:
        kinds = {
            item: sorted(s.scalars(select(Task.kind).where(Task.item_id == item)))
            for item in ("tool:margin", "tool:free", "tool:bare")
        }
    # a row with an answer is judged too; a row without one opens only its tool task
    assert kinds == {
        "tool:margin": ["judge", "tool"],
        "tool:free": ["judge", "tool"],
        "tool:bare": ["tool"],
    }
    again = plant_tools(db, tmp_path)  # the same run imported again: no second task
    assert again == room
    # a second run on the same entries opens its own tool tasks
    rows = [{"id": "tool:margin", "answer": "8.7%", "retrieved": [], "tool_calls": []}]
    (tmp_path / "other.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    svc.import_run(db, tmp_path / "other.jsonl", run_name="other")
    with db.read() as s:
        n = s.scalar(
            select(func.count())
            .select_from(Task)
            .where(Task.item_id == "tool:margin", Task.kind == "tool")
        )
    assert n == 2


def test_a_row_with_bad_tool_calls_is_refused_naming_file_line_and_field(
    db: Database, room: ToolRoom, tmp_path: Path
) -> None:
    rows = [
        {"id": "tool:free", "answer": "x", "retrieved": []},
        {"id": "tool:margin", "answer": "x", "retrieved": [], "tool_calls": [{"name": ""}]},
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError) as exc:
        svc.import_run(db, path, run_name="bad")
    text = str(exc.value)
    assert "bad.jsonl" in text and ":2" in text and "tool_calls" in text
    with db.read() as s:  # nothing of it stored
        n = s.scalar(select(func.count()).select_from(Task).where(Task.kind == "tool"))
    assert n == 3


# ------------------------------------------------------------------------------------- panel


def test_the_panel_pairs_calls_and_marks_every_difference(db: Database, room: ToolRoom) -> None:
    ana = _users(db)["ana"]
    assert svc.claim_next(db, ana, "tool") == room.margin
    view = svc.task_view(db, ana, room.margin)
    tool = view.tool
    assert tool is not None
    assert tool["gold"] == {"calls": GOLD["calls"], "ordered": True, "forbidden": ["send_email"]}
    marks = [(c["index"], c["name"], c["mark"], c["expected"]) for c in tool["calls"]]
    assert marks == [
        (1, "search_filings", "wrong arguments", 1),
        (2, "calculator", "matched", 2),
        (3, "send_email", "forbidden", None),
    ]
    period = {a["name"]: a for a in tool["calls"][0]["args"]}
    assert period["company"]["ok"] is True
    assert period["period"] == {
        "name": "period",
        "gold": {"pattern": "FY2022"},
        "got": "FY2021",
        "present": True,
        "ok": False,
    }
    assert all(a["ok"] for a in tool["calls"][1]["args"])  # 8.71 within 0.05 of 8.7; 100.0 == 100
    assert tool["missing"] == [
        {"index": 1, "name": "search_filings", "arguments": GOLD["calls"][0]["arguments"]}
    ]
    assert view.output is not None and view.output.draft is None


def test_out_of_order_not_expected_and_absent_arguments() -> None:
    entry = {"id": "x", "query": "q", "category": "c", "expected_tool_calls": GOLD}
    calls = [
        {"name": "calculator", "arguments": {"op": "div", "a": 8.7, "b": 100}},
        {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2022"}},
        {"name": "weather", "arguments": {}},
        {"name": "calculator", "arguments": {"op": "div"}},
    ]
    panel = tool_panel(entry, calls)
    assert [c["mark"] for c in panel.calls] == [
        "matched",
        "out of order",
        "not expected",
        "wrong arguments",
    ]
    absent = {a["name"]: a for a in panel.calls[3]["args"]}
    assert absent["a"]["present"] is False and absent["a"]["ok"] is False
    assert panel.missing == []
    # unordered gold: the same calls are all in order
    unordered = dict(entry, expected_tool_calls=dict(GOLD, ordered=False))
    assert tool_panel(unordered, calls).calls[1]["mark"] == "matched"
    # no gold: every call is judged on its own
    free = tool_panel({"id": "y", "query": "q", "category": "c"}, calls[:1])
    assert free.gold is None and free.calls[0]["mark"] == "not expected"


def test_matching_is_the_pairing_max_matching_counts() -> None:
    # gold 0 may take made 0 or 1, gold 1 only made 0: the pairing must move gold 0 to made 1
    ok = {(0, 0), (0, 1), (1, 0)}
    pairs = matching(2, 2, lambda i, j: (i, j) in ok)
    assert pairs == {0: 1, 1: 0}


# ------------------------------------------------------------------------------ labels, blind


def test_blind_of_other_labels_and_of_the_automatic_checks(db: Database, room: ToolRoom) -> None:
    users = _users(db)
    ana, ben = users["ana"], users["ben"]
    _label(db, "ben", room.margin, tool_label("fail", "pass", "fail", missing=(True,)))
    assert svc.claim_next(db, ana, "tool") == room.margin
    before = svc.task_view(db, ana, room.margin)
    assert before.tool is not None and before.tool["checks"] is None  # blind before submitting
    assert "checks" not in json.dumps(before.to_dict()["tool"]).replace('"checks": null', "")
    assert svc.list_labels(db, ana, room.margin) == []
    svc.submit_label(
        db, ana, room.margin, tool_label("fail", "pass", "fail", missing=(True,)), client_id="a1"
    )
    after = svc.task_view(db, ana, room.margin).tool
    assert after is not None and after["checks"] is not None
    # the checks are assay.checks.tools' own verdicts on this row
    e = Entry.model_validate(
        {"id": "tool:margin", "query": "q", "category": "agent", "expected_tool_calls": GOLD}
    )
    row = RunRow(id="tool:margin", retrieved=None, extra={"tool_calls": MARGIN_CALLS})
    ref = check_entry(e, None, checks=list(TOOL_CHECKS), row=row).values
    assert after["checks"]["values"] == {k: v for k, v in ref.items() if v is not None}
    assert after["checks"]["values"]["tool_arguments"] is False
    assert after["checks"]["values"]["forbidden_tool"] == 1
    assert after["checks"]["values"]["trajectory_match"] == pytest.approx(1 / 3)
    # an annotator never sees the other's label, even once both are in
    assert [lab.user for lab in svc.list_labels(db, ana, room.margin)] == ["ana"]
    assert [lab.user for lab in svc.list_labels(db, ben, room.margin)] == ["ben"]


def test_a_label_needs_one_verdict_per_call_and_a_critique_per_fail(
    db: Database, room: ToolRoom
) -> None:
    ana = _users(db)["ana"]
    assert svc.claim_next(db, ana, "tool") == room.margin
    with pytest.raises(DataError, match=r"calls.*3 call"):
        svc.submit_label(db, ana, room.margin, tool_label("pass", "pass"), client_id="c1")
    with pytest.raises(DataError, match="missing"):
        svc.submit_label(db, ana, room.margin, tool_label("pass", "pass", "fail"), client_id="c2")
    no_critique = tool_label("pass", "pass", "fail", missing=(True,))
    no_critique["calls"][2]["critique"] = "  "
    with pytest.raises(ValidationError, match="critique"):
        svc.submit_label(db, ana, room.margin, no_critique, client_id="c3")
    with pytest.raises(ValidationError):
        svc.submit_label(
            db,
            ana,
            room.margin,
            {"calls": [{"verdict": "maybe"}] * 3, "missing": [{"needed": True}]},
            client_id="c4",
        )
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Label)) == 0
    ok = tool_label("fail", "pass", "fail", missing=(False,), note="  wrong year  ")
    sub = svc.submit_label(db, ana, room.margin, ok, client_id="c5")
    with db.read() as s:
        stored = s.get(Label, sub.label_id)
        assert stored is not None
        assert stored.payload["note"] == "wrong year"
        assert stored.payload["calls"][0] == {"verdict": "fail", "critique": "call 1 is wrong"}


# --------------------------------------------------------------------------- adjudication


def test_double_annotated_disagreement_is_adjudicated_per_call(
    db: Database, room: ToolRoom
) -> None:
    a = tool_label("fail", "pass", "fail", missing=(True,))
    b = tool_label("fail", "fail", "fail", missing=(True,))
    assert agreement_key("tool", a) != agreement_key("tool", b)
    assert agreement_key("tool", a) == agreement_key(
        "tool", tool_label("fail", "pass", "fail", missing=(True,), note="other words")
    )
    _label(db, "ana", room.margin, a)
    assert room.margin not in {q.task_id for q in svc.adjudication_queue(db)}  # one label in
    _label(db, "ben", room.margin, b)
    adj = _users(db)["adjudicator"]
    queue = svc.adjudication_queue(db, adj)
    assert [(q.task_id, q.kind) for q in queue if q.kind == "tool"] == [(room.margin, "tool")]
    view = svc.adjudication_view(db, adj, room.margin)
    assert sorted(lab.user for lab in view.labels) == ["ana", "ben"]
    assert view.tool is not None and view.tool["checks"] is not None  # the adjudicator sees them
    with pytest.raises(DataError, match="calls"):
        svc.adjudicate(
            db, adj, room.margin, tool_label("fail", "pass"), root_cause="annotator_error"
        )
    final = tool_label("fail", "pass", "fail", missing=(True,))
    svc.adjudicate(db, adj, room.margin, final, root_cause="annotator_error")
    with db.read() as s:
        task = s.get(Task, room.margin)
        labels = list(s.scalars(select(Label).where(Label.task_id == room.margin)))
        adjudication = s.scalars(
            select(Adjudication).where(Adjudication.task_id == room.margin)
        ).one()
        assert task is not None
        assert svc.gold_for_task(task, labels, adjudication)["calls"][1]["verdict"] == "pass"
    # once adjudicated, the labellers see each other's labels
    ana = _users(db)["ana"]
    assert sorted(lab.user for lab in svc.list_labels(db, ana, room.margin)) == ["ana", "ben"]


def test_agreeing_labels_need_no_adjudication(db: Database, room: ToolRoom) -> None:
    _label(db, "ana", room.free, tool_label("pass", note="fine"))
    _label(db, "ben", room.free, tool_label("pass"))
    assert room.free not in {q.task_id for q in svc.adjudication_queue(db)}


# ------------------------------------------------------------------- agreement and export


def _kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa from its definition (observed against chance agreement)."""
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in ("pass", "fail"))
    return (po - pe) / (1 - pe)


def test_agreement_per_call_and_the_label_export(db: Database, room: ToolRoom) -> None:
    ana_v = {room.margin: ["fail", "pass", "fail"], room.free: ["pass"], room.bare: ["pass"]}
    ben_v = {room.margin: ["fail", "fail", "fail"], room.free: ["pass"], room.bare: ["fail"]}
    for task in (room.margin, room.free, room.bare):
        n_missing = 1 if task == room.margin else 0
        _label(db, "ana", task, tool_label(*ana_v[task], missing=(True,) * n_missing))
        _label(db, "ben", task, tool_label(*ben_v[task], missing=(False,) * n_missing))
    records = tool_label_records(db)
    assert len(records) == 2 * 5
    assert {r["criterion"] for r in records} == {TOOL_CALL}
    assert {r["item"] for r in records} >= {
        f"task-{room.margin}#call-3",
        f"task-{room.bare}#call-1",
    }
    panel = agreement_panel(db, n_resamples=200)
    crit = {c["criterion"]: c for c in panel["criteria"]}
    assert crit[TOOL_CALL]["n_items"] == 5
    assert TOOL_CALL in panel["columns"]
    pair = next(p for p in panel["pairs"] if {p["a"], p["b"]} == {"ana", "ben"})
    order = [room.margin, room.free, room.bare]
    a = [v for t in order for v in ana_v[t]]
    b = [v for t in order for v in ben_v[t]]
    assert pair[TOOL_CALL]["kappa"]["value"] == pytest.approx(_kappa(a, b))
    assert crit[TOOL_CALL]["raw"]["value"] == pytest.approx(3 / 5)
    # the export: each annotator's rows, per call made and per missing expected call
    rows = [r for r in labels_long(db) if r["item"].startswith("tool:margin@agent")]
    by = {(r["item"], r["rater"]): r for r in rows}
    assert by[("tool:margin@agent#call-2", "ana")]["label"] == "pass"
    assert by[("tool:margin@agent#call-2", "ben")]["label"] == "fail"
    assert by[("tool:margin@agent#call-2", "ben")]["critique"] == "call 2 is wrong"
    assert by[("tool:margin@agent#call-3", "ana")]["tool"] == "send_email"
    needed = by[("tool:margin@agent#expected-1", "ana")]
    assert (needed["criterion"], needed["label"], needed["tool"]) == (
        "tool_call_needed",
        "needed",
        "search_filings",
    )
    assert by[("tool:margin@agent#expected-1", "ben")]["label"] == "not_needed"
    assert len(rows) == 2 * (3 + 1)


# ---------------------------------------------------------------------------------- access


def test_a_restricted_tool_task_is_never_shown_without_clearance(
    db: Database, tmp_path: Path
) -> None:
    plant_room(db, tmp_path)
    room = plant_tools(db, tmp_path, retrieved=[ROOM_CHUNK])
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    users = _users(db)
    ana, adj = users["ana"], users["adjudicator"]
    served = []
    while (got := svc.claim_next(db, ana, "tool")) is not None:
        served.append(got)
        _pass_all(db, ana, got)
    assert room.margin not in served and {room.free, room.bare} <= set(served)
    with pytest.raises(svc.NotFound):
        svc.task_view(db, ana, room.margin)
    _label(db, "ben", room.margin, tool_label("fail", "pass", "fail", missing=(True,)))
    # the uncleared adjudicator is neither shown the task nor its critiques
    assert room.margin not in {q.task_id for q in svc.adjudication_queue(db, adj)}
    assert svc.list_labels(db, adj, room.margin) == []
    assert svc.list_labels(db, ana, room.margin) == []


# ---------------------------------------------------------------------------------- routes


def test_routes_show_the_task_and_refuse_bad_text_naming_the_field(
    login: Any, db: Database, room: ToolRoom
) -> None:
    ana, csrf = login("ana")
    home = ana.get("/")
    assert 'id="queue-tool"' in home.text
    r = ana.post("/api/next/tool", headers={"X-CSRF-Token": csrf})
    assert r.json()["task_id"] == room.margin
    page = ana.get(f"/task/{room.margin}")
    assert page.status_code == 200
    for text in ("wrong arguments", "forbidden", "matched", "✗ differs", "Expected, never made"):
        assert text in page.text, text
    assert 'id="tool-checks"' not in page.text  # blind of the automatic checks
    api = ana.get(f"/api/tasks/{room.margin}").json()
    assert api["kind"] == "tool" and api["tool"]["checks"] is None
    bad = tool_label("fail", "pass", "fail", missing=(True,))
    bad["calls"][0]["critique"] = "wrong \ud800 year"
    r = ana.post(
        "/api/labels",
        content=json.dumps({"task_id": room.margin, "payload": bad, "client_id": "x1"}),
        headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"},
    )
    assert r.status_code == 422 and "calls[0].critique" in r.json()["detail"], r.text
    short = tool_label("pass", missing=(True,))
    r = ana.post(
        "/api/labels",
        json={"task_id": room.margin, "payload": short, "client_id": "x2"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 422 and "one verdict per call" in r.json()["detail"]
    good = tool_label("fail", "pass", "fail", missing=(True,))
    r = ana.post(
        "/api/labels",
        json={"task_id": room.margin, "payload": good, "client_id": "x3"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 200, r.text
    page = ana.get(f"/task/{room.margin}")
    assert 'id="tool-checks"' in page.text and "trajectory_match" in page.text
    adj, _ = login("adjudicator")
    assert "<td>tool_call</td>" not in adj.get("/agreement").text  # one label: no agreement yet
    docs = adj.get("/api/docs")
    assert "ToolPayload" in docs.text


# ---------------------------------------------------------------------------- calibration


def test_a_calibration_tool_task_gives_feedback_against_the_gold(
    login: Any, db: Database, room: ToolRoom, tmp_path: Path
) -> None:
    """A calibration tool task (the run imported with the item named in `calibration`) answers a
    submission with the known label from the entry's tool-call gold: the gold calls, per call
    made its known verdict and why, and where the annotator's label differs (before: no
    feedback at all, the task's gold was None)."""
    run = tmp_path / "agent.jsonl"
    svc.import_run(db, run, run_name="agent-cal", calibration=["tool:margin"])
    with db.read() as s:
        task = s.scalars(select(Task).where(Task.kind == "tool", Task.calibration.is_(True))).one()
    assert task.item_id == "tool:margin"
    ana, csrf = login("ana")
    r = ana.post(
        "/session/start",
        data={"kind": "tool", "minutes": "30", "csrf_token": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert ana.post("/api/next/tool", headers={"X-CSRF-Token": csrf}).json()["task_id"] == task.id
    assert ana.get(f"/api/tasks/{task.id}").json()["calibration"] is True
    # call 1 searches FY2021 (gold: fail), call 2 divides right (pass), call 3 mails (forbidden:
    # fail); the missing FY2022 search was needed. This label passes call 1 and says not needed.
    mine = tool_label("pass", "pass", "fail", missing=(False,))
    r = ana.post(
        "/api/labels",
        json={"task_id": task.id, "payload": mine, "client_id": "cal-1"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 200, r.text
    fb = r.json()["feedback"]
    assert fb["matches"] == {"call 1": False, "call 2": True, "call 3": True, "missing 1": False}
    gold = fb["gold"]
    assert gold["tool_calls"]["calls"] == GOLD["calls"] and gold["tool_calls"]["ordered"]
    assert [c["verdict"] for c in gold["calls"]] == ["fail", "pass", "fail"]
    assert [c["mark"] for c in gold["calls"]] == ["wrong arguments", "matched", "forbidden"]
    why = [c["why"] for c in gold["calls"]]
    assert "period" in why[0] and '"FY2021"' in why[0] and "FY2022" in why[0]
    assert "company" not in why[0]  # only the arguments that differ
    assert why[1] == "matches expected call 2 (calculator)"
    assert why[2] == "send_email is a forbidden tool"
    assert gold["missing"] == [
        {
            "index": 1,
            "name": "search_filings",
            "needed": True,
            "why": "expected call 1 (search_filings) was never made",
        }
    ]
    # a non-calibration tool task still answers without feedback
    r = ana.post("/api/next/tool", headers={"X-CSRF-Token": csrf})
    assert r.json()["task_id"] == room.margin
    r = ana.post(
        "/api/labels",
        json={"task_id": room.margin, "payload": mine, "client_id": "cal-2"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 200 and r.json()["feedback"] == {}, r.text


def test_tool_gold_has_no_known_verdict_for_a_call_the_gold_does_not_name() -> None:
    """A call the gold does not name gets no known verdict (not compared); without tool-call
    gold there is no known label at all; a call made out of order is a known fail."""
    from assay.workbench.service.tools import tool_feedback, tool_gold

    entry = {
        "id": "q",
        "query": "?",
        "expected_tool_calls": {
            "calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}],
            "ordered": True,
        },
    }
    gold = tool_gold(
        entry,
        [
            {"name": "b", "arguments": {}},
            {"name": "a", "arguments": {}},
            {"name": "z", "arguments": {}},
        ],
    )
    assert gold is not None
    assert [(c["mark"], c["verdict"]) for c in gold["calls"]] == [
        ("matched", "pass"),
        ("out of order", "fail"),
        ("not expected", None),
    ]
    assert gold["missing"] == []
    label = tool_label("pass", "pass", "fail")
    assert tool_feedback(gold, label) == {"call 1": True, "call 2": False}
    assert tool_gold({"id": "q", "query": "?"}, [{"name": "z", "arguments": {}}]) is None


# ------------------------------------------------------------------------------------- CLI


def test_cli_import_export_and_assay_agreement(
    db: Database, room: ToolRoom, tmp_path: Path
) -> None:
    """`assay workbench import-run` opens tool tasks; `export --labels-long` writes each
    annotator's per-call rows, which `assay agreement -c tool_call` reads; tool labels set no
    entry gold."""
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (registers every command)
    from assay.cli import app as cli_app

    runner = CliRunner()
    rows = [{"id": "tool:bare", "retrieved": [], "tool_calls": MARGIN_CALLS[:1]}]
    (tmp_path / "second.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = runner.invoke(
        cli_app,
        ["workbench", "import-run", str(tmp_path / "second.jsonl"), "--db", db.url, "-f", "json"],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["tasks"] == 1
    for task in (room.margin, room.free):
        n_missing = 1 if task == room.margin else 0
        n_calls = 3 if task == room.margin else 1
        _label(db, "ana", task, tool_label(*["pass"] * n_calls, missing=(True,) * n_missing))
        _label(db, "ben", task, tool_label(*["fail"] * n_calls, missing=(True,) * n_missing))
    out, gold = tmp_path / "long.jsonl", tmp_path / "gold.jsonl"
    r = runner.invoke(
        cli_app,
        ["workbench", "export", "--out", str(gold), "--labels-long", str(out), "--db", db.url,
         "-f", "json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    long = [json.loads(line) for line in out.read_text().splitlines()]
    tool_rows = [x for x in long if x["criterion"] == "tool_call"]
    assert sorted((x["item"], x["rater"]) for x in tool_rows) == sorted(
        (f"{item}@agent#call-{i}", who)
        for item, n in (("tool:margin", 3), ("tool:free", 1))
        for i in range(1, n + 1)
        for who in ("ana", "ben")
    )
    assert not any(str(x["item"]).startswith("tool:bare@second") for x in long)  # unlabelled
    assert "tool:margin" not in gold.read_text()  # verdicts on a run: no entry gold
    r = runner.invoke(cli_app, ["agreement", str(out), "-c", "tool_call", "-f", "json"])
    assert r.exit_code == 0, r.output
    (res,) = json.loads(r.stdout)["results"]
    assert (res["criterion"], res["n_items"]) == ("tool_call", 4)
    assert res["statistics"]["raw_agreement"]["value"] == 0.0  # ana passed every call, ben not
