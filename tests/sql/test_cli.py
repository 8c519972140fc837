"""The `assay sql` commands and `assay synth warehouse`, end to end on a small warehouse."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sqlcli") / "wh"
    res = runner.invoke(
        app,
        [
            "synth",
            "warehouse",
            "--out",
            str(out),
            "--companies",
            "2",
            "--years",
            "2",
            "--suite",
            "2",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["entries"] > 40 and summary["suite_variants"] == 2
    return out


def test_warehouse_refuses_to_overwrite(small: Path) -> None:
    res = runner.invoke(app, ["synth", "warehouse", "--out", str(small)])
    assert res.exit_code == 2 and "--overwrite" in res.output


def test_run_then_check_per_category(small: Path) -> None:
    run = small / "run.jsonl"
    res = runner.invoke(
        app, ["sql", "run", str(small / "golden.jsonl"), "--system", "template", "--out", str(run)]
    )
    assert res.exit_code == 0, res.output
    assert run.exists() and (small / "run.jsonl.meta.json").exists()
    res = runner.invoke(
        app,
        ["sql", "check", str(small / "golden.jsonl"), str(run), "-f", "json", "--resamples", "100"],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["checks"] == [
        "sql_valid",
        "sql_safe",
        "exec_match",
        "test_suite_match",
        "sql_refusal_ok",
    ]
    assert {"aggregation", "restatement", "unanswerable", "overall"} <= set(d["rates"])
    md = runner.invoke(
        app,
        [
            "sql",
            "check",
            str(small / "golden.jsonl"),
            str(run),
            "-f",
            "markdown",
            "--resamples",
            "100",
        ],
    )
    assert md.exit_code == 0 and "| category |" in md.output
    # the generic check command takes the same checks by name
    res = runner.invoke(
        app,
        [
            "check",
            str(small / "golden.jsonl"),
            str(run),
            "--checks",
            "exec_match,sql_refusal_ok",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert set(json.loads(res.output)["checks"]) == {"exec_match", "sql_refusal_ok"}


def test_exec_safe_and_ask(small: Path) -> None:
    db = str(small / "warehouse.duckdb")
    res = runner.invoke(
        app, ["sql", "exec", db, "SELECT COUNT(*) AS n FROM companies", "-f", "json"]
    )
    assert res.exit_code == 0 and json.loads(res.output)["rows"] == [[2]]
    res = runner.invoke(
        app, ["sql", "exec", str(small / "warehouse.sqlite"), "DROP TABLE companies"]
    )
    assert res.exit_code == 2 and "refused before running" in res.output
    res = runner.invoke(
        app, ["sql", "safe", "SELECT * FROM read_parquet('x.parquet')", "-f", "json"]
    )
    assert res.exit_code == 1 and "read_parquet" in json.loads(res.output)["reasons"]
    assert runner.invoke(app, ["sql", "safe", "SELECT 1"]).exit_code == 0
    name = json.loads((small / "warehouse.schema.json").read_text())["name"]
    assert name == "warehouse"
    q = json.loads((small / "golden.jsonl").read_text().splitlines()[0])["query"]
    res = runner.invoke(app, ["sql", "ask", db, q, "--exec", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["sql"].startswith("SELECT") and out["result"]["rows"]


def test_near_miss_and_suite(small: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["sql", "near-miss", str(small / "golden.jsonl"), "-f", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["planted"] > 0 and d["variants"] == 2
    bad = tmp_path / "nm.jsonl"
    bad.write_text('{"entry_id": "sql:nope", "sql": "SELECT 1"}\n{"sql": 1}\n')
    res = runner.invoke(
        app, ["sql", "near-miss", str(small / "golden.jsonl"), "--near-misses", str(bad)]
    )
    assert res.exit_code == 2 and f"{bad}:2: entry_id" in res.output
    res = runner.invoke(
        app, ["sql", "suite", str(small / "warehouse.duckdb"), "--k", "3", "-f", "json"]
    )
    assert res.exit_code == 0 and json.loads(res.output)["variants"] == 3


def test_missing_extra_names_it(small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlglot", None)
    import assay.sql.safety as safety

    safety._check_safe.cache_clear()
    res = runner.invoke(app, ["sql", "safe", "SELECT 1"])
    assert res.exit_code == 2
    assert "pip install 'assay[sql]'" in res.output
    monkeypatch.setitem(sys.modules, "duckdb", None)
    res = runner.invoke(
        app, ["synth", "warehouse", "--out", str(small.parent / "other"), "--companies", "2"]
    )
    assert res.exit_code == 2 and "assay[sql]" in res.output
    assert not (small.parent / "other" / "warehouse.duckdb").exists()


def test_assay_run_takes_a_sql_system_and_assay_check_rates_the_sql_checks(
    small: Path, tmp_path: Path
) -> None:
    """The issue's own commands: `assay run ... --system sql-template`, then `assay check` with
    no --checks rates the gold SQL checks on a dataset of SQL questions."""
    golden, run = small / "golden.jsonl", tmp_path / "run.jsonl"
    res = runner.invoke(app, ["run", str(golden), "--system", "sql-template", "--out", str(run)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in run.read_text().splitlines() if line.strip()]
    assert rows and all("sql" in r for r in rows)  # the query rides in the row's extra
    assert any(r["sql"] for r in rows) and any(r["sql"] is None for r in rows)  # and declines
    checked = runner.invoke(app, ["check", str(golden), str(run), "-f", "json"])
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["checks"] == [
        "sql_valid",
        "sql_safe",
        "exec_match",
        "test_suite_match",
        "sql_refusal_ok",
    ]
    assert 0 < report["rates"]["overall"]["exec_match"]["rate"] <= 1
    bad = runner.invoke(
        app, ["run", str(golden), "--system", "sql-template", "--out", str(run), "--mode", "full"]
    )
    assert bad.exit_code == 2 and "--system sql-SPEC does not take --mode" in bad.output


def test_a_moved_warehouse_folder_still_validates_runs_and_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each entry names its database relative to the dataset: generate, move the folder, and
    validate, run and check from elsewhere with no other flag."""
    made = tmp_path / "made" / "wh"
    args = ["--out", str(made), "--companies", "2", "--years", "2", "--suite", "2"]
    res = runner.invoke(app, ["synth", "warehouse", *args])
    assert res.exit_code == 0, res.output
    # no file of the folder names a path of the machine it was made on
    for f in [*made.glob("*.json*"), *made.glob("*.suite/*.json")]:
        assert str(tmp_path) not in f.read_text(encoding="utf-8"), f
    rows = [json.loads(line) for line in (made / "golden.jsonl").read_text().splitlines()]
    assert {r["sql"]["database"] for r in rows} == {"warehouse.duckdb"}
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    made.rename(moved)
    assert not made.exists()
    monkeypatch.chdir(tmp_path / "elsewhere")
    golden = Path("renamed") / "golden.jsonl"  # relative to the new working folder
    res = runner.invoke(app, ["validate", str(golden)])
    assert res.exit_code == 0, res.output
    assert "every gold query run read-only and equal to its stored result" in res.output
    res = runner.invoke(app, ["run", str(golden), "--system", "sql-template", "--out", "r.jsonl"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["check", str(golden), "r.jsonl", "-f", "json", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    rates = json.loads(res.stdout)["rates"]["overall"]
    assert rates["exec_match"]["rate"] > 0.5 and rates["test_suite_match"]["n"] > 40
    assert not any("not found" in n for r in json.loads(res.stdout)["rows"] for n in r["notes"])
