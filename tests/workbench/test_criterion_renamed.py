"""The expert criterion "complete" is now "comprehensive" (so it no longer shares a name with the
retrieval metric complete@k); whatever was stored under the old name still reads as the new one:
workbench labels and adjudications, import drafts, labels files, an entry's metadata.criteria."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select, update

from assay._criteria import CRITERIA
from assay.checks import policy
from assay.label_files import agreement_file, load_labels
from assay.workbench import service as svc
from assay.workbench.agreement import judge_label_records
from assay.workbench.db import Database
from assay.workbench.export import labels_long
from assay.workbench.models import Label, Task, User
from assay.workbench.payloads import JudgePayload, agreement_key

from .conftest import JUDGE_PASS

OLD = {
    "verdicts": {"correct": "pass", "complete": "fail", "faithful": "pass", "policy": "pass"},
    "critiques": {"complete": "Misses the 2022 figure."},
}


def test_one_list_of_criteria() -> None:
    assert CRITERIA == ("correct", "comprehensive", "faithful", "policy")
    assert tuple(policy.CRITERIA) == CRITERIA


def test_a_payload_in_the_old_names_is_read_in_the_new() -> None:
    p = JudgePayload.model_validate(OLD)
    assert p.verdicts["comprehensive"] == "fail" and "complete" not in p.verdicts
    assert p.critiques == {"comprehensive": "Misses the 2022 figure."}
    new = {"verdicts": {**JUDGE_PASS["verdicts"], "comprehensive": "fail"}}
    assert agreement_key("judge", OLD) == agreement_key("judge", new)


def test_labels_stored_under_the_old_name_still_read(db: Database) -> None:
    with db.read() as s:
        u = {x.username: x for x in s.scalars(select(User))}
    for name in ("ana", "ben"):
        t = svc.claim_next(db, u[name], "judge")
        assert t is not None
        svc.submit_label(db, u[name], t, JUDGE_PASS, client_id=f"{name}-1")
    with db.write() as s:  # as a store written before the rename holds them
        s.execute(update(Label).values(payload=OLD))
    rows = labels_long(db)
    assert {r["criterion"] for r in rows} == set(CRITERIA)
    assert {r["label"] for r in rows if r["criterion"] == "comprehensive"} == {"fail"}
    assert {r["criterion"] for r in judge_label_records(db)} <= set(CRITERIA)
    with db.read() as s:
        task = s.scalars(select(Task).where(Task.id == t)).one()
        labels = list(s.scalars(select(Label).where(Label.task_id == t)))
        gold = svc.gold_for_task(task, labels, None)
    assert gold is not None and gold["verdicts"]["comprehensive"] == "fail"


def test_a_labels_file_in_the_old_names_still_reads(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"item": f"q{i}", "rater": r, "label": "pass" if (i + k) % 3 else "fail", "criterion": c}
        for i in range(12)
        for k, r in enumerate(("ana", "ben"))
        for c in ("correct", "complete")
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert {r.criterion for r in load_labels(path)} == {"correct", "comprehensive"}
    for asked in ("complete", "comprehensive"):
        rep = agreement_file(path, criterion=asked, n_resamples=200)
        assert [r.criterion for r in rep.results] == ["comprehensive"]


def test_an_entry_naming_the_old_criterion_is_judged_on_it() -> None:
    results = {"key_fact_recall_full": False, "answer_correct": True}
    ctx = SimpleNamespace(
        entry=SimpleNamespace(metadata={"criteria": ["correct", "complete"]}),
        answer="Revenue was $5 million.",
        result=results.get,
    )
    out = policy.overall_pass(ctx)  # type: ignore[arg-type]
    assert out.value is False, out
