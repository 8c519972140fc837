"""The SQL checks are series: `assay compare` and `assay gate` take them by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from tests.sql.conftest import sql_run
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import Dataset
from assay.runs import write_run

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(golden: Dataset, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The template baseline, and a candidate that fixes the restatement questions (gold SQL)
    and breaks six aggregation questions (no company filter)."""
    out = tmp_path_factory.mktemp("sqlcmp")
    base = sql_run(golden, "template")
    write_run(out / "base.jsonl", base, meta=base.meta)
    rows: list[dict[str, Any]] = []
    for r in base.rows:
        d = r.to_dict()
        e = golden.by_id[r.id]
        assert e.sql is not None
        if e.category == "restatement":
            d["sql"] = d["answer"] = e.sql.queries[0]
        if r.id.startswith("sql:customers_by_region:"):
            d["sql"] = d["answer"] = "SELECT region, COUNT(*) FROM customers GROUP BY region"
        rows.append(d)
    (out / "cand.jsonl").write_text("".join(json.dumps(d) + "\n" for d in rows))
    return out / "base.jsonl", out / "cand.jsonl"


def test_compare_takes_exec_match(golden: Dataset, runs: tuple[Path, Path]) -> None:
    base, cand = runs
    res = runner.invoke(
        app,
        [
            "compare",
            str(golden.path),
            str(base),
            str(cand),
            "--metrics",
            "exec_match,test_suite_match",
            "--no-record",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    agg = d["categories"]["aggregation"]["metrics"]["exec_match"]
    assert agg["kind"] == "binary" and (agg["fixed"], agg["broken"]) == (0, 6)
    assert agg["tests"]["mcnemar_exact"]["pvalue"] == pytest.approx(
        binomtest(0, 6, 0.5).pvalue, abs=1e-12
    )
    rest = d["categories"]["restatement"]["metrics"]["test_suite_match"]
    assert rest["broken"] == 0 and rest["fixed"] == 24  # 8 of 32 passed the suite already
    over = d["overall"]["metrics"]["exec_match"]
    assert over["abstained"] == 18  # the unanswerable questions, left out and counted


def test_gate_fails_on_a_category_that_regresses(golden: Dataset, runs: tuple[Path, Path]) -> None:
    base, cand = runs
    res = runner.invoke(
        app,
        [
            "gate",
            str(golden.path),
            str(base),
            str(cand),
            "--metrics",
            "exec_match",
            "--max-drop",
            "0.02",
            "--no-record",
        ],
    )
    assert res.exit_code == 1, res.output
    assert "aggregation" in res.output
    ok = runner.invoke(
        app,
        ["gate", str(golden.path), str(base), str(base), "--metrics", "exec_match", "--no-record"],
    )
    assert ok.exit_code == 0, ok.output


WORSE = '''
from assay.sql.baseline import TemplateSqlSystem


class Worse:
    """The template baseline, declining every question about customers."""

    dialect = "duckdb"

    def sql(self, question, *, schema, as_of=None):
        if "customer" in question.lower():
            return None
        return TemplateSqlSystem().sql(question, schema=schema, as_of=as_of)
'''


def test_compare_and_gate_from_the_cli_on_two_sql_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay run --system sql-...` twice (the template, and a variant that declines every
    question about customers), then compare and gate on exec_match,test_suite_match."""
    from assay.synth.warehouse_files import write_warehouse

    write_warehouse(tmp_path / "wh", seed=7, companies=2, years=2, suite=2)
    (tmp_path / "worse_sql_mod.py").write_text(WORSE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = str(tmp_path / "wh" / "golden.jsonl")
    base, cand = tmp_path / "template.jsonl", tmp_path / "worse.jsonl"
    for spec, out in (("sql-template", base), ("sql-worse_sql_mod:Worse", cand)):
        res = runner.invoke(app, ["run", ds, "--system", spec, "--out", str(out)])
        assert res.exit_code == 0, res.output
    metrics = ["--metrics", "exec_match,test_suite_match", "--no-record"]
    res = runner.invoke(app, ["compare", ds, str(base), str(cand), *metrics, "-f", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    checked = {}
    for name, run in (("base", base), ("cand", cand)):
        out = runner.invoke(app, ["check", ds, str(run), "-f", "json", "--resamples", "100"])
        assert out.exit_code == 0, out.output
        checked[name] = {r["id"]: r for r in json.loads(out.stdout)["rows"]}
    for metric in ("exec_match", "test_suite_match"):
        b = {i: r[metric] for i, r in checked["base"].items()}
        c = {i: r[metric] for i, r in checked["cand"].items()}
        broken = sum(1 for i in b if b[i] is True and c[i] is False)
        fixed = sum(1 for i in b if b[i] is False and c[i] is True)
        over = d["overall"]["metrics"][metric]
        assert (over["fixed"], over["broken"]) == (fixed, broken) and broken > 3 and fixed == 0
        assert over["tests"]["mcnemar_exact"]["pvalue"] == pytest.approx(
            binomtest(fixed, fixed + broken, 0.5).pvalue, abs=1e-12
        )
    gate = runner.invoke(app, ["gate", ds, str(base), str(cand), *metrics])
    assert gate.exit_code == 1, gate.output
    assert "exec_match" in gate.output and "test_suite_match" in gate.output
    same = runner.invoke(app, ["gate", ds, str(base), str(base), *metrics])
    assert same.exit_code == 0, same.output
