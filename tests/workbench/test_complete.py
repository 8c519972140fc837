"""Planning expert time, and the API documented for signed-in users."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import User

from .conftest import judge_payload


def test_plan_reproduces_the_worked_budget() -> None:
    """200 rows x 3 minutes + 50% overlap + adjudication (30% of the overlap, 10 min) = 20 h."""
    b = svc.plan_budget(200, overlap=0.5)
    assert (b.labels, b.adjudications) == (300, 30)
    assert b.label_hours == pytest.approx(15.0) and b.hours == pytest.approx(20.0)
    b2 = svc.plan_budget(
        120, overlap=1.0, minutes_per_label=4.5, adjudication_rate=0.25, adjudication_minutes=12
    )
    assert b2.hours == pytest.approx((240 * 4.5 + 120 * 1.0 * 0.25 * 12) / 60)


def test_plan_command(tmp_path: Path) -> None:
    import assay.cli.workbench_cmds  # noqa: F401
    from assay.cli import app as cli

    r = CliRunner().invoke(
        cli, ["workbench", "plan", "--rows", "200", "--overlap", "0.5", "-f", "json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["hours"] == pytest.approx(20.0) and out["minutes_source"] == "default"
    r = CliRunner().invoke(cli, ["workbench", "plan", "--rows", "200", "--overlap", "1.5"])
    assert r.exit_code == 2 and "overlap" in r.output


def _label_with_times(db: Database) -> dict[tuple[str, str], list[float]]:
    with db.read() as s:
        u = {x.username: x for x in s.query(User)}
    seconds = {"ana": [90.0, 200.0, 150.0, 61.0], "ben": [300.0, 240.0, 420.0, 100.0]}
    got: dict[tuple[str, str], list[float]] = {}
    for name, times in seconds.items():
        for i, sec in enumerate(times):
            t = svc.claim_next(db, u[name], "judge")
            assert t is not None
            payload = (
                judge_payload(correct="Wrong.") if (name == "ben" and i % 2) else judge_payload()
            )
            svc.submit_label(db, u[name], t, payload, client_id=f"{name}-{i}", seconds=sec)
            got.setdefault(("judge", name), []).append(sec / 60)
    return got


def test_measured_minutes_by_kind_and_expert(db: Database) -> None:
    got = _label_with_times(db)
    m = svc.measured_time(db)
    rows = {(r.kind, r.expert): r for r in m.rows}
    for key, mins in got.items():
        assert rows[key].n == len(mins)
        assert rows[key].mean == pytest.approx(float(np.mean(mins)))
        assert rows[key].median == pytest.approx(float(np.median(mins)))
    every = [x for v in got.values() for x in v]
    assert rows[("all", "all")].mean == pytest.approx(statistics.fmean(every))
    # the four outputs both judged: ben failed two of them, so two of four needed adjudication
    assert m.n_double == 4 and m.adjudication_rate == pytest.approx(0.5)
    b = svc.plan_budget(200, overlap=0.5, measured=m)
    assert b.source == "measured" and b.minutes_per_label == pytest.approx(np.mean(every))
    assert b.adjudication_rate == pytest.approx(0.5)


def test_admin_page_shows_minutes_and_projection(db: Database, login: Any) -> None:
    _label_with_times(db)
    admin, _ = login("admin")
    page = admin.get("/admin", params={"rows": 200, "overlap": 0.5}).text
    assert 'id="measured-minutes"' in page and "ben" in page
    m = svc.measured_time(db)
    hours = svc.plan_budget(200, overlap=0.5, measured=m).hours
    assert f"{hours:.1f} expert hours" in page
    ana, _ = login("ana")
    assert ana.get("/admin").status_code == 403
    assert admin.get("/admin", params={"overlap": "abc"}).status_code == 422


def test_api_docs_are_served_to_signed_in_users_only(app: Any, login: Any) -> None:
    anon = TestClient(app)
    assert anon.get("/api/docs").status_code == 401
    assert anon.get("/api/openapi.json").status_code == 401
    ana, _ = login("ana")
    r = ana.get("/api/docs")
    assert r.status_code == 200 and "script-src 'self'" in r.headers["content-security-policy"]
    for text in ("/api/labels", "LabelIn", "JudgePayload", "EvidencePayload", "ReferencePayload"):
        assert text in r.text, text
    assert "pass | fail" in r.text  # the verdicts are documented
    spec = ana.get("/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    schemas = spec["components"]["schemas"]
    assert schemas["JudgePayload"]["properties"]["verdicts"]["additionalProperties"]["enum"] == [
        "pass",
        "fail",
    ]
    assert "/api/next/{kind}" in spec["paths"] and "post" in spec["paths"]["/api/next/{kind}"]
