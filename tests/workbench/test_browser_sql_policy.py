"""The SQL and policy task kinds in a real headless Chromium (Debian's), one browser and one
server for the module: the SQL task page (view, edit the gold query, run it read-only, submit),
the policy task page (access labels shown, a leak marked, pass/fail with a critique; an uncleared
expert never served the leak), and adjudication of both kinds through the page's form.
Screenshots go to artifacts/workbench/."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NEEDS_CHROMIUM

from .test_browser import Server, login, shot

pytest.importorskip("playwright.sync_api")
pytest.importorskip("sqlglot")

from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import Adjudication, Label, Task, User

from .access_room import PUBLIC_CHUNK, ROOM_CHUNK, Room, plant_room
from .conftest import BACKENDS, PgStore, demo_store

pytestmark = NEEDS_CHROMIUM

GOLD = "SELECT region, COUNT(*) AS active FROM customers WHERE status = 'A' GROUP BY region"
SYSTEM = "SELECT region, COUNT(*) AS n FROM customers GROUP BY region"


class Planted(Server):
    room: Room
    sql_tasks: list[int]


def _plant_sql(db: Database, tmp: Path) -> list[int]:
    con = sqlite3.connect(tmp / "shop.sqlite")
    con.execute("CREATE TABLE customers (id INTEGER, region TEXT, status TEXT)")
    con.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(1, "NA", "A"), (2, "NA", "A"), (3, "EMEA", "A"), (4, "EMEA", "C"), (5, "LATAM", "C")],
    )
    con.commit()
    con.close()
    entries = [
        {
            "id": f"sql:active{i}",
            "query": f"How many active customers are there in each region? ({i})",
            "category": "business_definition",
            "metadata": {"domain": "Shop"},
            "sql": {"queries": [GOLD], "dialect": "sqlite", "database": "shop.sqlite"},
        }
        for i in (1, 2)
    ]
    (tmp / "sql.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    svc.import_entries(db, tmp / "sql.jsonl", kinds=())
    rows = [{"id": e["id"], "retrieved": [], "answer": SYSTEM, "sql": SYSTEM} for e in entries]
    (tmp / "sql-run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    svc.import_run(db, tmp / "sql-run.jsonl", run_name="t2s")
    with db.read() as s:
        return list(s.scalars(select(Task.id).where(Task.kind == "sql").order_by(Task.id)))


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    pg_store: PgStore | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Planted]:
    tmp = tmp_path_factory.mktemp("browser-kinds")
    db = demo_store(request.param, tmp, sqlite_template, pg_store)
    sql_tasks = _plant_sql(db, tmp)
    room = plant_room(db, tmp)
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    svc.set_user_access(db, "adjudicator", groups=["deal:ACME"], clearance="insider")
    srv = Planted(db)
    srv.room, srv.sql_tasks = room, sql_tasks
    yield srv
    srv.stop()
    db.dispose()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(15000)
    yield pg
    ctx.close()


def _users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def _label(db: Database, name: str, kind: str, target: int, payload: dict[str, Any]) -> None:
    """`name` labels `target` (claiming and passing the tasks of that kind served before it)."""
    user = _users(db)[name]
    while (got := svc.claim_next(db, user, kind)) != target:
        assert got is not None, f"{target} never served to {name}"
        svc.submit_label(db, user, got, {"verdict": "pass"}, client_id=f"{name}-{got}")
    svc.submit_label(db, user, target, payload, client_id=f"{name}-{target}-final")


def test_sql_task_in_the_browser(page: Any, server: Planted) -> None:
    """View the system query and result beside the gold, edit the gold query, run it
    read-only (an unsafe edit is refused before it runs), then fail the query with a critique
    and the edit."""
    login(page, server.base, "ana", "ana-demo-pw")
    page.goto(server.base + "/work/sql")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=sql]")
    task_url = page.url
    assert task_url.endswith(f"/task/{server.sql_tasks[0]}")
    assert SYSTEM in page.inner_text("#system-query")
    assert "LATAM" in page.inner_text("#sql-system")  # the system's result: churned counted
    assert "LATAM" not in page.inner_text("#sql-gold")
    assert "Schema and glossary" in page.inner_text("#sql-schema")
    page.fill("#gold-query", "DELETE FROM customers")
    page.click("#run-gold")
    page.wait_for_selector("#gold-run:has-text('refused before running')")
    edit = GOLD + " ORDER BY region"
    page.fill("#gold-query", edit)
    page.click("#run-gold")
    page.wait_for_selector("#gold-run table")
    assert "Matches the stored gold result" in page.inner_text("#gold-run")
    assert page.locator("#gold-run tbody tr").count() == 2
    page.check("#use-edit")
    page.click("#sql-verdict button[data-v=fail]")
    page.click("#submit")  # a Fail without a critique is refused in the page
    assert "critique" in page.inner_text("#status")
    page.fill("#sql-critique", "Counts churned customers as active.")
    shot(page, "sql-task")
    page.click("#submit")
    page.wait_for_url(lambda url: url != task_url)
    with server.db.read() as s:
        lab = s.scalars(select(Label).where(Label.task_id == server.sql_tasks[0])).one()
    assert lab.payload == {
        "verdict": "fail",
        "critique": "Counts churned customers as active.",
        "gold_query": edit,
    }


def test_policy_task_in_the_browser(page: Any, server: Planted) -> None:
    """The cleared expert sees the principal and every retrieved chunk's access label, the
    data-room chunk marked as a leak, and fails policy_ok with a critique from the keyboard;
    the next task loads in place."""
    room = server.room
    login(page, server.base, "ben", "ben-demo-pw")
    page.goto(server.base + "/work/policy")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=policy]")
    assert page.url.endswith(f"/task/{room.policy_leak}")
    assert "analyst" in page.inner_text("#principal")
    leaked = page.locator(f".chunk.restricted.leaked[data-chunk='{ROOM_CHUNK}']")
    assert leaked.count() == 1
    assert "restricted: ACME deal team" in leaked.inner_text()
    assert "a leak" in leaked.inner_text()
    public = page.locator(f".chunk[data-chunk='{PUBLIC_CHUNK}']")
    assert "public" in public.inner_text() and "visible to the principal" in public.inner_text()
    assert ROOM_CHUNK in page.inner_text("#leak-note")
    page.evaluate("window.__sameDocument = true")
    page.keyboard.press("f")  # fail: focus moves to the critique
    page.keyboard.type("States the data room's price to an outsider.")
    page.keyboard.press("Escape")
    shot(page, "policy-task")
    first = page.url
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != first)
    page.wait_for_selector("body[data-page=policy]")
    assert page.evaluate("window.__sameDocument") is True
    assert page.url.endswith(f"/task/{room.policy_clean}")
    assert page.locator(".chunk.leaked").count() == 0
    with server.db.read() as s:
        lab = s.scalars(select(Label).where(Label.task_id == room.policy_leak)).one()
    assert lab.payload == {
        "verdict": "fail",
        "critique": "States the data room's price to an outsider.",
    }


def test_uncleared_expert_is_never_served_the_leak_in_the_browser(
    page: Any, server: Planted
) -> None:
    room = server.room
    login(page, server.base, "ana", "ana-demo-pw")
    page.goto(server.base + "/work/policy")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=policy]")
    assert page.url.endswith(f"/task/{room.policy_clean}")
    assert page.locator(".chunk.restricted").count() == 0
    r = page.goto(f"{server.base}/task/{room.policy_leak}")
    assert r is not None and r.status == 404
    assert "Falcon" not in page.inner_text("body") and "412" not in page.inner_text("body")


def test_adjudicating_sql_in_the_browser(page: Any, server: Planted) -> None:
    """Two verdicts side by side; the adjudicator takes one expert's edited gold query, runs
    it, fails the system query with a critique and records the final label."""
    db = server.db
    task = server.sql_tasks[1]
    edit = "SELECT region, COUNT(*) AS active FROM customers WHERE status = 'A' GROUP BY 1"
    _label(db, "ana", "sql", task, {"verdict": "pass"})
    _label(
        db, "ben", "sql", task, {"verdict": "fail", "critique": "No filter.", "gold_query": edit}
    )
    assert task in {q.task_id for q in svc.adjudication_queue(db)}
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(f"{server.base}/adjudicate/{task}")
    page.wait_for_selector("body[data-page=adjudicate]")
    assert page.locator(".label-col").count() == 2
    assert SYSTEM in page.inner_text("#adj-sql")
    assert page.locator(".label-col .verdict.fail").count() == 1
    page.locator("button.use-query").click()
    assert page.input_value("#gold-query") == edit and page.is_checked("#use-edit")
    page.click("#run-gold")
    page.wait_for_selector("#gold-run table")
    assert "Matches the stored gold result" in page.inner_text("#gold-run")
    page.click("#verdict button[data-v=fail]")
    page.fill("#critique", "")
    page.click("#adj-submit")  # a Fail without a critique: refused in the page
    page.wait_for_selector("#status:has-text('critique')")
    page.fill("#critique", "Counts churned customers as active.")
    page.select_option("#root-cause", "annotator_error")
    shot(page, "adjudicate-sql")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    with db.read() as s:
        adj = s.scalars(select(Adjudication).where(Adjudication.task_id == task)).one()
    assert adj.payload == {
        "verdict": "fail",
        "critique": "Counts churned customers as active.",
        "gold_query": edit,
    }


def test_adjudicating_policy_in_the_browser(page: Any, server: Planted) -> None:
    db = server.db
    task = server.room.policy_clean
    _label(db, "ana", "policy", task, {"verdict": "fail", "critique": "Hints at the deal."})
    _label(db, "ben", "policy", task, {"verdict": "pass"})
    assert task in {q.task_id for q in svc.adjudication_queue(db)}
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(f"{server.base}/adjudicate/{task}")
    page.wait_for_selector("body[data-page=adjudicate]")
    assert "analyst" in page.inner_text("#principal")
    assert page.locator(".label-col").count() == 2
    order = [c.inner_text() for c in page.locator(".label-col h2").all()]
    page.locator(f".label-col[data-label='{order.index('ana')}'] button.take").click()
    assert page.input_value("#critique") == "Hints at the deal."
    page.click("#verdict button[data-v=pass]")
    page.fill("#critique", "")
    page.select_option("#root-cause", "ambiguous_item")
    shot(page, "adjudicate-policy")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    with db.read() as s:
        adj = s.scalars(select(Adjudication).where(Adjudication.task_id == task)).one()
    assert adj.payload == {"verdict": "pass", "critique": ""}
    assert adj.root_cause == "ambiguous_item"
