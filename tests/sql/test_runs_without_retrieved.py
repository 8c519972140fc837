"""A text-to-SQL run is `{"id", "sql"}` rows, without `retrieved`: `assay check`, `assay sql
check`, `assay compare` and `assay gate` read it as they read the same run written by `assay sql
run` (whose rows carry the query, its dialect and the answer, and no `retrieved` either)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.sql.conftest import sql_run
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import load_dataset
from assay.runs import write_run

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small warehouse; the template baseline as `assay sql run` writes it and as bare rows;
    a bare candidate that declines every question about customers (sql null, an error)."""
    from assay.synth.warehouse_files import write_warehouse

    out = tmp_path_factory.mktemp("bare")
    write_warehouse(out / "wh", seed=7, companies=2, years=2, suite=2)
    ds = load_dataset(out / "wh" / "golden.jsonl")
    base = sql_run(ds, "template")
    write_run(out / "base.jsonl", base, meta=base.meta)
    bare: list[dict[str, Any]] = []
    cand: list[dict[str, Any]] = []
    for r in base.rows:
        assert r.retrieved is None  # a text-to-SQL row retrieves nothing: no fake []
        bare.append({"id": r.id, "sql": r.extra["sql"]})
        if "customer" in ds.by_id[r.id].query.lower():
            cand.append({"id": r.id, "sql": None, "error": "declined", "latency_ms": 1.0})
        else:
            cand.append({"id": r.id, "sql": r.extra["sql"], "answer": r.answer})
    for name, rows in (("bare", bare), ("cand", cand)):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in rows))
    return {
        "ds": out / "wh" / "golden.jsonl",
        "base": out / "base.jsonl",
        "bare": out / "bare.jsonl",
        "cand": out / "cand.jsonl",
    }


def _invoke(*args: Any) -> Any:
    res = runner.invoke(app, [str(a) for a in args])
    return res


def test_check_and_sql_check_read_bare_rows_as_sql_run_rows(files: dict[str, Path]) -> None:
    names = ["exec_match", "sql_refusal_ok", "sql_valid"]
    checks = ["--checks", ",".join(names), "--resamples", "100"]
    got = {}
    for cmd in (["check"], ["sql", "check"]):
        for name in ("base", "bare"):
            res = _invoke(*cmd, files["ds"], files[name], *checks, "-f", "json")
            assert res.exit_code == 0, res.output
            rows = json.loads(res.stdout)["rows"]
            got[(cmd[0], name)] = [[r["id"], r["category"], *(r[c] for c in names)] for r in rows]
    for cmd in ("check", "sql"):
        bare, base = got[(cmd, "bare")], got[(cmd, "base")]
        assert bare == base
        assert sum(r[2] is True for r in bare) > 0  # exec_match really ran, not abstained
        assert any(r[2] is False for r in bare) and any(r[3] is None or r[3] for r in bare)


def test_compare_and_gate_take_bare_runs(files: dict[str, Path]) -> None:
    ds, bare, cand = files["ds"], files["bare"], files["cand"]
    res = _invoke("compare", ds, bare, cand, "--metrics", "exec_match", "--no-record", "-f", "json")
    assert res.exit_code == 0, res.output
    agg = json.loads(res.stdout)["categories"]["aggregation"]["metrics"]["exec_match"]
    # the candidate declines the customers questions that the template answered right
    rows = {r["id"]: r for r in json.loads(
        _invoke("check", ds, bare, "--checks", "exec_match", "--resamples", "100", "-f", "json").stdout
    )["rows"]}  # fmt: skip
    query = {e.id: e.query for e in load_dataset(ds).entries}
    lost = [
        i
        for i, r in rows.items()
        if r["category"] == "aggregation" and r["exec_match"] and "customer" in query[i].lower()
    ]
    assert lost and (agg["fixed"], agg["broken"]) == (0, len(lost))
    gate = _invoke("gate", ds, bare, cand, "--metrics", "exec_match", "--no-record")
    assert gate.exit_code == 1, gate.output
    assert "aggregation" in gate.output
    same = _invoke("gate", ds, files["base"], bare, "--metrics", "exec_match", "--no-record")
    assert same.exit_code == 0, same.output
