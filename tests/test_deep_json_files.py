"""Deeply nested JSON and integers of more digits than Python converts (issue 40), in every
JSON or JSON-lines file assay reads: a clear DataError naming the file and line ("nested too
deeply", "an integer of more than 4,300 digits"), never a RecursionError or a ValueError
traceback. Every reader reads through `assay._io.json_loads` / `loads_line`."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay._io import json_loads
from assay.errors import DataError

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "1" * 5_000
ENTRY = {"id": "q1", "query": "What was revenue?", "reference_answer": "5", "category": "numeric"}
ROW = {"id": "q1", "answer": "5", "retrieved": []}


def _lines(first: dict[str, Any], bad: str) -> str:
    """A JSON-lines text: a good line, then `first` with one value made `bad`."""
    return (
        json.dumps(first)
        + "\n"
        + json.dumps({**first, "id": "q2", "x": 0}).replace("0}", bad + "}")
        + "\n"
    )


def _dataset(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
    from assay.dataset import load_dataset

    p = tmp / "golden.jsonl"
    p.write_text(_lines(ENTRY, bad), encoding="utf-8")
    return p, lambda: load_dataset(p)


def _dataset_manifest(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
    from assay.dataset import load_dataset

    p = tmp / "golden.jsonl"
    p.write_text(json.dumps(ENTRY) + "\n", encoding="utf-8")
    m = tmp / "golden.manifest.json"
    m.write_text('{\n "x": ' + bad + "}\n", encoding="utf-8")
    return m, lambda: load_dataset(p)


def _run(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
    from assay.runs import load_run

    p = tmp / "run.jsonl"
    p.write_text(_lines(ROW, bad), encoding="utf-8")
    return p, lambda: load_run(p)


def _file(
    module: str, reader: str, name: str, key: str | None
) -> Callable[[Path, str], tuple[Path, Callable[[], Any]]]:
    """A reader of one file `name`: a JSON object whose `key` is the bad value, or (no key) a
    JSON-lines record with it; `reader` is read off `module` (dotted for a class's loader)."""

    def make(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
        read: Any = importlib.import_module(module)
        for part in reader.split("."):
            read = getattr(read, part)
        p = tmp / name
        head = '{"id": "q1", "x": ' if key is None else '{\n "' + key + '": '
        p.write_text(head + bad + "}\n", encoding="utf-8")
        return p, lambda: read(p)

    return make


def _logs_manifest(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
    from assay.logs.store import read_manifest

    (tmp / "st").mkdir()
    p = tmp / "st" / "store.json"
    p.write_text('{\n "format": ' + bad + "}\n", encoding="utf-8")
    return p, lambda: read_manifest(tmp / "st")


def _ledger(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
    from assay.compare.ledger import read_ledger

    p = tmp / "golden.jsonl"
    p.write_text(json.dumps(ENTRY) + "\n", encoding="utf-8")
    led = tmp / "golden.ledger.jsonl"
    led.write_text('{"x": ' + bad + "}\n", encoding="utf-8")
    return led, lambda: read_ledger(p)


def _workbench(kind: str) -> Callable[[Path, str], tuple[Path, Callable[[], Any]]]:
    def make(tmp: Path, bad: str) -> tuple[Path, Callable[[], Any]]:
        from assay.workbench import service as svc
        from assay.workbench.db import Database

        good = {
            "corpus": {"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": "Revenue rose."},
            "entries": ENTRY,
            "run": ROW,
        }[kind]
        p = tmp / f"{kind}.jsonl"
        p.write_text(json.dumps(good) + '\n{"id": "q2", "x": ' + bad + "}\n", encoding="utf-8")
        db = Database(f"sqlite:///{tmp / 'wb.db'}")
        db.migrate()
        call: Any = getattr(svc, f"import_{kind}")
        return p, lambda: call(db, p)

    return make


READERS: dict[str, Callable[[Path, str], tuple[Path, Callable[[], Any]]]] = {
    "dataset": _dataset,
    "dataset manifest": _dataset_manifest,
    "run": _run,
    "gate margins": _file("assay.compare.gate", "load_margins", "margins.json", "numeric"),
    "calibration": _file("assay.label_files", "read_calibration", "cal.json", "kind"),
    "labels": _file("assay.label_files", "load_labels", "labels.jsonl", None),
    "judged answers": _file("assay.judge.judged", "read_judged", "judged.jsonl", None),
    "few-shot examples": _file("assay.judge.llm", "load_fewshot", "fewshot.jsonl", None),
    "log store record": _logs_manifest,
    "corpus manifest": _file("assay.corpus.build", "load_manifest", "manifest.json", "format"),
    "sql schema": _file("assay.sql.schema", "DatabaseSchema.load", "db.schema.json", "tables"),
    "sweep grid": _file("assay.sweep", "load_grid", "grid.json", "grid"),
    "explorer bundle": _file("assay.explorer.bundle", "load_bundle", "bundle.json", "entries"),
    "comparison ledger": _ledger,
    "workbench corpus import": _workbench("corpus"),
    "workbench entries import": _workbench("entries"),
    "workbench run import": _workbench("run"),
}


@pytest.mark.parametrize("bad,said", [(DEEP, "nested too deeply"), (HUGE, "4,300 digits")])
@pytest.mark.parametrize("reader", list(READERS))
def test_a_deep_or_huge_value_is_a_data_error_naming_the_file(
    tmp_path: Path, reader: str, bad: str, said: str
) -> None:
    path, read = READERS[reader](tmp_path, bad)
    try:
        read()
    except DataError as exc:
        text = str(exc)
    else:
        pytest.fail(f"{reader}: read without an error")
    assert said in text, (reader, text[:300])
    assert path.name in text, (reader, text[:300])


def test_json_loads_names_file_and_line() -> None:
    with pytest.raises(DataError, match=r"f\.json:3: bad JSON: nested too deeply"):
        json_loads('{\n\n"a": ' + DEEP + "}", "f.json")
    with pytest.raises(DataError, match=r"f\.json:2: bad JSON: an integer of more than 4,300"):
        json_loads('{"a":\n' + HUGE + "}", "f.json")
    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        json_loads(DEEP)
    got = json_loads('{"a": NaN, "b": 123456789012345678901234567890}')
    assert got["b"] == 123456789012345678901234567890


@pytest.mark.parametrize("bad,said", [(DEEP, "nested too deeply"), (HUGE, "4,300 digits")])
def test_a_log_line_with_a_deep_or_huge_value_is_a_bad_line(
    tmp_path: Path, bad: str, said: str
) -> None:
    from assay.logs import ingest_logs

    good = {"ts": "2026-10-03T14:05:11Z", "query": "What was revenue?", "answer": "5."}
    p = tmp_path / "l.jsonl"
    p.write_text(
        json.dumps(good)
        + '\n{"ts": "2026-10-03T14:05:11Z", "query": "q2", "latency_ms": '
        + bad
        + "}\n",
        encoding="utf-8",
    )
    rep = ingest_logs([p], tmp_path / "st", progress=False)
    assert (rep.total("added"), rep.total("bad")) == (1, 1)
    (problem,) = rep.problems
    assert problem.line == 2 and said in problem.message, problem


@pytest.mark.parametrize("bad", [DEEP, HUGE])
@pytest.mark.parametrize("where", ["input", "metadata"])
def test_a_span_with_a_deep_or_huge_json_string_is_read_not_crashed(
    tmp_path: Path, bad: str, where: str
) -> None:
    # a span's attributes may hold JSON as a string: read as a plain string when it does not
    # decode, the span kept (before: RecursionError or ValueError, the whole ingest aborted)
    from assay.logs import ingest_logs

    attrs: dict[str, Any] = {
        "input": {"value": "What was revenue?"},
        "retrieval": {"documents": [{"document": {"id": "d#1", "score": 0.9}}]},
    }
    if where == "input":
        attrs["input"] = {"value": '{"query": ' + bad + "}"}
    else:
        attrs["metadata"] = '{"as_of": ' + bad + "}"
    span = {
        "name": "retrieve",
        "span_kind": "RETRIEVER",
        "context": {"trace_id": "t1", "span_id": "s1"},
        "start_time": "2026-10-03T14:05:11.000000+00:00",
        "end_time": "2026-10-03T14:05:11.250000+00:00",
        "attributes": attrs,
    }
    p = tmp_path / "spans.jsonl"
    p.write_text(json.dumps(span) + "\n", encoding="utf-8")
    rep = ingest_logs([p], tmp_path / "st", progress=False)
    assert rep.total("added") + rep.total("bad") == 1
