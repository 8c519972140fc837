"""Writing and reading a database described by a `DatabaseSchema`: DuckDB and SQLite files.

`write_duckdb` and `write_sqlite` create a new file from rows (dicts keyed by column name),
declare keys, add the schema's views (transpiled for SQLite) and replace the target atomically.
`read_tables` reads every table of a DuckDB file back as rows (read-only, external access off).
"""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from assay.sql._deps import need_duckdb
from assay.sql.engine import connect_duckdb_readonly
from assay.sql.schema import DatabaseSchema

__all__ = ["read_tables", "write_duckdb", "write_sqlite"]


def write_duckdb(
    path: str | Path, schema: DatabaseSchema, tables: dict[str, list[dict[str, Any]]]
) -> None:
    """Write the tables (and views) to a new DuckDB file at `path` (replaced atomically)."""
    need_duckdb()
    import duckdb

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wh-", dir=path.parent)) / path.name
    try:
        con = duckdb.connect(str(tmp))
        try:
            for stmt in schema.ddl("duckdb"):
                if stmt.startswith("CREATE VIEW"):
                    continue
                con.execute(stmt)
            for table in schema.tables:
                rows = tables[table.name]
                if not rows:
                    continue
                cols = [c for c in table.columns]
                params = [[r[c.name] for r in rows] for c in cols]
                unnest = ", ".join(f"UNNEST(${i + 1}::{c.type}[])" for i, c in enumerate(cols))
                con.execute(
                    f"INSERT INTO {table.name} ({', '.join(c.name for c in cols)}) SELECT {unnest}",
                    params,
                )
            for stmt in schema.ddl("duckdb"):
                if stmt.startswith("CREATE VIEW"):
                    con.execute(stmt)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        tmp.replace(path)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, bool):
        return int(v)
    return v


def write_sqlite(
    path: str | Path, schema: DatabaseSchema, tables: dict[str, list[dict[str, Any]]]
) -> None:
    """Write the tables (and views, transpiled) to a new SQLite file (dates as ISO text)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wh-", dir=path.parent)) / path.name
    try:
        con = sqlite3.connect(tmp)
        try:
            for stmt in schema.ddl("sqlite"):
                if not stmt.startswith("CREATE VIEW"):
                    con.execute(stmt)
            for table in schema.tables:
                cols = [c.name for c in table.columns]
                con.executemany(
                    f"INSERT INTO {table.name} ({', '.join(cols)}) "
                    f"VALUES ({', '.join('?' for _ in cols)})",
                    [[_sqlite_value(r[c]) for c in cols] for r in tables[table.name]],
                )
            for stmt in schema.ddl("sqlite"):
                if stmt.startswith("CREATE VIEW"):
                    con.execute(stmt)
            con.commit()
        finally:
            con.close()
        tmp.replace(path)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def read_tables(path: str | Path, schema: DatabaseSchema) -> dict[str, list[dict[str, Any]]]:
    """Every table of the schema, read from the DuckDB file at `path`, rows in key order."""
    con = connect_duckdb_readonly(path)
    try:
        out: dict[str, list[dict[str, Any]]] = {}
        for t in schema.tables:
            cols = [c.name for c in t.columns]
            order = f" ORDER BY {t.key.name}" if t.key is not None else ""
            cur = con.execute(f"SELECT {', '.join(cols)} FROM {t.name}{order}")
            out[t.name] = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
        return out
    finally:
        con.close()
