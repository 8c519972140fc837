"""The SQL task kind: imported from a run on a SQL item, labelled blind by two experts,
adjudicated where they disagree, the edited gold query run read-only (an unsafe one refused),
and the edit exported as the entry's gold."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay.errors import UsageError
from assay.sql.gold import validate_dataset
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.export import export_gold
from assay.workbench.models import Label, User
from assay.workbench.service.sql import UnsafeEdit, run_gold_edit

pytest.importorskip("sqlglot")

GOLD = "SELECT region, COUNT(*) AS active FROM customers WHERE status = 'A' GROUP BY region"
SYSTEM = "SELECT region, COUNT(*) AS n FROM customers GROUP BY region"  # the filter left out


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.query(User)}


@pytest.fixture
def sql_task(db: Database, tmp_path: Path) -> int:
    con = sqlite3.connect(tmp_path / "shop.sqlite")
    con.execute("CREATE TABLE customers (id INTEGER, region TEXT, status TEXT)")
    con.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(1, "NA", "A"), (2, "NA", "A"), (3, "EMEA", "A"), (4, "EMEA", "C"), (5, "LATAM", "C")],
    )
    con.commit()
    con.close()
    entry = {
        "id": "sql:active",
        "query": "How many active customers are there in each region?",
        "category": "business_definition",
        "metadata": {"domain": "Northwind Bancorp"},
        "sql": {"queries": [GOLD], "dialect": "sqlite", "database": "shop.sqlite"},
    }
    (tmp_path / "golden.jsonl").write_text(json.dumps(entry) + "\n", encoding="utf-8")
    svc.import_entries(db, tmp_path / "golden.jsonl", kinds=())
    row = {
        "id": "sql:active",
        "retrieved": [],
        "answer": SYSTEM,
        "sql": SYSTEM,
        "dialect": "sqlite",
    }
    (tmp_path / "run.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    summary = svc.import_run(db, tmp_path / "run.jsonl", run_name="t2s")
    assert summary.to_dict()["tasks"] == 1
    return _only_sql_task(db)


def _only_sql_task(db: Database) -> int:
    from sqlalchemy import select

    from assay.workbench.models import Task

    with db.read() as s:
        (tid,) = s.scalars(select(Task.id).where(Task.kind == "sql")).all()
        return int(tid)


def test_sql_task_blind_double_labelled_and_adjudicated(db: Database, sql_task: int) -> None:
    u = users(db)
    assert svc.claim_next(db, u["ana"], "sql") == sql_task
    view = svc.task_view(db, u["ana"], sql_task).to_dict()
    q = view["sql"]
    assert q["system_query"] == SYSTEM and q["gold_queries"] == [GOLD]
    assert sorted(q["gold_result"]["rows"]) == [["EMEA", 1], ["NA", 2]]
    assert sorted(q["system_result"]["rows"]) == [["EMEA", 2], ["LATAM", 1], ["NA", 2]]
    # a Fail needs a critique
    with pytest.raises(Exception, match="critique"):
        svc.submit_label(db, u["ana"], sql_task, {"verdict": "fail"}, client_id="a0")
    svc.submit_label(
        db,
        u["ana"],
        sql_task,
        {"verdict": "fail", "critique": "Counts churned customers as active."},
        client_id="a1",
    )
    # ben labels blind: he does not see ana's label, before or after his own
    assert svc.claim_next(db, u["ben"], "sql") == sql_task
    assert [lab.to_dict()["user"] for lab in svc.list_labels(db, u["ben"], sql_task)] == []
    svc.submit_label(db, u["ben"], sql_task, {"verdict": "pass"}, client_id="b1")
    assert len(svc.list_labels(db, u["ben"], sql_task)) == 1
    # they disagree: the task reaches the adjudication queue
    queue = svc.adjudication_queue(db)
    assert [(r.task_id, r.kind) for r in queue] == [(sql_task, "sql")]
    assert len(svc.list_labels(db, u["adjudicator"], sql_task)) == 2
    # an unsafe edited gold query is refused by the adjudication too
    with pytest.raises(UnsafeEdit):
        svc.adjudicate(
            db,
            u["adjudicator"],
            sql_task,
            {"verdict": "fail", "critique": "x.", "gold_query": "DROP TABLE customers"},
            root_cause="annotator_error",
        )
    svc.adjudicate(
        db,
        u["adjudicator"],
        sql_task,
        {"verdict": "fail", "critique": "Counts churned customers as active."},
        root_cause="annotator_error",
    )
    assert svc.adjudication_queue(db) == []


def test_edited_gold_query_runs_read_only_and_unsafe_edits_are_refused(
    db: Database, sql_task: int, tmp_path: Path
) -> None:
    u = users(db)
    with pytest.raises(svc.NotFound):  # only someone who claimed the task
        run_gold_edit(db, u["ana"], sql_task, GOLD)
    svc.claim_next(db, u["ana"], "sql")
    edit = GOLD.replace("GROUP BY region", "GROUP BY region ORDER BY region")
    out = run_gold_edit(db, u["ana"], sql_task, edit)
    assert out["rows"] == [["EMEA", 1], ["NA", 2]] and out["matches_gold"] is True
    wrong = run_gold_edit(db, u["ana"], sql_task, SYSTEM)
    assert wrong["matches_gold"] is False
    # unsafe: refused before it runs, and the table is intact
    for bad in ("DELETE FROM customers", "ATTACH DATABASE 'x.db' AS x"):
        with pytest.raises(UnsafeEdit, match="refused before running"):
            run_gold_edit(db, u["ana"], sql_task, bad)
    with pytest.raises(UsageError, match="error"):
        run_gold_edit(db, u["ana"], sql_task, "SELECT nope FROM customers")
    con = sqlite3.connect(tmp_path / "shop.sqlite")
    assert con.execute("SELECT COUNT(*) FROM customers").fetchone() == (5,)
    con.close()
    # an unsafe edit in a submitted label is refused too; nothing is stored
    with pytest.raises(UnsafeEdit):
        svc.submit_label(
            db,
            u["ana"],
            sql_task,
            {"verdict": "pass", "gold_query": "DELETE FROM customers"},
            client_id="a-bad",
        )
    with db.read() as s:
        assert s.query(Label).filter(Label.task_id == sql_task).count() == 0


def test_agreed_edit_is_exported_as_gold(db: Database, sql_task: int, tmp_path: Path) -> None:
    u = users(db)
    edit = "SELECT region, COUNT(*) AS active FROM customers WHERE status = 'A' GROUP BY 1"
    for name in ("ana", "ben"):
        svc.claim_next(db, u[name], "sql")
        svc.submit_label(
            db,
            u[name],
            sql_task,
            {"verdict": "pass", "gold_query": edit + ("  ;" if name == "ben" else "")},
            client_id=f"{name}-1",
        )
    assert svc.adjudication_queue(db) == []  # the same edit, whitespace aside: agreed
    out = tmp_path / "export" / "gold.jsonl"
    export_gold(db, out, message="sql round")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    (e,) = [r for r in rows if r["id"] == "sql:active"]
    assert e["sql"]["queries"] == [edit] and e.get("sql", {}).get("result") is None
    # named relative to the exported dataset, as `assay synth warehouse` names it: the two
    # folders move together, and no machine path is written
    assert e["sql"]["database"] == "../shop.sqlite"
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(tmp_path / "export", moved / "export")
    shutil.move(tmp_path / "shop.sqlite", moved / "shop.sqlite")
    report = validate_dataset(moved / "export" / "gold.jsonl")
    assert report.ok and report.sql == 1, report.problems


def test_task_page_and_run_route(login: Any, db: Database, sql_task: int) -> None:
    ana, csrf = login("ana")
    svc.claim_next(db, users(db)["ana"], "sql")
    page = ana.get(f"/task/{sql_task}").text
    assert "System query" in page and "Schema and glossary" in page and "LATAM" in page
    r = ana.post(
        f"/api/tasks/{sql_task}/sql/run", json={"query": GOLD}, headers={"X-CSRF-Token": csrf}
    )
    assert r.status_code == 200 and r.json()["matches_gold"] is True
    r = ana.post(
        f"/api/tasks/{sql_task}/sql/run",
        json={"query": "DROP TABLE customers"},
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 400 and "refused before running" in r.text
