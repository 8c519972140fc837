"""The safety check on the next ring of spellings (issue 40): a forbidden function spelled with
PostgreSQL's Unicode escapes, the catalog reached by any name with its prefix, DuckDB's SHOW,
DESCRIBE and SUMMARIZE written as subqueries, and the server-state readers named in the issue.
Each passed the check before."""

from __future__ import annotations

import pytest

from assay.sql.safety import SqlParseError, check_safe, decode_unicode_escapes


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT U&\"\\0067etenv\"('HOME')",
        "SELECT U&\"\\0070g_read_file\"('/etc/passwd')",
        'SELECT U&"\\+000070g_sleep"(10)',
        "SELECT u&\"!0070g_sleep\" UESCAPE '!'",
        'SELECT * FROM U&"\\0070g_settings"',
        'SELECT * FROM U&"\\0064uckdb_databases"',
    ],
)
def test_a_unicode_escape_spelling_a_forbidden_name_is_refused(sql: str) -> None:
    assert not check_safe(sql, "postgres").ok, sql


def test_unicode_escapes_are_read_as_postgresql_reads_them() -> None:
    assert decode_unicode_escapes("SELECT U&'caf\\00e9'") == "SELECT 'café'"
    assert decode_unicode_escapes("SELECT U&'caf!00e9' UESCAPE '!'") == "SELECT 'café'"
    assert decode_unicode_escapes('SELECT U&"a\\0022b"') == 'SELECT "a""b"'
    # escapes in comments and ordinary strings are not read
    plain = "SELECT 'U&\"\\0067\"' -- U&'\\0041'"
    assert decode_unicode_escapes(plain) == plain
    assert check_safe("SELECT U&'caf\\00e9' AS x", "postgres").ok
    with pytest.raises(SqlParseError, match="bad Unicode escape"):
        decode_unicode_escapes("SELECT U&'\\zz'")
    verdict = check_safe("SELECT U&'\\zz'", "postgres")
    assert not verdict.ok and "bad Unicode escape" in verdict.reasons[0]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM pg_catalog.pg_proc",
        "SELECT * FROM pg_tables",
        "SELECT * FROM PG_Stat_Statements",
        "SELECT * FROM duckdb_tables",
        "SELECT * FROM duckdb_functions()",
        "SELECT * FROM pragma_table_info('t')",
        "SELECT * FROM pragma_version()",
        "SELECT pg_postmaster_start_time() AS t",
        "SELECT duckdb_version()",
        "SELECT * FROM t, pg_catalog.pg_namespace",
    ],
)
@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "sqlite"])
def test_the_catalog_prefixes_are_refused(sql: str, dialect: str) -> None:
    verdict = check_safe(sql, dialect)
    assert not verdict.ok, (sql, dialect)


def test_allowed_catalog_names_and_the_data_catalog_pass() -> None:
    for sql in (
        "SELECT pg_typeof(1)",
        "SELECT table_name FROM information_schema.tables",
        "SELECT name FROM sqlite_master",
        "SELECT a FROM t ORDER BY a DESC",
        'SELECT "show", "desc" FROM t',  # quoted: a column's name
        "SELECT * FROM pgx_table",
    ):
        assert check_safe(sql).ok, sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (SHOW TABLES)",
        "SELECT * FROM (show databases)",
        "SELECT * FROM (SHOW t)",
        "SELECT * FROM (SHOW)",
        "SELECT * FROM (DESC t)",
        "SELECT * FROM (FROM (SHOW TABLES))",
        "SELECT (SHOW TABLES)",
        "SELECT * FROM (SHOW databases) UNION ALL SELECT 'a'",
        "SELECT * FROM (DESCRIBE t)",
        "SELECT * FROM (SUMMARIZE t)",
    ],
)
def test_show_describe_and_summarize_in_a_subquery_are_refused(sql: str) -> None:
    verdict = check_safe(sql, "duckdb")
    assert not verdict.ok, sql


@pytest.mark.parametrize(
    "sql,dialect",
    [
        ("SELECT sqlite_source_id()", "sqlite"),
        ("SELECT sqlite_compileoption_get(0)", "sqlite"),
        ("SELECT * FROM dbstat", "sqlite"),
        ("SELECT * FROM DBSTAT WHERE name = 't'", "sqlite"),
        ("SELECT inet_client_addr()", "postgres"),
        ("SELECT inet_client_port()", "postgres"),
        ("SELECT inet_server_addr()", "postgres"),
        ("SELECT inet_server_port()", "postgres"),
    ],
)
def test_server_state_readers_are_refused(sql: str, dialect: str) -> None:
    assert not check_safe(sql, dialect).ok, sql
