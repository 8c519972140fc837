"""Every query runs read-only, under a timeout and a row cap; unsafe ones never run."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay.errors import UsageError
from assay.sql.engine import QueryError, ReadOnlyDatabase, UnsafeQuery, engine_of


@pytest.fixture(params=["duckdb", "sqlite"])
def db(request: pytest.FixtureRequest, warehouse: Path) -> Any:
    path = warehouse / f"warehouse.{request.param}"
    with ReadOnlyDatabase(path, timeout=1.0, max_rows=100) as d:
        yield d


def test_reads_and_normalises_values(db: ReadOnlyDatabase) -> None:
    r = db.execute(
        "SELECT period_end FROM fiscal_periods AS p JOIN companies AS c "
        "ON c.company_id = p.company_id WHERE c.fiscal_year_end_month = 6 "
        "AND p.fiscal_year = 2024 AND p.fiscal_quarter IS NULL"
    )
    assert r.rows == (("2024-06-30",),)  # a DuckDB date and SQLite text alike


def test_unsafe_queries_are_refused_before_they_run(
    db: ReadOnlyDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(db, "_duckdb", lambda text: ran.append(text))
    monkeypatch.setattr(db, "_sqlite", lambda text: ran.append(text))
    for q in (
        "DELETE FROM customers",
        "ATTACH 'x.db' AS x",
        "SELECT * FROM read_csv('/etc/hosts')",
    ):
        with pytest.raises(UnsafeQuery, match="refused before running"):
            db.execute(q)
    assert ran == []


def test_the_connection_is_read_only_even_past_the_syntax_check(db: ReadOnlyDatabase) -> None:
    """Defence in depth: the connection itself refuses writes, files and ATTACH."""
    run = db._duckdb if db.engine == "duckdb" else db._sqlite
    for q in ("DELETE FROM customers", "CREATE TABLE x (a INT)", "ATTACH 'other.db' AS o"):
        with pytest.raises(QueryError):
            run(q)
    if db.engine == "duckdb":
        with pytest.raises(QueryError, match=r"(?i)permission|disabled"):
            run("SELECT * FROM read_csv('/etc/hosts')")
    assert db.execute("SELECT COUNT(*) AS n FROM customers").rows[0][0] > 0


def test_timeout(db: ReadOnlyDatabase) -> None:
    slow = (
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 100000000) "
        "SELECT SUM(i) AS s FROM r"
    )
    fast = ReadOnlyDatabase(db.path, timeout=0.2, max_rows=10)
    try:
        with pytest.raises(QueryError) as info:
            fast.execute(slow, dialect="duckdb")
        assert info.value.kind == "timeout"
        assert fast.execute("SELECT 1 AS one").rows == ((1,),)  # usable after a timeout
    finally:
        fast.close()


def test_row_cap(warehouse: Path) -> None:
    with ReadOnlyDatabase(warehouse / "warehouse.duckdb", max_rows=5) as d:
        assert len(d.execute("SELECT * FROM companies LIMIT 5").rows) == 5
        with pytest.raises(QueryError) as info:
            d.execute("SELECT * FROM companies")
        assert info.value.kind == "row_cap"


def test_another_dialect_is_transpiled(warehouse: Path) -> None:
    with ReadOnlyDatabase(warehouse / "warehouse.sqlite") as d:
        q = "SELECT ticker FROM companies QUALIFY ROW_NUMBER() OVER (ORDER BY ticker) = 1"
        assert d.execute(q, dialect="duckdb").rows == (("AARX",),)


def test_sqlite_file_is_opened_read_only(warehouse: Path) -> None:
    with ReadOnlyDatabase(warehouse / "warehouse.sqlite") as d:
        con: sqlite3.Connection = d._con
        with pytest.raises(
            sqlite3.OperationalError, match=r"(?i)readonly|read-only|not authorized"
        ):
            con.execute("DELETE FROM companies")


def test_engine_from_suffix(tmp_path: Path) -> None:
    assert engine_of("a.duckdb") == "duckdb" and engine_of("b.sqlite") == "sqlite"
    with pytest.raises(UsageError, match="suffix"):
        engine_of("c.csv")
    with pytest.raises(UsageError, match="not found"):
        ReadOnlyDatabase(tmp_path / "none.duckdb")
