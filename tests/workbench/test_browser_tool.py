"""The tool-call task in a real headless Chromium (Debian's): two annotators label the same
agent run call by call in the page (blind of each other and of the automatic checks), they
disagree on one call, and the adjudicator settles it on the adjudication page, where that call
is marked. Screenshots go to artifacts/workbench/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NEEDS_CHROMIUM, write_jsonl

from .test_browser import Server, login, shot

pytest.importorskip("playwright.sync_api")

from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.models import Adjudication, Label, User

from .conftest import BACKENDS, PgStore, demo_store
from .tool_room import MARGIN_CALLS, ToolRoom, plant_tools

pytestmark = NEEDS_CHROMIUM


class Planted(Server):
    room: ToolRoom


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    pg_store: PgStore | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Planted]:
    tmp = tmp_path_factory.mktemp("browser-tool")
    db = demo_store(request.param, tmp, sqlite_template, pg_store)
    room = plant_tools(db, tmp)
    srv = Planted(db)
    srv.room = room
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


def _label_in_page(page: Any, server: Planted, who: str, second: str, critique: str) -> None:
    """`who` opens the tool queue, is served the margin task, and labels it: call 1 fail, call 2
    `second`, call 3 fail, the missing search needed."""
    login(page, server.base, who, f"{who}-demo-pw")
    page.goto(server.base + "/work/tool")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=tool]")
    assert page.url.endswith(f"/task/{server.room.margin}")
    # the gold beside the calls made, differences marked; no automatic verdict, no other label
    assert "in this order" in page.inner_text("#tool-gold")
    assert "send_email" in page.inner_text("#tool-gold .forbidden-tool")
    assert page.locator("#call-1 .mark").inner_text() == "wrong arguments"
    assert page.locator("#call-1 tr.arg-diff").count() == 1
    assert "FY2021" in page.inner_text("#call-1 tr.arg-diff")
    assert page.locator("#call-2 .mark").inner_text() == "matched"
    assert page.locator("#call-3 .mark").inner_text() == "forbidden"
    assert page.locator("#missing-1").count() == 1
    assert page.locator("#tool-checks").count() == 0
    page.click("#call-1 button[data-v=fail]")
    page.click("#call-2 button[data-v=" + second + "]")
    page.click("#call-3 button[data-v=fail]")
    page.click("#submit")  # a Fail without a critique is refused in the page
    assert "critique" in page.inner_text("#status")
    page.fill("#call-1 .call-critique", "Searches FY2021, the question asks FY2022.")
    page.fill("#call-3 .call-critique", "Sends mail, which this agent must never do.")
    if second == "fail":
        page.fill("#call-2 .call-critique", critique)
    page.click("#submit")  # the missing call is not answered yet
    assert "missing" in page.inner_text("#status")
    page.click("#missing-1 button[data-needed=true]")
    if who == "ana":
        shot(page, "tool-task")
    first = page.url
    page.click("#submit")
    page.wait_for_url(lambda url: url != first)


def test_two_annotators_disagree_on_one_call_and_the_adjudicator_settles_it(
    page: Any, server: Planted
) -> None:
    db, task = server.db, server.room.margin
    _label_in_page(page, server, "ana", "pass", "")
    _label_in_page(page, server, "ben", "fail", "Divides income by 100, not by revenue.")
    with db.read() as s:
        names = {u.id: u.username for u in s.scalars(select(User))}
        labels = {
            names[lab.user_id]: lab.payload
            for lab in s.scalars(select(Label).where(Label.task_id == task))
        }
    assert [c["verdict"] for c in labels["ana"]["calls"]] == ["fail", "pass", "fail"]
    assert [c["verdict"] for c in labels["ben"]["calls"]] == ["fail", "fail", "fail"]
    assert labels["ana"]["missing"] == [{"needed": True, "critique": ""}]
    assert labels["ana"]["calls"][0]["critique"] == "Searches FY2021, the question asks FY2022."
    assert task in {q.task_id for q in svc.adjudication_queue(db)}

    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(server.base + "/adjudicate")
    page.click(f"a[href='/adjudicate/{task}']")
    page.wait_for_selector("body[data-page=adjudicate]")
    assert page.locator(".label-col").count() == 2
    # the disagreement is marked on call 2 only, in both columns
    assert page.locator(".label-col tr.diff").count() == 2
    assert page.locator(".label-col tr.diff[data-call='1']").count() == 2
    assert "trajectory_match" in page.inner_text("#tool-checks")  # the adjudicator sees them
    order = [c.inner_text() for c in page.locator(".label-col h2").all()]
    page.locator(f".label-col[data-label='{order.index('ben')}'] button.take").click()
    assert page.input_value("#call-2 .call-critique") == "Divides income by 100, not by revenue."
    page.click("#call-2 button[data-v=pass]")
    page.fill("#call-2 .call-critique", "")
    page.select_option("#root-cause", "annotator_error")
    shot(page, "adjudicate-tool")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    with db.read() as s:
        adj = s.scalars(select(Adjudication).where(Adjudication.task_id == task)).one()
    assert [c["verdict"] for c in adj.payload["calls"]] == ["fail", "pass", "fail"]
    assert adj.payload["calls"][0]["critique"] == "Searches FY2021, the question asks FY2022."
    assert adj.payload["missing"] == [{"needed": True, "critique": ""}]
    assert adj.root_cause == "annotator_error"


def test_a_calibration_tool_task_shows_the_gold_and_where_the_label_differs(
    page: Any, server: Planted, tmp_path: Path
) -> None:
    """In a timed session the calibration tool task comes first; after Submit the page shows
    the gold calls and, per call, the known verdict, why, and a mark where the label differs."""
    run = write_jsonl(
        tmp_path / "agent-cal.jsonl",
        [{"id": "tool:margin", "answer": "8.7%", "retrieved": [], "tool_calls": MARGIN_CALLS}],
    )
    svc.import_run(server.db, run, run_name="agent-cal", calibration=["tool:margin"])
    create_user(server.db, "cara", "tulip-basin-4821", fast_hash=True)  # no claim of her own yet
    login(page, server.base, "cara", "tulip-basin-4821")
    page.click("#queue-tool form[action='/session/start'] button")
    page.wait_for_selector("body[data-page=tool]")
    assert page.locator(".tag.calib").count() == 1
    page.click("#call-1 button[data-v=pass]")  # the gold: fail (searches FY2021)
    page.click("#call-2 button[data-v=pass]")
    page.click("#call-3 button[data-v=fail]")
    page.fill("#call-3 .call-critique", "Sends mail, which this agent must never do.")
    page.click("#missing-1 button[data-needed=true]")
    page.click("#submit")
    page.wait_for_selector("#calib-feedback")
    text = page.inner_text("#calib-feedback")
    assert "Gold calls (in this order): 1. search_filings" in text and "send_email" in text
    assert page.locator("#calib-tool tr.diff").count() == 1
    diff = page.inner_text("#calib-tool tr.diff")
    assert diff.startswith("call 1 (search_filings)") and "✗ differs" in diff
    assert "FY2021" in diff and "FY2022" in diff
    assert "✓" in page.inner_text("#calib-tool tr[data-key='missing 1']")
    shot(page, "calibration-feedback-tool")
    url = page.url
    page.click("#calib-feedback button")
    page.wait_for_url(lambda u: u != url)
