"""Access follows content in a real headless Chromium (issue 40): the reference form of a public
policy question opens on a draft only the viewer may see. An uncleared expert's form is
prefilled from the run built from public material, never from the leaky run's answer (which
quoted the data room); a cleared expert's from the leaky run's. Both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NEEDS_CHROMIUM

from .test_browser import Server, login

pytest.importorskip("playwright.sync_api")

from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.models import Task, User

from .access_room import LEAKED, plant_leaky_reference, plant_room
from .conftest import BACKENDS, PgStore, demo_store

pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    pg_store: PgStore | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("browser-content")
    db = demo_store(request.param, tmp, sqlite_template, pg_store)
    plant_room(db, tmp)
    ref = plant_leaky_reference(db, tmp)
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    with db.read() as s:
        users = {u.username: u for u in s.scalars(select(User))}
    for name in ("ana", "ben"):  # each claims the reference task (labelling those before it)
        while (got := svc.claim_next(db, users[name], "reference")) != ref:
            assert got is not None
            payload = {"reference_answer": "x", "answerable": True}
            svc.submit_label(db, users[name], got, payload, client_id=f"{name}{got}")
    srv = Server(db)
    srv.ref = ref  # type: ignore[attr-defined]
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


def _reference_form(page: Any, server: Server, user: str, pw: str) -> tuple[str, str]:
    """(the prefilled reference answer, the page's text) of the leaky-drafted reference task."""
    login(page, server.base, user, pw)
    page.goto(f"{server.base}/task/{server.ref}")  # type: ignore[attr-defined]
    page.wait_for_selector("#ref-answer")
    page.wait_for_function("document.querySelector('#ref-answer').value !== ''")
    return page.input_value("#ref-answer"), page.inner_text("body")


def test_the_uncleared_expert_is_offered_only_the_public_draft(page: Any, server: Server) -> None:
    answer, body = _reference_form(page, server, "ana", "ana-demo-pw")
    assert answer == "I cannot share the deal terms."
    assert LEAKED not in answer and LEAKED not in body and "zz-clean" in body
    assert LEAKED not in page.content()


def test_the_cleared_expert_is_offered_the_leaky_runs_draft(page: Any, server: Server) -> None:
    answer, body = _reference_form(page, server, "ben", "ben-demo-pw")
    assert LEAKED in answer and "room" in body  # the run named 'room', first by name


def test_redaction_in_the_reference_form_as_each_clearance(
    page: Any, server: Server, tmp_path: Path
) -> None:
    """Redacting (`serve --redact`): a public question drafted only by a run whose answer quotes
    the data room memo without citing it. The uncleared expert's form opens on the draft with the
    quote replaced by "[restricted]"; the cleared expert's on the whole draft. (Runs last: it
    adds a question to the module's store.)"""
    import json

    db = server.db
    entry = {"id": "pub-q", "query": "Who is buying Acme Target?", "category": "deal",
             "metadata": {"domain": "Falcon"}, "reference_answer": "Northwind.",
             "evidence_paths": [[["nwb-2023-10k#p1"]]]}  # fmt: skip
    quote = "Northwind. THE ACQUISITION PRICE FOR ACME TARGET IS $412M."
    (tmp_path / "q.jsonl").write_text(json.dumps(entry) + "\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "pub-q", "answer": quote}) + "\n")
    svc.import_entries(db, tmp_path / "q.jsonl", kinds=("reference",))
    svc.import_run(db, tmp_path / "r.jsonl", run_name="quoter")
    svc.set_redacting(db, True)
    with db.read() as s:
        users = {u.username: u for u in s.scalars(select(User))}
        target = s.scalars(
            select(Task.id).where(Task.item_id == "pub-q", Task.kind == "reference")
        ).one()
    for name in ("ana", "ben"):
        while (got := svc.claim_next(db, users[name], "reference")) != target:
            assert got is not None
            payload = {"reference_answer": "x", "answerable": True}
            svc.submit_label(db, users[name], got, payload, client_id=f"{name}-r{got}")
    server.ref = target  # type: ignore[attr-defined]
    answer, body = _reference_form(page, server, "ana", "ana-demo-pw")
    assert answer.startswith("Northwind.") and "[restricted]" in answer and "412" not in answer
    assert "412" not in body and "412" not in page.content()
    answer, _ = _reference_form(page, server, "ben", "ben-demo-pw")
    assert "412" in answer and "[restricted]" not in answer
    svc.set_redacting(db, False)
