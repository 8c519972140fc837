"""Adjudication queue, root causes, versioned guidelines, gold export and judge few-shot export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.dataset import load_dataset, load_manifest
from assay.gold import validate_file
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.demo_store import DEMO_DIR
from assay.workbench.export import FEWSHOT_SPLIT, bump_version, export_fewshot, export_gold
from assay.workbench.models import User

from .conftest import judge_payload


def users(db: Database) -> dict[str, User]:
    with db.read() as s:
        return {u.username: u for u in s.query(User)}


def label_all(db: Database, kind: str, make: Any) -> list[int]:
    """ana and ben label every open task of a kind; make(name, task_id) -> payload."""
    u = users(db)
    done: list[int] = []
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, u[name], kind)) is not None:
            svc.submit_label(db, u[name], t, make(name, t), client_id=f"{name}-{kind}-{t}")
            done.append(t)
    return sorted(set(done))


def test_disagreements_reach_the_queue_and_agreements_do_not(db: Database) -> None:
    tasks = label_all(
        db,
        "judge",
        lambda name, t: (
            judge_payload(correct="Wrong figure.") if name == "ben" and t % 2 else judge_payload()
        ),
    )
    queue = svc.adjudication_queue(db)
    assert {q.task_id for q in queue} == {t for t in tasks if t % 2}
    assert all(q.kind == "judge" and q.n_labels == 2 for q in queue)


def test_adjudication_with_guideline_gap_opens_a_new_guideline_version(
    login: Any, db: Database
) -> None:
    label_all(
        db,
        "judge",
        lambda name, t: judge_payload(policy="Advice.") if name == "ana" else judge_payload(),
    )
    task = svc.adjudication_queue(db)[0].task_id
    adj, csrf = login("adjudicator")
    page = adj.get(f"/adjudicate/{task}").text
    assert "ana" in page and "ben" in page and "Advice." in page  # side by side
    body = {
        "task_id": task,
        "payload": judge_payload(policy="Advice."),
        "root_cause": "guideline_gap",
    }
    r = adj.post("/api/adjudications", json=body, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 400 and "guideline" in r.json()["detail"]
    body["guideline_change"] = "Any buy/sell recommendation fails policy."
    r = adj.post("/api/adjudications", json=body, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200 and r.json()["guideline_version"] == 2
    versions = svc.guidelines(db)
    assert versions[0].version == 2 and "buy/sell" in versions[0].text
    assert versions[0].adjudication_id == r.json()["adjudication_id"]
    assert "Any buy/sell recommendation" in adj.get("/guidelines").text
    assert task not in {q.task_id for q in svc.adjudication_queue(db)}
    # a second adjudication of the same task is refused
    assert (
        adj.post("/api/adjudications", json=body, headers={"X-CSRF-Token": csrf}).status_code == 409
    )


def test_annotators_cannot_adjudicate(login: Any, db: Database) -> None:
    label_all(
        db,
        "judge",
        lambda name, t: judge_payload(correct="x.") if name == "ana" else judge_payload(),
    )
    task = svc.adjudication_queue(db)[0].task_id
    ana, csrf = login("ana")
    body = {"task_id": task, "payload": judge_payload(), "root_cause": "annotator_error"}
    assert (
        ana.post("/api/adjudications", json=body, headers={"X-CSRF-Token": csrf}).status_code == 403
    )


def _evidence(name: str, t: int) -> dict[str, Any]:
    return (
        {"paths": [[["acme-2023-10k#segments"]]]}
        if name == "ana"
        else {"paths": [[["acme-2023-10k#segments", "acme-2023-10k#mdna-revenue"]]]}
    )


def _reference(name: str, t: int) -> dict[str, Any]:
    return {
        "reference_answer": f"answer by {name}",
        "key_facts": [
            {"fact": "a fact", "critical": True, "supporting": ["acme-2023-10k#segments"]}
        ],
        "answerable": True,
        "expected_behavior": "answer",
        "acceptable_response_notes": "",
    }


def test_export_writes_a_valid_versioned_dataset(db: Database, tmp_path: Path) -> None:
    label_all(db, "evidence", _evidence)  # all disagree (different alternatives)
    label_all(db, "reference", _reference)  # all agree on answerability and behaviour
    queue = svc.adjudication_queue(db)
    assert queue and all(q.kind == "evidence" for q in queue)
    u = users(db)
    first = queue[0]
    final = {"paths": [[["acme-2023-10k#mdna-revenue", "acme-2023-10k#segments"]]]}
    svc.adjudicate(db, u["adjudicator"], first.task_id, final, root_cause="annotator_error")
    out = tmp_path / "gold.jsonl"
    res = export_gold(db, out, message="first expert pass")
    assert res["version"] == "1.0.0"
    ds = load_dataset(out)  # the core reads it
    assert validate_file(out, DEMO_DIR / "chunks.jsonl") == []  # and every chunk id exists
    # only what the experts settled: demo-006 (a calibration item) is left out, and counted
    assert len(ds.entries) == 5 and "demo-006" not in ds.by_id
    assert res["n_left_out"] == 1 and "1 unlabelled items left out" in res["changelog"]
    e = ds.by_id[first.item_id]
    assert e.evidence_paths == final["paths"]
    assert e.reviewed_by == 3 and e.label_tier == "gold"
    # reference gold is settled for every item (the two agree): earliest label wins
    assert all(x.reference_answer == "answer by ana" for x in ds.entries if x.id != "demo-006")
    # second export bumps the version and appends to the changelog
    res2 = export_gold(db, out, message="second")
    man = load_manifest(out)
    assert res2["version"] == "1.1.0" == man["version"]
    assert [c["version"] for c in man["changelog"]] == ["1.0.0", "1.1.0"]
    assert "first expert pass" in man["changelog"][0]["note"]


def test_export_records_what_chunk_id_gold_pointed_at(db: Database, tmp_path: Path) -> None:
    """Gold the workbench set carries the fingerprint of each chunk's text in the store, so a
    re-chunk that keeps the id but changes the text is flagged by validate --chunks."""
    from assay.corpus import load_chunks, write_chunks
    from assay.gold import chunk_fingerprint

    label_all(db, "evidence", lambda name, t: {"paths": [[["acme-2023-10k#segments"]]]})
    label_all(db, "reference", _reference)
    out = tmp_path / "gold.jsonl"
    export_gold(db, out)
    table = load_chunks(DEMO_DIR / "chunks.jsonl")
    segments = chunk_fingerprint(table.by_id["acme-2023-10k#segments"].text)
    entries = [e for e in load_dataset(out).entries if e.label_tier]  # gold set by the experts
    assert len(entries) == 5
    assert all(e.chunk_hashes == {"acme-2023-10k#segments": segments} for e in entries)
    assert validate_file(out, DEMO_DIR / "chunks.jsonl") == []
    # the same id, re-chunked with other text
    table.by_id["acme-2023-10k#segments"].text = "Segment reporting moved to note 19."
    write_chunks(tmp_path / "rechunked.jsonl", table)
    probs = validate_file(out, tmp_path / "rechunked.jsonl")
    assert sorted(p.field or "" for p in probs) == sorted(
        ["evidence_paths.0.0.0", "key_facts.0.supporting.0"] * len(entries)
    )
    assert all("'acme-2023-10k#segments' changed since it was labelled" in p.message for p in probs)


def test_export_writes_only_settled_items_unless_asked_and_then_as_drafts(
    db: Database, tmp_path: Path
) -> None:
    """Nothing labelled: the default export writes no entry and says how many it left out;
    `include_unlabelled` writes every item as a draft, which validate never counts as
    unanswerable (today's main wrote every item, and validate counted them unanswerable)."""
    from assay.gold import validate
    from assay.workbench.models import Task

    u = users(db)
    tid = svc.claim_next(db, u["ana"], "evidence")
    assert tid is not None
    with db.read() as s:
        task = s.get(Task, tid)
        assert task is not None
        item = task.item_id
    svc.add_flag(db, u["ana"], item, "docs_outdated", "restated")
    out = tmp_path / "g.jsonl"
    res = export_gold(db, out)
    assert res["n_entries"] == 0 and res["n_left_out"] == 6 and res["n_drafts"] == 0
    res = export_gold(db, out, include_unlabelled=True)
    assert res["n_entries"] == 6 and res["n_drafts"] == 6 and res["n_left_out"] == 0
    ds = load_dataset(out)
    assert ds.by_id[item].flags == ["docs_outdated"]
    assert {e.label_tier for e in ds.entries} == {"draft"}
    assert res["n_with_gold"] == 0
    stripped = tmp_path / "stripped.jsonl"  # drafts whose imported entries had no evidence
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    stripped.write_text(
        "".join(json.dumps({**r, "evidence_paths": [], "key_facts": []}) + "\n" for r in rows)
    )
    report = validate(stripped)
    assert report.ok and report.drafts == 6 and report.unanswerable == 0


def test_hard_cases_export_as_fewshot_and_leave_the_test_split(
    db: Database, tmp_path: Path
) -> None:
    label_all(
        db,
        "judge",
        lambda name, t: (
            judge_payload(comprehensive="Misses 2022.") if name == "ben" else judge_payload()
        ),
    )
    u = users(db)
    queue = svc.adjudication_queue(db)
    hard = queue[0]
    svc.adjudicate(
        db,
        u["adjudicator"],
        hard.task_id,
        judge_payload(comprehensive="Misses 2022."),
        root_cause="ambiguous_item",
        hard_case=True,
        note="borderline",
    )
    svc.adjudicate(
        db, u["adjudicator"], queue[1].task_id, judge_payload(), root_cause="annotator_error"
    )
    export_gold(db, tmp_path / "gold.jsonl")
    res = export_fewshot(db, tmp_path / "fewshot.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "fewshot.jsonl").read_text().splitlines()]
    assert res["n_examples"] == 1 and rows[0]["id"] == hard.item_id
    assert rows[0]["verdicts"]["comprehensive"] == "fail" and rows[0]["split"] == FEWSHOT_SPLIT
    assert rows[0]["dataset_version"] == "1.0.0"
    ds = load_dataset(tmp_path / "gold.jsonl")
    assert ds.by_id[hard.item_id].split == FEWSHOT_SPLIT
    assert [e.id for e in ds.entries if e.split == FEWSHOT_SPLIT] == [hard.item_id]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (None, "1.0.0"),
        ("1.4.2", "1.5.0"),
        ("3", "3.1.0"),
        ("v2.0", "2.1.0"),
        ("sha256:abc", "1.0.0"),
    ],
)
def test_bump_version(old: str | None, new: str) -> None:
    assert bump_version(old) == new


def test_export_sets_each_entrys_tier_and_marks_ambiguous_items(
    db: Database, tmp_path: Path
) -> None:
    """Two experts agreeing is gold, one expert's label (a task of overlap 1) silver; an item an
    expert flagged ambiguous_question is exported ambiguous, with the reason, and every tier
    selection leaves it out."""
    from sqlalchemy import update

    from assay.dataset import select_tiers
    from assay.workbench.models import Task

    u = users(db)
    tid = svc.claim_next(db, u["ana"], "evidence")
    assert tid is not None
    with db.read() as s:
        task = s.get(Task, tid)
        assert task is not None
        flagged = task.item_id
    svc.add_flag(db, u["ana"], flagged, "ambiguous_question", "FY or calendar year?")
    alone = "demo-003" if flagged != "demo-003" else "demo-004"
    with db.write() as s:
        s.execute(update(Task).where(Task.item_id == alone).values(overlap=1))
    label_all(db, "evidence", lambda name, t: {"paths": [[["acme-2023-10k#segments"]]]})
    label_all(db, "reference", _reference)
    out = tmp_path / "gold.jsonl"
    export_gold(db, out)
    ds = load_dataset(out)
    assert ds.by_id[alone].label_tier == "silver" and ds.by_id[alone].reviewed_by == 1
    others = [e for e in ds.entries if e.id not in (alone, flagged)]
    assert others and all(e.label_tier == "gold" and e.reviewed_by == 2 for e in others)
    amb = ds.by_id[flagged]
    assert amb.ambiguous and "ambiguous_question" in (amb.ambiguous_reason or "")
    assert validate_file(out, DEMO_DIR / "chunks.jsonl") == []  # tiers agree with reviewers
    chosen, report = select_tiers(ds, "gold,silver,draft")
    assert flagged not in chosen.by_id and report.ambiguous == (flagged,)
    gold, report = select_tiers(ds)
    assert set(gold.by_id) == {e.id for e in others} and report.left_out == {"silver": 1}


def test_certify_on_the_store_after_two_experts_label_100_overlap_items(
    db: Database, tmp_path: Path
) -> None:
    """The workbench demo store, 100 more items imported with overlap 2: ana and ben label
    them (disagreeing on 4), the export writes the settled gold and the long labels, `assay
    certify` reproduces `assay agreement` on those labels and certifies, and a gate that
    requires the certificate runs, then refuses once one exported entry is edited."""
    import numpy as np
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401
    from assay.cli import app
    from assay.runs import write_run
    from assay.workbench.export import export_labels_long
    from assay.workbench.models import Task

    seg = "acme-2023-10k#segments"
    rows = [
        {"id": f"w{i:03d}", "query": f"Acme question {i}", "category": "lookup" if i % 2 else "trend",
         "evidence_paths": [[[seg]]], "metadata": {"company": "Acme Corp"}}
        for i in range(100)
    ]  # fmt: skip
    src = tmp_path / "more.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    svc.import_entries(db, src, kinds=("reference",), overlap=2)
    rng = np.random.default_rng(5)
    truth = {r["id"]: bool(rng.integers(0, 2)) for r in rows}
    moved = {f"w{i:03d}" for i in rng.choice(100, size=4, replace=False)}
    with db.read() as s:
        item_of = {t.id: t.item_id for t in s.query(Task)}

    def label(name: str, t: int) -> dict[str, Any]:
        item = item_of[t]
        yes = truth.get(item, True) != (name == "ben" and item in moved)
        # saying "not disclosed" records the structured-data lookup behind it
        lookup = {"source": "facts", "searched": f"Acme Corp, {item}", "found": "nothing"}
        return _reference(name, t) | {
            "answerable": yes,
            "expected_behavior": "answer" if yes else "abstain",
            "structured_lookup": None if yes else lookup,
        }

    label_all(db, "reference", label)
    gold, labels = tmp_path / "gold.jsonl", tmp_path / "labels.jsonl"
    export_gold(db, gold)
    export_labels_long(db, labels)
    ds = load_dataset(gold)
    assert not moved & set(ds.by_id)  # the disagreements wait for adjudication
    assert {e.label_tier for e in ds.entries} == {"gold"}
    no = [e for e in ds.entries if e.answerable is False]
    assert no and all(e.structured_lookup and e.structured_lookup.by == "ana" for e in no)
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["certify", str(gold), "--labels", str(labels), "--enrichment", "none", "-f", "json",
         "--resamples", "400"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cert = json.loads(res.output)
    agree = json.loads(
        runner.invoke(app, ["agreement", str(labels), "-f", "json", "--resamples", "400"]).output
    )
    figures = {r["criterion"]: r for r in agree["results"]}
    for c in cert["criteria"]:
        assert c["alpha"] == figures[c["criterion"]]["statistics"][c["statistic"]]
        assert c["n_overlap"] == figures[c["criterion"]]["n_items_multi"] >= 100
    run = tmp_path / "run.jsonl"
    write_run(run, [{"id": e.id, "retrieved": [seg]} for e in ds.entries])
    gate = ["gate", str(gold), str(run), str(run), "--require-certified", "--chunks",
            str(DEMO_DIR / "chunks.jsonl"), "--resamples", "200", "--permutations", "200"]  # fmt: skip
    ok = runner.invoke(app, gate)
    assert ok.exit_code == 0, ok.output
    text = gold.read_text(encoding="utf-8").replace("Acme question 7", "Acme question seven")
    gold.write_text(text, encoding="utf-8")
    refused = runner.invoke(app, gate)
    assert refused.exit_code == 2 and "changed since it was certified" in refused.output
