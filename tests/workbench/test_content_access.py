"""Access follows content (issue 40): a text is checked against the viewer's access by what it was
built from, not only by the entry's gold. A reference task on a public policy question whose
draft is a leaky run's answer (built from the deal room) never shows that draft to a viewer
without the clearance; free text written by cleared experts on such an item (reference answers,
critiques, flag notes) is shown only to viewers who may see everything the item's material
names. The test walks every page and API route as each clearance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Task, User

from .access_room import LEAKED, ROOM_CHUNK, plant_leaky_reference, plant_room
from .conftest import login_client

PW = "tulip-basin-4821"
SECRET = LEAKED  # the leaky run's answer: never for the uncleared
ROOM_TEXT = "Project Falcon"  # the deal room's chunk


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def leaky(db: Database, tmp_path: Path) -> dict[str, int]:
    """The access room with a reference task on a public policy question drafted by the leaky
    run (`plant_leaky_reference`), and cleared users."""
    plant_room(db, tmp_path)
    ref = plant_leaky_reference(db, tmp_path)
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    create_user(db, "cleo", PW, "annotator", groups=["deal:ACME"], clearance="insider")
    create_user(db, "carl", PW, "adjudicator", groups=["deal:ACME"], clearance="insider")
    return {"reference": ref}


ANSWER = {"reference_answer": "The filings do not say.", "answerable": True}
LOOKUP = {"searched": "facts table: Northwind, Acme Target", "found": "nothing"}


def _claim(db: Database, user: User, kind: str, target: int) -> None:
    while (tid := svc.claim_next(db, user, kind)) != target:
        assert tid is not None, f"task {target} never served to {user.username}"
        svc.submit_label(db, user, tid, ANSWER, client_id=f"{user.username}{tid}")


def test_a_draft_built_from_a_restricted_chunk_is_not_shown_to_the_uncleared(
    db: Database, app: Any, leaky: dict[str, int]
) -> None:
    u = users(db)
    ref = leaky["reference"]
    for name in ("ana", "ben"):
        _claim(db, u[name], "reference", ref)
    # the uncleared annotator: the task (its gold is public), but the public run's draft
    ana_view = svc.task_view(db, u["ana"], ref)
    assert ana_view.draft is not None and ana_view.draft["run_name"] == "zz-clean"
    ana, _ = login_client(app, "ana")
    for path in (f"/api/tasks/{ref}", f"/task/{ref}"):
        r = ana.get(path)
        assert r.status_code == 200 and SECRET not in r.text and "zz-clean" in r.text
    # the cleared one is offered the leaky run's draft (first by name)
    ben_view = svc.task_view(db, u["ben"], ref)
    assert ben_view.draft is not None and SECRET in ben_view.draft["reference_answer"]
    ben, _ = login_client(app, "ben")
    assert SECRET in ben.get(f"/task/{ref}").text
    # `drafted` records what was offered to the author
    sub = svc.submit_label(db, u["ana"], ref, ANSWER, client_id="a-ref")
    assert sub.created


def test_no_draft_at_all_when_every_run_leaked(
    db: Database, app: Any, leaky: dict[str, int], tmp_path: Path
) -> None:
    """A draft cited (not only retrieved) from a restricted chunk is hidden too, and the task
    is then shown without a draft."""
    leaked = [{"id": "pol-out", "answer": f"It is {SECRET}.", "citations": [ROOM_CHUNK]}]
    svc.import_run(db, _jsonl(tmp_path / "zz-clean.jsonl", leaked), run_name="zz-clean")
    u = users(db)
    _claim(db, u["ana"], "reference", leaky["reference"])
    assert svc.task_view(db, u["ana"], leaky["reference"]).draft is None
    ana, _ = login_client(app, "ana")
    assert SECRET not in ana.get(f"/api/tasks/{leaky['reference']}").text


def _walk(client: Any, task_ids: list[int], label_ids: list[int]) -> str:
    """Every page and read route a viewer can open, concatenated."""
    out: list[str] = []
    paths = ["/", "/guidelines", "/adjudicate", "/agreement", "/api/adjudication-queue"]
    paths += ["/api/agreement", "/api/me", "/work/reference", "/work/judge", "/work/policy"]
    paths += ["/api/search?q=" + quote(q) for q in ("Falcon price", "Acme Target", "412 million")]
    paths += ["/api/chunks/" + quote(ROOM_CHUNK, safe="")]
    for tid in task_ids:
        paths += [f"/api/tasks/{tid}", f"/task/{tid}", f"/api/tasks/{tid}/labels"]
        paths += [f"/adjudicate/{tid}"]
    paths += [f"/api/labels/{lid}" for lid in label_ids]
    for p in paths:
        r = client.get(p)
        assert r.status_code < 500, (p, r.status_code)
        out.append(r.text)
    return "\n".join(out)


def test_free_text_of_cleared_experts_follows_the_item(
    db: Database, app: Any, leaky: dict[str, int]
) -> None:
    """Two cleared experts answer the public reference task from the leaky draft and disagree;
    one flags the item quoting the price. The uncleared adjudicator sees none of it (the queue,
    the adjudication page, the labels, the flag note); the cleared adjudicator sees it all."""
    u = users(db)
    ref = leaky["reference"]
    label_ids = []
    for name, answerable in (("ben", True), ("cleo", False)):
        _claim(db, u[name], "reference", ref)
        payload = {
            "reference_answer": f"Northwind is paying {SECRET} Target (from the draft).",
            "answerable": answerable,
        }
        if not answerable:
            payload["structured_lookup"] = LOOKUP
        label_ids.append(
            svc.submit_label(db, u[name], ref, payload, client_id=f"{name}-ref").label_id
        )
    svc.add_flag(db, u["ben"], "pol-out", "ambiguous_question", f"the draft: {SECRET}")
    with db.read() as s:
        task_ids = sorted(s.scalars(select(Task.id)))
    assert ref in {r.task_id for r in svc.adjudication_queue(db, u["carl"])}
    assert ref not in {r.task_id for r in svc.adjudication_queue(db, u["adjudicator"])}
    assert svc.list_labels(db, u["adjudicator"], ref) == []
    with pytest.raises(svc.NotFound):
        svc.adjudication_view(db, u["adjudicator"], ref)
    for name in ("ana", "adjudicator", "admin"):  # none of them is cleared for the deal room
        client, _ = login_client(app, name)
        text = _walk(client, task_ids, label_ids)
        assert SECRET not in text and ROOM_TEXT not in text, name
    carl, _ = login_client(app, "carl", PW)
    page = carl.get(f"/adjudicate/{ref}")
    assert page.status_code == 200 and page.text.count(SECRET) >= 3  # labels, draft, flag
    # the authors still read their own label
    ben, _ = login_client(app, "ben")
    assert SECRET in ben.get(f"/api/labels/{label_ids[0]}").text
