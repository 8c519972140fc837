"""Running a query read-only, under a timeout and a row cap, on a DuckDB or SQLite file.

Every query goes through `ReadOnlyDatabase.execute`, which

1. refuses a query that is not one read-only statement (`assay.sql.safety.check_safe`) before
   anything runs (`UnsafeQuery`);
2. writes it in the database's dialect (sqlglot) when it was written in another;
3. runs it on a read-only connection: DuckDB opened ``read_only=True`` with
   ``enable_external_access=false`` and the configuration locked (no files, no network, no
   extensions, no ATTACH, no SET that undoes it); SQLite opened as ``file:...?mode=ro`` with
   ``uri=True``, ``PRAGMA query_only`` on and an authorizer that allows reads only (no write,
   DDL, ATTACH, PRAGMA or transaction is even prepared);
4. stops it after `timeout` seconds (DuckDB: the connection is interrupted; SQLite: a progress
   handler aborts it) and refuses results longer than `max_rows` rows (`QueryError`, kind
   ``timeout`` or ``row_cap``).

Values come back as JSON scalars: dates and timestamps as ISO strings, decimals as floats, so a
DuckDB date and the same date stored as text in SQLite compare equal.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError, UsageError
from assay.sql._deps import need_duckdb
from assay.sql.safety import SqlParseError, check_safe, transpile

__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT",
    "DUCKDB_READONLY_CONFIG",
    "ENGINES",
    "QueryError",
    "QueryResult",
    "ReadOnlyDatabase",
    "UnsafeQuery",
    "connect_duckdb_readonly",
    "engine_of",
    "open_database",
    "to_json_value",
]

DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_ROWS = 10_000
ENGINES = ("duckdb", "sqlite")
_SUFFIX = {".duckdb": "duckdb", ".ddb": "duckdb", ".sqlite": "sqlite", ".sqlite3": "sqlite"}
DUCKDB_READONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "lock_configuration": True,
    "threads": 1,
}
"""How every read-only DuckDB connection is opened (one process must open a file one way)."""
_CACHE_SIZE = 4096


def connect_duckdb_readonly(path: str | Path) -> Any:
    """A read-only DuckDB connection with external access off and the configuration locked."""
    need_duckdb()
    import duckdb

    return duckdb.connect(str(path), read_only=True, config=dict(DUCKDB_READONLY_CONFIG))


class _Watchdog:
    """One thread per connection that interrupts a query still running at its deadline."""

    def __init__(self, interrupt: Any):
        self._interrupt = interrupt
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def _loop(self) -> None:
        with self._cond:
            while not self._closed:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._deadline = None
                self._interrupt()

    def arm(self, seconds: float) -> None:
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()
            self._deadline = time.monotonic() + seconds
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._deadline = None
            self._cond.notify()


class QueryError(AssayError):
    """A query failed: `kind` is ``error`` (the database refused it), ``timeout`` or ``row_cap``."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class UnsafeQuery(QueryError):
    """The query is not one read-only statement; it was refused before it ran."""

    def __init__(self, reasons: Sequence[str]):
        self.reasons = tuple(reasons)
        super().__init__("unsafe", "refused before running: " + "; ".join(self.reasons))


@dataclass(frozen=True)
class QueryResult:
    """Column names and rows of JSON scalars."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "rows": [list(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, d: Any) -> QueryResult:
        """From ``{"columns": [...], "rows": [[...], ...]}`` or anything with those attributes."""
        cols = d["columns"] if isinstance(d, dict) else d.columns
        rows = d["rows"] if isinstance(d, dict) else d.rows
        return cls(tuple(str(c) for c in cols), tuple(tuple(r) for r in rows))


def to_json_value(v: Any) -> Any:
    """One database value as a JSON scalar (dates as ISO text, decimals as floats)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, default=str, sort_keys=True)
    return str(v)


def engine_of(path: str | Path) -> str:
    """``duckdb`` or ``sqlite``, from the file's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIX:
        raise UsageError(
            f"{path}: cannot tell the database engine from the suffix {suffix!r} "
            f"(use one of {', '.join(sorted(_SUFFIX))})"
        )
    return _SUFFIX[suffix]


_SQLITE_READS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_SQLITE_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fsdir"})


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, *rest: Any) -> int:
    """Only reads: SELECT, reading a column, calling a function (not one that loads code or
    touches files) and a recursive CTE. Everything else is denied as it is prepared: writes,
    DDL, ATTACH (and so VACUUM INTO), PRAGMA (so ``query_only`` cannot be turned off),
    transactions and savepoints."""
    if action not in _SQLITE_READS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class ReadOnlyDatabase:
    """A DuckDB or SQLite file opened read-only; `execute` runs one safe query (module docs)."""

    def __init__(
        self,
        path: str | Path,
        *,
        engine: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_rows: int = DEFAULT_MAX_ROWS,
    ):
        self.path = Path(path)
        if not self.path.is_file():
            raise UsageError(f"{self.path}: database file not found")
        self.engine = engine or engine_of(self.path)
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine {self.engine!r}; one of {', '.join(ENGINES)}")
        if timeout <= 0 or max_rows <= 0:
            raise UsageError("the timeout and the row cap must be positive")
        self.timeout = float(timeout)
        self.max_rows = int(max_rows)
        self._lock = threading.Lock()
        self._con: Any = self._connect()
        self._watchdog = _Watchdog(self._con.interrupt) if self.engine == "duckdb" else None
        self._results: dict[tuple[str, str], QueryResult] = {}

    @property
    def dialect(self) -> str:
        return self.engine

    def _connect(self) -> Any:
        if self.engine == "duckdb":
            return connect_duckdb_readonly(self.path)
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        con = sqlite3.connect(uri, uri=True, check_same_thread=False)
        con.execute("PRAGMA query_only = ON")
        con.set_authorizer(_sqlite_authorizer)
        return con

    def close(self) -> None:
        with self._lock:
            if self._watchdog is not None:
                self._watchdog.close()
            if self._con is not None:
                self._con.close()
                self._con = None

    def __enter__(self) -> ReadOnlyDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, sql: str, *, dialect: str | None = None) -> QueryResult:
        """Run one read-only query written in `dialect` (default: the database's own).

        The file is read-only, so a result is kept (per query text and dialect, a few thousand
        at most) and the same query asked again is answered without running it."""
        dialect = dialect or self.dialect
        key = (sql, dialect)
        hit = self._results.get(key)
        if hit is not None:
            return hit
        verdict = check_safe(sql, dialect)
        if not verdict.ok:
            raise UnsafeQuery(verdict.reasons)
        try:
            text = transpile(sql, dialect, self.dialect)
        except SqlParseError as exc:
            raise QueryError("error", str(exc)) from None
        with self._lock:
            if self._con is None:
                raise QueryError("error", f"{self.path}: the database is closed")
            result = self._duckdb(text) if self.engine == "duckdb" else self._sqlite(text)
            if len(self._results) >= _CACHE_SIZE:
                self._results.pop(next(iter(self._results)))
            self._results[key] = result
            return result

    def _fetch(self, cur: Any) -> QueryResult:
        cols = tuple(str(d[0]) for d in (cur.description or ()))
        got = cur.fetchmany(self.max_rows + 1)
        if len(got) > self.max_rows:
            raise QueryError("row_cap", f"more than {self.max_rows} rows (the row cap)")
        return QueryResult(cols, tuple(tuple(to_json_value(v) for v in r) for r in got))

    def _duckdb(self, text: str) -> QueryResult:
        import duckdb

        con = self._con
        dog = self._watchdog
        assert dog is not None
        dog.arm(self.timeout)
        try:
            cur = con.execute(text)
            return self._fetch(cur)
        except duckdb.InterruptException:
            raise QueryError("timeout", f"stopped after {self.timeout:g} s (the timeout)") from None
        except duckdb.Error as exc:
            raise QueryError("error", _first_line(exc)) from None
        finally:
            dog.disarm()

    def _sqlite(self, text: str) -> QueryResult:
        con: sqlite3.Connection = self._con
        deadline = time.monotonic() + self.timeout
        timed_out = False

        def progress() -> int:
            nonlocal timed_out
            if time.monotonic() > deadline:
                timed_out = True
                return 1
            return 0

        con.set_progress_handler(progress, 2_000)
        try:
            cur = con.execute(text)
            return self._fetch(cur)
        except sqlite3.Error as exc:
            if timed_out:
                raise QueryError(
                    "timeout", f"stopped after {self.timeout:g} s (the timeout)"
                ) from None
            raise QueryError("error", _first_line(exc)) from None
        finally:
            con.set_progress_handler(None, 0)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_OPEN: dict[tuple[str, str, float, int, float], ReadOnlyDatabase] = {}
_OPEN_LOCK = threading.Lock()


def open_database(
    path: str | Path,
    *,
    engine: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> ReadOnlyDatabase:
    """A shared read-only connection to `path` (one per file, settings and modification time,
    so checks over many entries open each database once)."""
    p = Path(path).resolve()
    if not p.is_file():
        raise UsageError(f"{path}: database file not found")
    key = (str(p), engine or engine_of(p), timeout, max_rows, p.stat().st_mtime)
    with _OPEN_LOCK:
        db = _OPEN.get(key)
        if db is None or db._con is None:
            db = ReadOnlyDatabase(p, engine=engine, timeout=timeout, max_rows=max_rows)
            _OPEN[key] = db
        return db
