"""Loading a warehouse into PostgreSQL: the schema's DDL (keys, views transpiled by sqlglot), then
every table's rows with COPY through psycopg (the `postgres` extra).

`load_postgres(database, url)` reads the DuckDB file's tables (read-only) and writes them into a
PostgreSQL schema (``warehouse`` by default; `replace=True` drops it first), in one transaction:
a failure leaves nothing behind. `postgres_ddl(schema)` is the DDL alone, for review or for
psql. Queries written for DuckDB run there after `assay.sql.safety.transpile(q, "duckdb",
"postgres")`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import MissingExtraError, UsageError
from assay.report import ReportMixin, Tabular
from assay.sql.engine import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT,
    QueryError,
    QueryResult,
    UnsafeQuery,
    to_json_value,
)
from assay.sql.safety import check_safe, transpile
from assay.sql.schema import DatabaseSchema, schema_path_for
from assay.sql.store import read_tables

__all__ = ["PgLoadSummary", "libpq_url", "load_postgres", "postgres_ddl", "query_postgres"]

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def libpq_url(url: str) -> str:
    """The URL psycopg takes: an SQLAlchemy URL (``postgresql+psycopg://...``, as the workbench
    and ASSAY_TEST_PG_URL spell it) loses its driver name; other URLs are unchanged."""
    head, sep, rest = url.partition("://")
    if sep and head.startswith(("postgresql+", "postgres+")):
        return f"postgresql://{rest}"
    return url


def postgres_ddl(schema: DatabaseSchema) -> list[str]:
    """CREATE TABLE and CREATE VIEW statements in PostgreSQL's dialect."""
    return schema.ddl("postgres")


@dataclass
class PgLoadSummary(ReportMixin):
    """What `load_postgres` loaded: rows per table into which schema."""

    schema: str
    tables: dict[str, int] = field(default_factory=dict)
    views: list[str] = field(default_factory=list)

    def tabular(self) -> Tabular:
        return Tabular(
            title=f"loaded into PostgreSQL schema {self.schema}",
            header=["table", "rows"],
            rows=[[k, str(v)] for k, v in self.tables.items()]
            + [[v, "(view)"] for v in self.views],
        )


def load_postgres(
    database: str | Path,
    url: str,
    *,
    schema_name: str = "warehouse",
    schema: DatabaseSchema | None = None,
    replace: bool = False,
) -> PgLoadSummary:
    """Copy the DuckDB warehouse at `database` into PostgreSQL (module docs)."""
    if not _NAME.match(schema_name):
        raise UsageError(f"schema name {schema_name!r}: lower-case letters, digits and _ only")
    database = Path(database)
    if schema is None:
        sp = schema_path_for(database)
        if not sp.is_file():
            raise UsageError(f"{database}: no schema beside it ({sp.name})")
        schema = DatabaseSchema.load(sp)
    try:
        import psycopg
    except ImportError as exc:
        raise MissingExtraError("postgres", "Loading into PostgreSQL", "psycopg") from exc
    rows = read_tables(database, schema)
    summary = PgLoadSummary(schema_name)
    with psycopg.connect(libpq_url(url)) as con:
        with con.cursor() as cur:
            if replace:
                cur.execute(f"DROP SCHEMA IF EXISTS {schema_name} CASCADE")
            cur.execute(f"CREATE SCHEMA {schema_name}")
            cur.execute(f"SET LOCAL search_path TO {schema_name}")
            ddl = postgres_ddl(schema)
            for stmt in ddl:
                if not stmt.startswith("CREATE VIEW"):
                    cur.execute(stmt.encode())
            for t in schema.tables:
                cols = [c.name for c in t.columns]
                with cur.copy(f"COPY {t.name} ({', '.join(cols)}) FROM STDIN".encode()) as cp:
                    for r in rows[t.name]:
                        cp.write_row([r[c] for c in cols])
                summary.tables[t.name] = len(rows[t.name])
            for stmt in ddl:
                if stmt.startswith("CREATE VIEW"):
                    cur.execute(stmt.encode())
            summary.views = [v.name for v in schema.views]
        con.commit()
    return summary


def query_postgres(
    url: str,
    sql: str,
    *,
    dialect: str = "duckdb",
    schema_name: str = "warehouse",
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> QueryResult:
    """Run one safe query (written in `dialect`, transpiled) on a read-only PostgreSQL
    connection with a statement timeout and the row cap, in the loaded schema."""
    if not _NAME.match(schema_name):
        raise UsageError(f"schema name {schema_name!r}: lower-case letters, digits and _ only")
    verdict = check_safe(sql, dialect)
    if not verdict.ok:
        raise UnsafeQuery(verdict.reasons)
    try:
        import psycopg
    except ImportError as exc:
        raise MissingExtraError("postgres", "Querying PostgreSQL", "psycopg") from exc
    text = transpile(sql, dialect, "postgres")
    with psycopg.connect(libpq_url(url)) as con:
        con.read_only = True
        try:
            cur = con.execute(f"SET statement_timeout = {int(timeout * 1000)}".encode())
            cur.execute(f"SET search_path TO {schema_name}".encode())
            cur.execute(text.encode())
            cols = tuple(d.name for d in (cur.description or ()))
            got = cur.fetchmany(max_rows + 1)
        except psycopg.errors.QueryCanceled:
            raise QueryError("timeout", f"stopped after {timeout:g} s (the timeout)") from None
        except psycopg.Error as exc:
            raise QueryError("error", str(exc).strip().splitlines()[0]) from None
    if len(got) > max_rows:
        raise QueryError("row_cap", f"more than {max_rows} rows (the row cap)")
    return QueryResult(cols, tuple(tuple(to_json_value(v) for v in r) for r in got))
