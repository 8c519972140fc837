"""The five gold SQL checks, through the answer-check path (`check_run`, what `assay check` and
`assay sql check` run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.dataset import Dataset
from assay.judge import check_run
from assay.judge.registry import check_names, get_check
from assay.runs import Run, RunRow
from assay.sql import REFUSAL_TEXT, SQL_CHECKS
from assay.sql.engine import ReadOnlyDatabase

ACTIVE = "sql:active_customers:AVER"
UNANSWERABLE = "sql:credit_rating:AVER"


def _row(eid: str, sql: str | None, **extra: Any) -> RunRow:
    return RunRow(eid, [], answer=sql or REFUSAL_TEXT, extra={"sql": sql, **extra})


def _subset(golden: Dataset, ids: list[str]) -> Dataset:
    return Dataset([golden.by_id[i] for i in ids], path=golden.path)


def _values(golden: Dataset, rows: list[RunRow]) -> dict[str, dict[str, Any]]:
    ds = _subset(golden, list(dict.fromkeys(r.id for r in rows)))
    rep = check_run(ds, Run.from_rows(rows), checks=list(SQL_CHECKS), n_boot=50)
    keep = ("id", "category", *SQL_CHECKS, "notes")  # the answer path's rows say more
    return {r["id"]: {k: r[k] for k in keep} for r in rep.rows}


def test_checks_are_registered_binary() -> None:
    for name in SQL_CHECKS:
        c = get_check(name)
        # in the default set of the sql group: `assay check` runs them on SQL questions only
        assert c.kind == "binary" and c.default and c.group == "sql" and not c.needs_answer
    assert not set(SQL_CHECKS) & set(check_names(default_only=True, group="answer"))


def test_gold_passes_and_refusal_is_rated(golden: Dataset) -> None:
    e = golden.by_id[ACTIVE]
    assert e.sql is not None
    v = _values(golden, [_row(ACTIVE, e.sql.queries[0]), _row(UNANSWERABLE, None)])
    assert v[ACTIVE] | {"notes": []} == {
        "id": ACTIVE,
        "category": "business_definition",
        **dict.fromkeys(SQL_CHECKS, True),
        "notes": [],
    }
    u = v[UNANSWERABLE]
    assert u["sql_refusal_ok"] is True
    assert all(u[c] is None for c in SQL_CHECKS if c != "sql_refusal_ok")


def test_answering_the_unanswerable_and_declining_the_answerable(golden: Dataset) -> None:
    v = _values(
        golden,
        [_row(UNANSWERABLE, "SELECT NULL AS rating"), _row(ACTIVE, None)],
    )
    assert v[UNANSWERABLE]["sql_refusal_ok"] is False
    assert v[UNANSWERABLE]["sql_safe"] is True and v[UNANSWERABLE]["exec_match"] is None
    assert v[ACTIVE]["sql_refusal_ok"] is False and v[ACTIVE]["exec_match"] is False
    assert v[ACTIVE]["sql_valid"] is None  # nothing to parse


def test_unsafe_query_is_refused_before_it_runs(
    golden: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    real = ReadOnlyDatabase._duckdb

    def spy(self: ReadOnlyDatabase, text: str) -> Any:
        ran.append(text)
        return real(self, text)

    monkeypatch.setattr(ReadOnlyDatabase, "_duckdb", spy)
    v = _values(golden, [_row(ACTIVE, "DELETE FROM customers")])[ACTIVE]
    assert v["sql_valid"] is True and v["sql_safe"] is False
    assert v["exec_match"] is False and v["test_suite_match"] is False
    assert any("refused before running" in n for n in v["notes"])
    assert not any("DELETE" in t.upper() for t in ran)


def test_invalid_wrong_and_errors(golden: Dataset) -> None:
    bad = _values(golden, [_row(ACTIVE, "SELEC COUNT(*) FROM")])[ACTIVE]
    assert bad["sql_valid"] is False and bad["exec_match"] is False
    wrong = _values(golden, [_row(ACTIVE, "SELECT COUNT(*) FROM customers")])[ACTIVE]
    assert wrong["sql_valid"] is True and wrong["exec_match"] is False
    assert any("result differs" in n for n in wrong["notes"])
    err = _values(golden, [_row(ACTIVE, "SELECT nope FROM customers")])[ACTIVE]
    assert err["exec_match"] is False and any(n.startswith("error:") for n in err["notes"])


def test_sql_in_the_answer_and_in_another_dialect(golden: Dataset) -> None:
    e = golden.by_id[ACTIVE]
    assert e.sql is not None
    fenced = RunRow(ACTIVE, [], answer=f"Here it is:\n```sql\n{e.sql.queries[0]}\n```")
    refusal = RunRow(UNANSWERABLE, [], answer="I cannot answer that from this schema.")
    v = _values(golden, [fenced, refusal])
    assert v[ACTIVE]["exec_match"] is True and v[ACTIVE]["test_suite_match"] is True
    assert v[UNANSWERABLE]["sql_refusal_ok"] is True
    from assay.sql.safety import transpile

    pg = transpile(e.sql.queries[0], "duckdb", "postgres")
    assert _values(golden, [_row(ACTIVE, pg, dialect="postgres")])[ACTIVE]["exec_match"] is True


def test_check_run_finds_the_database_beside_the_dataset(golden: Dataset, warehouse: Path) -> None:
    """`assay check --checks ...` (the answer-check path) finds the database beside the dataset."""
    ids = [ACTIVE, UNANSWERABLE, "sql:revenue:KEST:2024", "sql:original:AVER:net_income:2022"]
    ds = _subset(golden, ids)
    rows = [
        _row(
            ACTIVE,
            "SELECT COUNT(*) FROM customers AS cu JOIN companies AS c USING "
            "(company_id) WHERE c.ticker = 'AVER' AND cu.churn_date IS NULL",
        ),
        _row(UNANSWERABLE, None),
        _row("sql:revenue:KEST:2024", golden.by_id["sql:revenue:KEST:2024"].sql.queries[1]),  # type: ignore[union-attr]
        _row("sql:original:AVER:net_income:2022", "SELECT 1 AS value"),
    ]
    run = Run.from_rows(rows)
    got = {r["id"]: r for r in check_run(ds, run, checks=list(SQL_CHECKS), n_boot=50).rows}
    assert got[ACTIVE]["exec_match"] is True and got[ACTIVE]["test_suite_match"] is False
    assert got["sql:revenue:KEST:2024"]["test_suite_match"] is True
