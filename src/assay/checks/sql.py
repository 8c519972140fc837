"""The ``sql`` group: the gold SQL checks, registered in the answer-check registry, so that
`assay check`, `compare` and `gate` take them like any other check.

Every check abstains (None) on entries without `sql` gold; what each decides is its docstring
and docs/sql.md ("Checks"), which also says where a run row keeps its SQL (`read_system_sql`).
The entry's database is found relative to the dataset file; `sql_check_settings(base=...)`
(`assay.sql.answers`) sets that folder (and the timeout and row cap) for checks run without
the dataset (`assay sql check` sets the timeout and row cap with it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.dataset import SqlGold
from assay.judge.context import CheckContext
from assay.judge.registry import Outcome, check, check_group
from assay.sql.answers import active_settings, read_system_sql
from assay.sql.engine import QueryError, QueryResult, open_database
from assay.sql.gold import expected_result, gold_database, should_refuse
from assay.sql.match import match_results
from assay.sql.safety import SqlParseError, check_safe, parse_query
from assay.sql.suite import load_suite

check_group(
    "sql",
    applies=lambda entry: getattr(entry, "sql", None) is not None,
    description="gold SQL: entries with a gold query (`assay check` runs these checks on them)",
)


def _base(ctx: CheckContext) -> Path | None:
    path = ctx.dataset.path if ctx.dataset is not None else None
    if path:
        return Path(path).parent
    return active_settings().base


def _cache(ctx: CheckContext) -> dict[str, Any]:
    """What the entry's SQL checks share (the gold and the system's results), kept on the
    entry's context: each query runs once however many checks read it."""
    cache: dict[str, Any] = ctx.__dict__.setdefault("_assay_sql", {})
    return cache


def _applies(ctx: CheckContext) -> bool:
    return ctx.entry.sql is not None


def _system_query(ctx: CheckContext) -> tuple[str, str] | None:
    """(query, dialect) when the entry has gold SQL and the system wrote a query, else None."""
    if not _applies(ctx):
        return None
    s = read_system_sql(ctx)
    return None if s.sql is None else (s.sql, s.dialect)


def _answerable_sql(entry: Any) -> bool:
    """The entries the result checks rate: gold SQL, and not expected to be declined."""
    return entry.sql is not None and not should_refuse(entry)


@check(
    "sql_valid", kind="binary", needs_answer=False, group="sql", rates=lambda e: e.sql is not None
)
def sql_valid(ctx: CheckContext) -> Outcome:
    """The system's query parses as one statement in its dialect."""
    query = _system_query(ctx)
    if query is None:
        return Outcome(None)
    try:
        parse_query(*query)
    except SqlParseError as exc:
        return Outcome(False, (str(exc),))
    return Outcome(True)


@check(
    "sql_safe", kind="binary", needs_answer=False, group="sql", rates=lambda e: e.sql is not None
)
def sql_safe(ctx: CheckContext) -> Outcome:
    """The system's query is one read-only statement: no writes, DDL, ATTACH, COPY, files, network."""
    query = _system_query(ctx)
    if query is None:
        return Outcome(None)
    verdict = check_safe(*query)
    return Outcome(verdict.ok, tuple(f"unsafe: {r}" for r in verdict.reasons))


def _run(ctx: CheckContext) -> tuple[QueryResult | None, QueryResult | None, Outcome | None]:
    """(expected, got, failure): the gold and the system's result on the entry's database, or
    the outcome that ends exec_match before a comparison."""
    cache = _cache(ctx)
    if "run" in cache:
        out: tuple[QueryResult | None, QueryResult | None, Outcome | None] = cache["run"]
        return out
    s = read_system_sql(ctx)
    settings = active_settings()
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


def _match(gold: SqlGold, want: QueryResult, got: QueryResult) -> tuple[bool, str]:
    m = match_results(want, got, **gold.match_rule())
    return m.ok, m.reason


@check("exec_match", kind="binary", needs_answer=False, group="sql", rates=_answerable_sql)
def exec_match(ctx: CheckContext) -> Outcome:
    """The query's result on the entry's database matches the gold result (entry semantics)."""
    gold = ctx.entry.sql
    if gold is None or should_refuse(ctx.entry):
        return Outcome(None)
    want, got, failed = _run(ctx)
    if failed is not None:
        return failed
    assert want is not None and got is not None
    ok, why = _match(gold, want, got)
    return Outcome(ok, () if ok else (f"result differs: {why}",))


@check("test_suite_match", kind="binary", needs_answer=False, group="sql", rates=_answerable_sql)
def test_suite_match(ctx: CheckContext) -> Outcome:
    """exec_match, and the gold query's result matched on every test-suite variant."""
    entry = ctx.entry
    gold = entry.sql
    if gold is None or should_refuse(entry):
        return Outcome(None)
    first = ctx.outcome("exec_match")
    if first.value is not True:
        return Outcome(first.value, first.notes)
    if not gold.queries:
        return Outcome(None, ("no gold query to run on the variants",))
    settings = active_settings()
    db = gold_database(entry, _base(ctx), timeout=settings.timeout, max_rows=settings.max_rows)
    suite = load_suite(db.path)
    s = read_system_sql(ctx)
    assert s.sql is not None
    for variant in suite.variants:
        vdb = open_database(variant, timeout=settings.timeout, max_rows=settings.max_rows)
        try:
            want = vdb.execute(gold.queries[0], dialect=gold.dialect)
        except QueryError as exc:
            return Outcome(None, (f"the gold query fails on {variant.name}: {exc}",))
        try:
            got = vdb.execute(s.sql, dialect=s.dialect)
        except QueryError as exc:
            return Outcome(False, (f"caught on {variant.name}: {exc.kind}: {exc}",))
        ok, why = _match(gold, want, got)
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
def sql_refusal_ok(ctx: CheckContext) -> Outcome:
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
