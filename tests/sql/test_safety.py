"""Read-only-ness is decided on sqlglot's tree before anything runs."""

from __future__ import annotations

import pytest

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
