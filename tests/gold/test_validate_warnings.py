"""`assay validate` warns about what is not an error but weakens a set: too few unanswerable or
partial entries (overall and per category), and content changed without a version bump."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import Entry, load_manifest, save_manifest, write_dataset
from assay.gold import validate

runner = CliRunner()


def _row(i: int, category: str, answerable: Any = True, **more: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"id": f"{category}-{i}", "query": f"q {i}", "category": category}
    if answerable is False:
        row["answerable"] = False
    else:
        row["evidence_paths"] = [[[f"c{i}"]]]
        if answerable == "partial":
            row["answerable"] = "partial"
    return row | more


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def all_answerable(tmp_path: Path) -> Path:
    rows = [_row(i, "lookup") for i in range(10)] + [_row(i, "trend") for i in range(10)]
    return _write(tmp_path / "golden.jsonl", rows)


def test_a_set_with_no_unanswerable_entry_warns_overall_and_per_category(
    all_answerable: Path,
) -> None:
    rep = validate(all_answerable)
    assert rep.ok  # a warning is not a problem
    assert [(w.field, w.message.split(" labelled")[0]) for w in rep.warnings] == [
        ("answerable", "0 of 20"),
        ("answerable", "category 'lookup': 0 of 10"),
        ("answerable", "category 'trend': 0 of 10"),
    ]
    assert "under the 10% asked for" in rep.warnings[0].message


def test_per_category_warning_when_the_overall_share_is_met(tmp_path: Path) -> None:
    """Two unanswerable lookups make 10% overall, and none of the trend questions is."""
    rows = [_row(i, "lookup", answerable=i >= 2) for i in range(10)]
    rows += [_row(i, "trend") for i in range(10)]
    rep = validate(_write(tmp_path / "golden.jsonl", rows))
    assert [w.message.split(":")[0] for w in rep.warnings] == ["category 'trend'"]
    cov = rep.to_dict()["coverage"]
    assert cov["overall"] == {"n": 20, "unanswerable_or_partial": 2, "share": 0.1}
    assert cov["categories"]["lookup"]["share"] == 0.2
    assert cov["categories"]["trend"]["share"] == 0.0


def test_partial_entries_count_and_drafts_do_not(tmp_path: Path) -> None:
    rows = [_row(i, "lookup", answerable="partial" if i == 0 else True) for i in range(10)]
    # drafts are not labelled yet: in neither count
    rows += [
        {"id": f"d{i}", "query": "q", "category": "lookup", "label_tier": "draft"} for i in range(5)
    ]
    rep = validate(_write(tmp_path / "golden.jsonl", rows))
    assert rep.warnings == [] and rep.partial == 1 and rep.drafts == 5
    assert rep.to_dict()["coverage"]["overall"]["n"] == 10


def test_the_threshold_is_an_option(tmp_path: Path) -> None:
    rows = [_row(i, "lookup", answerable=i >= 2) for i in range(10)]  # 20%
    path = _write(tmp_path / "golden.jsonl", rows)
    assert validate(path).warnings == []
    assert len(validate(path, min_unanswerable=0.25).warnings) == 2  # overall and lookup
    res = runner.invoke(app, ["validate", str(path), "--min-unanswerable", "0.25", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["warnings"]) == 2
    none = runner.invoke(app, ["validate", str(path), "--min-unanswerable", "0", "-f", "json"])
    assert json.loads(none.stdout)["warnings"] == []
    bad = runner.invoke(app, ["validate", str(path), "--min-unanswerable", "1.5"])
    assert bad.exit_code == 2
    with pytest.raises(ValueError, match="share"):
        validate(path, min_unanswerable=-0.1)


def test_warnings_in_every_format_and_strict_exits_1(all_answerable: Path) -> None:
    table = runner.invoke(app, ["validate", str(all_answerable)])
    assert table.exit_code == 0, table.output
    assert "warning: " in table.stderr and "category 'trend': 0 of 10" in table.stderr
    assert "unanswerable or partial: 0 of 20 labelled entries (0%)" in table.stderr
    js = runner.invoke(app, ["validate", str(all_answerable), "-f", "json"])
    out = json.loads(js.stdout)
    assert js.exit_code == 0 and out["ok"] is True and len(out["warnings"]) == 3
    assert out["warnings"][1] == {
        "file": str(all_answerable),
        "line": None,
        "field": "answerable",
        "message": "category 'lookup': 0 of 10 labelled entries (0%) are unanswerable or "
        "partial, under the 10% asked for (--min-unanswerable): add questions the filings do "
        "not (fully) answer",
    }
    md = runner.invoke(app, ["validate", str(all_answerable), "-f", "markdown"])
    assert md.exit_code == 0 and "3 warning(s)" in md.stdout
    assert "warning: " in md.stdout and "category 'trend'" in md.stdout
    for fmt in ("table", "json", "markdown"):
        strict = runner.invoke(app, ["validate", str(all_answerable), "--strict", "-f", fmt])
        assert strict.exit_code == 1, (fmt, strict.output)


def _versioned(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    rows = [_row(i, "lookup", answerable=i > 0) for i in range(5)]
    write_dataset(path, [Entry.model_validate(r) for r in rows], version="2.3.0", changelog="x")
    return path


def test_validate_names_content_changed_without_a_version_bump(tmp_path: Path) -> None:
    path = _versioned(tmp_path)
    assert validate(path).warnings == []
    path.write_text(path.read_text(encoding="utf-8").replace('"q 3"', '"q 3, edited"'))
    rep = validate(path)
    assert [w.field for w in rep.warnings] == ["version"]
    assert "version 2.3.0" in rep.warnings[0].message and "not bumped" in rep.warnings[0].message
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 0 and "not bumped" in res.stderr
    js = json.loads(runner.invoke(app, ["validate", str(path), "-f", "json"]).stdout)
    assert js["version_check"]["status"] == "changed" and js["version_check"]["changed"] is True
    assert runner.invoke(app, ["validate", str(path), "--strict"]).exit_code == 1


def test_a_manifest_that_cannot_tell_is_said_once(tmp_path: Path) -> None:
    path = _versioned(tmp_path)
    manifest = load_manifest(path)
    del manifest["version_content"]
    save_manifest(path, manifest)
    rep = validate(path)
    assert rep.warnings == [] and rep.version_check is not None
    assert sum("cannot tell" in n for n in rep.notes()) == 1
    res = runner.invoke(app, ["validate", str(path), "--strict"])
    assert res.exit_code == 0 and res.stderr.count("cannot tell") == 1


def test_a_file_with_problems_lists_them_and_no_warnings(tmp_path: Path) -> None:
    path = _write(tmp_path / "golden.jsonl", [_row(0, "lookup")])
    path.write_text(path.read_text() + '{"id": "x", "query": "q"}\n', encoding="utf-8")
    res = runner.invoke(app, ["validate", str(path), "-f", "json"])
    out = json.loads(res.stdout)
    assert res.exit_code == 1 and out["warnings"] == []
    assert out["problems"][0]["line"] == 2 and out["problems"][0]["field"] == "category"
