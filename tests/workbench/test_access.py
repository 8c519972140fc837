"""Annotators' own access (issue 28): an expert without a deal team's clearance never sees that
team's restricted documents: not by id (404, exactly as a missing chunk), not in search or its
filters, not in the queue or a task, not through labels, adjudication or submissions; a cleared
expert sees them. Group names are compared exactly, and a label with several groups opens to
any of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import select

from assay.errors import DataError, UsageError
from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import AccessGrant, Task, User

from .access_room import BOARD_CHUNK, NOTE_CHUNK, PUBLIC_CHUNK, ROOM_CHUNK, Room, plant_room
from .conftest import judge_payload, login_client

PW = "tulip-basin-4821"


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


@pytest.fixture
def room(db: Database, tmp_path: Path) -> Room:
    r = plant_room(db, tmp_path)
    svc.set_user_access(db, "ben", groups=["deal:ACME"], clearance="insider")
    create_user(db, "dan", PW, "annotator", groups=["DEAL:ACME", "Deal:Acme"], clearance="insider")
    create_user(db, "bo", PW, "annotator", groups=["board:NWB"], clearance="internal")
    create_user(db, "cleo", PW, "adjudicator", groups=["deal:ACME"], clearance="director")
    return r


def _chunk_url(cid: str) -> str:
    return "/api/chunks/" + quote(cid, safe="")


def test_uncleared_expert_gets_404_on_a_restricted_chunk(app: Any, room: Room) -> None:
    """Issue 28's done-means: the uncleared expert's answer is the missing chunk's answer."""
    ana, _ = login_client(app, "ana")
    ben, _ = login_client(app, "ben")
    dan, _ = login_client(app, "dan", PW)
    missing = ana.get(_chunk_url("acme-room-memo#404"))
    assert missing.status_code == 404
    for client in (ana, dan):  # dan's groups are case variants of deal:ACME
        r = client.get(_chunk_url(ROOM_CHUNK))
        assert r.status_code == 404
        assert (
            r.json() == missing.json()
            and r.headers["content-type"] == missing.headers["content-type"]
        )
    got = ben.get(_chunk_url(ROOM_CHUNK))
    assert got.status_code == 200
    body = got.json()
    assert body["restricted"] is True and "Project Falcon" in body["text"]
    assert body["access"] == [
        {"groups": ["deal:ACME"], "clearance": "insider", "label": "ACME deal team"}
    ]
    assert ana.get(_chunk_url(PUBLIC_CHUNK)).json()["restricted"] is False


def test_label_with_several_groups_and_a_tier(app: Any, room: Room) -> None:
    bo, _ = login_client(app, "bo", PW)
    ben, _ = login_client(app, "ben")
    ana, _ = login_client(app, "ana")
    # board minutes: board:NWB or deal:ACME opens them
    assert bo.get(_chunk_url(BOARD_CHUNK)).status_code == 200
    assert ben.get(_chunk_url(BOARD_CHUNK)).status_code == 200
    assert ana.get(_chunk_url(BOARD_CHUNK)).status_code == 404
    # the data room: the deal team at insider tier; bo is in neither
    assert bo.get(_chunk_url(ROOM_CHUNK)).status_code == 404
    # a chunk-level label on a public filing: directors only; insider ben may not, director may
    assert ben.get(_chunk_url(NOTE_CHUNK)).status_code == 404
    cleo, _ = login_client(app, "cleo", PW)
    assert cleo.get(_chunk_url(NOTE_CHUNK)).status_code == 200
    # and the rest of the same public filing stays public
    assert bo.get(_chunk_url(PUBLIC_CHUNK)).status_code == 200


def test_search_and_its_filters_hide_restricted_documents(
    db: Database, app: Any, room: Room
) -> None:
    u = users(db)
    for q in ("Falcon acquisition", "acquisition"):
        ana_hits = {h.chunk_id for h in svc.search_chunks(db, q, viewer=u["ana"])}
        ben_hits = {h.chunk_id for h in svc.search_chunks(db, q, viewer=u["ben"])}
        assert ROOM_CHUNK not in ana_hits and BOARD_CHUNK not in ana_hits
        assert NOTE_CHUNK not in ana_hits
        assert {ROOM_CHUNK, BOARD_CHUNK} <= ben_hits and NOTE_CHUNK not in ben_hits
    assert PUBLIC_CHUNK in {
        h.chunk_id for h in svc.search_chunks(db, "acquisition", viewer=u["ana"])
    }
    # no viewer is the public
    assert ROOM_CHUNK not in {h.chunk_id for h in svc.search_chunks(db, "Falcon")}
    # the route: no hit, no snippet, no company filter names the deal
    ana, _ = login_client(app, "ana")
    r = ana.get("/api/search", params={"q": "Project Falcon acquisition price"})
    text = r.text
    assert r.status_code == 200 and "412" not in text and ROOM_CHUNK not in text
    assert "Acme Target" not in svc.facets(db, u["ana"]).companies
    assert "Acme Target" in svc.facets(db, u["ben"]).companies
    assert "Acme Target" not in ana.get("/").text


def _drain(db: Database, user: User, kind: str) -> list[int]:
    """Claim and label every task of a kind the queue serves the user, in order."""
    served: list[int] = []
    while (tid := svc.claim_next(db, user, kind)) is not None:
        assert tid not in served
        served.append(tid)
        payload: dict[str, Any] = {"paths": []} if kind == "evidence" else {"verdict": "pass"}
        if kind == "judge":
            payload = judge_payload()
        svc.submit_label(db, user, tid, payload, client_id=f"{user.username}-{tid}")
    return served


def test_the_queue_never_serves_a_task_whose_material_is_hidden(db: Database, room: Room) -> None:
    u = users(db)
    restricted = {room.restricted_evidence, room.board_evidence}
    ana_counts = svc.queue_counts(db, u["ana"])
    served = _drain(db, u["ana"], "evidence")
    assert room.public_evidence in served and not restricted & set(served)
    # the home page's count leaves the two hidden tasks out
    assert svc.queue_counts(db, u["ben"])["evidence"].open - ana_counts["evidence"].open == 2
    # policy and judging tasks on the leaky answer retrieved the data room: never served
    assert room.policy_leak not in _drain(db, u["ana"], "policy")
    assert room.policy_clean in _drain(db, u["dan"], "policy")  # dan's case variants open nothing
    assert room.judge_leak not in _drain(db, u["ana"], "judge")
    # the cleared expert is served the data room's task (and the board minutes' via deal:ACME)
    assert restricted <= set(_drain(db, u["ben"], "evidence"))
    assert room.policy_leak in _drain(db, u["ben"], "policy")


def test_a_hidden_task_is_404_by_every_route(db: Database, app: Any, room: Room) -> None:
    u = users(db)
    ana, ana_csrf = login_client(app, "ana")
    adj, adj_csrf = login_client(app, "adjudicator")  # an adjudicator without the clearance
    missing = 10**6
    for client, csrf in ((ana, ana_csrf), (adj, adj_csrf)):
        for tid in (room.restricted_evidence, room.policy_leak, room.judge_leak):
            assert client.get(f"/api/tasks/{tid}").status_code == 404
            page = client.get(f"/task/{tid}")
            assert page.status_code == 404 and "Falcon" not in page.text
            assert client.get(f"/api/tasks/{tid}/labels").json() == {"labels": []}
            r = client.post(
                "/api/labels",
                json={"task_id": tid, "payload": {"paths": []}, "client_id": f"x{tid}"},
                headers={"X-CSRF-Token": csrf},
            )
            gone = client.post(
                "/api/labels",
                json={"task_id": missing, "payload": {"paths": []}, "client_id": f"y{tid}"},
                headers={"X-CSRF-Token": csrf},
            )
            assert r.status_code == gone.status_code == 404 and r.json() == gone.json()
    with pytest.raises(svc.NotFound):
        svc.task_view(db, u["adjudicator"], room.restricted_evidence)
    assert svc.task_view(db, u["cleo"], room.restricted_evidence).item.id == "room-price"


def test_a_submission_cannot_probe_for_hidden_chunk_ids(db: Database, room: Room) -> None:
    u = users(db)
    tid = svc.claim_next(db, u["ana"], "evidence")
    assert tid is not None

    def refused(cid: str) -> str:
        with pytest.raises(DataError) as exc:
            svc.submit_label(db, u["ana"], tid, {"paths": [[[cid]]]}, client_id="probe-" + cid)
        (problem,) = exc.value.problems
        return problem.message.replace(cid, "ID")

    assert refused(ROOM_CHUNK) == refused("acme-room-memo#no-such-chunk")
    assert refused(ROOM_CHUNK).startswith("not in the corpus")
    # the cleared expert may name it
    tid_b = svc.claim_next(db, u["ben"], "evidence")
    assert tid_b is not None
    svc.submit_label(db, u["ben"], tid_b, {"paths": [[[ROOM_CHUNK]]]}, client_id="b-ok")


def test_labels_and_adjudication_naming_a_hidden_chunk_stay_hidden(
    db: Database, app: Any, room: Room
) -> None:
    """A public task whose labels name a data-room chunk: an uncleared adjudicator neither sees
    it in the queue nor opens it (404), nor reads its labels; a cleared one adjudicates it."""
    u = users(db)
    for name, paths in (("ben", [[[ROOM_CHUNK]]]), ("cleo", [[[PUBLIC_CHUNK]]])):
        while (tid := svc.claim_next(db, u[name], "evidence")) != room.public_evidence:
            assert tid is not None
            svc.submit_label(db, u[name], tid, {"paths": []}, client_id=f"{name}-{tid}")
        svc.submit_label(db, u[name], tid, {"paths": paths}, client_id=f"{name}-pub")
    create_user(db, "amy", PW, "adjudicator", groups=["deal:ACME"], clearance="insider")
    u = users(db)
    queue_of = {
        n: {r.task_id for r in svc.adjudication_queue(db, u[n])} for n in ("adjudicator", "amy")
    }
    assert room.public_evidence not in queue_of["adjudicator"]
    assert room.public_evidence in queue_of["amy"]
    with pytest.raises(svc.NotFound):
        svc.adjudication_view(db, u["adjudicator"], room.public_evidence)
    adj, csrf = login_client(app, "adjudicator")
    assert adj.get(f"/adjudicate/{room.public_evidence}").status_code == 404
    r = adj.post(
        "/api/adjudications",
        json={
            "task_id": room.public_evidence,
            "payload": {"paths": []},
            "root_cause": "annotator_error",
        },
        headers={"X-CSRF-Token": csrf},
    )
    assert r.status_code == 404
    labels = adj.get(f"/api/tasks/{room.public_evidence}/labels").json()["labels"]
    assert ROOM_CHUNK not in str(labels)
    view = svc.adjudication_view(db, u["amy"], room.public_evidence)
    assert any(c.chunk_id == ROOM_CHUNK for lab in view.labels for c in lab.chunks or [])
    # the final label may name only chunks the adjudicator sees, like a submission
    with pytest.raises(DataError, match="not in the corpus"):
        svc.adjudicate(
            db,
            u["amy"],
            room.public_evidence,
            {"paths": [[[NOTE_CHUNK]]]},
            root_cause="annotator_error",
        )
    svc.adjudicate(
        db,
        u["amy"],
        room.public_evidence,
        {"paths": [[[PUBLIC_CHUNK]]]},
        root_cause="annotator_error",
    )


def test_access_changes_take_effect_and_an_open_claim_is_dropped(db: Database, room: Room) -> None:
    u = users(db)
    assert room.restricted_evidence not in _drain(db, u["ana"], "evidence")
    got = svc.set_user_access(
        db, "ANA", groups=[" deal:ACME ", "deal:ACME", "DEAL:acme"], clearance="insider"
    )
    assert got.groups == ["DEAL:acme", "deal:ACME"] and got.unmatched == ["DEAL:acme"]
    assert svc.claim_next(db, u["ana"], "evidence") == room.restricted_evidence
    assert svc.task_view(db, u["ana"], room.restricted_evidence).item.id == "room-price"
    svc.set_user_access(db, "ana", groups=[], clearance="director")  # the tier alone: not enough
    assert svc.open_task(db, u["ana"], "evidence") is None
    assert svc.claim_next(db, u["ana"], "evidence") is None
    with pytest.raises(svc.NotFound):
        svc.task_view(db, u["ana"], room.restricted_evidence)
    with pytest.raises(svc.NotFound):
        svc.submit_label(db, u["ana"], room.restricted_evidence, {"paths": []}, client_id="late")
    with pytest.raises(UsageError, match="clearance"):
        svc.set_user_access(db, "ana", groups=[], clearance="cosmic")
    with pytest.raises(UsageError, match="no user"):
        svc.set_user_access(db, "nobody", groups=[], clearance="public")


def test_reimported_labels_and_new_users_rebuild_the_grants(
    db: Database, room: Room, tmp_path: Path
) -> None:
    """The grants are derived data: a corpus re-import that lifts a label opens the task to
    everyone; a user created later gets grants from their access at once."""
    import json

    u = users(db)
    with db.read() as s:
        before = set(s.scalars(select(AccessGrant.key).where(AccessGrant.user_id == u["ben"].id)))
    assert before
    create_user(db, "eve", PW, "annotator", groups=["deal:ACME"], clearance="insider")
    with db.read() as s:
        eve = s.scalars(select(User).where(User.username == "eve")).one()
        assert (
            set(s.scalars(select(AccessGrant.key).where(AccessGrant.user_id == eve.id))) == before
        )
    docs = tmp_path / "lifted.jsonl"
    docs.write_text(
        json.dumps({"doc_id": "acme-room-memo", "company": "Acme Target", "form": "OTHER"}) + "\n",
        encoding="utf-8",
    )
    svc.import_corpus(db, tmp_path / "room-chunks.jsonl", docs)
    with db.read() as s:
        assert s.get(Task, room.restricted_evidence).access_key is None  # type: ignore[union-attr]
    assert room.restricted_evidence in _drain(db, u["ana"], "evidence")


def test_a_bad_access_label_in_a_chunk_file_names_file_and_line(
    db: Database, tmp_path: Path
) -> None:
    import json

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"chunk_id": "a#1", "doc_id": "a", "page": 1, "text": "x"})
        + "\n"
        + json.dumps(
            {
                "chunk_id": "a#2",
                "doc_id": "a",
                "page": 1,
                "text": "y",
                "access": {"clearance": "god"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError) as exc:
        svc.import_corpus(db, bad)
    (p,) = exc.value.problems
    assert p.file == str(bad) and p.line == 2 and p.field is not None and "clearance" in p.field


def test_admin_sets_access_from_the_admin_page(db: Database, app: Any, room: Room) -> None:
    admin, csrf = login_client(app, "admin")
    page = admin.get("/admin").text
    assert 'action="/admin/users/access"' in page
    r = admin.post(
        "/admin/users/access",
        data={
            "csrf_token": csrf,
            "username": "ana",
            "groups": "deal:ACME, board:NWB",
            "clearance": "insider",
        },
        follow_redirects=False,
    )
    assert r.status_code == 303 and "deal%3AACME" in r.headers["location"]
    ana, _ = login_client(app, "ana")
    assert ana.get(_chunk_url(ROOM_CHUNK)).status_code == 200
    # an annotator may not set access
    ben, ben_csrf = login_client(app, "ben")
    r = ben.post(
        "/admin/users/access",
        data={
            "csrf_token": ben_csrf,
            "username": "ben",
            "groups": "board:NWB",
            "clearance": "director",
        },
        follow_redirects=False,
    )
    assert r.status_code == 403


def test_migration_computes_keys_for_a_store_that_had_labels(tmp_path: Path) -> None:
    """A store upgraded from 0003 gets the keys of the labels it already held, and its users
    (no access yet) see nothing restricted."""
    from alembic import command
    from alembic.config import Config

    from assay.workbench.db import HEAD, schema_version
    from assay.workbench.demo_store import load_demo

    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    load_demo(db, fast_hash=True)
    room = plant_room(db, tmp_path)
    cfg = Config()
    cfg.set_main_option(
        "script_location",
        str(Path(__file__).resolve().parents[2] / "src/assay/workbench/migrations"),
    )
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0003")
        conn.commit()
    assert schema_version(db.engine) == "0003"
    db.migrate()
    assert schema_version(db.engine) == HEAD
    u = users(db)
    with db.read() as s:
        assert s.get(Task, room.restricted_evidence).access_key is not None  # type: ignore[union-attr]
        assert s.get(Task, room.public_evidence).access_key is None  # type: ignore[union-attr]
    assert room.restricted_evidence not in _drain(db, u["ana"], "evidence")
    db.dispose()
