"""Quotes of restricted chunks spelled with what a reader does not see (issue 40, the next ring):
a zero-width space, a soft hyphen, a word joiner or a variation selector inside the words and
figures of a quote, or the figure in another script's digits, is still a quote. Attack: a run
whose answer wrote "$4<U+200B>12 mil<U+00AD>lion for Ac<U+200B>me Tar<U+200B>get" (read on the
page as "$412 million for Acme Target") drafted the public reference task, and the uncleared
annotator read the deal price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from assay.workbench import service as svc
from assay.workbench.db import Database
from assay.workbench.models import User
from assay.workbench.service.quotes import QuoteIndex, redact

from .access_room import plant_leaky_reference, plant_room
from .conftest import login_client

ROOM = "Project Falcon: the acquisition price for Acme Target is $412 million."
PUBLIC = "Northwind Bancorp reported net income of $512 million; no acquisition."
Z = "\u200b"
SPELLINGS = [
    f"Northwind is paying $4{Z}12 mil{Z}lion for Ac{Z}me Tar{Z}get.",
    "Northwind is paying $4\u00ad12 million for Acme Target.",  # soft hyphen
    "Northwind is paying $4\u206012 million for Acme Target.",  # word joiner
    "Northwind is paying $4\ufe0f12 million for Acme Target.",  # variation selector 16
    "Northwind is paying $4\U000e010012 million for Acme Target.",  # variation selector 17
    "Northwind is paying $\u0664\u0661\u0662 million for Acme Target.",  # Arabic-Indic digits
    f"the acqui{Z}sition pri{Z}ce for Ac{Z}me Tar{Z}get is $4{Z}12 million",  # a shingle
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_an_invisibly_respelled_quote_is_found_and_redacted(text: str) -> None:
    index = QuoteIndex.build([("room#1", ROOM)], [PUBLIC])
    assert index.quoted(text) == {"room#1"}
    shown = redact(text, index.find(text))
    assert "[restricted]" in shown and "12" not in shown.replace("\u0661\u0662", "12")
    # the public chunk's figure with invisible characters is not a quote
    assert index.quoted(f"Northwind earned $5{Z}12 million.") == set()


def test_an_invisibly_respelled_draft_is_not_shown_to_the_uncleared(
    db: Database, app: Any, tmp_path: Path
) -> None:
    plant_room(db, tmp_path)
    ref = plant_leaky_reference(db, tmp_path)
    rows = [{"id": "pol-out", "answer": SPELLINGS[0], "retrieved": []}]
    run = tmp_path / "zz-clean.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    svc.import_run(db, run, run_name="zz-clean")
    with db.read() as s:
        ana = s.scalars(select(User).where(User.username == "ana")).one()
    while (tid := svc.claim_next(db, ana, "reference")) != ref:
        assert tid is not None
        svc.submit_label(
            db, ana, tid, {"reference_answer": "x", "answerable": True}, client_id=f"a{tid}"
        )
    assert svc.task_view(db, ana, ref).draft is None
    client, _ = login_client(app, "ana")
    for path in (f"/api/tasks/{ref}", f"/task/{ref}"):
        r = client.get(path)
        assert r.status_code == 200 and "mil\u00adlion" not in r.text and f"4{Z}12" not in r.text
        assert "4\\u200b12" not in r.text
