"""The safety check's bounds (issue 40): deep nesting is refused with a clear reason instead of a
RecursionError (the parser, the check and the writer), memory bombs and server-state readers are
refused, and one deeply nested row never aborts `assay sql safe`, `assay check` or `validate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.sql.safety import (
    MAX_NESTING,
    SafetyVerdict,
    SqlParseError,
    check_safe,
    normalise,
    transpile,
)

runner = CliRunner()

DEEP = "SELECT " + "(" * 100 + "1" + ")" * 100
DEEP_NOT = "SELECT " + "NOT " * 600 + "TRUE"  # deep without a parenthesis
DEEP_CASE = "SELECT " + "CASE WHEN TRUE THEN " * 300 + "1" + " END" * 300


@pytest.mark.parametrize("sql", [DEEP, DEEP_NOT, DEEP_CASE, "SELECT " + "+".join(["1"] * 3000)])
@pytest.mark.parametrize("dialect", ["duckdb", "sqlite", "postgres"])
def test_deep_nesting_is_refused_with_a_clear_reason(sql: str, dialect: str) -> None:
    verdict = check_safe(sql, dialect)
    assert not verdict.ok
    assert verdict.reasons[0].startswith("nested too deeply"), verdict.reasons
    with pytest.raises(SqlParseError, match="nested too deeply"):
        normalise(sql, dialect)
    with pytest.raises(SqlParseError, match="nested too deeply"):
        transpile(sql, dialect, "sqlite" if dialect != "sqlite" else "duckdb")


def test_nesting_up_to_the_bound_and_parentheses_in_literals_are_fine() -> None:
    ok = "SELECT " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING
    assert check_safe(ok).ok
    over = "SELECT " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1)
    assert not check_safe(over).ok
    # parentheses inside strings, quoted names and comments are not nesting
    text = "(" * 200
    assert check_safe(f"SELECT '{text}' AS \"{text}\" -- {text}\n/* {text} */").ok
    assert check_safe("SELECT 'it''s (' || ')' AS x").ok


@pytest.mark.parametrize(
    "sql,name",
    [
        ("SELECT repeat('x', 1000000) || 'N' FROM range(300)", "repeat"),
        ("SELECT lpad('x', 100000000, 'y')", "pad"),
        ("SELECT rpad('x', 100000000, 'y')", "pad"),
        ("SELECT space(100000000)", "space"),
        ("SELECT printf('%0*d', 100000000, 1)", "printf"),
        ("SELECT format('{:>100000000}', 1)", "format"),
        ("SELECT bar(1, 0, 10, 100000000)", "bar"),
        ("SELECT zeroblob(1000000000)", "zeroblob"),
        ("SELECT randomblob(1000000000)", "randomblob"),
        ("SELECT list_resize([1], 100000000)", "list_resize"),
        ("SELECT write_log('x')", "write_log"),
        ("SELECT getvariable('x')", "getvariable"),
        ("SELECT version()", "version"),
        ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer"),
        ("SELECT REPEAT('x', 10)", "repeat"),  # any letter case
        ("SELECT x FROM (SELECT repeat('x', 10) AS x) AS t", "repeat"),  # nested
    ],
)
def test_memory_bombs_and_server_state_are_refused(sql: str, name: str) -> None:
    for dialect in ("duckdb", "sqlite"):
        verdict = check_safe(sql, dialect)
        assert not verdict.ok and any(name in r for r in verdict.reasons), verdict.reasons


def test_sql_safe_command_names_the_nesting(tmp_path: Path) -> None:
    res = runner.invoke(app, ["sql", "safe", DEEP, "-f", "json"])
    assert res.exit_code == 1, res.output
    assert "nested too deeply" in str(json.loads(res.output)["reasons"])
    assert "internal error" not in res.output


def test_one_deep_row_never_aborts_a_check_or_validation(tmp_path: Path) -> None:
    out = tmp_path / "wh"
    res = runner.invoke(
        app,
        ["synth", "warehouse", "--out", str(out), "--companies", "2", "--years", "2"],
    )
    assert res.exit_code == 0, res.output
    golden = out / "golden.jsonl"
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    run = tmp_path / "run.jsonl"
    run_rows = [{"id": r["id"], "answer": "", "sql": DEEP} for r in rows[:1]]
    run_rows += [
        {"id": r["id"], "answer": "", "sql": (r.get("sql") or {}).get("queries", ["SELECT 1"])[0]}
        for r in rows[1:5]
    ]
    run.write_text("".join(json.dumps(r) + "\n" for r in run_rows))
    res = runner.invoke(
        app,
        ["check", str(golden), str(run), "--checks", "sql_safe,exec_match", "-f", "json"],
    )
    assert res.exit_code == 0 and "internal error" not in res.output, res.output
    # a gold query nested too deeply is a validation problem naming the line, not a crash
    bad = dict(rows[0])
    bad["sql"] = dict(bad["sql"]) | {"queries": [DEEP]}
    (out / "bad.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [bad, *rows[1:3]]), encoding="utf-8"
    )
    res = runner.invoke(app, ["validate", str(out / "bad.jsonl")])
    assert "internal error" not in res.output and "Traceback" not in res.output, res.output
    assert res.exit_code in (1, 2) and "nested too deeply" in res.output, res.output


def test_the_bound_does_not_depend_on_how_deep_the_caller_is() -> None:
    """A query at the nesting bound is safe whether it is checked at the top of a program or
    from deep inside one (a server's request thread, a test runner's worker): the parser's
    recursion is not added to the caller's."""
    ok = "SELECT " + "(" * MAX_NESTING + "2" + ")" * MAX_NESTING

    def deep(n: int) -> SafetyVerdict:
        return check_safe(ok) if n == 0 else deep(n - 1)

    assert deep(400).ok
    with pytest.raises(SqlParseError, match="nested too deeply"):
        normalise("SELECT " + "(" * (MAX_NESTING + 1) + "2" + ")" * (MAX_NESTING + 1))


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name, setting FROM pg_catalog.pg_settings",  # secret_directory, memory_limit
        "SELECT setting FROM pg_settings WHERE name = 'secret_directory'",
        "SELECT path FROM duckdb_databases",  # the gold file's path on the server
        'SELECT * FROM "DuckDB_Databases"',
        "SELECT * FROM system.main.duckdb_databases",
        "SELECT file FROM pragma_database_list",
        "SELECT * FROM (SELECT 1) AS a, duckdb_logs",
        "SELECT * FROM pg_stat_activity",
    ],
)
def test_catalog_views_of_the_server_state_are_refused(sql: str) -> None:
    """Views the settings and file check missed (before: each passed and, on DuckDB, ran)."""
    for dialect in ("duckdb", "postgres"):
        verdict = check_safe(sql, dialect)
        assert not verdict.ok and any("server's state" in r for r in verdict.reasons), verdict


def test_catalog_views_of_the_data_stay_allowed() -> None:
    for sql in (
        "SELECT table_name FROM information_schema.tables",
        "SELECT * FROM information_schema.columns",
        "SELECT name FROM sqlite_master",
        "SELECT * FROM settings",  # a user table of that name
    ):
        assert check_safe(sql).ok, sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT query_to_xml('select pg_read_file(''/etc/passwd'')', true, true, '')",
        "SELECT cursor_to_xml('c', 1, true, true, '')",
        "SELECT table_to_xml('pg_authid', true, true, '')",
        "SELECT Database_To_XmlSchema(true, true, '')",
        "SELECT lo_get(16401)",
        "SELECT pg_ls_waldir()",
        "SELECT pg_ls_tmpdir()",
        "SELECT pg_current_logfile()",
        "SELECT pg_switch_wal()",
        "SELECT pg_rotate_logfile()",
        "SELECT pg_create_restore_point('x')",
        "SELECT pg_notify('c', 'x')",
        "SELECT txid_current()",
        "SELECT inet_server_addr()",
        "SELECT pg_stat_reset()",
        "SELECT pg_create_logical_replication_slot('s', 'p')",
        "SELECT * FROM pg_config",
    ],
)
def test_postgres_functions_that_run_strings_or_reach_the_server_are_refused(sql: str) -> None:
    """Each passed the check before (`query_to_xml` runs its string as SQL unchecked)."""
    verdict = check_safe(sql, "postgres")
    assert not verdict.ok, sql
