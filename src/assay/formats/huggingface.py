"""Hugging Face datasets: a folder with the data (``data/test.jsonl``, or ``data/test.parquet``
with ``--as parquet``) and a dataset card (``README.md``) whose YAML header names the data files,
so ``datasets.load_dataset(FOLDER)`` reads it with no script.

Columns: the entry's main fields (``answerable`` and ``as_of`` as text, so every row has one
type), ``key_facts`` and ``gold_chunk_ids`` as lists of strings, and ``assay_entry`` (the whole
entry as a JSON string). Import reads such a folder, or one data file (JSONL, JSON or Parquet)
from any Hub dataset: ``question``/``answer``/``contexts`` and their common spellings are read
as the query, the reference answer and gold given as text; other columns go to ``metadata``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import DataError, MissingExtraError
from assay.formats._base import (
    ASSAY_FIELD,
    ExportOptions,
    FormatSpec,
    RawImport,
    Record,
    json_array_lines,
    unrename,
    write_json,
)

SPELLINGS = {
    "id": ("id", "qid", "question_id", "_id", "financebench_id"),
    "query": ("query", "question", "input", "user_input", "prompt"),
    "category": ("category", "question_type", "type"),
    "reference_answer": (
        "reference_answer",
        "answer",
        "reference",
        "ground_truth",
        "expected_output",
    ),
    "gold_contexts": ("gold_contexts", "contexts", "reference_contexts", "context", "evidence"),
}
CARD = """---
configs:
- config_name: default
  data_files:
  - split: test
    path: data/test{suffix}
---
# {name}

A golden set exported by assay: {n} entries. Each row is a question (`query`) with its
category, reference answer, key facts and the ids of the chunks that hold its evidence
(`gold_chunk_ids`); `assay_entry` holds the whole entry as JSON (evidence paths, anchors,
`as_of`, label tier), so `assay import hf` gives back exactly what was exported.
"""


def _row(rec: dict[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    for k in ("answerable", "as_of"):
        if k in out:
            out[k] = str(out[k]).lower() if isinstance(out[k], bool) else str(out[k])
    if ASSAY_FIELD in out:
        out[ASSAY_FIELD] = json.dumps(out[ASSAY_FIELD], ensure_ascii=False)
    return out


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    from assay._io import atomic_writer

    suffix = ".parquet" if opts.variant == "parquet" else ".jsonl"
    (path / "data").mkdir(parents=True, exist_ok=True)
    rows = [_row(r) for r in records]
    data = path / "data" / f"test{suffix}"
    if suffix == ".parquet":
        pa, pq = _arrow()
        columns = list(dict.fromkeys(k for r in rows for k in r))
        table = pa.Table.from_pylist([{k: r.get(k) for k in columns} for r in rows])
        with atomic_writer(data, "wb") as fh:
            pq.write_table(table, fh)
    else:
        write_json(data, rows, lines=True)
    with atomic_writer(path / "README.md") as fh:
        fh.write(CARD.format(suffix=suffix, name=path.name, n=len(rows)))
    return []


def _arrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingExtraError("fast", "Parquet files", "pyarrow") from exc
    return pa, pq


def _data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(
        p for p in (path / "data").glob("*") if p.suffix in (".jsonl", ".json", ".parquet")
    )
    if not found:
        raise DataError("no data/*.jsonl, *.json or *.parquet", file=path)
    return found


def _read(path: Path) -> RawImport:
    records: list[Record] = []
    for f in _data_files(path):
        if f.suffix == ".parquet":
            _, pq = _arrow()
            rows = pq.read_table(f).to_pylist()
            got: list[tuple[int | None, Any]] = list(enumerate(rows, start=1))
        else:
            got = list(json_array_lines(f))
        for line, row in got:
            if not isinstance(row, dict):
                raise DataError("a row must be a JSON object", file=f, line=line)
            records.append((line, unrename(row, SPELLINGS)))
    return RawImport(records)


FORMAT = FormatSpec(
    name="hf",
    summary="Hugging Face datasets folder (JSONL or Parquet, with a dataset card); "
    "import also reads one data file of any Hub dataset",
    suffixes=("", ".jsonl", ".json", ".parquet"),
    read=_read,
    write=_write,
    directory=True,
    variants=("jsonl", "parquet"),
)
