"""Blind first pass: an annotator never sees another's label on an item until it is adjudicated."""

from __future__ import annotations

import re
from typing import Any

from .conftest import judge_payload


def _label_same_task(login: Any) -> tuple[Any, Any, str, str, int, int]:
    ana, ana_csrf = login("ana")
    ben, ben_csrf = login("ben")
    task = ana.post("/api/next/judge", headers={"X-CSRF-Token": ana_csrf}).json()["task_id"]
    assert (
        ben.post("/api/next/judge", headers={"X-CSRF-Token": ben_csrf}).json()["task_id"] == task
    )  # overlap 2: both get it
    ra = ana.post(
        "/api/labels",
        json={
            "task_id": task,
            "payload": judge_payload(correct="Figure is wrong."),
            "client_id": "a1",
        },
        headers={"X-CSRF-Token": ana_csrf},
    )
    rb = ben.post(
        "/api/labels",
        json={
            "task_id": task,
            "payload": judge_payload(comprehensive="BEN-SECRET misses the 2022 figure."),
            "client_id": "b1",
        },
        headers={"X-CSRF-Token": ben_csrf},
    )
    assert ra.status_code == rb.status_code == 200
    return ana, ben, ana_csrf, ben_csrf, task, rb.json()["label_id"]


def test_annotator_cannot_read_another_label_by_any_route(login: Any) -> None:
    ana, _ben, _, _, task, ben_label = _label_same_task(login)
    # direct read by id: indistinguishable from a label that does not exist
    r = ana.get(f"/api/labels/{ben_label}")
    assert r.status_code == 404
    assert ana.get("/api/labels/999999").status_code == 404
    # the task's label list holds only her own
    labels = ana.get(f"/api/tasks/{task}/labels").json()["labels"]
    assert [lab["user"] for lab in labels] == ["ana"]
    # the task view and the page carry only her own label
    view = ana.get(f"/api/tasks/{task}").json()
    assert view["own_label"]["user"] == "ana"
    assert "BEN-SECRET" not in str(view) and "'ben'" not in str(view)
    page = ana.get(f"/task/{task}").text
    assert "BEN-SECRET" not in page
    assert not re.search(r"\bben\b", page)
    # nor can she reach the adjudication views
    assert ana.get(f"/adjudicate/{task}").status_code == 403
    assert ana.get("/api/adjudication-queue").status_code == 403


def test_annotator_cannot_open_a_task_not_assigned_to_her(login: Any) -> None:
    ana, ana_csrf = login("ana")
    ben, ben_csrf = login("ben")
    task = ben.post("/api/next/evidence", headers={"X-CSRF-Token": ben_csrf}).json()["task_id"]
    # ana has not claimed it: the task does not exist for her
    assert ana.get(f"/api/tasks/{task}").status_code == 404
    assert ana.get(f"/api/tasks/{task}/labels").json()["labels"] == []
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": {"paths": []}, "client_id": "zz"},
        headers={"X-CSRF-Token": ana_csrf},
    )
    assert r.status_code == 404


def test_labels_become_visible_to_co_labellers_after_adjudication(login: Any) -> None:
    ana, _ben, _, _, task, ben_label = _label_same_task(login)
    adj, adj_csrf = login("adjudicator")
    # adjudicators see both
    assert len(adj.get(f"/api/tasks/{task}/labels").json()["labels"]) == 2
    assert adj.get(f"/api/labels/{ben_label}").status_code == 200
    r = adj.post(
        "/api/adjudications",
        json={
            "task_id": task,
            "payload": judge_payload(correct="Figure is wrong."),
            "root_cause": "annotator_error",
        },
        headers={"X-CSRF-Token": adj_csrf},
    )
    assert r.status_code == 200, r.text
    assert ana.get(f"/api/labels/{ben_label}").status_code == 200
    assert len(ana.get(f"/api/tasks/{task}/labels").json()["labels"]) == 2
    # and the labels are final
    r = ana.post(
        "/api/labels",
        json={"task_id": task, "payload": judge_payload(), "client_id": "a2"},
        headers={"X-CSRF-Token": _csrf(ana)},
    )
    assert r.status_code == 409


def test_a_third_annotator_never_sees_adjudicated_labels_of_others(login: Any, app: Any) -> None:
    from assay.workbench.auth import create_user

    _ana, _ben, _, _, task, ben_label = _label_same_task(login)
    adj, adj_csrf = login("adjudicator")
    adj.post(
        "/api/adjudications",
        json={"task_id": task, "payload": judge_payload(), "root_cause": "ambiguous_item"},
        headers={"X-CSRF-Token": adj_csrf},
    )
    create_user(app.state.db, "cleo", "tulip-basin-4821", fast_hash=True)
    cleo, _ = login("cleo")
    assert cleo.get(f"/api/labels/{ben_label}").status_code == 404
    assert cleo.get(f"/api/tasks/{task}/labels").json()["labels"] == []


def _csrf(client: Any) -> str:
    import re

    m = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text)
    assert m
    return m.group(1)
