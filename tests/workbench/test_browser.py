"""End-to-end flows in a real headless Chromium (Debian's), one browser for the module:
login, evidence labelling, judging (keyboard, no reload), adjudication, and script payloads
that must render as text and never run. Screenshots go to artifacts/workbench/."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM
pytest.importorskip("playwright.sync_api")

from assay.workbench import service as svc  # noqa: E402
from assay.workbench.app import WorkbenchConfig, create_app  # noqa: E402
from assay.workbench.db import Database  # noqa: E402
from assay.workbench.models import Chunk, Item, User  # noqa: E402

from .conftest import BACKENDS, PgStore, demo_store, judge_payload  # noqa: E402
from .serverutil import free_port  # noqa: E402

ARTIFACTS = (
    Path(os.environ.get("ASSAY_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts"))
    / "workbench"
)
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


class Server:
    def __init__(self, db: Database) -> None:
        import uvicorn

        self.db = db
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    pg_store: PgStore | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("browser")
    db = demo_store(request.param, tmp, sqlite_template, pg_store)
    _plant_payloads(db, tmp)
    srv = Server(db)
    yield srv
    srv.stop()
    db.dispose()


def _plant_payloads(db: Database, tmp: Path) -> None:
    """A question, a chunk and a system answer that carry script payloads."""
    (tmp / "x-chunks.jsonl").write_text(
        json.dumps(
            {
                "chunk_id": "evil#1",
                "doc_id": "evil-doc",
                "page": 1,
                "company": "Evil Corp",
                "form": "10-K",
                "fiscal_year": 2023,
                "text": f"Revenue grew. {XSS} zebra",
            }
        )
        + "\n"
    )
    (tmp / "x-entries.jsonl").write_text(
        json.dumps(
            {
                "id": "xss-1",
                "query": f"zebra question {XSS}",
                "category": "metric",
                "metadata": {"company": "Evil Corp"},
            }
        )
        + "\n"
    )
    (tmp / "x-run.jsonl").write_text(
        json.dumps({"id": "xss-1", "retrieved": ["evil#1"], "answer": f"answer {XSS}"}) + "\n"
    )
    svc.import_corpus(db, tmp / "x-chunks.jsonl")
    svc.import_entries(db, tmp / "x-entries.jsonl", kinds=("evidence",), overlap=2)
    svc.import_run(db, tmp / "x-run.jsonl", run_name="evil", overlap=2)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(15000)
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs  # type: ignore[attr-defined]
    yield pg
    ctx.close()


def login(page: Any, base: str, user: str, pw: str) -> None:
    page.context.clear_cookies()
    page.goto(base + "/")
    assert "/login" in page.url
    page.fill('input[name="username"]', user)
    page.fill('input[name="password"]', pw)
    page.click('button[type="submit"]')
    page.wait_for_selector("h1:has-text('Your queues')")


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5000
    return path


def test_login_rejects_a_wrong_password_then_lets_the_right_one_in(
    page: Any, server: Server
) -> None:
    page.goto(server.base + "/login")
    page.fill('input[name="username"]', "ana")
    page.fill('input[name="password"]', "wrong-password")
    page.click('button[type="submit"]')
    assert "Wrong username or password" in page.inner_text("#login-error")
    login(page, server.base, "ana", "ana-demo-pw")
    assert "ana" in page.inner_text("header.top")
    shot(page, "login-home")


def test_evidence_labelling_in_the_browser(page: Any, server: Server) -> None:
    login(page, server.base, "ben", "ben-demo-pw")
    page.click("#queue-evidence button.continue")
    page.wait_for_selector("body[data-page=evidence]")
    assert page.locator(".answer-text").count() == 0  # no system output in this task
    page.fill("#search-q", "segment revenue")
    page.select_option("#search-company", "Acme Devices")  # the filter reruns the search
    page.wait_for_selector("#results .chunk")
    first = page.locator("#results .chunk").first
    cid = first.get_attribute("data-chunk")
    first.locator("button.add-piece").click()
    second = page.locator("#results .chunk").nth(1)
    cid2 = second.get_attribute("data-chunk")
    second.locator("button.add-alt").click()
    chips = page.locator("#paths .chip").all_inner_texts()
    assert any(cid in c for c in chips) and any(cid2 in c for c in chips)
    shot(page, "evidence")
    task_url = page.url
    page.click("#submit")
    page.wait_for_url(lambda url: url != task_url)  # saved, and the next item is in place
    with server.db.read() as s:
        ben = s.query(User).filter(User.username == "ben").one()
        from assay.workbench.models import Label

        labels = s.query(Label).filter(Label.user_id == ben.id).all()
    assert any(
        {cid, cid2} == {a for path in lab.payload["paths"] for p in path for a in p}
        for lab in labels
    )


def test_judging_with_keyboard_and_no_page_reload(page: Any, server: Server) -> None:
    login(page, server.base, "ana", "ana-demo-pw")
    page.goto(server.base + "/work/judge")  # looking claims nothing: a button takes the item
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=judge]")
    page.evaluate("window.__sameDocument = true")
    first_url = page.url
    # retrieved chunks are shown inline with doc, period and version date
    header = page.locator(".col-right .chunk header").first.inner_text()
    assert "FY" in header and "version" in header
    page.keyboard.press("a")  # all pass
    page.keyboard.press("2")
    page.keyboard.press("f")  # fail "comprehensive": focus moves to its critique
    page.keyboard.type("Omits the prior-year figure.")
    page.keyboard.press("Escape")
    shot(page, "judge")
    page.keyboard.press("n")  # submit and load the next item in place
    page.wait_for_url(lambda url: url != first_url)
    page.wait_for_selector("body[data-page=judge]")
    assert page.evaluate("window.__sameDocument") is True  # no full page load happened
    # a Fail without a critique is refused in the page itself
    page.keyboard.press("a")
    page.keyboard.press("1")
    page.keyboard.press("f")
    page.keyboard.press("Escape")
    page.click("#submit")
    assert "critique" in page.inner_text("#status")


def test_timed_session_starts_with_calibration_and_shows_feedback(
    page: Any, server: Server
) -> None:
    login(page, server.base, "ben", "ben-demo-pw")
    page.click("#queue-judge form[action='/session/start'] button")  # start a timed session
    page.wait_for_selector("body[data-page=judge]")
    assert page.locator(".tag.calib").count() == 1  # calibration first
    assert ":" in page.inner_text("#timer")  # the countdown runs
    page.keyboard.press("a")
    page.keyboard.press("n")
    page.wait_for_selector("#calib-feedback")
    text = page.inner_text("#calib-feedback")
    assert "reference" in text and "correct" in text
    shot(page, "calibration-feedback")
    url = page.url
    page.click("#calib-feedback button")
    page.wait_for_url(lambda u: u != url)


def test_adjudication_in_the_browser(page: Any, server: Server) -> None:
    db = server.db
    with db.read() as s:
        users = {u.username: u for u in s.query(User)}
    # make a disagreement on the remaining demo judging tasks (service layer, like two experts)
    for name, payload in (
        ("ana", judge_payload(policy="Recommends buying the stock.")),
        ("ben", judge_payload()),
    ):
        while (t := svc.claim_next(db, users[name], "judge")) is not None:
            svc.submit_label(
                db,
                users[name],
                t,
                payload if t % 2 else judge_payload(),
                client_id=f"{name}-adj-{t}",
            )
    assert svc.adjudication_queue(db)
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(server.base + "/adjudicate")
    shot(page, "adjudication-queue")
    page.locator("#adj-queue a:has-text('Adjudicate')").first.click()
    page.wait_for_selector("body[data-page=adjudicate]")
    cols = page.locator(".label-col")
    assert cols.count() == 2
    page.locator("button.take").first.click()
    page.select_option("#root-cause", "guideline_gap")
    page.fill("#guideline-change", "A buy or sell recommendation fails policy.")
    page.check("#hard-case")
    shot(page, "adjudicate")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    page.goto(server.base + "/guidelines")
    assert "A buy or sell recommendation fails policy." in page.inner_text("#changelog")
    page.goto(server.base + "/agreement")
    shot(page, "agreement")


def test_script_payloads_render_as_text_and_never_run(
    page: Any, server: Server, tmp_path: Path
) -> None:
    from assay.workbench.auth import create_user

    db = server.db
    with db.read() as s:
        assert s.get(Item, "xss-1") is not None and s.get(Chunk, "evil#1") is not None
    # a fresh question and answer with payloads, judged by two experts of that domain; one
    # critique carries a payload too, and the adjudicator sees both side by side
    (tmp_path / "e.jsonl").write_text(
        json.dumps(
            {
                "id": "xss-2",
                "query": f"zebra again {XSS}",
                "category": "metric",
                "metadata": {"company": "Evil Corp"},
            }
        )
        + "\n"
    )
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"id": "xss-2", "retrieved": ["evil#1"], "answer": f"answer {XSS}"}) + "\n"
    )
    svc.import_entries(db, tmp_path / "e.jsonl", kinds=(), overlap=2)
    svc.import_run(db, tmp_path / "r.jsonl", run_name="evil2", overlap=2)
    for name in ("xa", "xb"):
        create_user(db, name, "tulip-basin-4821", domains=["Evil Corp"], fast_hash=True)
    with db.read() as s:
        users = {u.username: u for u in s.query(User)}
    for name in ("xa", "xb"):
        while (t := svc.claim_next(db, users[name], "judge")) is not None:
            p = judge_payload(correct=f"critique {XSS}") if name == "xa" else judge_payload()
            svc.submit_label(db, users[name], t, p, client_id=f"{name}-x-{t}")
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    task_id = next(q.task_id for q in svc.adjudication_queue(db) if q.item_id == "xss-2")
    for url in (f"/task/{task_id}", f"/adjudicate/{task_id}", "/adjudicate"):
        page.goto(server.base + url)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None, url
        assert "<script>window.__xss = 1</script>" in page.inner_text("body"), url
    # search results are built by JS from JSON: still inert
    login(page, server.base, "ana", "ana-demo-pw")
    page.goto(server.base + "/work/evidence")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=evidence]")
    page.fill("#search-q", "zebra")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#results .chunk[data-chunk='evil#1']")
    assert "<img src=x" in page.inner_text("#results")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss") is None
    assert page.dialogs == []  # type: ignore[attr-defined]
    shot(page, "xss-inert")


def _disagree(db: Database, kind: str, make: Any) -> list[int]:
    """ana and ben label every open task of a kind; make(name) -> payload."""
    with db.read() as s:
        users = {u.username: u for u in s.query(User)}
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, users[name], kind)) is not None:
            svc.submit_label(db, users[name], t, make(name), client_id=f"{name}-{kind}-{t}")
    return [q.task_id for q in svc.adjudication_queue(db) if q.kind == kind]


def _labels_in_page_order(db: Database, task_id: int) -> list[str]:
    with db.read() as s:
        adj = s.query(User).filter(User.username == "adjudicator").one()
    return [lab.user or "" for lab in svc.adjudication_view(db, adj, task_id).labels]


def test_adjudicating_evidence_with_a_form(page: Any, server: Server) -> None:
    """The two experts' evidence side by side; the final label is built by starting from one,
    adding the other's chunk as an alternative and a chunk found in the corpus search."""
    from assay.workbench.models import Adjudication

    db = server.db
    seg, rev = "acme-2023-10k#segments", "acme-2023-10k#mdna-revenue"
    tasks = _disagree(
        db, "evidence", lambda name: {"paths": [[[seg if name == "ana" else rev]]], "note": name}
    )
    task = tasks[0]
    order = _labels_in_page_order(db, task)
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(f"{server.base}/adjudicate/{task}")
    page.wait_for_selector("body[data-page=adjudicate]")
    assert page.locator("#final-json").count() == 0  # a form, not JSON
    assert page.locator(".label-col").count() == 2
    page.locator(f".label-col[data-label='{order.index('ana')}'] button.take").click()
    assert seg in page.inner_text("#paths")
    page.locator(
        f".label-col[data-label='{order.index('ben')}'] .chunk[data-chunk='{rev}'] button.add-alt"
    ).click()
    page.fill("#search-q", "inventories restated")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#results .chunk[data-chunk='acme-2023-10ka#inventory-restated']")
    page.locator(
        "#results .chunk[data-chunk='acme-2023-10ka#inventory-restated'] button.add-piece"
    ).click()
    chips = page.locator("#paths .chip").all_inner_texts()
    assert len(chips) == 3
    page.select_option("#root-cause", "annotator_error")
    page.fill("#adj-note", "Both figures are the same number; the restatement is a second piece.")
    shot(page, "adjudicate-evidence")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    with db.read() as s:
        adj = s.query(Adjudication).filter(Adjudication.task_id == task).one()
    assert adj.payload["paths"] == [[sorted([seg, rev]), ["acme-2023-10ka#inventory-restated"]]]
    assert adj.root_cause == "annotator_error"


def test_adjudicating_reference_answers_with_a_form(page: Any, server: Server) -> None:
    """Reference answers side by side: start from ana's, take ben's wording of the answer and
    merge his key facts, set answerability, record the final label."""
    from assay.workbench.models import Adjudication

    db = server.db

    def ref(name: str) -> dict[str, Any]:
        if name == "ana":
            return {
                "reference_answer": "ANA: Sensors grew fastest.",
                "key_facts": [{"fact": "Sensors grew fastest", "critical": True, "supporting": []}],
                "answerable": True,
                "expected_behavior": "answer",
            }
        return {
            "reference_answer": "BEN: Sensors, up 17% to $1,402 million.",
            "key_facts": [
                {
                    "fact": "Sensors revenue was $1,402 million",
                    "critical": False,
                    "supporting": ["acme-2023-10k#segments"],
                }
            ],
            "answerable": "partial",
            "expected_behavior": "answer",
            "structured_lookup": {"source": "facts", "searched": "Acme, segments", "found": "-"},
        }

    task = _disagree(db, "reference", ref)[0]
    order = _labels_in_page_order(db, task)
    login(page, server.base, "adjudicator", "adjudicator-demo-pw")
    page.goto(f"{server.base}/adjudicate/{task}")
    page.wait_for_selector("body[data-page=adjudicate]")
    assert page.locator("#final-json").count() == 0
    ana_col = f".label-col[data-label='{order.index('ana')}']"
    ben_col = f".label-col[data-label='{order.index('ben')}']"
    page.locator(f"{ana_col} button.take").click()
    assert page.input_value("#ref-answer") == "ANA: Sensors grew fastest."
    page.locator(f"{ben_col} button.use-answer").click()
    page.locator(f"{ben_col} button.add-facts").click()
    assert page.locator("#facts .fact").count() == 2
    page.check('input[name="answerable"][value="true"]')
    page.fill("#notes", "Rounding to 17% is fine.")
    page.select_option("#root-cause", "ambiguous_item")
    shot(page, "adjudicate-reference")
    page.click("#adj-submit")
    page.wait_for_url("**/adjudicate")
    with db.read() as s:
        adj = s.query(Adjudication).filter(Adjudication.task_id == task).one()
    p = adj.payload
    assert p["reference_answer"] == "BEN: Sensors, up 17% to $1,402 million."
    assert [f["fact"] for f in p["key_facts"]] == [
        "Sensors grew fastest",
        "Sensors revenue was $1,402 million",
    ]
    assert p["key_facts"][1]["supporting"] == ["acme-2023-10k#segments"]
    assert p["answerable"] is True and p["acceptable_response_notes"] == "Rounding to 17% is fine."


def _fresh_item(server: Server, tmp_path: Path, item: str, user: str) -> None:
    """A new question (evidence and reference tasks), a system answer with key facts for it,
    and a new expert: the demo's own queues are drained by the tests before."""
    from assay.workbench.auth import create_user

    (tmp_path / "e.jsonl").write_text(
        json.dumps(
            {
                "id": item,
                "query": "How much did Acme's Sensors segment revenue grow in fiscal 2023?",
                "category": "metric",
                "metadata": {"company": "Acme Devices"},
            }
        )
        + "\n"
    )
    (tmp_path / "r.jsonl").write_text(
        json.dumps(
            {
                "id": item,
                "retrieved": [],
                "answer": "Sensors revenue grew 17% to $1,402 million.",
                "key_facts": ["Sensors revenue was $1,402 million in FY2023"],
            }
        )
        + "\n"
    )
    svc.import_entries(server.db, tmp_path / "e.jsonl", overlap=1)
    svc.import_run(server.db, tmp_path / "r.jsonl", run_name="drafts", overlap=1)
    create_user(server.db, user, "tulip-basin-4821", fast_hash=True)


def test_reference_task_opens_prefilled_with_the_systems_draft(
    page: Any, server: Server, tmp_path: Path
) -> None:
    """No blank box: the reference form opens on the run's answer and key facts, marked as a
    draft, and the stored label records that it started from it."""
    from assay.workbench.models import Label, Output, Task

    _fresh_item(server, tmp_path, "draft-1", "dana")
    login(page, server.base, "dana", "tulip-basin-4821")
    page.goto(server.base + "/work/reference")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=reference]")
    task_id = int(page.url.rstrip("/").rsplit("/", 1)[-1])
    with server.db.read() as s:
        task = s.get(Task, task_id)
        assert task is not None
        out = (
            s.query(Output)
            .filter(Output.item_id == task.item_id, Output.reference_draft.is_not(None))
            .order_by(Output.run_name)
            .first()
        )
    assert out is not None and out.reference_draft
    assert "Draft" in page.inner_text("#draft-note") and out.run_name in page.inner_text(
        "#draft-note"
    )
    assert page.input_value("#ref-answer") == out.reference_draft["reference_answer"]
    facts = page.locator("#facts .fact input[type=text]")
    assert facts.count() == 1
    assert facts.first.input_value() == "Sensors revenue was $1,402 million in FY2023"
    page.fill("#ref-answer", page.input_value("#ref-answer") + " (checked against the 10-K)")
    shot(page, "reference-prefilled")
    url = page.url
    page.click("#submit")
    page.wait_for_url(lambda u: u != url)
    with server.db.read() as s:
        dana = s.query(User).filter(User.username == "dana").one()
        lab = s.query(Label).filter(Label.task_id == task_id, Label.user_id == dana.id).one()
    assert lab.drafted is True and lab.payload["from_draft"] is True
    assert lab.payload["key_facts"][0]["fact"] == "Sensors revenue was $1,402 million in FY2023"
    assert lab.payload["reference_answer"].endswith("(checked against the 10-K)")


def test_evidence_pieces_take_graded_relevance(page: Any, server: Server, tmp_path: Path) -> None:
    from assay.workbench.models import Label

    _fresh_item(server, tmp_path, "graded-1", "eli")
    login(page, server.base, "eli", "tulip-basin-4821")
    page.goto(server.base + "/work/evidence")
    page.click("#work-next button[type=submit]")
    page.wait_for_selector("body[data-page=evidence]")
    task_id = int(page.url.rstrip("/").rsplit("/", 1)[-1])
    page.fill("#search-q", "segment revenue")
    page.select_option("#search-company", "Acme Devices")  # the filter reruns the search
    page.wait_for_selector("#results .chunk")
    first = page.locator("#results .chunk").first
    cid = first.get_attribute("data-chunk")
    first.locator("button.add-piece").click()
    grade = page.locator(f'#paths select.grade[data-chunk="{cid}"]')
    assert grade.count() == 1
    assert page.locator(f'#paths select.grade[data-chunk="{cid}"] option').all_inner_texts()[
        1:
    ] == [
        "0 not",
        "1 marginal",
        "2 relevant",
        "3 highly",
    ]
    grade.select_option("3")
    shot(page, "evidence-graded")
    url = page.url
    page.click("#submit")
    page.wait_for_url(lambda u: u != url)
    with server.db.read() as s:
        eli = s.query(User).filter(User.username == "eli").one()
        lab = s.query(Label).filter(Label.task_id == task_id, Label.user_id == eli.id).one()
    assert lab.payload["relevance"] == {cid: 3}
