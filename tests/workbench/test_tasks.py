"""The three tasks, flags, queues (overlap, domains, calibration first), search, idempotency."""

from __future__ import annotations

from typing import Any

import pytest

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Assignment, Label, Task, User

from .conftest import judge_payload


def post(client: Any, csrf: str, url: str, body: dict[str, Any]) -> Any:
    return client.post(url, json=body, headers={"X-CSRF-Token": csrf})


def test_evidence_labelling_flow(login: Any, db: Database) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/evidence", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    view = ana.get(f"/api/tasks/{task}").json()
    assert view["kind"] == "evidence" and "output" not in view  # no system output shown
    assert "demo-pipeline" not in ana.get(f"/task/{task}").text
    hits = ana.get("/api/search", params={"q": "segment revenue", "company": "Acme Devices"}).json()
    ids = [h["chunk_id"] for h in hits["hits"]]
    assert "acme-2023-10k#segments" in ids
    payload = {
        "paths": [[["acme-2023-10k#segments", "acme-2023-10k#mdna-revenue"]]],
        "note": "table and text say the same",
    }
    r = post(ana, csrf, "/api/labels", {"task_id": task, "payload": payload, "client_id": "e1"})
    assert r.status_code == 200, r.text
    stored = ana.get(f"/api/labels/{r.json()['label_id']}").json()["payload"]
    # alternatives are kept sorted and deduplicated
    assert stored["paths"] == [[["acme-2023-10k#mdna-revenue", "acme-2023-10k#segments"]]]


def test_evidence_rejects_chunks_not_in_the_corpus(login: Any) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/evidence", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    r = post(
        ana,
        csrf,
        "/api/labels",
        {"task_id": task, "payload": {"paths": [[["nope#1"]]]}, "client_id": "e"},
    )
    assert r.status_code == 422 and "nope#1" in r.json()["detail"]


def test_reference_task_validates_and_stores_key_facts(login: Any) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/reference", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    bad = {"reference_answer": "", "answerable": True, "expected_behavior": "answer"}
    r = post(ana, csrf, "/api/labels", {"task_id": task, "payload": bad, "client_id": "r0"})
    assert r.status_code == 422 and "reference answer" in r.json()["detail"]
    good = {
        "reference_answer": "Sensors, up 17% to $1,402 million.",
        "key_facts": [
            {
                "fact": "Sensors grew fastest",
                "critical": True,
                "supporting": ["acme-2023-10k#segments"],
            },
            {"fact": "Sensors revenue $1,402m", "critical": False, "supporting": []},
        ],
        "answerable": True,
        "expected_behavior": "answer",
        "acceptable_response_notes": "Rounding to 17% is fine.",
    }
    r = post(ana, csrf, "/api/labels", {"task_id": task, "payload": good, "client_id": "r1"})
    assert r.status_code == 200, r.text
    assert ana.get(f"/api/tasks/{task}").json()["own_label"]["payload"]["key_facts"][0]["critical"]


def test_judging_requires_a_critique_on_every_fail(login: Any) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    view = ana.get(f"/api/tasks/{task}").json()
    out = view["output"]
    assert out["answer"] and out["retrieved"]
    first = out["retrieved"][0]
    assert first["doc_id"] and first["period"] and first["version_date"]  # shown inline
    p = judge_payload()
    p["verdicts"]["policy"] = "fail"
    r = post(ana, csrf, "/api/labels", {"task_id": task, "payload": p, "client_id": "j0"})
    assert r.status_code == 422 and "policy" in r.json()["detail"]
    p2 = {"verdicts": {"correct": "pass"}, "critiques": {}}
    r = post(ana, csrf, "/api/labels", {"task_id": task, "payload": p2, "client_id": "j1"})
    assert r.status_code == 422 and "missing" in r.json()["detail"]
    r = post(
        ana,
        csrf,
        "/api/labels",
        {"task_id": task, "payload": judge_payload(policy="Gives advice."), "client_id": "j2"},
    )
    assert r.status_code == 200


def test_submissions_are_idempotent_and_revisable(login: Any, db: Database) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    body = {"task_id": task, "payload": judge_payload(), "client_id": "same"}
    r1, r2 = post(ana, csrf, "/api/labels", body), post(ana, csrf, "/api/labels", body)
    assert r1.json()["label_id"] == r2.json()["label_id"]
    assert (r1.json()["created"], r2.json()["created"]) == (True, False)
    r3 = post(
        ana,
        csrf,
        "/api/labels",
        {**body, "client_id": "new", "payload": judge_payload(correct="Off by 1.")},
    )
    assert r3.json()["label_id"] == r1.json()["label_id"] and not r3.json()["created"]
    with db.read() as s:
        labels = list(s.query(Label).filter(Label.task_id == task))
    assert len(labels) == 1 and labels[0].payload["verdicts"]["correct"] == "fail"


def test_overlap_limits_claims_and_no_expert_gets_an_item_twice(db: Database) -> None:
    for name in ("u1", "u2", "u3"):
        create_user(db, name, "tulip-basin-4821", fast_hash=True)
    with db.read() as s:
        users = {u.username: u for u in s.query(User)}
        n_judge = s.query(Task).filter(Task.kind == "judge", Task.calibration.is_(False)).count()
    claimed: dict[str, list[int]] = {}
    for name in ("u1", "u2", "u3"):
        got = []
        while (t := svc.claim_next(db, users[name], "judge")) is not None:
            svc.submit_label(db, users[name], t, judge_payload(), client_id=f"{name}-{t}")
            got.append(t)
        claimed[name] = got
    assert len(claimed["u1"]) == len(claimed["u2"]) == n_judge
    assert claimed["u3"] == []  # overlap 2 is used up
    with db.read() as s:
        for t in s.query(Task).filter(Task.kind == "judge", Task.calibration.is_(False)):
            assert s.query(Assignment).filter(Assignment.task_id == t.id).count() == 2


def test_queue_batches_by_domain_and_respects_expert_domains(db: Database) -> None:
    create_user(db, "banker", "tulip-basin-4821", domains=["Northwind Bancorp"], fast_hash=True)
    with db.read() as s:
        banker = s.query(User).filter(User.username == "banker").one()
    domains = []
    while (t := svc.claim_next(db, banker, "evidence")) is not None:
        with db.read() as s:
            task = s.get(Task, t)
            assert task is not None
            domains.append(task.domain)
        svc.submit_label(db, banker, t, {"paths": []}, client_id=f"b{t}")
    assert domains and set(domains) == {"Northwind Bancorp"}


def test_timed_session_serves_calibration_items_first_with_feedback(
    login: Any, db: Database
) -> None:
    ana, csrf = login("ana")
    r = ana.post(
        "/session/start",
        data={"kind": "judge", "minutes": "45", "csrf_token": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303
    task = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    view = ana.get(f"/api/tasks/{task}").json()
    assert view["calibration"] is True
    page = ana.get(f"/task/{task}").text
    assert 'id="timer"' in page and "calibration" in page
    r = post(
        ana, csrf, "/api/labels", {"task_id": task, "payload": judge_payload(), "client_id": "c"}
    )
    assert r.json()["feedback"]["gold"]["verdicts"]
    nxt = ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    assert not ana.get(f"/api/tasks/{nxt}").json()["calibration"]


def test_flags_on_items(login: Any, db: Database) -> None:
    """Flags only on one's own claims; an item never claimed and an item that does not exist
    are the same 404 (today's main: 200 on any item, 404 only on unknown ids)."""
    ana, csrf = login("ana")
    ben, ben_csrf = login("ben")
    task = post(ana, csrf, "/api/next/evidence", {}).json()["task_id"]
    mine = ana.get(f"/api/tasks/{task}").json()["item"]["id"]
    r = post(
        ana,
        csrf,
        "/api/flags",
        {"item_id": mine, "flag": "docs_outdated", "note": "10-K/A restates"},
    )
    assert r.status_code == 200
    assert post(ana, csrf, "/api/flags", {"item_id": mine, "flag": "bogus"}).status_code == 400
    unknown = post(ana, csrf, "/api/flags", {"item_id": "nope", "flag": "not_my_domain"})
    others = [i for i in ("demo-001", "demo-002", "demo-003", "demo-004", "demo-005") if i != mine]
    unclaimed = post(ana, csrf, "/api/flags", {"item_id": others[0], "flag": "not_my_domain"})
    assert unknown.status_code == unclaimed.status_code == 404
    assert unknown.json() == unclaimed.json()
    # ben has not claimed ana's item either
    assert (
        post(ben, ben_csrf, "/api/flags", {"item_id": mine, "flag": "not_my_domain"}).status_code
        == 404
    )


@pytest.mark.parametrize(
    ("q", "filters", "expect"),
    [
        (
            "net interest margin",
            {"company": "Northwind Bancorp", "period": "2024"},
            {"northwind-2024-q1-10q#mdna-nim"},
        ),
        ("net interest margin", {"form": "10-Q"}, {"northwind-2024-q1-10q#mdna-nim"}),
        ("inventories restated", {}, {"acme-2023-10ka#inventory-restated"}),
    ],
)
def test_full_text_search_with_filters(
    db: Database, q: str, filters: dict[str, str], expect: set[str]
) -> None:
    hits = svc.search_chunks(db, q, **filters)
    assert expect <= {h.chunk_id for h in hits}
    if "company" in filters:
        assert all(h.company == filters["company"] for h in hits)
    if "form" in filters:
        assert all(h.form == filters["form"] for h in hits)


def test_search_ranks_the_best_match_first_and_survives_odd_input(db: Database) -> None:
    hits = svc.search_chunks(db, "uninsured deposits")
    assert hits[0].chunk_id == "northwind-2024-q1-10q#deposits"
    for q in ['"', "AND OR NOT", "a*b(", "' OR 1=1 --", "NEAR(x y)"]:
        svc.search_chunks(db, q)  # never a syntax error


def test_stale_claims_are_released(db: Database) -> None:
    import datetime as dt

    from sqlalchemy import update

    create_user(db, "u1", "tulip-basin-4821", fast_hash=True)
    create_user(db, "u2", "tulip-basin-4821", fast_hash=True)
    create_user(db, "u3", "tulip-basin-4821", fast_hash=True)
    with db.read() as s:
        u = {x.username: x for x in s.query(User)}
    t1 = svc.claim_next(db, u["u1"], "reference")
    assert svc.claim_next(db, u["u2"], "reference") == t1  # overlap 2: both hold it
    assert svc.claim_next(db, u["u3"], "reference") != t1  # no slot left for u3
    assert svc.release_stale_claims(db, hours=1) == 0  # fresh claims stay
    with db.write() as s:
        s.execute(
            update(Assignment)
            .where(Assignment.user_id == u["u1"].id)
            .values(claimed_at=dt.datetime(2020, 1, 1))
        )
    assert svc.release_stale_claims(db, hours=1) == 1
    with db.read() as s:
        task = s.get(Task, t1)
        assert task is not None and task.n_claimed == 1
    with db.write() as s:  # u3 finishes its open task, then gets the freed slot
        s.execute(
            update(Assignment)
            .where(Assignment.user_id == u["u3"].id)
            .values(submitted_at=dt.datetime(2026, 1, 1))
        )
    assert svc.claim_next(db, u["u3"], "reference") == t1


def test_filters_and_access_apply_before_the_ranking_is_cut(db: Database) -> None:
    """2,500 chunks of another company (and 2,500 restricted ones) rank above the one chunk the
    filter (or the viewer's access) admits: it still comes back, first. A cut of the ranking
    before the filters (it was the top 2,000) returned nothing here."""
    from assay.workbench.models import Chunk, Document

    word = "zorblatt"
    with db.write() as s:
        s.add(Document(doc_id="big-co-2023-10k", company="Big Co", form="10-K", fiscal_year=2023))
        s.add(Document(doc_id="deal-room", company="Deal Co", form="8-K", access_key="deal-x"))
        s.add(Document(doc_id="small-co-2023-10k", company="Small Co", form="10-K",
                       fiscal_year=2023))  # fmt: skip
        s.add_all(
            Chunk(
                chunk_id=f"{doc}#c{i}",
                doc_id=doc,
                seq=i,
                text=f"{word} {word} {word} tally",
                access_key=key,
            )
            for doc, key in (("big-co-2023-10k", None), ("deal-room", "deal-x"))
            for i in range(2500)
        )
        s.add(Chunk(chunk_id="small-co-2023-10k#c0", doc_id="small-co-2023-10k", seq=0,
                    text=f"a long passage that names {word} once among many other words " * 3))  # fmt: skip
    hits = svc.search_chunks(db, word, company="Small Co")
    assert [h.chunk_id for h in hits] == ["small-co-2023-10k#c0"]
    # the public sees the 2,500 public chunks first, never a restricted one
    public = svc.search_chunks(db, word, limit=100)
    assert len(public) == 100 and all(h.chunk_id.startswith("big-co") for h in public)
    hits = svc.search_chunks(db, f"{word} tally", form="8-K")
    assert hits == []  # only restricted chunks match: nothing, not a hidden one
    # every term first, then any term, within the filters
    hits = svc.search_chunks(db, f"{word} tally", company="Small Co")
    assert [h.chunk_id for h in hits] == ["small-co-2023-10k#c0"]


@pytest.mark.parametrize(
    ("period", "year"),
    [("2024", 2024), ("FY2024", 2024), ("fy 2024/25", 2024), ("FY24", 2024), ("Q1 FY24", 2024),
     ("FY 24", 2024), ("1", 1), ("", None), ("FY", None)],
)  # fmt: skip
def test_a_period_filter_names_its_fiscal_year(period: str, year: int | None) -> None:
    from assay.workbench.service.search import _fiscal_year

    assert _fiscal_year(period) == year


def test_filters_take_any_case_and_two_digit_years(db: Database) -> None:
    want = {"northwind-2024-q1-10q#mdna-nim"}
    for company, form, period in (
        ("Northwind Bancorp", "10-Q", "2024"),
        ("northwind bancorp", "10-q", "FY24"),
        (" NORTHWIND BANCORP ", "10-Q", "Q1 FY24"),
    ):
        hits = svc.search_chunks(db, "net interest margin", company=company, form=form,
                                 period=period)  # fmt: skip
        assert want <= {h.chunk_id for h in hits}
        assert all(h.company == "Northwind Bancorp" for h in hits)
    assert svc.search_chunks(db, "net interest margin", period="FY19") == []
