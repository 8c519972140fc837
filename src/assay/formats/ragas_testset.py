"""ragas test sets and evaluation datasets: CSV, JSON or JSONL (by the file's suffix) with
ragas' column names: ``user_input`` (the query), ``reference`` (the reference answer),
``reference_contexts`` (gold given as text: written when ``--chunks`` gives the chunks' text,
matched back onto chunk ids through ``--chunks`` on import). assay's own columns (``id``,
``category``, ``gold_chunk_ids``, ``assay_entry``) ride along unless ``--plain``. A run's
``response`` and ``retrieved_contexts``, and a generator's ``synthesizer_name``, are kept under
``metadata`` on import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.formats._base import (
    ExportOptions,
    FormatSpec,
    RawImport,
    csv_records,
    json_array_lines,
    rename,
    unrename,
    write_csv,
    write_json,
)

NAMES = {
    "query": "user_input",
    "reference_answer": "reference",
    "gold_contexts": "reference_contexts",
}
SPELLINGS = {
    "query": ("user_input", "question", "query"),
    "reference_answer": ("reference", "ground_truth", "answer", "reference_answer"),
    "gold_contexts": ("reference_contexts", "contexts", "gold_contexts"),
}
COLUMNS = (
    "user_input",
    "reference",
    "reference_contexts",
    "id",
    "category",
    "answerable",
    "as_of",
    "label_tier",
    "key_facts",
    "gold_chunk_ids",
    "assay_entry",
)


def _read(path: Path) -> RawImport:
    rows = csv_records(path) if path.suffix == ".csv" else json_array_lines(path)
    return RawImport([(line, unrename(row, SPELLINGS)) for line, row in rows])


def write_by_suffix(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """CSV, JSONL or JSON by the output's suffix (CSV columns in `columns` order)."""
    if path.suffix == ".csv":
        write_csv(path, rows, [c for c in columns if any(c in r for r in rows)])
    else:
        write_json(path, rows, lines=path.suffix == ".jsonl")


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    rows = [rename(r, NAMES) for r in records]
    if opts.plain:
        rows = [{k: v for k, v in r.items() if k in COLUMNS[:3]} for r in rows]
    write_by_suffix(path, rows, COLUMNS)
    if opts.table is None:
        return ["reference_contexts: not written (give --chunks: ragas reads gold as text)"]
    return []


FORMAT = FormatSpec(
    name="ragas",
    summary="ragas test set / evaluation dataset (CSV, JSON or JSONL)",
    suffixes=(".csv", ".json", ".jsonl"),
    read=_read,
    write=_write,
)
