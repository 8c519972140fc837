from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EXAMPLE_ENTRY = (
    '{"id": "fd-0183", "query": "bank-04 NIM 22 vs 23, did it expand", "category": "comparison",\n'
    ' "answerable": true, "as_of": "2024-03-31",\n'
    ' "evidence_paths": [\n'
    '   [["bank-04/10-K/fy2023#mdna-nii-table"]],\n'
    '   [["bank-04/10-K/fy2022#mdna-nii-table"],\n'
    '    ["bank-04/10-K/fy2023#mdna-nii-table", "bank-04/10-K/fy2023#mdna-nim-text"]]\n'
    " ],\n"
    ' "reference_answer": "NIM expanded by roughly 40 bp year over year; higher asset yields outpaced rising deposit costs.",\n'
    ' "source": "log", "reviewed_by": 2, "added": "2026-08-14"}'
)


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def example_entry() -> dict[str, Any]:
    return json.loads(EXAMPLE_ENTRY)
