"""Plain CSV: a row an entry, the entry's main fields in named columns (lists one item a line in
their cell), and the whole entry in the ``assay_entry`` column so a round trip loses nothing.

A CSV from elsewhere needs only a query column (``query``, ``question`` or ``input``); every
column assay does not know is kept under the entry's ``metadata``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.formats._base import (
    ASSAY_FIELD,
    ExportOptions,
    FormatSpec,
    RawImport,
    csv_records,
    unrename,
    write_csv,
)

COLUMNS = (
    "id",
    "query",
    "category",
    "reference_answer",
    "answerable",
    "as_of",
    "label_tier",
    "key_facts",
    "gold_chunk_ids",
    "gold_contexts",
    ASSAY_FIELD,
)
SPELLINGS = {
    "id": ("id", "qid", "question_id"),
    "query": ("query", "question", "input", "user_input"),
    "reference_answer": ("reference_answer", "answer", "expected_output", "reference"),
    "gold_contexts": ("gold_contexts", "contexts", "context", "reference_contexts"),
}


def _read(path: Path) -> RawImport:
    return RawImport([(line, unrename(row, SPELLINGS)) for line, row in csv_records(path)])


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    write_csv(path, records, [c for c in COLUMNS if any(c in r for r in records)])
    return []


FORMAT = FormatSpec(
    name="csv",
    summary="plain CSV, a row an entry (opens in a spreadsheet; edits come back)",
    suffixes=(".csv",),
    read=_read,
    write=_write,
)
