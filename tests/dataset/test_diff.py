"""`assay diff OLD NEW` / `assay.dataset.diff_datasets`: entries added, removed and changed field
by field, as a table, JSON and pull-request markdown (pinned by a golden file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import Dataset, Entry, FieldChange, diff_datasets, write_dataset
from assay.errors import DataError

DATA = Path(__file__).parent / "data"
OLD, NEW = DATA / "diff-old.jsonl", DATA / "diff-new.jsonl"
runner = CliRunner()


def test_added_removed_and_changed_field_by_field() -> None:
    d = diff_datasets(OLD, NEW)
    assert [e.id for e in d.added] == ["e"] and [e.id for e in d.removed] == ["d"]
    assert d.unchanged == 1  # h, on another line: lines do not matter, ids do
    kinds = {c.id: [(fc.field, fc.kind) for fc in c.changes] for c in d.changed}
    assert kinds == {
        "a": [
            ("query", "query reworded"),
            ("evidence_paths", "gold moved"),
            ("label_tier", "tier changed"),
        ],
        "b": [("answerable", "behaviour changed"), ("evidence_paths", "gold moved")],
        "c": [("metadata.room", "metadata.room changed")],
        "g": [
            ("reference_answer", "reference answer changed"),
            ("reviewed_by", "reviewed_by changed"),
        ],
        "f": [("evidence_paths", "gold moved")],
    }


def test_gold_moved_says_how() -> None:
    d = diff_datasets(OLD, NEW)
    gold = {c.id: fc.gold for c in d.changed for fc in c.changes if fc.gold is not None}
    a = gold["a"]
    assert a is not None
    assert (a.added, a.removed) == ([["c7"]], [["c6"]])
    assert a.changed == [(["c1", "c2"], ["c1", "c4"])]  # a piece given another alternative
    assert (a.paths_before, a.paths_after, a.regrouped) == (2, 3, False)
    b = gold["b"]
    assert b is not None and b.added == [["acme-10k@p3:gross margin rose"]] and b.removed == []
    f = gold["f"]
    assert f is not None and f.regrouped and (f.added, f.removed, f.changed) == ([], [], [])


def test_known_fields_are_named_and_any_other_field_compares() -> None:
    assert FieldChange("ambiguous", False, True).kind == "ambiguity changed"
    assert FieldChange("expected_behavior", None, "clarify").kind == "behaviour changed"
    assert FieldChange("label_tier", "silver", "gold").kind == "tier changed"
    assert FieldChange("doc_versions", None, {}).kind == "doc_versions changed"


def test_markdown_is_pinned_by_a_golden_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    res = runner.invoke(app, ["diff", OLD.name, NEW.name, "-f", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout == (DATA / "diff.md").read_text(encoding="utf-8")


def test_json_and_table() -> None:
    res = runner.invoke(app, ["diff", str(OLD), str(NEW), "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["counts"] == {"added": 1, "removed": 1, "changed": 5, "unchanged": 1}
    assert out["added"] == [{"id": "e", "line": 4, "category": "trend", "query": "New question"}]
    a = out["changed"][0]
    assert (a["id"], a["line_before"], a["line_after"]) == ("a", 1, 1)
    assert a["changes"][0] == {
        "field": "query",
        "kind": "query reworded",
        "before": "What was revenue in 2023?",
        "after": "What was total revenue in FY2023?",
    }
    assert a["changes"][1]["gold"] == {
        "paths": {"before": 2, "after": 3},
        "pieces_added": [["c7"]],
        "pieces_removed": [["c6"]],
        "pieces_changed": [{"before": ["c1", "c2"], "after": ["c1", "c4"]}],
        "regrouped": False,
    }
    assert a["changes"][1]["before"][1] == [["c5"], ["c6"]]  # the full value is kept
    table = runner.invoke(app, ["diff", str(OLD), str(NEW)])
    assert table.exit_code == 0, table.output
    # pieces are shown as written (not swallowed as console markup)
    assert "-[c6]; ~[c1 or c2]; 2 path(s)" in table.stdout
    assert "Added (1)" in table.stdout and "metadata.room changed" in table.stdout


def _entries(rows: list[dict[str, object]]) -> list[Entry]:
    return [Entry.model_validate(r) for r in rows]


def test_content_changed_without_a_version_bump_is_said(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [{"id": "a", "query": "q", "category": "lookup"}]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    write_dataset(old, _entries(rows), version="1.0.0")
    write_dataset(new, _entries([rows[0] | {"query": "q2"}]), version="1.0.0")
    d = diff_datasets(old, new)
    assert d.content_changed and not d.version_bumped
    assert "content changed but the version did not (both 1.0.0)" in d.summary()
    assert ":warning: the content changed and the version did not" in d.to_markdown()
    write_dataset(new, _entries([rows[0] | {"query": "q2"}]), version="1.1.0")
    assert diff_datasets(old, new).summary().endswith("version 1.0.0 -> 1.1.0")
    write_dataset(new, _entries(rows), version="1.0.0")
    assert diff_datasets(old, new).summary().endswith("same content")


def test_bad_input_names_file_line_field_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "query": "q", "category": "x"}\n{"id": "b", "query": "q"}\n')
    res = runner.invoke(app, ["diff", str(OLD), str(bad), "-f", "markdown"])
    assert res.exit_code == 2 and res.stdout == ""
    assert f"{bad}:2: category: required field is missing" in res.stderr
    missing = tmp_path / "nope.jsonl"
    both = runner.invoke(app, ["diff", str(missing), str(bad), "-f", "json"])
    assert both.exit_code == 2 and both.stdout == ""
    assert f"{missing}: file not found" in both.stderr and f"{bad}:2: category" in both.stderr
    with pytest.raises(DataError) as exc:
        diff_datasets(missing, bad)
    assert len(exc.value.problems) == 2


IDS = st.sampled_from([f"e{i}" for i in range(8)])


@settings(max_examples=60, deadline=None)
@given(
    old_ids=st.lists(IDS, unique=True, max_size=8),
    new_ids=st.lists(IDS, unique=True, max_size=8),
    edited=st.sets(IDS),
)
def test_every_id_is_added_removed_changed_or_unchanged(
    old_ids: list[str], new_ids: list[str], edited: set[str]
) -> None:
    def ds(ids: list[str], edit: set[str]) -> Dataset:
        return Dataset(
            _entries(
                [{"id": i, "query": "q" + ("!" if i in edit else ""), "category": "c"} for i in ids]
            )
        )

    d = diff_datasets(ds(old_ids, set()), ds(new_ids, edited))
    assert {e.id for e in d.added} == set(new_ids) - set(old_ids)
    assert {e.id for e in d.removed} == set(old_ids) - set(new_ids)
    both = set(old_ids) & set(new_ids)
    assert {c.id for c in d.changed} == both & edited
    assert d.unchanged == len(both - edited)
    assert not diff_datasets(ds(old_ids, edited), ds(old_ids, edited)).changed


def test_a_new_index_binding_is_said(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [{"id": "a", "query": "q", "category": "lookup"}]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    write_dataset(old, _entries(rows), version="1", index_version="aaaa")
    write_dataset(new, _entries(rows), version="2", index_version="bbbb")
    d = diff_datasets(old, new)
    assert d.summary().endswith("same content; bound to index aaaa -> bbbb")
    js = json.loads(d.to_json())
    assert (js["old"]["index_version"], js["new"]["index_version"]) == ("aaaa", "bbbb")


ALTS = st.sampled_from(["c1", "c2", "c3", "c4", "c5"])
PATHS = st.lists(
    st.lists(st.lists(ALTS, min_size=1, max_size=3), min_size=1, max_size=3), max_size=3
)


@settings(max_examples=150, deadline=None)
@given(before=PATHS, after=PATHS)
def test_gold_move_accounts_for_every_piece(
    before: list[list[list[str]]], after: list[list[list[str]]]
) -> None:
    """Pieces before = kept + removed + changed (before side); after = kept + added + changed
    (after side); a changed piece shares an alternative with what it was; no move, no change."""
    from assay.dataset import GoldMove

    def entry(paths: list[list[list[str]]]) -> Entry:
        return Entry(id="a", query="q", category="c", evidence_paths=paths)  # type: ignore[arg-type]

    def pieces(paths: list[list[list[str]]]) -> set[frozenset[str]]:
        return {frozenset(p) for path in paths for p in path}

    m = GoldMove.of(entry(before), entry(after))
    kept = pieces(before) & pieces(after)
    removed = {frozenset(p) for p in m.removed} | {frozenset(a) for a, _ in m.changed}
    added = {frozenset(p) for p in m.added} | {frozenset(b) for _, b in m.changed}
    assert pieces(before) == kept | removed and not kept & removed
    assert pieces(after) == kept | added and not kept & added
    assert all(set(a) & set(b) for a, b in m.changed)
    assert (m.paths_before, m.paths_after) == (len(before), len(after))
    if m.regrouped:
        assert pieces(before) == pieces(after)
    if before == after:
        assert (m.added, m.removed, m.changed, m.regrouped) == ([], [], [], False)


def test_the_same_entries_in_another_order_is_another_content(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "a", "query": "q", "category": "lookup"},
        {"id": "b", "query": "r", "category": "lookup"},
    ]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    write_dataset(old, _entries(rows), version="1")
    write_dataset(new, _entries(rows[::-1]), version="1")
    d = diff_datasets(old, new)
    assert d.content_changed and d.reordered and not d.changed
    assert "the same entries in another order, under the same version (1)" in d.summary()
