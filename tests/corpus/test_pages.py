"""pages.jsonl: the parser's page text, read with every bad line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.corpus import load_pages
from assay.errors import DataError


def test_pages_by_doc_in_page_order(tmp_path: Path) -> None:
    p = tmp_path / "pages.jsonl"
    p.write_text(
        '{"doc_id": "d", "page": 2, "text": "b"}\n{"doc_id": "d", "page": 1, "text": "a"}\n'
    )
    pages = load_pages(p)
    assert pages[("d", 1)] == "a" and len(pages) == 2
    assert pages.of_doc("d") == ["a", "b"] and pages.of_doc("x") == []
    assert pages.doc_ids == {"d"}


def test_load_pages_reports_every_bad_line(tmp_path: Path) -> None:
    p = tmp_path / "pages.jsonl"
    p.write_text(
        '{"doc_id": "d", "page": 1, "text": "a"}\n{"doc_id": "d", "page": 0, "text": 1}\n'
        '{"doc_id": "d", "page": 1, "text": "again"}\n'
    )
    with pytest.raises(DataError) as err:
        load_pages(p)
    assert [str(x) for x in err.value.problems] == [
        f"{p}:2: page: required, a 1-based page number",
        f"{p}:2: text: required, a string",
        f"{p}:3: page: duplicate page 1 of 'd'",
    ]
