"""The gold SQL checks, registered in the answer-check registry (`assay.judge.registry`), so that
`assay check`, `compare` and `gate` take them like any other check.

Every check abstains (None) on entries without `sql` gold; what each decides is its docstring
and docs/sql.md ("Checks"), which also says where a run row keeps its SQL (`read_system_sql`).
The entry's database is found relative to the dataset file; `sql_check_settings(base=...)`
sets that folder (and the timeout and row cap) for checks run without the dataset (`assay sql
check` sets the timeout and row cap with it).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.judge.refusal import detect_refusal
from assay.judge.registry import Outcome, check, check_group
from assay.sql.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT, QueryError, QueryResult
from assay.sql.gold import expected_result, gold_database, should_refuse
from assay.sql.match import match_results
from assay.sql.safety import SqlParseError, check_safe, parse_query
from assay.sql.suite import load_suite

__all__ = [
    "REFUSAL_TEXT",
    "SQL_CHECKS",
    "SqlCheckSettings",
    "SystemSql",
    "read_system_sql",
    "sql_check_settings",
]

SQL_CHECKS = ("sql_valid", "sql_safe", "exec_match", "test_suite_match", "sql_refusal_ok")
"""The gold SQL checks, in the order reports show them."""

check_group(
    "sql",
    applies=lambda entry: getattr(entry, "sql", None) is not None,
    description="gold SQL: entries with a gold query (`assay check` runs these checks on them)",
)

REFUSAL_TEXT = "I cannot answer this from the database schema."
"""What `assay sql run` puts in a row's answer when the system declined."""


@dataclass(frozen=True)
class SqlCheckSettings:
    """Where entries' databases are (`base`: the dataset's folder) and the limits of a query."""

    base: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_rows: int = DEFAULT_MAX_ROWS


_SETTINGS: ContextVar[SqlCheckSettings | None] = ContextVar(
    "assay_sql_check_settings", default=None
)


def _settings() -> SqlCheckSettings:
    return _SETTINGS.get() or SqlCheckSettings()


@contextlib.contextmanager
def sql_check_settings(
    base: str | Path | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> Iterator[SqlCheckSettings]:
    """Checks run inside this block find databases under `base`, with this timeout and cap."""
    s = SqlCheckSettings(None if base is None else Path(base), timeout, max_rows)
    token = _SETTINGS.set(s)
    try:
        yield s
    finally:
        _SETTINGS.reset(token)


@dataclass(frozen=True)
class SystemSql:
    """The system's query for one entry (None when it declined) and its dialect."""

    sql: str | None
    dialect: str

    @property
    def declined(self) -> bool:
        return self.sql is None


_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_SQL_START = re.compile(
    r"^\s*(\(|select\b|with\b|values\b|insert\b|update\b|delete\b|merge\b|create\b|drop\b|"
    r"alter\b|attach\b|detach\b|copy\b|pragma\b|set\b|install\b|load\b|call\b|export\b|"
    r"describe\b|show\b|from\b|explain\b|truncate\b|grant\b|vacuum\b)",
    re.IGNORECASE,
)


def _from_text(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    m = _FENCE.search(text)
    body = m.group(1).strip() if m else text.strip()
    if _SQL_START.match(body):
        return body
    if detect_refusal(text).refused:
        return None
    return body


def read_system_sql(ctx: Any) -> SystemSql:
    """The system's SQL for the context's entry (module docs: where a row keeps it)."""
    entry = ctx.entry
    default = entry.sql.dialect if entry.sql is not None else "duckdb"
    row = getattr(ctx, "row", None)
    extra: dict[str, Any] = dict(getattr(row, "extra", None) or {})
    dialect = extra.get("dialect") or default
    if "sql" in extra:
        q = extra["sql"]
        return SystemSql(q if isinstance(q, str) and q.strip() else None, str(dialect))
    return SystemSql(_from_text(ctx.answer), str(dialect))


def _base(ctx: Any) -> Path | None:
    ds = getattr(ctx, "dataset", None)
    path = getattr(ds, "path", None)
    if path:
        return Path(path).parent
    return _settings().base


def _cache(ctx: Any) -> dict[str, Any]:
    cache: dict[str, Any] | None = getattr(ctx, "_assay_sql", None)
    if cache is None:
        cache = {}
        ctx._assay_sql = cache
    return cache


def _applies(ctx: Any) -> bool:
    return ctx.entry.sql is not None


def _answerable_sql(entry: Any) -> bool:
    """The entries the result checks rate: gold SQL, and not expected to be declined."""
    return entry.sql is not None and not should_refuse(entry)


@check(
    "sql_valid", kind="binary", needs_answer=False, group="sql", rates=lambda e: e.sql is not None
)
def sql_valid(ctx: Any) -> Outcome:
    """The system's query parses as one statement in its dialect."""
    if not _applies(ctx):
        return Outcome(None)
    s = read_system_sql(ctx)
    if s.sql is None:
        return Outcome(None)
    try:
        parse_query(s.sql, s.dialect)
    except SqlParseError as exc:
        return Outcome(False, (str(exc),))
    return Outcome(True)


@check(
    "sql_safe", kind="binary", needs_answer=False, group="sql", rates=lambda e: e.sql is not None
)
def sql_safe(ctx: Any) -> Outcome:
    """The system's query is one read-only statement: no writes, DDL, ATTACH, COPY, files, network."""
    if not _applies(ctx):
        return Outcome(None)
    s = read_system_sql(ctx)
    if s.sql is None:
        return Outcome(None)
    verdict = check_safe(s.sql, s.dialect)
    return Outcome(verdict.ok, tuple(f"unsafe: {r}" for r in verdict.reasons))


def _run(ctx: Any) -> tuple[QueryResult | None, QueryResult | None, Outcome | None]:
    """(expected, got, failure): the gold and the system's result on the entry's database, or
    the outcome that ends exec_match before a comparison."""
    cache = _cache(ctx)
    if "run" in cache:
        out: tuple[QueryResult | None, QueryResult | None, Outcome | None] = cache["run"]
        return out
    s = read_system_sql(ctx)
    settings = _settings()
    result: tuple[QueryResult | None, QueryResult | None, Outcome | None]
    if s.sql is None:
        result = (None, None, Outcome(False, ("declined a question the schema answers",)))
    else:
        verdict = check_safe(s.sql, s.dialect)
        if not verdict.ok:
            result = (
                None,
                None,
                Outcome(False, ("refused before running: " + "; ".join(verdict.reasons),)),
            )
        else:
            db = gold_database(
                ctx.entry, _base(ctx), timeout=settings.timeout, max_rows=settings.max_rows
            )
            want = expected_result(ctx.entry, db)
            try:
                got = db.execute(s.sql, dialect=s.dialect)
                result = (want, got, None)
            except QueryError as exc:
                result = (want, None, Outcome(False, (f"{exc.kind}: {exc}",)))
    cache["run"] = result
    return result


def _match(ctx: Any, want: QueryResult, got: QueryResult) -> tuple[bool, str]:
    g = ctx.entry.sql
    m = match_results(want, got, **g.match_rule())
    return m.ok, m.reason


@check("exec_match", kind="binary", needs_answer=False, group="sql", rates=_answerable_sql)
def exec_match(ctx: Any) -> Outcome:
    """The query's result on the entry's database matches the gold result (entry semantics)."""
    if not _applies(ctx) or should_refuse(ctx.entry):
        return Outcome(None)
    want, got, failed = _run(ctx)
    if failed is not None:
        return failed
    assert want is not None and got is not None
    ok, why = _match(ctx, want, got)
    return Outcome(ok, () if ok else (f"result differs: {why}",))


@check("test_suite_match", kind="binary", needs_answer=False, group="sql", rates=_answerable_sql)
def test_suite_match(ctx: Any) -> Outcome:
    """exec_match, and the gold query's result matched on every test-suite variant."""
    if not _applies(ctx) or should_refuse(ctx.entry):
        return Outcome(None)
    first = ctx.outcome("exec_match")
    if first.value is not True:
        return Outcome(first.value, first.notes)
    entry = ctx.entry
    if not entry.sql.queries:
        return Outcome(None, ("no gold query to run on the variants",))
    settings = _settings()
    db = gold_database(entry, _base(ctx), timeout=settings.timeout, max_rows=settings.max_rows)
    suite = load_suite(db.path)
    s = read_system_sql(ctx)
    assert s.sql is not None
    from assay.sql.engine import open_database

    for variant in suite.variants:
        vdb = open_database(variant, timeout=settings.timeout, max_rows=settings.max_rows)
        try:
            want = vdb.execute(entry.sql.queries[0], dialect=entry.sql.dialect)
        except QueryError as exc:
            return Outcome(None, (f"the gold query fails on {variant.name}: {exc}",))
        try:
            got = vdb.execute(s.sql, dialect=s.dialect)
        except QueryError as exc:
            return Outcome(False, (f"caught on {variant.name}: {exc.kind}: {exc}",))
        ok, why = _match(ctx, want, got)
        if not ok:
            return Outcome(False, (f"caught on {variant.name}: {why}",))
    return Outcome(True)


@check(
    "sql_refusal_ok",
    kind="binary",
    needs_answer=False,
    group="sql",
    rates=lambda e: e.sql is not None,
)
def sql_refusal_ok(ctx: Any) -> Outcome:
    """Declined exactly when the schema cannot answer the question."""
    if not _applies(ctx):
        return Outcome(None)
    declined = read_system_sql(ctx).declined
    want = should_refuse(ctx.entry)
    if declined == want:
        return Outcome(True)
    return Outcome(
        False,
        ("answered a question the schema cannot answer",)
        if want
        else ("declined a question the schema answers",),
    )
