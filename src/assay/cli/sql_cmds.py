"""`assay sql ...`: gold SQL -- run a text-to-SQL system, check its queries, run one query
read-only, build a test suite, study planted near misses, load PostgreSQL; and `assay synth
warehouse`, the warehouse from the synthetic room."""

from __future__ import annotations

import datetime as dt
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._io import iter_jsonl
from assay.cli._app import app
from assay.cli._common import (
    EXIT_FAIL,
    Format,
    emit,
    err_console,
)
from assay.cli.core_cmds import run_cmd
from assay.cli.groups import synth_app
from assay.cli.judge_cmds import check_cmd
from assay.cli.options import FmtOpt
from assay.errors import DataError, UsageError
from assay.report import ReportMixin, Tabular
from assay.systems.adapters.sql import ADAPTER as SQL_ADAPTER
from assay.systems.adapters.sql import PREFIX

__all__ = ["sql_app"]

sql_app = typer.Typer(
    help="Gold SQL: text-to-SQL systems checked by execution and test-suite matching "
    "(needs the sql extra).",
    no_args_is_help=True,
)
app.add_typer(sql_app, name="sql")

_SQL_CHECKS = "sql_valid,sql_safe,exec_match,test_suite_match,sql_refusal_ok"
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.01, help="Seconds a query may run.")]
MaxRowsOpt = Annotated[
    int, typer.Option("--max-rows", min=1, help="Rows a result may have (row cap).")
]


@synth_app.command("warehouse")
def warehouse(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory to write the warehouse into.")
    ],
    seed: Annotated[
        int, typer.Option(help="Random seed: the same seed gives the same warehouse.")
    ] = 7,
    companies: Annotated[
        int, typer.Option(min=2, help="Companies (half software, half banks).")
    ] = 6,
    years: Annotated[
        int, typer.Option(min=2, max=20, help="Fiscal years of filings per company.")
    ] = 3,
    suite: Annotated[
        int,
        typer.Option(min=0, help="Test-suite variants to build beside the warehouse (0: none)."),
    ] = 8,
    overwrite: Annotated[bool, typer.Option(help="Replace a warehouse already in --out.")] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Write the room's ledger as a warehouse with gold SQL entries whose results are known.

    Writes warehouse.duckdb and warehouse.sqlite (companies, fiscal_periods, line_items,
    filings, facts, segments, covenants, customers; the current_facts view),
    warehouse.schema.json (tables, column roles, the versioned glossary), golden.jsonl (gold SQL
    entries in eight categories; each names warehouse.duckdb, so no other flag is needed
    later), near_misses.jsonl (planted wrong queries) and warehouse.suite/ (test-suite
    variants).

    Example: assay synth warehouse --out wh/ && assay validate wh/golden.jsonl
    """
    from assay.synth.warehouse_files import write_warehouse

    emit(
        write_warehouse(
            out, seed=seed, companies=companies, years=years, suite=suite, overwrite=overwrite
        ),
        fmt,
    )


def _sql_run(**kwargs: Any) -> None:
    """Ask a text-to-SQL system every question with sql gold; write its queries as a run.

    `assay run` with --system sql-SPEC (the prefix is implied here), with every option of
    `assay run`: the request cache, the journal (an interrupted run resumes; --restart discards
    it), --workers, --executor. The system is called as sql(question, schema=..., as_of=...)
    with the schema beside the entry's database (tables, views, glossary). Each row keeps the
    query in extra "sql" (null when the system declined) and its dialect in extra "dialect";
    answer holds the same query or the refusal sentence.

    Example: assay sql run wh/golden.jsonl --system template --out run.jsonl
    """
    spec = str(kwargs["system"])
    kwargs["system"] = spec if spec.startswith(PREFIX) else PREFIX + spec
    run_cmd(**kwargs)


def _sql_check(timeout: float, max_rows: int, **kwargs: Any) -> None:
    """Rate a run's queries per category: valid, safe, execution and test-suite match.

    `assay check` with the gold SQL checks by default, and every option of `assay check`
    (--resamples, --allow-reuse: a sealed fresh sample is checked once, --out, --by).
    exec_match runs the query read-only on the entry's database (DuckDB external access off,
    SQLite mode=ro; --timeout and --max-rows) and compares results with the entry's semantics
    (bag, set, ordered), float tolerance and column order. An unsafe query is refused before it
    runs and fails. test_suite_match also compares with the gold query on every variant of the
    database's test suite (assay sql suite).

    Example: assay sql check wh/golden.jsonl run.jsonl -f json
    """
    from assay.sql.answers import sql_check_settings

    with sql_check_settings(timeout=timeout, max_rows=max_rows):
        check_cmd(**kwargs)


def _alias_signature(
    of: Any,
    replace: dict[str, tuple[Any, Any]],
    add: Sequence[tuple[str, Any, Any]] = (),
    keep: Callable[[inspect.Parameter], bool] | None = None,
) -> inspect.Signature:
    """`of`'s parameters (those `keep` keeps), with the (annotation, default) of `replace` by
    name and the keyword-only parameters `add` (name, annotation, default) at the end."""
    sig = inspect.signature(of, eval_str=True)
    params = [
        p.replace(annotation=replace[p.name][0], default=replace[p.name][1])
        if p.name in replace
        else p
        for p in sig.parameters.values()
        if keep is None or keep(p)
    ]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d)
               for n, a, d in add]  # fmt: skip
    return sig.replace(parameters=params)


_SQL_OPTION_NAMES = {o.name for o in SQL_ADAPTER.options}
_sql_run.__signature__ = _alias_signature(  # type: ignore[attr-defined]
    run_cmd,
    {
        "system": (
            Annotated[
                str,
                typer.Option(
                    "--system",
                    "-s",
                    help="template (the baseline), module:attr (a Python system), "
                    "http://host/path, or openai[:MODEL] (an OpenAI-compatible chat endpoint); "
                    "sql-SPEC as for `assay run`.",
                ),
            ],
            inspect.Parameter.empty,
        )
    },
    # `assay run`'s own options (not keyword-only) and the SQL adapter's, not other adapters'
    keep=lambda p: p.kind is not p.KEYWORD_ONLY or p.name in _SQL_OPTION_NAMES,
)
sql_app.command("run")(_sql_run)

_sql_check.__signature__ = _alias_signature(  # type: ignore[attr-defined]
    check_cmd,
    {
        "checks": (
            Annotated[
                str,
                typer.Option(
                    "--checks", help="Comma-separated checks (any registered check name)."
                ),
            ],
            _SQL_CHECKS,
        )
    },
    add=[("timeout", TimeoutOpt, 5.0), ("max_rows", MaxRowsOpt, 10_000)],
)
sql_app.command("check")(_sql_check)


@dataclass
class _Summary(ReportMixin):
    """A small key-value result for the commands that report what they did."""

    title: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    def tabular(self) -> Tabular:
        return Tabular(
            title=self.title,
            header=["what", "value"],
            rows=[[k, str(v)] for k, v in self.data.items()],
        )


@sql_app.command("exec")
def exec_cmd(
    database: Annotated[Path, typer.Argument(help="A DuckDB (.duckdb) or SQLite (.sqlite) file.")],
    query: Annotated[str, typer.Argument(help="One read-only query ('-' reads it from stdin).")],
    dialect: Annotated[
        str | None, typer.Option(help="Dialect the query is written in (default: the database's).")
    ] = None,
    timeout: TimeoutOpt = 5.0,
    max_rows: MaxRowsOpt = 10_000,
    fmt: FmtOpt = Format.table,
) -> None:
    """Run one query read-only and print its result (an unsafe query is refused, exit 2).

    Example: assay sql exec wh/warehouse.duckdb "SELECT ticker, industry FROM companies"
    """
    from assay.sql.engine import ReadOnlyDatabase

    text = sys.stdin.read() if query == "-" else query
    with ReadOnlyDatabase(database, timeout=timeout, max_rows=max_rows) as db:
        result = db.execute(text, dialect=dialect)
    emit(_ResultView(result), fmt)


@dataclass
class _ResultView(ReportMixin):
    """A query result as a report."""

    result: Any

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = self.result.to_dict()
        return out

    def tabular(self) -> Tabular:
        return Tabular(
            title=f"{len(self.result.rows)} rows",
            header=list(self.result.columns),
            rows=[[_cell(v) for v in r] for r in self.result.rows],
        )


def _cell(v: Any) -> str:
    return "NULL" if v is None else str(v)


@sql_app.command("safe")
def safe_cmd(
    query: Annotated[str, typer.Argument(help="The query to judge ('-' reads it from stdin).")],
    dialect: Annotated[str, typer.Option(help="Dialect the query is written in.")] = "duckdb",
    fmt: FmtOpt = Format.table,
) -> None:
    """Is the query one read-only statement? Decided on its syntax tree; nothing runs.

    Exits 1 when it is not.

    Example: assay sql safe "COPY companies TO 'out.csv'"
    """
    from assay.sql.safety import check_dialect, check_safe

    check_dialect(dialect)
    text = sys.stdin.read() if query == "-" else query
    verdict = check_safe(text, dialect)
    emit(_Summary("sql safe", {"ok": verdict.ok, "reasons": "; ".join(verdict.reasons)}), fmt)
    if not verdict.ok:
        raise typer.Exit(EXIT_FAIL)


@sql_app.command("suite")
def suite_cmd(
    database: Annotated[Path, typer.Argument(help="The DuckDB database to build variants of.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=200, help="Number of variants.")] = 8,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations.")] = 0,
    schema: Annotated[
        Path | None,
        typer.Option(help="Schema JSON with column roles (default: <stem>.schema.json beside it)."),
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Build the test suite of a database: K variants in <stem>.suite/ beside it.

    Each variant keeps the schema and the meaning of every gold query and changes what a wrong
    query may depend on by accident: clones, a bare entity, shifted dates, scaled measures,
    resampled codes, deletions.

    Example: assay sql suite wh/warehouse.duckdb --k 8 --seed 7
    """
    from assay.sql.schema import DatabaseSchema
    from assay.sql.suite import build_suite

    spec = None if schema is None else DatabaseSchema.load(schema)
    emit(build_suite(database, spec, k=k, seed=seed), fmt)


@sql_app.command("near-miss")
def near_miss_cmd(
    dataset: Annotated[Path, typer.Argument(help="Dataset JSONL with sql gold.")],
    near_misses: Annotated[
        Path | None,
        typer.Option(
            "--near-misses",
            help="JSONL of planted queries {entry_id, sql, kind, note} (default: near_misses.jsonl "
            "beside the dataset).",
        ),
    ] = None,
    timeout: TimeoutOpt = 5.0,
    max_rows: MaxRowsOpt = 10_000,
    fmt: FmtOpt = Format.table,
) -> None:
    """Planted wrong queries: how many pass on one database, how many the test suite catches.

    Example: assay sql near-miss wh/golden.jsonl -f json
    """
    from assay.dataset import load_dataset
    from assay.sql.evaluate import NearMiss, near_miss_study

    path = near_misses if near_misses is not None else dataset.parent / "near_misses.jsonl"
    planted: list[NearMiss] = []
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict) or not isinstance(obj.get("entry_id"), str):
            raise DataError("required, a string", file=path, line=line, field="entry_id")
        if not isinstance(obj.get("sql"), str):
            raise DataError("required, a string", file=path, line=line, field="sql")
        planted.append(
            NearMiss(
                obj["entry_id"], obj["sql"], str(obj.get("kind", "")), str(obj.get("note", ""))
            )
        )
    study = near_miss_study(load_dataset(dataset), planted, timeout=timeout, max_rows=max_rows)
    emit(study, fmt)


@sql_app.command("load-pg")
def load_pg_cmd(
    database: Annotated[Path, typer.Argument(help="The DuckDB warehouse to copy.")],
    url: Annotated[str, typer.Option("--url", help="PostgreSQL URL (postgresql://user@host/db).")],
    schema_name: Annotated[str, typer.Option("--schema-name", help="Target schema.")] = "warehouse",
    replace: Annotated[bool, typer.Option(help="Drop the target schema first.")] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Load the warehouse into PostgreSQL (DDL, then COPY; one transaction; the postgres extra).

    Example: assay sql load-pg wh/warehouse.duckdb --url postgresql://localhost/analytics
    """
    from assay.sql.postgres import load_postgres

    emit(load_postgres(database, url, schema_name=schema_name, replace=replace), fmt)


@sql_app.command("ask")
def ask_cmd(
    database: Annotated[Path, typer.Argument(help="Database whose schema the system is handed.")],
    question: Annotated[str, typer.Argument(help="The question.")],
    system: Annotated[
        str, typer.Option("--system", "-s", help="As for `assay sql run`.")
    ] = "template",
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="YYYY-MM-DD: the question's date.")
    ] = None,
    run_it: Annotated[bool, typer.Option("--exec", help="Also run the query read-only.")] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Ask a text-to-SQL system one question; print its query (and, with --exec, its result).

    Example: assay sql ask wh/warehouse.duckdb "How many active customers does Averix
    Technologies, Inc. have?" --exec
    """
    from assay.sql.engine import ReadOnlyDatabase
    from assay.sql.schema import DatabaseSchema, schema_path_for
    from assay.sql.systems import load_sql_system, reply_of

    when = None
    if as_of is not None:
        try:
            when = dt.date.fromisoformat(as_of)
        except ValueError:
            raise UsageError(f"--as-of {as_of!r} is not a date (YYYY-MM-DD)") from None
    sp = schema_path_for(database)
    if not sp.is_file():
        raise UsageError(f"{database}: no schema beside it ({sp.name})")
    got = reply_of(load_sql_system(system), question, DatabaseSchema.load(sp), when)
    data: dict[str, Any] = {"sql": got.sql, "dialect": got.dialect}
    if run_it and got.sql is not None:
        with ReadOnlyDatabase(database) as db:
            data["result"] = db.execute(got.sql, dialect=got.dialect).to_dict()
    if fmt is Format.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    if got.sql is None:
        err_console().print("the system declined (the schema cannot answer it)", markup=False)
    else:
        sys.stdout.write(got.sql + "\n")
    if "result" in data:
        emit(_ResultView(_as_result(data["result"])), fmt)


def _as_result(d: dict[str, Any]) -> Any:
    from assay.sql.engine import QueryResult

    return QueryResult.from_dict(d)
