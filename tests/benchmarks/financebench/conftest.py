"""A tiny handmade filings corpus for the ladder: two companies, calendars ending in June and December.

A copy of tests/systems/filings/conftest.py (conftest fixtures do not cross test folders)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

DOCS: list[dict[str, Any]] = [
    {"doc_id": "msft-2023-10k", "company": "Microsoft Corporation", "ticker": "MSFT", "aliases": [],
     "form": "10-K", "fiscal_year": 2023, "fiscal_quarter": None, "period_end": "2023-06-30",
     "fiscal_year_end": "06-30", "accepted_at": "2023-07-27", "amends": None, "amended_items": []},
    {"doc_id": "msft-2024-10k", "company": "Microsoft Corporation", "ticker": "MSFT", "aliases": [],
     "form": "10-K", "fiscal_year": 2024, "fiscal_quarter": None, "period_end": "2024-06-30",
     "fiscal_year_end": "06-30", "accepted_at": "2024-07-30", "amends": None, "amended_items": []},
    {"doc_id": "msft-2024q3-10q", "company": "Microsoft Corporation", "ticker": "MSFT", "aliases": [],
     "form": "10-Q", "fiscal_year": 2024, "fiscal_quarter": 3, "period_end": "2024-03-31",
     "fiscal_year_end": "06-30", "accepted_at": "2024-04-25", "amends": None, "amended_items": []},
    {"doc_id": "acme-2023-10k", "company": "Acme Corp", "ticker": "ACME", "aliases": ["Acme"],
     "form": "10-K", "fiscal_year": 2023, "fiscal_quarter": None, "period_end": "2023-12-31",
     "fiscal_year_end": "12-31", "accepted_at": "2024-02-20", "amends": None, "amended_items": []},
    # Part III only amendment: must not hide the original's financial statements
    {"doc_id": "acme-2023-10ka-p3", "company": "Acme Corp", "ticker": "ACME", "aliases": ["Acme"],
     "form": "10-K/A", "fiscal_year": 2023, "fiscal_quarter": None, "period_end": "2023-12-31",
     "fiscal_year_end": "12-31", "accepted_at": "2024-04-15", "amends": "acme-2023-10k",
     "amended_items": ["Part III"]},
    # restatement of Item 8, accepted later
    {"doc_id": "acme-2023-10ka-r", "company": "Acme Corp", "ticker": "ACME", "aliases": ["Acme"],
     "form": "10-K/A", "fiscal_year": 2023, "fiscal_quarter": None, "period_end": "2023-12-31",
     "fiscal_year_end": "12-31", "accepted_at": "2024-09-10", "amends": "acme-2023-10k",
     "amended_items": ["Item 8"]},
]  # fmt: skip

CHUNKS: list[dict[str, Any]] = [
    {"chunk_id": "msft-2023-10k/1/0", "doc_id": "msft-2023-10k", "page": 1,
     "text": "Item 7. Management's discussion. Revenue increased 7% to $211.9 billion in fiscal year 2023 driven by cloud."},
    {"chunk_id": "msft-2023-10k/2/0", "doc_id": "msft-2023-10k", "page": 2, "kind": "table",
     "text": "INCOME STATEMENTS\n(In millions) 2023 2022\nTotal revenue 211,915 198,270\nOperating income 88,523 83,383"},
    {"chunk_id": "msft-2024-10k/1/0", "doc_id": "msft-2024-10k", "page": 1,
     "text": "Item 7. Management's discussion. Revenue increased 16% to $245.1 billion in fiscal year 2024 driven by cloud."},
    {"chunk_id": "msft-2024-10k/2/0", "doc_id": "msft-2024-10k", "page": 2, "kind": "table",
     "text": "INCOME STATEMENTS\n(In millions) 2024 2023\nTotal revenue 245,122 211,915\nOperating income 109,433 88,523"},
    {"chunk_id": "msft-2024q3-10q/1/0", "doc_id": "msft-2024q3-10q", "page": 1,
     "text": "Revenue for the third quarter increased 17% to $61.9 billion driven by cloud."},
    {"chunk_id": "acme-2023-10k/1/0", "doc_id": "acme-2023-10k", "page": 1,
     "text": "Item 8. Financial Statements. Acme net sales were $1,200 million and net income was $90 million."},
    {"chunk_id": "acme-2023-10k/2/0", "doc_id": "acme-2023-10k", "page": 2,
     "text": "Item 10. Directors, Executive Officers and Corporate Governance. Information is incorporated by reference from the proxy statement."},
    {"chunk_id": "acme-2023-10ka-p3/1/0", "doc_id": "acme-2023-10ka-p3", "page": 1,
     "text": "Item 10. Directors, Executive Officers and Corporate Governance. Our directors are Jane Roe and John Doe."},
    {"chunk_id": "acme-2023-10ka-r/1/0", "doc_id": "acme-2023-10ka-r", "page": 1,
     "text": "Item 8. Financial Statements (restated). Acme net sales were $1,150 million and net income was $70 million."},
]  # fmt: skip


def write_corpus(
    root: Path, docs: list[dict[str, Any]] = DOCS, chunks: list[dict[str, Any]] = CHUNKS
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "documents.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8"
    )
    (root / "chunks.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in chunks), encoding="utf-8"
    )
    (root / "manifest.json").write_text(json.dumps({"corpus_hash": "tiny-v1"}), encoding="utf-8")
    return root


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")
