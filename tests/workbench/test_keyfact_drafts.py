"""The reference task shows key facts drafted from an imported reference answer (`assay
keyfacts`) for the expert to confirm or edit, marked as drafts; confirmed, they are gold."""

from __future__ import annotations

import json
from pathlib import Path

from assay.dataset import load_dataset, write_dataset
from assay.judge.keyfacts import draft_entries
from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database

from .test_expert import DEMO_DIR, _reference, users


def test_the_reference_task_opens_on_the_drafted_key_facts(tmp_path: Path) -> None:
    # imported entries with a reference answer and no key facts (as a benchmark's are)
    entries, n = draft_entries(
        e.model_copy(
            update={"reference_answer": e.reference_answer or "NIM fell 13 bp to 3.08% in 2023."}
        )
        for e in load_dataset(DEMO_DIR / "entries.jsonl").entries
        if not e.metadata.get("calibration")
    )
    assert n > 0
    path = tmp_path / "entries.jsonl"
    write_dataset(path, entries)
    db = Database(f"sqlite:///{tmp_path / 'w.db'}")
    db.migrate()
    svc.import_corpus(db, DEMO_DIR / "chunks.jsonl", DEMO_DIR / "documents.jsonl")
    svc.import_entries(db, path, overlap=2)
    create_user(db, "ana", "tulip-basin-4821", "annotator", fast_hash=True)
    ana = users(db)["ana"]
    by_id = {e.id: e for e in entries}
    for i in range(len(entries)):
        t = svc.claim_next(db, ana, "reference")
        assert t is not None
        view = svc.task_view(db, ana, t)
        entry = by_id[view.item.id]
        if "draft_key_facts" in entry.metadata:
            break
        assert view.draft is None  # no reference answer: nothing drafted, a blank form
        svc.submit_label(db, ana, t, _reference("blank"), client_id=f"b{i}")
    assert view.draft is not None and view.draft["source"] == "reference"
    assert view.draft["reference_answer"] == entry.reference_answer
    drafted = entry.metadata["draft_key_facts"]
    assert [f["fact"] for f in view.draft["key_facts"]] == [f["fact"] for f in drafted]
    critical = [f["critical"] for f in view.draft["key_facts"]]
    assert critical == [f["kind"] in ("figure", "polarity") for f in drafted]
    assert json.loads(json.dumps(view.to_dict()))["draft"]["source"] == "reference"
    svc.submit_label(db, ana, t, _reference("confirmed", True), client_id="k1", seconds=30)
