"""A dataset's version names its content: an edit without a version bump is found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.dataset import (
    Entry,
    bump_version,
    content_changed_since_version,
    entries_hash,
    fresh,
    load_dataset,
    load_manifest,
    manifest_path,
    save_manifest,
    write_dataset,
)

ROWS = [
    {"id": "a", "query": "What was revenue in 2023?", "category": "lookup"},
    {"id": "b", "query": "Did margins expand?", "category": "comparison", "answerable": False},
]


def _entries(rows: list[dict[str, object]]) -> list[Entry]:
    return [Entry.model_validate(r) for r in rows]


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    write_dataset(path, _entries(ROWS), version="1.0.0", changelog="first")
    return path


def test_a_written_version_records_its_content(written: Path) -> None:
    check = content_changed_since_version(written)
    assert check.status == "unchanged" and check.changed is False
    rec = load_manifest(written)["version_content"]
    assert rec == {"version": "1.0.0", "entries_hash": entries_hash(load_dataset(written).entries)}


def test_a_hand_edit_keeps_the_version_and_is_named(written: Path) -> None:
    text = written.read_text(encoding="utf-8").replace("revenue", "net revenue")
    written.write_text(text, encoding="utf-8")
    check = content_changed_since_version(load_dataset(written))
    assert check.status == "changed" and check.changed is True
    assert "version 1.0.0" in check.message and "not bumped" in check.message
    # the edit undone, spelt another way (key order, spacing): the content of 1.0.0 again
    spelt = [dict(reversed(r.items())) for r in ROWS]
    written.write_text("".join(json.dumps(r, indent=1).replace("\n", " ") + "\n" for r in spelt))
    assert content_changed_since_version(written).status == "unchanged"
    # a changed order of entries is another content
    written.write_text("".join(json.dumps(r) + "\n" for r in reversed(ROWS)), encoding="utf-8")
    assert content_changed_since_version(written).changed is True


def test_a_writer_that_keeps_the_version_does_not_launder_the_change(written: Path) -> None:
    """Writing other content without a version (or under the same one) keeps the old record."""
    edited = _entries([ROWS[0] | {"query": "Revenue in FY2023?"}, ROWS[1]])
    write_dataset(written, edited, changelog="reworded a")
    assert content_changed_since_version(written).changed is True
    write_dataset(written, edited, version="1.0.0")
    assert content_changed_since_version(written).changed is True
    write_dataset(written, edited, version="1.1.0", changelog="reworded a")
    check = content_changed_since_version(written)
    assert check.changed is False and check.version == "1.1.0"


def test_rewriting_the_same_content_is_not_a_change(written: Path) -> None:
    write_dataset(written, _entries(ROWS), changelog="rewritten")
    assert content_changed_since_version(written).status == "unchanged"


def test_a_manifest_without_the_record_cannot_tell(written: Path) -> None:
    manifest = load_manifest(written)
    del manifest["version_content"]
    save_manifest(written, manifest)
    check = content_changed_since_version(written)
    assert check.status == "unknown" and check.changed is None
    assert "cannot tell" in check.message and manifest_path(written).name in check.message
    # a version moved by hand past the recorded one: a bump, but no hash for it
    manifest["version"] = "2.0.0"
    manifest["version_content"] = {"version": "1.0.0", "entries_hash": "0" * 64}
    save_manifest(written, manifest)
    assert content_changed_since_version(written).status == "unknown"


def test_a_dataset_without_a_named_version_cannot_drift(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    check = content_changed_since_version(path)
    assert check.status == "unversioned" and check.changed is False
    assert check.version.startswith("sha256:")


def test_retiring_a_fresh_sample_bumps_the_main_sets_version(tmp_path: Path) -> None:
    main = tmp_path / "main.jsonl"
    write_dataset(main, _entries(ROWS), version="1.4.2", changelog="first")
    sample = tmp_path / "fresh-2026-12.jsonl"
    sample.write_text(
        json.dumps({"id": "f-1", "query": "q", "category": "lookup"}) + "\n", encoding="utf-8"
    )
    fresh.seal(sample)
    out = fresh.retire(sample, into=main)
    assert out.version == "1.4.3"
    assert content_changed_since_version(main).status == "unchanged"


def test_bump_version() -> None:
    assert [bump_version(v) for v in ("1.4.2", "v7", "2026.10-rc9", "draft", None)] == [
        "1.4.3",
        "v8",
        "2026.10-rc10",
        "draft.1",
        "1",
    ]
