"""The reference form asks for the structured-data lookup behind a 'not disclosed' label and
shows the facts of the company's filings beside it (`assay.workbench.service.labels`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from assay.corpus import Fact
from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.demo_store import DEMO_DIR
from assay.workbench.models import Document, Item, Task


def _facts_beside_the_chunks(db: Database, tmp_path: Path) -> None:
    """A facts table beside the demo chunks: two line items, two years, for each document."""
    shutil.copy(DEMO_DIR / "chunks.jsonl", tmp_path / "chunks.jsonl")
    chunks = [
        json.loads(line) for line in (DEMO_DIR / "chunks.jsonl").read_text("utf-8").splitlines()
    ]
    docs = [
        json.loads(line) for line in (DEMO_DIR / "documents.jsonl").read_text("utf-8").splitlines()
    ]
    facts = [
        Fact(company=d["company"], doc_id=d["doc_id"], fiscal_year=year, fiscal_quarter=None,
             statement="income", line_item=item, value=value - col * 60, unit="USD", scale=1e6,
             page=4, chunk_id=next(c["chunk_id"] for c in chunks if c["doc_id"] == d["doc_id"]),
             column=col)
        for d in docs
        if any(c["doc_id"] == d["doc_id"] for c in chunks)
        for col, year in enumerate((2023, 2022))
        for item, value in (("Net revenues", 1890.0), ("Total deposits", 41200.0))
    ]  # fmt: skip
    (tmp_path / "facts.jsonl").write_text(
        "".join(json.dumps(f.to_dict()) + "\n" for f in facts), encoding="utf-8"
    )
    svc.import_corpus(db, tmp_path / "chunks.jsonl", DEMO_DIR / "documents.jsonl")


def test_the_form_shows_the_filings_facts_and_an_unanswerable_label_needs_the_lookup(
    login: Any, db: Database, tmp_path: Path
) -> None:
    ana, csrf = login("ana")
    task = ana.post("/api/next/reference", headers={"X-CSRF-Token": csrf}).json()["task_id"]
    # no facts table imported: the form asks for the lookup, with no facts beside it
    before = ana.get(f"/task/{task}").text
    assert 'id="lookup-searched"' in before and 'id="filing-facts"' not in before
    _facts_beside_the_chunks(db, tmp_path)
    with db.read() as s:
        meta = s.get(Document, "northwind-2023-10k").meta  # type: ignore[union-attr]
        item = s.get(Item, s.get(Task, task).item_id)  # type: ignore[union-attr]
        assert item is not None
        query, company = item.query, item.entry["metadata"]["company"]
    assert len(meta["facts"]) == 4
    view = ana.get(f"/api/tasks/{task}").json()
    assert "facts" in view, view
    panel = view["facts"]
    year = 2023 if "2023" in query else 2024 if "2024" in query else None
    assert panel["company"] == company and panel["fiscal_year"] == year
    shown = {(f["line_item"], f["fiscal_year"]) for f in panel["facts"]}
    assert ("Net revenues", 2023) in shown
    assert company in panel["searched"]
    page = ana.get(f"/task/{task}").text
    assert 'id="filing-facts"' in page and "Net revenues, fiscal 2023: $1,890 million" in page
    assert 'id="lookup-searched"' in page

    def submit(extra: dict[str, Any], cid: str) -> Any:
        payload = {"reference_answer": "", "answerable": False, "expected_behavior": "abstain"}
        body = {"task_id": task, "payload": payload | extra, "client_id": cid}
        return ana.post("/api/labels", json=body, headers={"X-CSRF-Token": csrf})

    r = submit({}, "nd0")
    assert r.status_code == 422 and "structured_lookup" in r.json()["detail"]
    blank = {"structured_lookup": {"source": "facts", "searched": "  ", "found": "nothing"}}
    assert submit(blank, "nd1").status_code == 422
    lookup = {"source": "facts", "searched": panel["searched"], "found": "nothing for allowance"}
    r = submit({"structured_lookup": lookup}, "nd2")
    assert r.status_code == 200, r.text
    stored = ana.get(f"/api/labels/{r.json()['label_id']}").json()["payload"]
    assert stored["structured_lookup"] == lookup
