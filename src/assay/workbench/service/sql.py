"""The SQL task kind: an analytics engineer reviews a text-to-SQL system's query.

`import-run` opens a SQL task (kind ``sql``) instead of a judging task for a row whose item has
`sql` gold: the row's query (``sql``, else its answer) and dialect are the system's output. The
task page shows the question, the database schema with its glossary, and the system's query with
its result beside the gold queries and the gold result. The expert passes or fails the query
with a one-sentence critique, or edits the gold query and runs it read-only against the
warehouse (`run_gold_edit`) before submitting. Like the other kinds it is batched by domain,
labelled blind by `overlap` experts and adjudicated where they disagree (`agreement_key`: the
verdict and the edited gold query).

Every query runs through `assay.sql`'s engine: checked read-only before it runs (an unsafe one
is refused, `UnsafeEdit`), on a read-only connection, under a timeout and a row cap. The entry's
database is stored as an absolute path when its entry is imported (`import-entries`), so the
exported gold names it so too. Running needs the `sql` extra; without it the page shows the
queries and says which extra adds the results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from assay.errors import MissingExtraError, UsageError
from assay.workbench.db import Database
from assay.workbench.models import Assignment, Item, Output, Task, User
from assay.workbench.service._common import NotFound
from assay.workbench.service.access import task_hidden

__all__ = [
    "SHOWN_ROWS",
    "SqlPlan",
    "SqlView",
    "UnsafeEdit",
    "check_gold_edit",
    "entry_with_database",
    "fill_sql",
    "gold_edit_plan",
    "gold_edit_result",
    "run_gold_edit",
    "sql_output",
    "sql_view",
]

SHOWN_ROWS = 200
"""Rows of a result shown on the page (the count says how many there were)."""


class UnsafeEdit(UsageError):
    """An edited gold query that is not one read-only statement: refused before it runs."""


@dataclass(frozen=True)
class SqlView:
    """What a SQL task page shows besides the question."""

    system_query: str | None
    dialect: str
    system_result: dict[str, Any] | None
    system_error: str | None
    gold_queries: list[str]
    gold_result: dict[str, Any] | None
    schema: dict[str, Any] | None
    schema_text: str | None
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "system_query": self.system_query,
            "dialect": self.dialect,
            "system_result": self.system_result,
            "system_error": self.system_error,
            "gold_queries": self.gold_queries,
            "gold_result": self.gold_result,
            "schema": self.schema,
            "schema_text": self.schema_text,
            "note": self.note,
        }


def entry_with_database(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """An entry's JSON with its `sql.database` made absolute (relative to `base`, the dataset's
    folder), so the store finds the database whatever folder the server runs in."""
    g = data.get("sql")
    if not isinstance(g, dict) or not g.get("database"):
        return data
    p = Path(g["database"])
    if p.is_absolute():
        return data
    return data | {"sql": g | {"database": str((base / p).resolve())}}


def entry_with_relative_database(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """The inverse of `entry_with_database` for an export: `sql.database` relative to `base`,
    the exported dataset's folder, so the dataset names its database as `assay synth warehouse`
    writes it and keeps working when the folders move together."""
    g = data.get("sql")
    if not isinstance(g, dict) or not g.get("database") or not Path(g["database"]).is_absolute():
        return data
    rel = os.path.relpath(Path(g["database"]), base.resolve())
    return data | {"sql": g | {"database": Path(rel).as_posix()}}


def sql_output(row: dict[str, Any], entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(answer, draft) of an Output for a run row on a SQL item: the query as the answer (empty
    when the system declined) and ``{"sql": {"query", "dialect"}}``, read as the SQL checks read
    a row (`assay.sql.read_system_sql`)."""
    from types import SimpleNamespace

    from assay.sql.answers import read_system_sql

    extra = dict(row.get("extra") or {}) | {k: row[k] for k in ("sql", "dialect") if k in row}
    run_row = SimpleNamespace(extra=extra, answer=row.get("answer"))
    s = read_system_sql(SimpleNamespace(entry=_entry_of(entry), row=run_row, answer=run_row.answer))
    return s.sql or "", {"sql": {"query": s.sql, "dialect": s.dialect}}


def _result(res: Any) -> dict[str, Any]:
    return _result_of({"columns": res.columns, "rows": [list(r) for r in res.rows]})


def _entry_of(data: dict[str, Any]) -> Any:
    from assay.dataset import Entry

    return Entry.model_validate(data)


@dataclass(frozen=True)
class SqlPlan:
    """The queries a SQL task page runs: on `database`, the gold's first query (unless the entry
    stores its result) and the system's query, in that order (`names`)."""

    database: str
    queries: list[tuple[str, str]]
    names: list[str]


def sql_view(item: Item, out: Output | None) -> tuple[SqlView, SqlPlan | None]:
    """The page's SQL panel for an item and the system output under review, without results,
    and the queries it needs run: the caller runs the plan in the SQL workers
    (`assay.workbench.sqlpool`) and fills the panel in (`fill_sql`)."""
    from assay.sql.gold import database_path

    e = _entry_of(item.entry)
    g = e.sql
    if g is None:
        raise UsageError(f"item {item.id} has no sql gold")
    info = ((out.draft or {}).get("sql") if out is not None else None) or {}
    query = info.get("query")
    dialect = str(info.get("dialect") or g.dialect)
    schema = schema_text = note = None
    gold_result = None
    plan: SqlPlan | None = None
    if g.database is not None:
        from assay.sql.schema import DatabaseSchema, schema_path_for

        sp = schema_path_for(database_path(e, None))
        if sp.is_file():
            sch = DatabaseSchema.load(sp)
            schema, schema_text = sch.to_dict(), sch.to_prompt()
    if g.result is not None:
        gold_result = _result(_stored(g.result))
    if g.database is not None and (g.queries or query):
        queries: list[tuple[str, str]] = []
        names: list[str] = []
        if gold_result is None and g.queries:
            queries.append((g.queries[0], g.dialect))
            names.append("gold")
        if query:
            queries.append((query, dialect))
            names.append("system")
        if queries:
            plan = SqlPlan(str(database_path(e, None)), queries, names)
    try:
        if plan is not None:
            from assay.sql._deps import need_duckdb, need_sqlglot

            need_sqlglot()
            need_duckdb()
    except MissingExtraError:
        plan = None
        note = (
            "Query results are not shown: running them needs the optional 'sql' extra "
            "(pip install 'assay[sql]')."
        )
    view = SqlView(
        system_query=query,
        dialect=dialect,
        system_result=None,
        system_error=None,
        gold_queries=list(g.queries),
        gold_result=gold_result,
        schema=schema,
        schema_text=schema_text,
        note=note,
    )
    return view, plan


def _filled(view: SqlView, plan: SqlPlan, results: list[dict[str, Any]]) -> SqlView:
    from dataclasses import replace

    out = replace(view)
    for name, res in zip(plan.names, results, strict=True):
        err = f"{res['error']}: {res['message']}" if "error" in res else None
        if name == "system":
            out = replace(out, system_result=None if err else _result_of(res), system_error=err)
        elif err:
            out = replace(out, note=f"the gold query did not run: {err}")
        else:
            out = replace(out, gold_result=_result_of(res))
    return out


def fill_sql(panel: dict[str, Any], view: SqlView, plan: SqlPlan, results: list[Any]) -> None:
    """Put a plan's results into a task view's SQL panel (`TaskView.sql`, in place)."""
    panel.update(_filled(view, plan, results).to_dict())


def _result_of(res: dict[str, Any]) -> dict[str, Any]:
    rows = list(res["rows"])
    return {"columns": list(res["columns"]), "rows": rows[:SHOWN_ROWS], "n_rows": len(rows)}


def _stored(result: Any) -> Any:
    from assay.sql.engine import QueryResult

    return QueryResult.from_dict(result.model_dump())


def check_gold_edit(entry: dict[str, Any], payload: dict[str, Any]) -> None:
    """Refuse a label whose edited gold query is not one read-only statement in the entry's
    dialect (`UnsafeEdit`), before anything runs it."""
    q = payload.get("gold_query")
    if not q:
        return
    from assay.sql.safety import check_safe

    g = entry.get("sql") or {}
    verdict = check_safe(q, str(g.get("dialect") or "duckdb"))
    if not verdict.ok:
        raise UnsafeEdit("gold_query: refused before running: " + "; ".join(verdict.reasons))


def gold_edit_plan(
    db: Database, user: User, task_id: int, query: str
) -> tuple[dict[str, Any], SqlPlan]:
    """(entry, plan) of running an edited gold query of a SQL task: the edited query first,
    then the gold's first query unless the entry stores its result. Only someone who claimed
    the task (or an adjudicator) may run one; an unsafe query is refused before it runs
    (`UnsafeEdit`)."""
    if not query.strip() or len(query) > 20000:
        raise UsageError("query: 1 to 20000 characters")
    with db.read() as s:
        task = s.get(Task, task_id)
        if task is None or task.kind != "sql" or task_hidden(s, user.id, task):
            raise NotFound(f"task {task_id}")
        claimed = s.scalar(
            select(Assignment.id).where(
                Assignment.task_id == task_id, Assignment.user_id == user.id
            )
        )
        if claimed is None and not user.can("adjudicator"):
            raise NotFound(f"task {task_id}")
        item = s.get(Item, task.item_id)
        assert item is not None
        entry = dict(item.entry)
    check_gold_edit(entry, {"gold_query": query})
    from assay.sql.gold import database_path

    e = _entry_of(entry)
    g = e.sql
    assert g is not None
    if g.database is None:
        raise UsageError("query: the item names no database")
    queries = [(query, g.dialect)]
    names = ["edit"]
    if g.result is None and g.queries:
        queries.append((g.queries[0], g.dialect))
        names.append("gold")
    return entry, SqlPlan(str(database_path(e, None)), queries, names)


def gold_edit_result(entry: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The edited query's result, and whether it matches the gold result (`gold_edit_plan`'s
    results); a query the database refused, timed out on or capped is a `UsageError`."""
    from assay.sql.engine import QueryResult
    from assay.sql.match import match_results

    g = _entry_of(entry).sql
    assert g is not None
    got = results[0]
    if "error" in got:
        raise UsageError(f"query: {got['error']}: {got['message']}")
    out = _result_of(got)
    if g.result is not None or g.queries:
        if g.result is not None:
            expected = _stored(g.result)
        elif "error" in results[1]:
            raise UsageError(f"the gold query: {results[1]['error']}: {results[1]['message']}")
        else:
            expected = QueryResult.from_dict(results[1])
        m = match_results(expected, QueryResult.from_dict(got), **g.match_rule())
        out["matches_gold"] = m.ok
        out["reason"] = m.reason
    return out


def run_gold_edit(db: Database, user: User, task_id: int, query: str) -> dict[str, Any]:
    """Run an edited gold query of a SQL task read-only against the item's database in the SQL
    workers (`assay.workbench.sqlpool`): its result and whether it matches the stored gold
    result (`gold_edit_plan`, `gold_edit_result`)."""
    from assay.workbench.sqlpool import sql_pool

    entry, plan = gold_edit_plan(db, user, task_id, query)
    return gold_edit_result(entry, sql_pool().run(f"user:{user.id}", plan.database, plan.queries))
