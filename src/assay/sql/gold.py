"""Gold SQL of an entry, made concrete: its database path, its expected result, and validation.

`expected_result(entry, base)` is the stored result, or the first gold query's result on the
database when none is stored. `validate_sql_gold(entries, base, file=..., lines=...)` runs every
gold query of every entry read-only and reports, as FILE:LINE: field: message, each one that does
not parse, is not read-only, fails, or disagrees with the stored result (or, without one, with the
first gold query); and entries whose behaviour does not fit their gold (a question with gold
queries that should be refused, or one without that should be answered).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.dataset import Entry, ExpectedBehavior
from assay.errors import Problem, UsageError
from assay.gold import validate
from assay.sql.engine import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT,
    QueryError,
    QueryResult,
    ReadOnlyDatabase,
    open_database,
)
from assay.sql.match import match_results
from assay.sql.safety import check_safe

__all__ = [
    "database_path",
    "expected_result",
    "gold_database",
    "should_refuse",
    "validate_dataset",
    "validate_sql_gold",
]


def should_refuse(entry: Entry) -> bool:
    """The entry expects the system to decline (no gold query can answer it)."""
    return entry.behavior() in (ExpectedBehavior.refuse, ExpectedBehavior.abstain)


def database_path(entry: Entry, base: str | Path | None) -> Path:
    """The entry's database file: `sql.database` relative to `base` (the dataset's folder)."""
    if entry.sql is None or entry.sql.database is None:
        raise UsageError(f"entry {entry.id}: its sql gold names no database")
    p = Path(entry.sql.database)
    if not p.is_absolute() and base is not None:
        p = Path(base) / p
    return p


def gold_database(
    entry: Entry,
    base: str | Path | None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> ReadOnlyDatabase:
    return open_database(database_path(entry, base), timeout=timeout, max_rows=max_rows)


def expected_result(entry: Entry, db: ReadOnlyDatabase) -> QueryResult:
    """The stored result, else the first gold query's result on `db`."""
    assert entry.sql is not None
    if entry.sql.result is not None:
        return QueryResult.from_dict(entry.sql.result.model_dump())
    if not entry.sql.queries:
        raise UsageError(f"entry {entry.id}: no gold query and no stored result")
    return db.execute(entry.sql.queries[0], dialect=entry.sql.dialect)


def validate_sql_gold(
    entries: Iterable[Entry],
    base: str | Path | None,
    *,
    file: str = "<entries>",
    lines: Mapping[str, int] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> list[Problem]:
    """Every problem with the entries' gold SQL (see the module docs); [] when all is well."""
    problems: list[Problem] = []
    lines = lines or {}
    for e in entries:
        g = e.sql
        if g is None:
            continue
        line = lines.get(e.id)

        def add(fld: str, msg: str, line: int | None = line) -> None:
            problems.append(Problem(file, line, fld, msg))

        refuse = should_refuse(e)
        if not g.queries:
            if not refuse:
                add(
                    "sql.queries",
                    "no gold query: an answerable SQL question needs one (a question the "
                    "schema cannot answer sets expected_behavior to refuse)",
                )
            if g.result is not None:
                add("sql.result", "a stored result without a gold query")
            continue
        if refuse:
            add(
                "expected_behavior",
                f"{e.behavior().value} although the entry has gold queries",
            )
        if g.database is None:
            add("sql.database", "required when there are gold queries")
            continue
        path = database_path(e, base)
        if not path.is_file():
            add("sql.database", f"{path}: database file not found")
            continue
        try:
            db = open_database(path, timeout=timeout, max_rows=max_rows)
        except UsageError as exc:
            add("sql.database", str(exc))
            continue
        stored = None if g.result is None else QueryResult.from_dict(g.result.model_dump())
        first: QueryResult | None = None
        for i, q in enumerate(g.queries):
            fld = f"sql.queries.{i}"
            verdict = check_safe(q, g.dialect)
            if not verdict.ok:
                add(fld, "; ".join(verdict.reasons))
                continue
            try:
                got = db.execute(q, dialect=g.dialect)
            except QueryError as exc:
                add(fld, f"fails on {path.name}: {exc}")
                continue
            want = stored if stored is not None else first
            if want is None:
                first = got
                continue
            m = match_results(want, got, **g.match_rule())
            if not m.ok:
                against = "the stored sql.result" if stored is not None else "gold query 0"
                add(fld, f"its result on {path.name} differs from {against}: {m.reason}")
    return problems


def validate_dataset(path: str | Path, chunks_path: str | Path | None = None) -> Any:
    """`assay.gold.validate` with the gold SQL validator: what `assay validate` runs (a
    `ValidationReport`)."""
    return validate(path, chunks_path, validators=[validate_sql_gold])
