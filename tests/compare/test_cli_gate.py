"""The gate and compare through the CLI: exit codes, summary file, margins, ledger, fresh samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.compare.ledger import read_ledger

runner = CliRunner()
FAST = ["--resamples", "500", "--permutations", "500"]

# lookup improves, comparison loses 5 of 24 (drop 0.208), trend tiny and unchanged
REGRESSION = {
    "lookup": [(2, 2)] * 20 + [(0, 2)] * 6,
    "comparison": [(2, 0)] * 5 + [(2, 2)] * 15 + [(1, 1)] * 4,
    "trend": [(2, 2)] * 3,
}
# the overall rate goes up, one category still drops by 1/30
HIDDEN = {
    "lookup": [(0, 2)] * 10 + [(2, 2)] * 20,
    "comparison": [(2, 0)] + [(2, 2)] * 29,
}
CLEAN = {
    "lookup": [(2, 2)] * 20 + [(0, 2)] * 2 + [(2, 0)] * 1 + [(0, 0)] * 3,
    "comparison": [(2, 2)] * 30,
}


def _gate(args: list[str]) -> tuple[int, str]:
    res = runner.invoke(app, ["gate", *args, *FAST])
    return res.exit_code, res.output


def test_gate_fails_on_category_regression(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(REGRESSION)
    summary = tmp_path / "pr.md"
    code, out = _gate([str(ds), str(base), str(cand), "--k", "5", "--summary", str(summary)])
    assert code == 1, out
    assert "comparison" in out and "FAIL" in out
    md = summary.read_text()
    assert md.startswith("### assay gate :x: FAIL: complete@5 regressed in comparison.")
    assert "comparison-000" in md  # the broken ids are listed
    assert "trend" in md and "too small" in md
    assert read_ledger(ds)[0]["command"] == "gate"


def test_gate_passes_clean_change(make_case) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(CLEAN)
    code, out = _gate([str(ds), str(base), str(cand), "--max-drop", "0.05"])
    assert code == 0, out
    assert "PASS" in out


def test_gate_fails_when_average_improves_but_category_drops(make_case) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(HIDDEN)
    code, out = _gate([str(ds), str(base), str(cand), "--max-drop", "0.02", "-f", "json"])
    assert code == 1
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert data["failed_categories"] == ["comparison"]
    assert data["overall"]["margin"] is None
    assert data["overall"]["delta"]["value"] > 0


def test_require_significance_and_margins(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(HIDDEN)
    # one broken of 30 is not significant: passes with --require-significance
    code, out = _gate([str(ds), str(base), str(cand), "--require-significance", "-f", "markdown"])
    assert code == 0, out
    assert "not significant" in out
    margins = tmp_path / "margins.json"
    margins.write_text(json.dumps({"comparison": 0.05}))
    code, _ = _gate([str(ds), str(base), str(cand), "--margins", str(margins)])
    assert code == 0
    n_recorded = len(read_ledger(ds))
    margins.write_text(json.dumps({"nosuch": 0.05}))
    code, out = _gate([str(ds), str(base), str(cand), "--margins", str(margins)])
    assert code == 2 and "nosuch" in out
    assert len(read_ledger(ds)) == n_recorded  # a gate that stops on bad margins records nothing


def test_gate_on_bad_margins_records_nothing(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(HIDDEN)
    margins = tmp_path / "margins.json"
    margins.write_text(json.dumps({"nosuch": 0.05}))
    code, out = _gate([str(ds), str(base), str(cand), "--margins", str(margins)])
    assert code == 2 and "nosuch" in out
    assert read_ledger(ds) == []


def test_gate_on_recall_metric(make_case) -> None:  # type: ignore[no-untyped-def]
    outcomes = {"lookup": [(2, 1)] * 12 + [(2, 2)] * 18}
    ds, base, cand = make_case(outcomes)
    code, _ = _gate([str(ds), str(base), str(cand)])
    assert code == 1  # complete drops 0.4
    code, out = _gate(
        [str(ds), str(base), str(cand), "--metric", "recall", "--max-drop", "0.25", "-f", "json"]
    )
    assert code == 0, out
    assert json.loads(out)["metric"] == "recall@5"


@pytest.mark.parametrize(
    "mutate",
    ["missing_run", "bad_json", "bad_metric", "missing_entry"],
)
def test_gate_usage_and_data_errors_exit_2(make_case, tmp_path: Path, mutate: str) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(CLEAN)
    args = [str(ds), str(base), str(cand)]
    summary = tmp_path / "s.md"
    if mutate == "missing_run":
        args[2] = str(tmp_path / "nope.jsonl")
    elif mutate == "bad_json":
        cand.write_text(cand.read_text() + "{not json\n")
    elif mutate == "bad_metric":
        args += ["--metric", "accuracy"]  # not a registered metric
    else:
        lines = cand.read_text().splitlines()
        cand.write_text("\n".join(lines[1:]) + "\n")
    code, out = _gate([*args, "--summary", str(summary)])
    assert code == 2, out
    assert "error" in out
    assert not summary.exists()  # no partial output
    assert read_ledger(ds) == []


def test_compare_cli_reports_history(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(REGRESSION)
    out_json = tmp_path / "cmp.json"

    def compare(*extra: str) -> str:
        res = runner.invoke(
            app, ["compare", str(ds), str(base), str(cand), "-o", str(out_json), *FAST, *extra]
        )
        assert res.exit_code == 0, res.output
        return res.output

    # the same comparison printed as a table, as markdown, as JSON, and as the gate runs it:
    # one comparison, one ledger line
    for fmt in ("table", "markdown", "json"):
        out = compare("-f", fmt)
        if fmt != "json":
            assert "Comparison #1 recorded" in out
    assert _gate([str(ds), str(base), str(cand)])[0] == 1
    assert len(read_ledger(ds)) == 1
    assert json.loads(out_json.read_text())["ledger"]["t"] == 1
    # a different comparison (another metric) is number 2; exploring with --no-record is none
    assert "Comparison #2 recorded" in compare("-m", "ndcg", "-f", "markdown")
    out = compare("-m", "mrr", "-f", "markdown", "--no-record")
    assert "Comparison #" not in out and "Not recorded in the ledger" in out
    assert "Comparison #3 recorded" in compare("-m", "mrr", "-f", "markdown")
    data = json.loads(out_json.read_text())
    assert data["ledger"]["t"] == 3 and data["ledger"]["factor"] == 12
    assert [r["t"] for r in read_ledger(ds)] == [1, 2, 3]


def test_fresh_sample_lifecycle(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(REGRESSION, name="fresh-2026-11")
    res = runner.invoke(app, ["fresh", "seal", str(ds)])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "fresh-2026-11.manifest.json").read_text())
    assert manifest["fresh"]["status"] == "sealed" and len(manifest["fresh"]["content_hash"]) == 64
    res = runner.invoke(app, ["compare", str(ds), str(base), str(cand), "-f", "json", *FAST])
    assert res.exit_code == 0
    assert json.loads(res.output)["fresh"]["uses"] == 1
    # second use: gate and compare refuse, --allow-reuse proceeds and is recorded
    code, out = _gate([str(ds), str(base), str(cand)])
    assert code == 2 and "already used 1 time" in out
    res = runner.invoke(app, ["compare", str(ds), str(base), str(cand), "-f", "markdown", *FAST])
    assert res.exit_code == 2 and "already used 1 time" in res.output
    res = runner.invoke(
        app,
        ["compare", str(ds), str(base), str(cand), "-f", "markdown", "--allow-reuse", *FAST],
    )
    assert res.exit_code == 0 and "WARNING fresh sample fresh-2026-11: use 2" in res.output
    code, out = _gate([str(ds), str(base), str(cand), "--reuse"])
    assert code == 1 and "use 3" in out
    # retire into a main set
    main = tmp_path / "main.jsonl"
    main.write_text(json.dumps({"id": "m-1", "query": "q", "category": "lookup"}) + "\n")
    res = runner.invoke(app, ["fresh", "retire", str(ds), "--into", str(main), "--source", "hand"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in main.read_text().splitlines()]
    assert len(rows) == 1 + sum(len(v) for v in REGRESSION.values())
    assert (
        rows[1]["split"] == "fresh-2026-11" and rows[1]["source"] == "hand" and "added" in rows[1]
    )
    code, out = _gate([str(ds), str(base), str(cand), "--reuse"])
    assert code == 2 and "retired" in out
    # a sample edited after sealing is refused
    ds2, b2, c2 = make_case(CLEAN, name="fresh-b")
    assert runner.invoke(app, ["fresh", "seal", str(ds2)]).exit_code == 0
    assert runner.invoke(app, ["fresh", "seal", str(ds2)]).exit_code == 2  # already sealed
    ds2.write_text(ds2.read_text().replace("question", "Question"))
    res = runner.invoke(app, ["compare", str(ds2), str(b2), str(c2), *FAST])
    assert res.exit_code == 2 and "changed since it was sealed" in res.output


def test_gate_on_hit_metric_is_binary(make_case) -> None:  # type: ignore[no-untyped-def]
    # every entry keeps one of its two pieces: complete@5 drops by 0.4, hit@5 does not move
    ds, base, cand = make_case({"lookup": [(2, 1)] * 12 + [(2, 2)] * 18})
    code, _ = _gate([str(ds), str(base), str(cand)])
    assert code == 1
    code, out = _gate([str(ds), str(base), str(cand), "--metric", "hit@5", "-f", "json"])
    assert code == 0, out
    assert json.loads(out)["metric"] == "hit@5"
    # twelve entries lose both pieces: hit@5 drops by 0.4, tested with McNemar on the flips
    ds, base, cand = make_case({"lookup": [(1, 0)] * 12 + [(2, 2)] * 18}, name="lost")
    code, out = _gate([str(ds), str(base), str(cand), "--metric", "hit", "-f", "json"])
    assert code == 1, out
    data = json.loads(out)
    assert data["metric"] == "hit@5" and data["failed_categories"] == ["lookup"]
    mc = data["comparison"]["categories"]["lookup"]["metrics"]["hit@5"]
    assert (
        mc["kind"] == "binary"
        and list(mc["tests"]) == ["mcnemar_exact", "score"]
        and mc["broken"] == 12
    )


def test_runs_on_different_corpora_are_refused_unless_told(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from assay.runs import load_run, write_run

    ds, base, cand = make_case(CLEAN)
    for path, corpus in ((base, "aaaa1111"), (cand, "bbbb2222")):
        write_run(path, [r.to_dict() for r in load_run(path).rows], meta={"corpus_hash": corpus})
    for cmd in ("compare", "gate"):
        res = runner.invoke(app, [cmd, str(ds), str(base), str(cand), *FAST])
        assert res.exit_code == 2 and "corpus_hash" in res.output, res.output
        assert "aaaa1111" in res.output and "bbbb2222" in res.output
    assert read_ledger(ds) == []  # nothing recorded
    res = runner.invoke(
        app,
        ["compare", str(ds), str(base), str(cand), "--allow-corpus-change", "-f", "json", *FAST],
    )
    assert res.exit_code == 0, res.output
    assert any("different corpora" in n for n in json.loads(res.output)["notes"])
