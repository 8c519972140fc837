"""A run read by the columnar reader says whether its hits carry chunk text or content hashes
(asked of the bytes it parsed), so binding it to a chunk table does not read the file again
when they carry none; a run read otherwise is read for them as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.runs import _fast, load_run
from assay.runs.corpus import hit_content


def _write(path: Path, text: bool) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "retrieved": [
                {"chunk_id": f"c{i}", "score": 1.0} | ({"text": f"chunk {i}"} if text else {}),
                {"chunk_id": "c9", "score": 0.5},
            ],
        }
        for i in range(4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_run_without_hit_content_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fast, "_MIN_BYTES", 0)  # the columnar reader reads this small run
    path = _write(tmp_path / "run.jsonl", text=False)
    run = load_run(path)
    assert run.hit_content is False
    assert hit_content(run) == {}
    _write(path, text=True)  # the file changes after it was read: the run is what was read
    assert hit_content(run) == {}
    checked = load_run(path, fast=False)  # the checked reader does not know: reads the file
    assert checked.hit_content is None
    assert hit_content(checked) == {f"c{i}": ("text", f"chunk {i}") for i in range(4)}


def test_a_run_with_hit_content_is_read_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fast, "_MIN_BYTES", 0)
    path = _write(tmp_path / "run.jsonl", text=True)
    run = load_run(path)
    assert run.hit_content is True
    assert hit_content(run) == {f"c{i}": ("text", f"chunk {i}") for i in range(4)}
    assert hit_content(run) == hit_content(load_run(path, fast=False))
