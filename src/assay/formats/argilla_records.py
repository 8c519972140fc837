"""Argilla records: a JSON list of records in the shape of Argilla's ``Record.to_dict()``
(``id``, ``fields`` with the query and reference answer, ``metadata`` with the category, the
key facts and, unless ``--plain``, the whole entry, ``responses`` per question with each
annotator's value). Argilla names annotators by user id: each rater gets a stable UUID (UUID5
of the name) and the record's ``metadata.assay_raters`` maps them back, so a round trip keeps
the names. Load them with ``rg.Record.from_dict`` and log them to a dataset whose questions are
the criteria."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from assay._io import json_loads
from assay.errors import DataError
from assay.formats._base import (
    ExportOptions,
    FormatSpec,
    RawImport,
    Record,
    json_array_lines,
    label_rows,
    unrename,
    write_json,
)

RATERS = "assay_raters"
NAMESPACE = uuid.UUID("5c7c4b8e-1f0e-4c1a-9a51-0d1f1c2b3a4e")
SPELLINGS = {
    "query": ("query", "question", "text", "prompt", "input"),
    "reference_answer": ("reference_answer", "answer", "response", "reference"),
}


def rater_id(name: str) -> str:
    """The stable UUID an annotator gets in Argilla (UUID5 of the name)."""
    return str(uuid.uuid5(NAMESPACE, name))


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    by_item = label_rows(labels)
    out: list[dict[str, Any]] = []
    skipped = 0
    for r in records:
        fields = {"query": r["query"]}
        if r.get("reference_answer") is not None:
            fields["reference_answer"] = r["reference_answer"]
        meta = {k: v for k, v in r.items() if k not in ("id", "query", "reference_answer")}
        meta["key_facts"] = "\n".join(r["key_facts"])
        meta["gold_chunk_ids"] = "\n".join(r["gold_chunk_ids"])
        if "assay_entry" in meta:
            meta["assay_entry"] = json.dumps(meta["assay_entry"], ensure_ascii=False)
        if opts.plain:
            meta.pop("assay_entry", None)
        responses: dict[str, list[dict[str, Any]]] = {}
        names: dict[str, str] = {}
        for row in by_item.pop(r["id"], []):
            if row["label"] is None:
                skipped += 1
                continue
            uid = rater_id(str(row["rater"]))
            names[uid] = str(row["rater"])
            question = row.get("criterion") or "label"
            responses.setdefault(question, []).append({"value": row["label"], "user_id": uid})
        if names:
            meta[RATERS] = json.dumps(names, sort_keys=True)
        status = "completed" if responses else "pending"
        out.append(
            {
                "id": r["id"],
                "fields": fields,
                "metadata": meta,
                "suggestions": {},
                "responses": responses,
                "vectors": {},
                "status": status,
            }
        )
    write_json(path, out)
    notes = []
    if skipped:
        notes.append(f"{skipped} missing (null) labels not written: Argilla has no empty response")
    if by_item:
        notes.append(f"labels of {len(by_item)} items that are not in the dataset: not written")
    return notes


def _read(path: Path) -> RawImport:
    records: list[Record] = []
    labels: list[dict[str, Any]] = []
    for line, rec in json_array_lines(path):
        if not isinstance(rec, dict) or not isinstance(rec.get("fields"), dict):
            raise DataError("a record needs a fields object", file=path, line=line, field="fields")
        meta = dict(rec.get("metadata") or {})
        try:
            names = json_loads(meta.pop(RATERS, "{}"))
        except ValueError as exc:
            raise DataError(
                f"not JSON: {exc}", file=path, line=line, field=f"metadata.{RATERS}"
            ) from None
        flat = {**unrename(rec["fields"], SPELLINGS), **meta}
        if rec.get("id") is not None:
            flat.setdefault("id", str(rec["id"]))
        records.append((line, flat))
        for question, given in (rec.get("responses") or {}).items():
            for resp in given:
                uid = str(resp.get("user_id"))
                labels.append(
                    {
                        "item": str(flat.get("id", f"record-{line}")),
                        "rater": names.get(uid, uid),
                        "label": resp.get("value"),
                        "criterion": question,
                    }
                )
    return RawImport(records, labels)


FORMAT = FormatSpec(
    name="argilla",
    summary="Argilla records with each annotator's responses (JSON, Record.to_dict shape)",
    suffixes=(".json",),
    read=_read,
    write=_write,
    carries_labels=True,
)
