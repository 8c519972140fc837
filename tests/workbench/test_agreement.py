"""The agreement panel reads the store's blind judging labels and matches reference numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from assay.workbench import service as svc
from assay.workbench.agreement import agreement_panel, judge_label_records
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import User
from assay.workbench.payloads import CRITERIA


def _random_labels(db: Database, seed: int) -> dict[str, dict[int, dict[str, str]]]:
    """Three experts judge every output (overlap 3) with random verdicts."""
    from sqlalchemy import update

    from assay.workbench.models import Task

    with db.write() as s:
        s.execute(update(Task).where(Task.kind == "judge").values(overlap=3))
    for name in ("u1", "u2", "u3"):
        create_user(db, name, "tulip-basin-4821", fast_hash=True)
    rng = np.random.default_rng(seed)
    given: dict[str, dict[int, dict[str, str]]] = {}
    with db.read() as s:
        users = {u.username: u for u in s.query(User)}
    for name in ("u1", "u2", "u3"):
        given[name] = {}
        while (t := svc.claim_next(db, users[name], "judge")) is not None:
            verdicts = {c: ("pass" if rng.random() < 0.6 else "fail") for c in CRITERIA}
            crit = {c: "Bad." for c, v in verdicts.items() if v == "fail"}
            svc.submit_label(
                db,
                users[name],
                t,
                {"verdicts": verdicts, "critiques": crit},
                client_id=f"{name}{t}",
            )
            given[name][t] = verdicts
    return given


@pytest.mark.parametrize("seed", [1, 2])
def test_panel_matches_krippendorff_and_sklearn(db: Database, seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    from sklearn.metrics import cohen_kappa_score

    given = _random_labels(db, seed)
    panel = agreement_panel(db, n_resamples=200)
    tasks = sorted(given["u1"])
    assert panel["n_items"] == len(tasks) == 5
    for row in panel["criteria"]:
        c = row["criterion"]
        data = [
            [1.0 if given[u][t][c] == "pass" else 0.0 for t in tasks] for u in ("u1", "u2", "u3")
        ]
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        if row["alpha"]["value"] is None:
            assert np.isnan(ref) or len({v for r in data for v in r}) == 1
        else:
            assert row["alpha"]["value"] == pytest.approx(ref, abs=1e-9)
            assert (
                row["alpha"]["low"] is None or row["alpha"]["low"] <= row["alpha"]["value"] + 1e-9
            )
    pair = next(p for p in panel["pairs"] if (p["a"], p["b"]) == ("u1", "u2"))
    for c in CRITERIA:
        a = [given["u1"][t][c] for t in tasks]
        b = [given["u2"][t][c] for t in tasks]
        k = pair[c]["kappa"]["value"]
        if len(set(a) | set(b)) > 1 and k is not None:
            assert k == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)


def test_records_leave_calibration_items_out_and_panel_is_reproducible(db: Database) -> None:
    _random_labels(db, 3)
    recs = judge_label_records(db)
    assert len(recs) == 3 * 5 * 4  # 3 experts x 5 regular outputs x 4 criteria
    assert agreement_panel(db, n_resamples=100) == agreement_panel(db, n_resamples=100)


def test_agreement_page_renders(login: Any, db: Database) -> None:
    _random_labels(db, 4)
    adj, _ = login("adjudicator")
    page = adj.get("/agreement").text
    assert "Krippendorff" in page and "u1 · u2" in page
    assert adj.get("/api/agreement").json()["n_items"] == 5


def test_agreement_page_names_the_intervals_it_shows(login: Any, db: Database) -> None:
    # alpha and the pairs' kappas get the goodness-of-fit interval on this binary scale, AC1 and
    # raw agreement the jackknife: the page says so, not "percentile bootstrap"
    _random_labels(db, 4)
    panel = agreement_panel(db, n_resamples=100)
    shown = {
        e["method"]
        for row in panel["criteria"]
        for e in (row["alpha"], row["ac1"], row["raw"])
        if e["low"] is not None
    }
    assert "goodness-of-fit" in panel["intervals"] and "jackknife" in panel["intervals"]
    adj, _ = login("adjudicator")
    page = adj.get("/agreement").text
    assert "percentile bootstrap" not in page
    assert "Donner-Eliasziw goodness-of-fit interval" in page
    assert shown <= {"goodness-of-fit", "jackknife", "no-disagreement bound", "bca", "percentile"}
