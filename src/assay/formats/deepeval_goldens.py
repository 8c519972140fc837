"""deepeval goldens: a JSON (or JSONL) list as ``EvaluationDataset.save_as`` writes it, with
``input`` (the query), ``expected_output`` (the reference answer), ``context`` (gold as text,
written when ``--chunks`` gives the chunks' text) and ``additional_metadata``, which carries
assay's id, category and the whole entry (``assay_entry``) unless ``--plain``. On import,
``actual_output``, ``retrieval_context``, ``expected_tools`` and other goldens' fields are kept
under ``metadata``; ``additional_metadata`` keys are read as flat fields first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import DataError
from assay.formats._base import (
    ExportOptions,
    FormatSpec,
    RawImport,
    Record,
    json_array_lines,
    unrename,
    write_json,
)

_IN_GOLDEN = ("id", "query", "reference_answer", "gold_contexts")
SPELLINGS = {
    "query": ("input",),
    "reference_answer": ("expected_output",),
    "gold_contexts": ("context",),
    "id": ("name", "id"),
}


def _read(path: Path) -> RawImport:
    records: list[Record] = []
    for line, row in json_array_lines(path):
        if not isinstance(row, dict):
            raise DataError("a golden must be a JSON object", file=path, line=line)
        extra = row.pop("additional_metadata", None) or {}
        if not isinstance(extra, dict):
            raise DataError("must be an object", file=path, line=line, field="additional_metadata")
        records.append((line, {**unrename(row, SPELLINGS), **extra}))
    return RawImport(records)


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    rows: list[dict[str, Any]] = []
    for r in records:
        g: dict[str, Any] = {"input": r["query"], "name": r["id"]}
        if r.get("reference_answer") is not None:
            g["expected_output"] = r["reference_answer"]
        if r.get("gold_contexts"):
            g["context"] = r["gold_contexts"]
        if not opts.plain:
            g["additional_metadata"] = {k: v for k, v in r.items() if k not in _IN_GOLDEN}
        rows.append(g)
    write_json(path, rows, lines=path.suffix == ".jsonl")
    if opts.table is None:
        return ["context: not written (give --chunks: deepeval reads gold as text)"]
    return []


FORMAT = FormatSpec(
    name="deepeval",
    summary="deepeval goldens (JSON or JSONL, as EvaluationDataset.save_as writes them)",
    suffixes=(".json", ".jsonl"),
    read=_read,
    write=_write,
)
