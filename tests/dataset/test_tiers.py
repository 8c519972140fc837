"""Only verified gold decides: label tiers, ambiguous entries, and the filter every command applies
where it opens its dataset (`assay.dataset.tiers`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.compare.ledger import read_ledger
from assay.dataset import Entry, TierReport, load_dataset, open_dataset, select_tiers, tier_of
from assay.errors import DataError, UsageError
from assay.runs import write_run

runner = CliRunner()
FAST = ["--resamples", "200", "--permutations", "200"]


def _entry(eid: str, cat: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": eid,
        "query": f"question {eid}",
        "category": cat,
        "evidence_paths": [[[f"{eid}-a"]]],
    } | extra


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _mixed(tmp_path: Path, *, n_gold: int = 100, n_draft: int = 200) -> tuple[Path, Path, Path]:
    """100 gold entries (half by label_tier, half by two reviewers) and 200 synthetic drafts, in
    two categories. The base run finds every gold entry's evidence and every draft's; the
    candidate finds the same gold, and misses every draft."""
    rows = [
        _entry(f"g{i:03d}", "lookup" if i % 2 else "trend", label_tier="gold")
        if i % 4
        else _entry(f"g{i:03d}", "lookup" if i % 2 else "trend", reviewed_by=2)
        for i in range(n_gold)
    ]
    rows += [
        _entry(f"d{i:03d}", "lookup" if i % 2 else "trend", label_tier="draft", source="synthetic")
        for i in range(n_draft)
    ]
    ds = _write(tmp_path / "golden.jsonl", rows)
    hit = [{"id": r["id"], "retrieved": [f"{r['id']}-a", "noise"], "answer": "x"} for r in rows]
    miss = [
        {"id": r["id"], "retrieved": ["noise", "other"]}
        if r["id"].startswith("d")
        else {"id": r["id"], "retrieved": [f"{r['id']}-a", "noise"]}
        for r in rows
    ]
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    write_run(base, hit)
    write_run(cand, miss)
    return ds, base, cand


# ----------------------------------------------------------------------------- where tiers come from


@pytest.mark.parametrize(
    ("extra", "tier"),
    [
        ({"label_tier": "gold"}, "gold"),
        ({"label_tier": "silver", "reviewed_by": 1}, "silver"),
        ({"label_tier": "expert-adjudicated"}, "gold"),  # the workbench's older name
        ({"label_tier": "expert-agreed"}, "gold"),
        ({"reviewed_by": 3}, "gold"),
        ({"reviewed_by": 1}, "silver"),
        ({"reviewed_by": 0}, "draft"),
        ({"source": "synthetic"}, "draft"),
        ({"source": "log"}, "draft"),
        ({"source": "hand"}, None),
        ({}, None),
    ],
)
def test_an_entry_without_a_tier_is_read_from_its_provenance(
    extra: dict[str, Any], tier: str | None
) -> None:
    assert tier_of(Entry.model_validate(_entry("x", "c", **extra))) == tier


def test_an_unknown_tier_or_an_ambiguous_entry_without_a_reason_is_named_by_line(
    tmp_path: Path,
) -> None:
    p = _write(
        tmp_path / "bad.jsonl",
        [
            _entry("a", "c", label_tier="platinum"),
            _entry("b", "c", ambiguous=True),
            _entry("c", "c", ambiguous_reason="why not"),
        ],
    )
    with pytest.raises(DataError) as ei:
        load_dataset(p)
    text = str(ei.value)
    assert f"{p}:1: label_tier:" in text and "'gold'" in text
    assert f"{p}:2: ambiguous: an ambiguous entry says why" in text
    assert f"{p}:3: ambiguous: ambiguous_reason is given" in text


# ----------------------------------------------------------------------------- the selection


def test_gold_by_default_and_the_report_counts_what_was_left_out(tmp_path: Path) -> None:
    ds_path, _, _ = _mixed(tmp_path)
    full = load_dataset(ds_path)
    chosen, report = select_tiers(full)
    assert len(chosen) == 100 and all(tier_of(e) == "gold" for e in chosen.entries)
    assert report.kept == {"gold": 100} and report.left_out == {"draft": 200}
    assert "100 gold used" in report.line() and "200 draft left out" in report.line()
    # the selection is the file's: same version, hash, manifest and line numbers
    assert chosen.version == full.version and chosen.content_hash == full.content_hash
    assert chosen.lines["g099"] == full.lines["g099"] and chosen.tiers is report
    wider, rep2 = select_tiers(full, "gold,draft")
    assert len(wider) == 300 and rep2.left_out == {}


def test_ambiguous_entries_are_always_left_out_and_listed(tmp_path: Path) -> None:
    rows = [_entry(f"g{i}", "c", label_tier="gold") for i in range(5)]
    rows[1] |= {"ambiguous": True, "ambiguous_reason": "two fiscal years fit"}
    ds = load_dataset(_write(tmp_path / "d.jsonl", rows))
    for tiers in (None, "gold,silver,draft"):
        chosen, report = select_tiers(ds, tiers)
        assert [e.id for e in chosen.entries] == ["g0", "g2", "g3", "g4"]
        assert report.ambiguous == ("g1",) and "1 ambiguous left out" in report.line()
        assert "g1" in report.line()


def test_an_untiered_dataset_is_used_whole_by_default_and_says_so(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path / "d.jsonl", [_entry(f"e{i}", "c") for i in range(4)]))
    chosen, report = select_tiers(ds)
    assert len(chosen) == 4 and report.untiered and "Untiered dataset" in report.line()
    # asked explicitly, a tier is a tier: nothing here is known to be gold
    with pytest.raises(DataError) as ei:
        select_tiers(ds, "gold")
    assert "4 draft" in str(ei.value)


def test_a_selection_that_leaves_nothing_is_refused_with_the_tiers_there_are(
    tmp_path: Path,
) -> None:
    rows = [_entry(f"s{i}", "c", label_tier="silver", reviewed_by=1) for i in range(3)]
    rows.append(_entry("d0", "c", label_tier="draft"))
    ds = load_dataset(_write(tmp_path / "d.jsonl", rows))
    with pytest.raises(DataError) as ei:
        select_tiers(ds)
    msg = str(ei.value)
    assert "3 silver and 1 draft" in msg and "--tiers gold,silver,draft" in msg
    with pytest.raises(UsageError, match="unknown tier 'platinum'"):
        select_tiers(ds, "gold,platinum")
    assert isinstance(select_tiers(ds, "silver")[1], TierReport)


def test_a_tier_its_reviewers_contradict_is_a_validation_problem(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "d.jsonl",
        [
            _entry("a", "c", label_tier="gold", reviewed_by=2),
            _entry("b", "c", label_tier="gold", reviewed_by=1),
            _entry("c", "c", label_tier="draft", reviewed_by=2),
        ],
    )
    res = runner.invoke(app, ["validate", str(p)])
    assert res.exit_code == 1, res.output  # problems found
    assert f"{p}:2" in res.output and f"{p}:3" in res.output and f"{p}:1" not in res.output
    assert "label_tier" in res.output


# ----------------------------------------------------------------------------- the commands


def test_a_gate_tests_the_gold_and_flipping_every_draft_changes_nothing(tmp_path: Path) -> None:
    ds, base, cand = _mixed(tmp_path)
    res = runner.invoke(app, ["gate", str(ds), str(base), str(cand), "-f", "json", *FAST])
    assert res.exit_code == 0, res.output  # the drafts all broke; the gold did not move
    out = json.loads(res.output)
    assert out["overall"]["n"] == 100
    assert out["comparison"]["tiers"]["left_out"] == {"draft": 200}
    assert any("200 draft left out" in n for n in out["comparison"]["notes"])
    # the drafts' results flipped back: the gate is the same gate
    res2 = runner.invoke(
        app, ["gate", str(ds), str(base), str(base), "-f", "json", "--no-record", *FAST]
    )
    again = json.loads(res2.output)
    same = ("category", "n", "base", "cand", "delta", "up", "down", "verdict")
    assert [{k: r[k] for k in same} for r in again["rows"]] == [
        {k: r[k] for k in same} for r in out["rows"]
    ]
    assert again["passed"] is out["passed"] is True
    # asked to read the drafts too, the same runs fail the gate
    wide = runner.invoke(
        app, ["gate", str(ds), str(base), str(cand), "--tiers", "gold,draft", *FAST]
    )
    assert wide.exit_code == 1, wide.output
    # the table says what was left out
    table = runner.invoke(app, ["gate", str(ds), str(base), str(cand), *FAST])
    assert "200 draft left out" in " ".join(table.output.split())


def test_a_gate_on_silver_only_is_refused_and_says_how_to_widen(tmp_path: Path) -> None:
    rows = [_entry(f"s{i}", "c", label_tier="silver", reviewed_by=1) for i in range(10)]
    ds = _write(tmp_path / "fb.jsonl", rows)
    run = tmp_path / "run.jsonl"
    write_run(run, [{"id": r["id"], "retrieved": [f"{r['id']}-a"]} for r in rows])
    res = runner.invoke(app, ["gate", str(ds), str(run), str(run), *FAST])
    assert res.exit_code == 2 and "--tiers gold,silver" in res.output, res.output
    assert read_ledger(ds) == []  # nothing recorded
    ok = runner.invoke(app, ["gate", str(ds), str(run), str(run), "--tiers", "gold,silver", *FAST])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["gate", str(ds), str(run), str(run), "--tiers", "golden", *FAST])
    assert bad.exit_code == 2 and "unknown tier 'golden'" in bad.output


def test_score_check_compare_and_export_read_gold_and_say_what_they_left_out(
    tmp_path: Path,
) -> None:
    ds, base, cand = _mixed(tmp_path, n_gold=20, n_draft=30)
    other = tmp_path / "other.jsonl"
    other.write_bytes(cand.read_bytes())
    score = json.loads(runner.invoke(app, ["score", str(ds), str(base), "-f", "json"]).output)
    assert score["overall"]["n"] == 20 and score["tiers"]["left_out"] == {"draft": 30}
    cmp = json.loads(
        runner.invoke(
            app, ["compare", str(ds), str(base), str(cand), "-f", "json", "--no-record", *FAST]
        ).output
    )
    assert cmp["overall"]["n"] == 20 and cmp["tiers"]["kept"] == {"gold": 20}
    board = runner.invoke(
        app,
        ["compare", str(ds), str(base), str(cand), str(other), "-f", "json", "--no-record", *FAST],
    )
    assert "30 draft left out" in board.output, board.output
    from assay.judge.checking import check_files

    rep = check_files(ds, base, checks="answer_correct")
    assert len(rep.rows) == 20 and rep.meta["tiers"]["left_out"] == {"draft": 30}
    assert any("30 draft left out" in w for w in rep.warnings)
    assert open_dataset(ds, "gold,draft").tiers is not None


def test_the_ledger_keeps_a_comparison_on_other_tiers_apart(tmp_path: Path) -> None:
    ds, base, cand = _mixed(tmp_path, n_gold=20, n_draft=30)
    for tiers in ("gold", "gold,draft", "gold"):
        res = runner.invoke(
            app, ["compare", str(ds), str(base), str(cand), "--tiers", tiers, *FAST]
        )
        assert res.exit_code == 0, res.output
    assert len(read_ledger(ds)) == 2  # gold twice is one comparison; gold+draft another


def test_the_pytest_plugin_gates_gold_only(tmp_path: Path) -> None:
    from assay.pytest_plugin import gate_or_fail

    ds, base, cand = _mixed(tmp_path, n_gold=20, n_draft=30)
    result = gate_or_fail(ds, base, cand, n_resamples=200, n_permutations=200)
    assert result.passed and result.comparison.overall.n == 20
    with pytest.raises(pytest.fail.Exception):
        gate_or_fail(ds, base, cand, tiers="gold,draft", n_resamples=200, n_permutations=200)


def test_in_a_tiered_set_an_entry_without_a_tier_counts_as_a_draft(tmp_path: Path) -> None:
    rows = [_entry("g", "c", label_tier="gold"), _entry("h", "c", source="hand"), _entry("x", "c")]
    ds = load_dataset(_write(tmp_path / "d.jsonl", rows))
    chosen, report = select_tiers(ds)
    assert list(chosen.by_id) == ["g"] and report.left_out == {"draft": 2}
    assert report.unknown == 2 and "2 without a known tier counted as draft" in report.line()
    assert len(select_tiers(ds, "gold,draft")[0]) == 3


class _CountedList(list[Entry]):
    """A list that counts how often it is walked."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


@pytest.mark.parametrize("tiers", [None, "gold,silver", "draft"])
def test_select_tiers_reads_the_entries_in_one_pass(tmp_path: Path, tiers: str | None) -> None:
    ds, _, _ = _mixed(tmp_path, n_gold=12, n_draft=8)
    rows = [json.loads(line) for line in ds.read_text(encoding="utf-8").splitlines()]
    rows[3] |= {"ambiguous": True, "ambiguous_reason": "two readings of the period"}
    rows.append(_entry("u001", "trend", answerable=False, label_tier="gold"))  # short of gold
    full = load_dataset(_write(tmp_path / "more.jsonl", rows))
    want_set, want = select_tiers(full, tiers)
    counted = _CountedList(full.entries)
    full.entries = counted
    _CountedList.walks = 0
    got_set, got = select_tiers(full, tiers)
    assert _CountedList.walks == 1
    assert got == want and [e.id for e in got_set.entries] == [e.id for e in want_set.entries]
    assert want.ambiguous == (rows[3]["id"],) and want.short_of_gold == ("u001",)


def test_select_tiers_on_an_untiered_set_keeps_every_clear_entry_in_one_pass(
    tmp_path: Path,
) -> None:
    rows = [_entry(f"q{i}", "trend") for i in range(5)]
    rows[1] |= {"ambiguous": True, "ambiguous_reason": "two readings"}
    full = load_dataset(_write(tmp_path / "plain.jsonl", rows))
    full.entries = _CountedList(full.entries)
    _CountedList.walks = 0
    kept, report = select_tiers(full)
    assert _CountedList.walks == 1
    assert report.untiered and report.kept == {"untiered": 4} and report.left_out == {}
    assert report.ambiguous == ("q1",) and report.unknown == 0
    assert [e.id for e in kept.entries] == ["q0", "q2", "q3", "q4"]
