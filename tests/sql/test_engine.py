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
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            con.execute("DELETE FROM companies")  # the authorizer denies it as it is prepared
        # under the authorizer and query_only, the file itself is opened read-only
        con.set_authorizer(None)
        con.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match=r"(?i)readonly"):
            con.execute("DELETE FROM companies")


def test_engine_from_suffix(tmp_path: Path) -> None:
    assert engine_of("a.duckdb") == "duckdb" and engine_of("b.sqlite") == "sqlite"
    with pytest.raises(UsageError, match="suffix"):
        engine_of("c.csv")
    with pytest.raises(UsageError, match="not found"):
        ReadOnlyDatabase(tmp_path / "none.duckdb")


def _second_wall_attacks(tmp: Path) -> dict[str, list[str]]:
    secret, out = tmp / "secret.csv", tmp / "out.csv"
    return {
        "duckdb": [
            f"aTtAcH '{tmp / 'x.db'}' AS x",
            f"cOpY companies TO '{out}'",
            f"COPY (SELECT 1) TO '{out}'",
            "SELECT 1; DROP TABLE companies",
            "DELETE FROM customers; SELECT 1",
            "WITH x AS (DELETE FROM customers RETURNING *) SELECT * FROM x",
            "CREATE TABLE t AS SELECT 1",
            "PRAGMA enable_profiling",
            f"PRAGMA profiling_output = '{tmp / 'profile.txt'}'",
            f"SELECT * FROM read_csv('{secret}')",
            f"SELECT * FROM '{secret}'",
            f"SELECT * FROM read_parquet('{tmp / 'x.parquet'}')",
            f"SELECT * FROM glob('{tmp}/*')",
            "SELECT * FROM read_csv('https://example.com/x.csv')",
            "INSTALL httpfs",
            "LOAD httpfs",
            "SET enable_external_access = true",
            "RESET enable_external_access",
            "SET threads = 4",
            f"EXPORT DATABASE '{tmp / 'export'}'",
        ],
        "sqlite": [
            f"ATTACH '{tmp / 'x.db'}' AS x",
            "SELECT 1; DROP TABLE companies",
            "DELETE FROM customers",
            "WITH x AS (SELECT 1) DELETE FROM customers",
            "CREATE TABLE t (a)",
            "PRAGMA query_only = OFF",
            "PRAGMA writable_schema = ON",
            "PRAGMA journal_mode = DELETE",
            "SELECT load_extension('/tmp/evil.so')",
            "VACUUM",
            f"VACUUM INTO '{tmp / 'copy.db'}'",
            "BEGIN",
            "SAVEPOINT s",
        ],
    }


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_the_connection_refuses_every_neighbour_of_a_write(
    engine: str, warehouse: Path, tmp_path: Path
) -> None:
    """The second wall, with the syntax check bypassed: the read-only connection itself refuses
    writes, files, network, extensions, settings and pragmas; nothing is written or read."""
    path = tmp_path / f"warehouse.{engine}"
    path.write_bytes((warehouse / path.name).read_bytes())
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    before = path.read_bytes()
    with ReadOnlyDatabase(path) as db:
        run = db._duckdb if engine == "duckdb" else db._sqlite
        for q in _second_wall_attacks(tmp_path)[engine]:
            with pytest.raises(QueryError):
                run(q)
        # PRAGMA query_only is still on: a write is refused by the database, not only the file
        if engine == "sqlite":
            db._con.set_authorizer(None)
            assert db._con.execute("PRAGMA query_only").fetchone() == (1,)
        assert db.execute("SELECT COUNT(*) AS n FROM customers").rows[0][0] > 0
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["secret.csv", path.name])
