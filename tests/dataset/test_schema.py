from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.dataset import Anchor, Entry, load_dataset, write_dataset
from assay.gold import validate_file
from tests.conftest import EXAMPLE_ENTRY, write_jsonl


def test_issue_example_entry_loads_exactly_as_written(tmp_path: Path) -> None:
    # the entry spans several lines in the issue; as JSONL it is one line
    line = json.dumps(json.loads(EXAMPLE_ENTRY))
    p = tmp_path / "g.jsonl"
    p.write_text(line + "\n")
    ds = load_dataset(p)
    e = ds.entries[0]
    assert e.id == "fd-0183" and e.as_of == dt.date(2024, 3, 31)
    assert len(e.evidence_paths) == 2 and len(e.evidence_paths[1]) == 2
    assert e.evidence_paths[1][1] == [
        "bank-04/10-K/fy2023#mdna-nii-table",
        "bank-04/10-K/fy2023#mdna-nim-text",
    ]
    assert e.reviewed_by == 2 and e.source is not None and e.source.value == "log"
    assert e.is_answerable


def test_roundtrip_preserves_entry(tmp_path: Path, example_entry: dict[str, Any]) -> None:
    e = Entry.model_validate(example_entry)
    ds = write_dataset(tmp_path / "g.jsonl", [e], version="1.0.0", changelog="first")
    again = load_dataset(tmp_path / "g.jsonl")
    assert again.entries[0] == e
    assert again.version == "1.0.0" and ds.manifest["changelog"][0]["note"] == "first"


def test_anchor_alternatives_and_all_optional_fields() -> None:
    e = Entry.model_validate(
        {
            "id": "x",
            "query": "q",
            "category": "c",
            "answerable": "partial",
            "expected_behavior": "clarify",
            "acceptable_response_notes": "n",
            "key_facts": [
                {
                    "fact": "f",
                    "critical": True,
                    "supporting": ["c1", {"doc": "d", "page": 3, "quote": "q"}],
                }
            ],
            "evidence_paths": [
                [["c1", {"doc": "d", "page": 3, "quote": "net income", "box": [0, 0, 1, 1]}]]
            ],
            "label_tier": "gold",
            "doc_versions": {"d": "2024-01-01"},
            "flags": ["ambiguous_question"],
            "split": "test",
            "metadata": {"anything": [1, 2]},
        }
    )
    assert isinstance(e.evidence_paths[0][0][1], Anchor)
    assert e.chunk_ids() == {"c1"} and len(e.anchors()) == 2


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"surprise": 1}, "surprise"),
        ({"as_of": "2024-02-30"}, "as_of"),
        ({"as_of": 20240101}, "as_of"),
        ({"answerable": "yes"}, "answerable"),
        ({"evidence_paths": [[[]]]}, "evidence_paths"),
        ({"evidence_paths": [[]]}, "evidence_paths"),
        ({"reviewed_by": "two"}, "reviewed_by"),
        ({"expected_behavior": "shrug"}, "expected_behavior"),
    ],
)
def test_bad_fields_rejected(
    example_entry: dict[str, Any], patch: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as ei:
        Entry.model_validate(example_entry | patch)
    assert field in str(ei.value)


def test_validate_reports_every_problem_with_file_line_field(
    tmp_path: Path, example_entry: dict[str, Any]
) -> None:
    p = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(example_entry),
        json.dumps({"query": "no id", "category": "c"}),
        "{not json",
        json.dumps(example_entry),  # duplicate id
        json.dumps({"id": "d", "query": "q", "category": "c", "added": "yesterday"}),
        json.dumps({"id": "e", "query": "q", "category": "c", "evidence_paths": [[["ok"], []]]}),
    ]
    p.write_text("\n".join(lines) + "\n")
    got = [(pr.line, pr.field) for pr in validate_file(p)]
    assert (2, "id") in got
    assert (3, None) in got
    assert (4, "id") in got
    assert (5, "added") in got
    assert (6, "evidence_paths") in got
    assert all(pr.file == str(p) for pr in validate_file(p))


def test_validate_against_chunks(tmp_path: Path) -> None:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [
            {
                "chunk_id": "d/1/0",
                "doc_id": "d",
                "page": 1,
                "text": "Net interest income was $1,234.5 million in 2023.",
            },
            {"chunk_id": "d/2/0", "doc_id": "d", "pages": [2], "text": "Deposits grew."},
        ],
    )
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"id": "a", "query": "q", "category": "c", "evidence_paths": [[["d/1/0"], ["nope"]]]},
            {
                "id": "b",
                "query": "q",
                "category": "c",
                "evidence_paths": [
                    [[{"doc": "d", "page": 1, "quote": "net interest income was 1234.50 million"}]]
                ],
            },
            {
                "id": "c",
                "query": "q",
                "category": "c",
                "evidence_paths": [[[{"doc": "d", "page": 2, "quote": "net interest income"}]]],
            },
        ],
    )
    probs = validate_file(ds, chunks)
    msgs = [str(p) for p in probs]
    assert len(probs) == 2, msgs
    assert (
        probs[0].line == 1
        and "nope" in probs[0].message
        and probs[0].field == "evidence_paths.0.1.0"
    )
    assert probs[1].line == 3 and "anchor matches no chunk" in probs[1].message


def test_json_schema_published() -> None:
    schema = Entry.model_json_schema()
    assert set(schema["required"]) == {"id", "query", "category"}
    assert schema.get("additionalProperties") is False
