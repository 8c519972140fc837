"""Read-only-ness is decided on sqlglot's tree before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.sql.engine import ReadOnlyDatabase, UnsafeQuery
from assay.sql.safety import SqlParseError, check_safe, normalise, parse_query, transpile

SAFE = [
    "SELECT 1",
    "SELECT ticker FROM companies WHERE industry = 'Banking' ORDER BY ticker",
    "WITH x AS (SELECT company_id FROM companies) SELECT COUNT(*) FROM x",
    "SELECT a FROM t UNION ALL SELECT b FROM u",
    "SELECT * FROM generate_series(1, 3)",
    "SELECT a FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) = 1",
    "select count(*) from customers;",
]

UNSAFE = {
    "INSERT INTO companies VALUES (1)": "INSERT",
    "UPDATE companies SET name = 'x'": "UPDATE",
    "DELETE FROM companies": "DELETE",
    "DROP TABLE companies": "DROP",
    "CREATE TABLE x AS SELECT 1": "CREATE",
    "ALTER TABLE companies ADD COLUMN x INT": "ALTER",
    "ATTACH 'other.db' AS o": "ATTACH",
    "DETACH o": "DETACH",
    "COPY companies TO 'out.csv'": "COPY",
    "PRAGMA journal_mode = DELETE": "PRAGMA",
    "INSTALL httpfs": "INSTALL",
    "LOAD httpfs": "COMMAND",
    "SET enable_external_access = true": "SET",
    "SELECT * FROM read_csv('/etc/passwd')": "read_csv",
    "SELECT * FROM read_parquet('s3://bucket/x.parquet')": "read_parquet",
    "SELECT * FROM read_csv_auto('https://example.com/x.csv')": "read_csv_auto",
    "SELECT * FROM 'data.parquet'": "file or URL",
    "SELECT * FROM query('DROP TABLE companies')": "query",
    "SELECT getenv('HOME')": "getenv",
    "SELECT load_extension('x')": "load_extension",
    "WITH d AS (DELETE FROM companies RETURNING *) SELECT * FROM d": "DELETE",
    "SELECT * INTO backup FROM companies": "INTO",
    "SELECT 1; DROP TABLE companies": "2 statements",
    "SELECT * FROM duckdb_secrets()": "duckdb_secrets",
    "SELECT pg_read_file('/etc/passwd')": "pg_read_file",
    # the neighbours: case variants, comments, several statements, and every other way out
    "aTtAcH 'x.db' AS x": "ATTACH",
    "AtTaCh DATABASE 'x.db' AS x": "ATTACH",
    "cOpY companies TO 'out.csv'": "COPY",
    "dElEtE FROM customers": "DELETE",
    "/* a note */ DROP TABLE companies": "DROP",
    "-- a note\nDELETE FROM customers": "DELETE",
    "SELECT 1 /* ; */; DROP TABLE companies": "2 statements",
    "SELECT 1;\n-- then\nDELETE FROM customers": "2 statements",
    "SELECT 1; PRAGMA query_only = 0": "2 statements",
    "SELECT 1; SELECT 2": "2 statements",
    "pragma database_list": "PRAGMA",
    "SELECT * FROM pragma_table_info('companies')": "pragma_table_info",
    "CALL pragma_version()": "not a query",
    "COPY (SELECT 1) TO 'out.csv'": "COPY",
    "COPY companies TO 'out.parquet' (FORMAT PARQUET)": "COPY",
    "COPY companies FROM 'in.csv'": "COPY",
    "SELECT * FROM READ_CSV('/etc/passwd')": "read_csv",
    "SELECT * FROM read_json_auto('x.json')": "read_json_auto",
    "SELECT * FROM read_text('/etc/passwd')": "read_text",
    "SELECT * FROM read_blob('/etc/passwd')": "read_blob",
    "SELECT * FROM parquet_scan('x.parquet')": "parquet_scan",
    "SELECT * FROM parquet_metadata('x.parquet')": "parquet_metadata",
    "SELECT * FROM sniff_csv('/etc/passwd')": "sniff_csv",
    "SELECT * FROM glob('/etc/*')": "glob",
    "SELECT * FROM GLOB('/etc/*')": "glob",
    "SELECT * FROM companies WHERE ticker IN (SELECT * FROM glob('*'))": "glob",
    "SELECT (SELECT COUNT(*) FROM read_csv('/etc/passwd'))": "read_csv",
    "SELECT * FROM companies UNION SELECT * FROM read_csv('/etc/passwd')": "read_csv",
    "FROM read_csv('/etc/passwd')": "read_csv",
    "SELECT * FROM 'https://example.com/x.csv'": "file or URL",
    "SELECT * FROM 's3://bucket/x.parquet'": "file or URL",
    'SELECT * FROM "/etc/passwd"': "file or URL",
    "SELECT * FROM httpfs_read('x')": "httpfs_read",
    "SELECT * FROM sqlite_scan('x.db', 't')": "sqlite_scan",
    "SELECT LOAD_EXTENSION('/tmp/evil.so')": "load_extension",
    "LOAD '/tmp/evil.duckdb_extension'": "not a query",
    "install httpfs FROM 'http://example.com'": "INSTALL",
    "FORCE INSTALL httpfs": "INSTALL",
    "WITH x AS (INSERT INTO companies VALUES (1) RETURNING *) SELECT * FROM x": "INSERT",
    "WITH x AS (UPDATE customers SET status = 'A' RETURNING *) SELECT * FROM x": "UPDATE",
    "with X as (dElEtE from customers returning *) select 1": "DELETE",
    "set enable_external_access=true": "SET",
    "SET GLOBAL threads = 4": "SET",
    "RESET enable_external_access": "not a query",
    "SELECT set_config('a', 'b', false)": "set_config",
    "SELECT current_setting('threads')": "current_setting",
    "EXPORT DATABASE '/tmp/out'": "does not parse",
    "export database '/tmp/out' (FORMAT PARQUET)": "does not parse",
    "IMPORT DATABASE '/tmp/out'": "does not parse",
    "CREATE SECRET (TYPE S3)": "does not parse",
    "SELECT * FROM duckdb_settings()": "duckdb_settings",
    "SELECT * FROM duckdb_extensions()": "duckdb_extensions",
    "VACUUM": "not a query",
    "CHECKPOINT": "not a query",
    "BEGIN TRANSACTION": "TRANSACTION",
    "PREPARE p AS SELECT 1": "not a query",
    "CREATE MACRO m() AS 1": "CREATE",
}


@pytest.mark.parametrize("sql", SAFE)
def test_plain_reads_are_safe(sql: str) -> None:
    v = check_safe(sql, "duckdb")
    assert v.ok, v.reasons


@pytest.mark.parametrize("sql", sorted(UNSAFE))
def test_writes_files_and_network_are_refused(sql: str) -> None:
    v = check_safe(sql, "duckdb")
    assert not v.ok
    assert any(UNSAFE[sql] in r for r in v.reasons), v.reasons


def test_sqlite_writes_are_refused_in_their_own_dialect() -> None:
    assert not check_safe("SELECT writefile('x', 'y')", "sqlite").ok
    assert not check_safe("SELECT * FROM fsdir('/')", "sqlite").ok
    assert check_safe("SELECT name FROM sqlite_master", "sqlite").ok


def test_parse_errors_say_what_is_wrong() -> None:
    with pytest.raises(SqlParseError, match="does not parse"):
        parse_query("SELEC ticker FROM", "duckdb")
    with pytest.raises(SqlParseError, match="empty"):
        parse_query("   ", "duckdb")
    with pytest.raises(SqlParseError, match="unknown SQL dialect"):
        parse_query("SELECT 1", "no-such-dialect")
    v = check_safe("SELECT FROM WHERE", "duckdb")
    assert not v.ok and "does not parse" in v.reasons[0]


def test_transpile_and_normalise() -> None:
    q = "SELECT a FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) = 1"
    out = transpile(q, "duckdb", "sqlite")
    assert "QUALIFY" not in out.upper() and "ROW_NUMBER" in out.upper()
    assert transpile(q, "duckdb", "duckdb") == q
    assert normalise("select   a from T where x=1") == normalise("SELECT a FROM T WHERE x = 1")


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_every_unsafe_query_is_refused_before_it_runs(
    engine: str, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    with ReadOnlyDatabase(warehouse / f"warehouse.{engine}") as db:
        monkeypatch.setattr(db, "_duckdb", ran.append)
        monkeypatch.setattr(db, "_sqlite", ran.append)
        for sql in sorted(UNSAFE):
            with pytest.raises(UnsafeQuery, match="refused before running"):
                db.execute(sql, dialect="duckdb")
    assert ran == []


def test_a_statement_in_a_comment_is_text_and_never_runs(warehouse: Path, tmp_path: Path) -> None:
    """`--` hides the rest of the line from the parser and from the database alike."""
    q = "SELECT COUNT(*) AS n FROM companies -- ; DROP TABLE companies"
    assert check_safe(q, "duckdb").ok
    for engine in ("duckdb", "sqlite"):
        path = tmp_path / f"warehouse.{engine}"
        shutil.copy(warehouse / path.name, path)
        before = path.read_bytes()
        with ReadOnlyDatabase(path) as db:
            n = db.execute(q, dialect="duckdb").rows[0][0]
            assert n == db.execute("SELECT COUNT(*) FROM companies").rows[0][0] > 0
        assert path.read_bytes() == before
