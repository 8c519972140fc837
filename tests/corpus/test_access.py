"""Access labels on documents and chunks, principals on entries, and the one rule."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from assay.corpus import AccessLabel, Chunk, Document, allows, decision, load_chunks, parse_access
from assay.dataset import Entry, ExpectedBehavior, Principal, groups
from assay.errors import DataError

DEAL = AccessLabel(groups=("deal:ACME",), escalate_from="internal", label="ACME deal room")
DRAFT = AccessLabel(
    groups=("insiders:ACME",),
    clearance="insider",
    public_from=dt.date(2025, 2, 10),
    escalate_from="internal",
    label="draft 8-K",
)
TEAM = Principal(role="deal_team", groups=("deal:ACME",), clearance="internal")
EMPLOYEE = Principal(role="employee", clearance="internal")
INSIDER = Principal(role="insider", groups=("insiders:ACME",), clearance="insider")


def test_rule_groups_tiers_and_public_from() -> None:
    assert allows(None, None)
    assert allows(DEAL, TEAM)
    assert not allows(DEAL, EMPLOYEE)
    assert not allows(DEAL, None)
    assert allows(DRAFT, INSIDER, dt.date(2025, 2, 1))
    assert not allows(DRAFT, TEAM, dt.date(2025, 2, 1))
    assert not allows(DRAFT, None, None)  # asked "now": the label restricts
    assert allows(DRAFT, None, dt.date(2025, 2, 10))  # accepted: public
    # a group member below the tier is still denied
    low = Principal(role="intern", groups=("insiders:ACME",), clearance="internal")
    assert not allows(DRAFT, low, dt.date(2025, 2, 1))


def test_decision_refuses_the_public_and_escalates_employees() -> None:
    assert decision([None, DEAL], TEAM) == ("answer", None)
    assert decision([DEAL], None) == ("refuse", "ACME deal room")
    assert decision([DEAL], EMPLOYEE) == ("escalate", "ACME deal room")
    board = AccessLabel(groups=("board:ACME",), label="board minutes")
    assert decision([DEAL, board], EMPLOYEE) == ("refuse", "ACME deal room")


def test_chunk_carries_its_label_and_a_bad_label_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "chunks.jsonl"
    rows = [
        {"chunk_id": "a/1/0", "doc_id": "a", "page": 1, "text": "x"},
        {
            "chunk_id": "b/1/0",
            "doc_id": "b",
            "page": 1,
            "text": "y",
            "access": DEAL.to_json_dict(),
        },
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = load_chunks(p)
    assert table.by_id["a/1/0"].access is None
    assert table.by_id["b/1/0"].access == DEAL
    assert Chunk.from_dict(table.by_id["b/1/0"].to_dict()).access == DEAL
    rows[1]["access"] = {"groups": ["deal:ACME"], "clearance": "god"}
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError) as exc:
        load_chunks(p)
    prob = exc.value.problems[0]
    assert (prob.line, prob.field) == (2, "access.clearance")
    assert str(p) in str(exc.value)
    with pytest.raises(DataError):
        parse_access(["deal:ACME"])


def test_document_label_reaches_chunk_fields_and_public_docs_are_unchanged() -> None:
    base = {"doc_id": "d", "company": "ACME", "form": "OTHER"}
    public = Document.model_validate(base)
    assert "access" not in public.chunk_fields()
    assert "access" not in public.to_json_dict()
    restricted = Document.model_validate(base | {"access": DEAL.to_json_dict()})
    assert restricted.chunk_fields()["access"] == DEAL.to_json_dict()
    assert Document.model_validate(restricted.to_json_dict()).access == DEAL


def test_entry_principal_escalate_and_grouping_by_role() -> None:
    a = Entry.model_validate(
        {
            "id": "a",
            "query": "q",
            "category": "policy",
            "principal": TEAM.model_dump(mode="json"),
            "expected_behavior": "escalate",
            "behavior_reason": "ACME deal room",
        }
    )
    b = Entry.model_validate({"id": "b", "query": "q", "category": "policy"})
    assert a.behavior() is ExpectedBehavior.escalate
    assert Entry.model_validate(a.to_json_dict()) == a
    assert groups([a, b], "principal.role") == {"a": "deal_team", "b": "public"}
    assert groups([a, b], "principal.clearance") == {"a": "internal", "b": "public"}
    with pytest.raises(ValueError):
        Entry.model_validate({"id": "c", "query": "q", "category": "x", "principal": {}})
