"""Label Studio tasks: the JSON list Label Studio imports and exports. Each task's ``data``
holds what an annotator reads (``query``, ``reference_answer``, ``category``, the key facts as
text) and, unless ``--plain``, the whole entry (``assay_entry``); with ``--labels``, each
annotator's labels become that annotator's annotation (one result per criterion: ``choices``
for text and true/false labels, ``number`` for numbers), not only the adjudicated one. A
labelling config for the criteria is written beside the file (``NAME.label_config.xml``).

Import reads tasks exported from Label Studio: ``data`` fields as the entry's (``question``,
``text`` and ``answer`` are read too), and every annotation's results as long-format labels
(item, rater, label, criterion); the rater is the annotator's name or e-mail when the export
has annotator details, else ``user-ID``. Cancelled annotations are left out, and said."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

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

SPELLINGS = {
    "query": ("query", "question", "text", "input"),
    "reference_answer": ("reference_answer", "answer", "reference"),
}
TO_NAME = "answer"


def _result(row: dict[str, Any]) -> dict[str, Any]:
    label = row["label"]
    res: dict[str, Any] = {"from_name": row.get("criterion") or "label", "to_name": TO_NAME}
    if isinstance(label, bool) or label is None or isinstance(label, str):
        choices = (
            [] if label is None else [str(label).lower() if isinstance(label, bool) else label]
        )
        res |= {"type": "choices", "value": {"choices": choices}}
        if isinstance(label, bool):
            res["meta"] = {"assay_type": "bool"}
    else:
        res |= {"type": "number", "value": {"number": label}}
    return res


def _annotations(rows: list[dict[str, Any]], raters: dict[str, int]) -> list[dict[str, Any]]:
    by_rater: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_rater.setdefault(str(r["rater"]), []).append(_result(r))
    return [
        {
            "completed_by": {"id": raters.setdefault(name, len(raters) + 1), "first_name": name},
            "result": results,
            "was_cancelled": False,
            "ground_truth": False,
        }
        for name, results in by_rater.items()
    ]


def _config(labels: list[dict[str, Any]]) -> str:
    criteria: dict[str, list[str]] = {}
    for r in labels:
        res = _result(r)
        if res["type"] == "choices":
            c = criteria.setdefault(res["from_name"], [])
            c += [v for v in res["value"]["choices"] if v not in c]
    parts = [
        "<View>",
        '  <Text name="query" value="$query"/>',
        f'  <Text name="{TO_NAME}" value="$reference_answer"/>',
    ]
    for name, values in criteria.items():
        parts.append(f"  <Choices name={quoteattr(name)} toName={quoteattr(TO_NAME)}>")
        parts += [f"    <Choice value={quoteattr(v)}/>" for v in values]
        parts.append("  </Choices>")
    return "\n".join([*parts, "</View>", ""])


def _write(
    path: Path, records: list[dict[str, Any]], labels: list[dict[str, Any]], opts: ExportOptions
) -> list[str]:
    from assay._io import atomic_writer

    by_item = label_rows(labels)
    raters: dict[str, int] = {}
    tasks: list[dict[str, Any]] = []
    for n, r in enumerate(records, start=1):
        data = {k: v for k, v in r.items() if k != "key_facts"}
        data["key_facts"] = "\n".join(r["key_facts"])
        if opts.plain:
            data.pop("assay_entry", None)
        task: dict[str, Any] = {"id": n, "data": data}
        task["annotations"] = _annotations(by_item.pop(r["id"], []), raters)
        tasks.append(task)
    write_json(path, tasks)
    config = path.with_name(path.stem + ".label_config.xml")
    with atomic_writer(config) as fh:
        fh.write(_config(labels))
    notes = [f"labelling config: {config}"]
    if by_item:
        notes.append(f"labels of {len(by_item)} items that are not in the dataset: not written")
    return notes


def _rater(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        for key in ("first_name", "email", "username"):
            if completed_by.get(key):
                return str(completed_by[key])
        completed_by = completed_by.get("id")
    return f"user-{completed_by}"


def _label(res: dict[str, Any]) -> Any:
    value = res.get("value") or {}
    if "number" in value:
        return value["number"]
    if "rating" in value:
        return value["rating"]
    for key in ("choices", "taxonomy", "labels"):
        if key in value:
            got = value[key]
            if not got:
                return None
            one = got[0] if len(got) == 1 else got
            if (res.get("meta") or {}).get("assay_type") == "bool":
                return one == "true"
            return one
    if "text" in value:
        texts = value["text"]
        return texts[0] if isinstance(texts, list) and len(texts) == 1 else texts
    return None


def _read(path: Path) -> RawImport:
    records: list[Record] = []
    labels: list[dict[str, Any]] = []
    cancelled = predictions = 0
    for line, task in json_array_lines(path):
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict):
            raise DataError("a task needs a data object", file=path, line=line, field="data")
        rec = unrename(data, SPELLINGS)
        if "id" not in rec and task.get("id") is not None:
            rec["id"] = str(task["id"])
        records.append((line, rec))
        predictions += len(task.get("predictions") or [])
        for ann in task.get("annotations") or []:
            if ann.get("was_cancelled"):
                cancelled += 1
                continue
            rater = _rater(ann.get("completed_by"))
            for res in ann.get("result") or []:
                labels.append(
                    {
                        "item": str(rec["id"]) if rec.get("id") is not None else f"task-{line}",
                        "rater": rater,
                        "label": _label(res),
                        "criterion": res.get("from_name"),
                    }
                )
    notes = []
    if cancelled:
        notes.append(f"{cancelled} cancelled annotations left out")
    if predictions:
        notes.append(f"{predictions} predictions (model pre-annotations) left out: not labels")
    return RawImport(records, labels, notes)


FORMAT = FormatSpec(
    name="label-studio",
    summary="Label Studio tasks with each annotator's annotations (JSON)",
    suffixes=(".json",),
    read=_read,
    write=_write,
    carries_labels=True,
)
