"""What experts see (issue 25): reference tasks prefilled with the system's draft (marked as such
in the label, and timed so that `workbench plan` says what drafts save), graded relevance on
evidence, the run row's tool calls on the judging panel, FinanceBench's document metadata in
`import-corpus`, and the raw labels in the long format `assay agreement` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import select
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app as cli_app
from assay.dataset import load_dataset
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.demo_store import DEMO_DIR
from assay.workbench.export import export_gold, labels_long
from assay.workbench.models import Label, Task, User

from .conftest import JUDGE_PASS, judge_payload

runner = CliRunner()
FINANCEBENCH = Path("/work/shared/financebench")


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.scalars(select(User))}


def _reference(answer: str, from_draft: bool = False) -> dict[str, Any]:
    return {
        "reference_answer": answer,
        "key_facts": [{"fact": "NIM fell 13 bp", "critical": True, "supporting": []}],
        "answerable": True,
        "expected_behavior": "answer",
        "acceptable_response_notes": "",
        "from_draft": from_draft,
    }


def _store(tmp_path: Path, run_rows: list[dict[str, Any]] | None) -> Database:
    """Demo corpus and entries, one run (the rows given, or none), ana and ben."""
    from assay.workbench.auth import create_user

    d = Database(f"sqlite:///{tmp_path / 'w.db'}")
    d.migrate()
    svc.import_corpus(d, DEMO_DIR / "chunks.jsonl", DEMO_DIR / "documents.jsonl")
    svc.import_entries(d, DEMO_DIR / "entries.jsonl", overlap=2)
    if run_rows is not None:
        run = tmp_path / "run.jsonl"
        run.write_text("".join(json.dumps(r) + "\n" for r in run_rows))
        svc.import_run(d, run, run_name="sys")
    for name in ("ana", "ben", "adjudicator"):
        create_user(
            d,
            name,
            "tulip-basin-4821",
            "adjudicator" if name == "adjudicator" else "annotator",
            fast_hash=True,
        )
    return d


# ------------------------------------------------------------------------- reference drafts


def test_reference_tasks_open_on_the_systems_draft(tmp_path: Path) -> None:
    rows = [
        {
            "id": "demo-001",
            "retrieved": ["northwind-2023-10k#mdna-nim-text"],
            "answer": "NIM contracted 13 bp, from 3.21% to 3.08%.",
            "key_facts": [
                "NIM was 3.08% in 2023",
                {"fact": "NIM was 3.21% in 2022", "critical": False},
            ],
        }
    ]
    db = _store(tmp_path, rows)
    u = users(db)
    for _ in range(10):
        t = svc.claim_next(db, u["ana"], "reference")
        assert t is not None
        view = svc.task_view(db, u["ana"], t)
        if view.item.id == "demo-001":
            break
        assert view.draft is None  # the run did not answer it: a blank form
        svc.submit_label(db, u["ana"], t, _reference("blank"), client_id=f"b{t}")
    assert view.draft == {
        "reference_answer": "NIM contracted 13 bp, from 3.21% to 3.08%.",
        "key_facts": [
            {"fact": "NIM was 3.08% in 2023", "critical": True},
            {"fact": "NIM was 3.21% in 2022", "critical": False},
        ],
        "run_name": "sys",
    }
    assert view.to_dict()["draft"]["run_name"] == "sys"
    svc.submit_label(db, u["ana"], t, _reference("edited draft", True), client_id="r1", seconds=60)
    with db.read() as s:
        lab = s.scalar(select(Label).where(Label.task_id == t))
    assert lab is not None and lab.drafted is True and lab.payload["from_draft"] is True
    assert view.item.id == "demo-001"


def test_plan_reports_what_drafts_save(tmp_path: Path) -> None:
    """Drafted and blank reference labels are timed apart; `workbench plan --db` reports both
    and the difference."""
    rows = [
        {"id": f"demo-00{i}", "retrieved": [], "answer": f"draft answer {i}"} for i in (1, 2, 3)
    ]
    db = _store(tmp_path, rows)
    u = users(db)
    secs = {True: [], False: []}  # type: dict[bool, list[float]]
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, u[name], "reference")) is not None:
            view = svc.task_view(db, u[name], t)
            drafted = view.draft is not None
            seconds = 120.0 if drafted else 300.0 + 60 * len(secs[False])
            secs[drafted].append(seconds)
            svc.submit_label(
                db, u[name], t, _reference("x", drafted), client_id=f"{name}{t}", seconds=seconds
            )
    assert secs[True] and secs[False]
    stats = svc.measured_time(db)
    assert stats.drafts is not None
    mean = lambda v: sum(v) / len(v) / 60  # noqa: E731
    assert stats.drafts.drafted_minutes == pytest.approx(mean(secs[True]))
    assert stats.drafts.blank_minutes == pytest.approx(mean(secs[False]))
    assert stats.drafts.n_drafted == len(secs[True]) and stats.drafts.n_blank == len(secs[False])
    r = runner.invoke(cli_app, ["workbench", "plan", "--rows", "100", "--db", db.url, "-f", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["drafts"]
    assert got["saved_minutes"] == pytest.approx(mean(secs[False]) - mean(secs[True]))
    r = runner.invoke(cli_app, ["workbench", "plan", "--rows", "100", "--db", db.url])
    assert "drafts save" in r.output


# ------------------------------------------------------------------------ graded relevance


def test_evidence_takes_graded_relevance_and_exports_it(db: Database, tmp_path: Path) -> None:
    u = users(db)
    grades = {"acme-2023-10k#segments": 3, "acme-2023-10k#mdna-revenue": 1}
    payload = {
        "paths": [[["acme-2023-10k#segments", "acme-2023-10k#mdna-revenue"]]],
        "relevance": grades,
    }
    items: dict[int, str] = {}
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, u[name], "evidence")) is not None:
            svc.submit_label(db, u[name], t, payload, client_id=f"{name}{t}")
            with db.read() as s:
                task = s.get(Task, t)
                assert task is not None
                items[t] = task.item_id
    res = export_gold(db, tmp_path / "g.jsonl")
    ds = load_dataset(tmp_path / "g.jsonl")
    assert res["n_with_gold"] >= 1
    graded = [e for e in ds.entries if e.metadata.get("relevance")]
    assert graded and all(e.metadata["relevance"] == grades for e in graded)
    # the qrels writer reads the same grades
    from assay.runs.qrels import qrels_from_dataset

    q = qrels_from_dataset(ds)
    assert q.qrels[graded[0].id] == grades


@pytest.mark.parametrize(
    ("relevance", "message"),
    [
        ({"acme-2023-10k#segments": 4}, "less than or equal to 3"),
        ({"acme-2023-10k#segments": -1}, "greater than or equal to 0"),
        ({"acme-2023-10k#other": 2}, "in no path"),
        ({"acme-2023-10k#segments": 0}, "path 0 piece 0: every alternative is graded 0"),
    ],
)
def test_bad_grades_are_refused(relevance: dict[str, int], message: str) -> None:
    from assay.workbench.payloads import validate_payload

    with pytest.raises(ValidationError, match=message):
        validate_payload(
            "evidence", {"paths": [[["acme-2023-10k#segments"]]], "relevance": relevance}
        )


# ----------------------------------------------------------------------------- tool calls


def test_the_judging_panel_shows_the_runs_tool_calls(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from assay.workbench.app import WorkbenchConfig, create_app

    from .conftest import login_client

    calls = [
        {
            "name": "search_filings",
            "arguments": {"q": "net interest margin 2023"},
            "result": "3 hits",
        },
        {"name": "calculator", "args": {"expr": "3.21-3.08"}, "output": 0.13},
    ]
    rows = [
        {
            "id": "demo-001",
            "retrieved": [],
            "answer": "It fell 13 bp.",
            "trace": {"tool_calls": calls},
        },
        {"id": "demo-002", "retrieved": [], "answer": "About 1.2%."},
    ]
    db = _store(tmp_path, rows)
    app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
    ana, csrf = login_client(app, "ana", "tulip-basin-4821")
    seen = {}
    while t := ana.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()["task_id"]:
        view = ana.get(f"/api/tasks/{t}").json()
        seen[view["item"]["id"]] = (t, view["output"]["tool_calls"])
        ana.post(
            "/api/labels",
            json={"task_id": t, "payload": JUDGE_PASS, "client_id": f"c{t}"},
            headers={"X-CSRF-Token": csrf},
        )
    t1, got = seen["demo-001"]
    assert got == [
        {
            "name": "search_filings",
            "arguments": {"q": "net interest margin 2023"},
            "result": "3 hits",
        },
        {"name": "calculator", "arguments": {"expr": "3.21-3.08"}, "result": 0.13},
    ]
    page = ana.get(f"/task/{t1}").text
    assert 'id="tool-calls"' in page and "search_filings" in page and "calculator" in page
    t2, none = seen["demo-002"]
    assert none is None and 'id="tool-calls"' not in ana.get(f"/task/{t2}").text
    assert isinstance(ana, TestClient)
    ana.close()


# ---------------------------------------------------------------- FinanceBench's metadata


@pytest.mark.skipif(not FINANCEBENCH.exists(), reason="needs /work/shared/financebench")
def test_import_corpus_reads_financebench_documents(tmp_path: Path) -> None:
    """Today's main: 361 identical `doc_id: missing` errors, and an empty company filter."""
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        json.dumps(
            {"chunk_id": "3M_2018_10K#1", "doc_id": "3M_2018_10K", "text": "Net sales", "page": 1}
        )
        + "\n"
        + json.dumps(
            {"chunk_id": "AMD_2022_10K#1", "doc_id": "AMD_2022_10K", "text": "Revenue", "page": 2}
        )
        + "\n"
    )
    url = f"sqlite:///{tmp_path / 'w.db'}"
    r = runner.invoke(
        cli_app,
        [
            "workbench",
            "import-corpus",
            str(chunks),
            "--documents",
            str(FINANCEBENCH / "documents.jsonl"),
            "--db",
            url,
            "-f",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "doc_id: missing" not in r.output
    db = Database(url)
    f = svc.facets(db)
    assert "3M" in f.companies and "AMD" in f.companies
    assert "10-K" in f.forms and "2018" in f.periods
    hits = svc.search_chunks(db, "net sales", company="3M")
    assert [h.chunk_id for h in hits] == ["3M_2018_10K#1"]
    db.dispose()


# -------------------------------------------------------------------------- labels-long


def test_labels_long_is_what_assay_agreement_reads(db: Database, tmp_path: Path) -> None:
    from assay.stats.agreement import parse_labels

    u = users(db)
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, u[name], "judge")) is not None:
            p = judge_payload(comprehensive="Misses 2022.") if name == "ben" else JUDGE_PASS
            svc.submit_label(db, u[name], t, p, client_id=f"{name}{t}")
    rows = labels_long(db)
    records = parse_labels(rows)
    assert len(records) == len(rows) > 0
    assert {r["criterion"] for r in rows} == {"correct", "comprehensive", "faithful", "policy"}
    assert {r["rater"] for r in rows} == {"ana", "ben"}
    comprehensive = [r for r in rows if r["criterion"] == "comprehensive"]
    assert {r["label"] for r in comprehensive if r["rater"] == "ben"} == {"fail"}
    out = tmp_path / "long.jsonl"
    gold = tmp_path / "gold.jsonl"
    r = runner.invoke(
        cli_app,
        [
            "workbench",
            "export",
            "--out",
            str(gold),
            "--labels-long",
            str(out),
            "--db",
            db.url,
            "-f",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["labels_long"] == len(rows)
    r = runner.invoke(cli_app, ["agreement", str(out), "-c", "comprehensive", "-f", "json"])
    assert r.exit_code == 0, r.output
