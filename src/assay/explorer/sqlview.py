"""What the explorer shows of a SQL entry: the gold queries, each run's query, and a diff of
their results.

The queries are text and always shown. The results are computed only when the `sql` extra is
installed (sqlglot and DuckDB), through `assay.sql`'s engine: the entry's database opened
read-only, every query checked read-only before it runs, under a timeout and a row cap. Without
the extra the entry says which extra would add the results. The system's query is read as the
SQL checks read it (`row.extra["sql"]`, else the answer). At most `SHOWN_ROWS` rows of each
side of a diff are kept in the bundle; the counts are always whole.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from assay.errors import MissingExtraError, UsageError

if TYPE_CHECKING:
    from assay.dataset import Entry
    from assay.runs.model import RunRow

__all__ = ["EXTRA_NOTE", "SHOWN_ROWS", "SqlViews"]

SHOWN_ROWS = 50
"""Rows kept per result and per side of a diff (the counts say how many there were)."""

EXTRA_NOTE = (
    "Query results are not shown: running them needs the optional 'sql' extra "
    "(pip install 'assay[sql]')."
)


def _rows(rows: Any) -> dict[str, Any]:
    rows = [list(r) for r in rows]
    return {"rows": rows[:SHOWN_ROWS], "n_rows": len(rows)}


def _result(columns: Any, rows: Any) -> dict[str, Any]:
    return {"columns": list(columns), **_rows(rows)}


class SqlViews:
    """Computes the SQL parts of the bundle's entry rows, opening each database once."""

    def __init__(self, base: str | Path | None, *, timeout: float, max_rows: int):
        self.base = None if base is None else Path(base)
        self.timeout = timeout
        self.max_rows = max_rows
        self.missing_extra: str | None = None
        self._expected: dict[str, Any] = {}

    def _db(self, entry: Entry) -> Any:
        from assay.sql.gold import gold_database

        return gold_database(entry, self.base, timeout=self.timeout, max_rows=self.max_rows)

    def _need_extra(self) -> bool:
        if self.missing_extra is not None:
            return False
        try:
            from assay.sql._deps import need_duckdb, need_sqlglot

            need_sqlglot()
            need_duckdb()
        except MissingExtraError:
            self.missing_extra = EXTRA_NOTE
            return False
        return True

    def expected(self, entry: Entry) -> tuple[Any, str | None]:
        """The gold result (a `QueryResult`) or None, and why there is none."""
        if entry.id in self._expected:
            out: tuple[Any, str | None] = self._expected[entry.id]
            return out
        from assay.sql.engine import QueryError
        from assay.sql.gold import expected_result, should_refuse

        assert entry.sql is not None
        result: tuple[Any, str | None]
        if should_refuse(entry) or not entry.sql.queries:
            result = (None, None)
        elif entry.sql.result is None and not self._need_extra():
            result = (None, self.missing_extra)
        else:
            try:
                if entry.sql.result is not None:
                    from assay.sql.engine import QueryResult

                    result = (QueryResult.from_dict(entry.sql.result.model_dump()), None)
                else:
                    result = (expected_result(entry, self._db(entry)), None)
            except (QueryError, UsageError) as exc:
                result = (None, f"the gold result could not be computed: {exc}")
        self._expected[entry.id] = result
        return result

    def gold(self, entry: Entry) -> dict[str, Any]:
        """The entry's gold as the entry page shows it."""
        from assay.sql.gold import should_refuse

        g = entry.sql
        assert g is not None
        want, why = self.expected(entry)
        return {
            "queries": list(g.queries),
            "dialect": g.dialect,
            "database": None if g.database is None else Path(g.database).name,
            "semantics": g.semantics.value,
            "float_tolerance": g.float_tolerance,
            "column_order": g.column_order,
            "missing": g.missing,
            "glossary_version": g.glossary_version,
            "refuse": should_refuse(entry),
            "result": None if want is None else _result(want.columns, want.rows),
            "note": why,
        }

    def run(self, entry: Entry, row: RunRow | None) -> dict[str, Any] | None:
        """One run's query for the entry, its result and the diff with the gold result (None
        when the run has no row for the entry)."""
        if row is None:
            return None
        from assay.sql.answers import read_system_sql
        from assay.sql.gold import should_refuse

        s = read_system_sql(SimpleNamespace(entry=entry, row=row, answer=row.answer))
        out: dict[str, Any] = {
            "query": s.sql,
            "dialect": s.dialect,
            "declined": s.declined,
            "result": None,
            "error": None,
            "diff": None,
            "note": None,
        }
        refuse = should_refuse(entry)
        if s.sql is None:
            out["status"] = "pass" if refuse else "fail"
            return out
        if refuse:
            out["status"] = "fail"  # answered a question the schema cannot answer
        if not self._need_extra():
            out["note"] = self.missing_extra
            out.setdefault("status", "unscored")
            return out
        from assay.sql.engine import QueryError
        from assay.sql.match import diff_results

        try:
            got = self._db(entry).execute(s.sql, dialect=s.dialect)
        except QueryError as exc:
            out["error"] = f"{exc.kind}: {exc}"
            out.setdefault("status", "fail")
            return out
        except UsageError as exc:
            out["note"] = str(exc)
            out.setdefault("status", "unscored")
            return out
        out["result"] = _result(got.columns, got.rows)
        want, why = self.expected(entry)
        if want is None:
            out["note"] = why
            out.setdefault("status", "unscored")
            return out
        g = entry.sql
        assert g is not None
        d = diff_results(want, got, **g.match_rule()).to_dict()
        only_gold, only_system = d.pop("only_gold"), d.pop("only_system")
        d["only_gold"] = _rows(only_gold)
        d["only_system"] = _rows(only_system)
        out["diff"] = d
        out.setdefault("status", "pass" if d["match"] else "fail")
        return out
