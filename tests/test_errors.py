"""`DataError` built from one message names the file, line and field at fault."""

from __future__ import annotations

from pathlib import Path

from assay.errors import DataError, Problem


def test_one_message_names_file_line_and_field() -> None:
    exc = DataError("a JSON line needs an id", file=Path("runs/a.jsonl"), line=3, field="id")
    assert exc.problems == [Problem("runs/a.jsonl", 3, "id", "a JSON line needs an id")]
    assert str(exc) == "runs/a.jsonl:3: id: a JSON line needs an id"


def test_one_message_without_line_or_field_names_the_file() -> None:
    assert str(DataError("file not found", file="golden.jsonl")) == "golden.jsonl: file not found"
    assert str(DataError("empty", field="k")) == "<input>: k: empty"
