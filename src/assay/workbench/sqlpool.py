"""SQL runs bounded per user and per server: the workbench's queries run in worker processes.

A SQL task runs queries on the item's database (the system's query and the gold query on its
page, an edited gold query on request). Each runs in one of `SqlLimits.workers` worker processes,
never in the server's own process or on the threads that serve pages:

- **memory**: a worker opens a fresh read-only connection per request (nothing is cached between
  requests) with DuckDB's ``memory_limit`` at `SqlLimits.memory_mb` and spilling to disk off
  (``max_temp_directory_size`` 0: no temp file beside the gold database, nor anywhere); a result
  is refused above `max_rows` rows or `max_bytes` bytes (kind ``row_cap`` / ``byte_cap``),
  counted while it is fetched;
- **time**: the engine stops a query at `timeout` seconds; a worker that does not answer by
  `timeout` + `grace` is killed and replaced, so a stuck query never keeps a worker;
- **fairness**: a user may have `per_user` requests queued or running, the server
  `workers` + `queued`; past either, or after `wait` seconds in the queue, the request is refused
  with `SqlBusy` (HTTP 429) and nothing runs. Waiting happens on the pool's own threads
  (`SqlPool.arun`), so slow SQL never starves the pages and the search.

The process-wide pool (`sql_pool`) is made on first use with `configure_sql_pool`'s limits (the
app sets them from its config).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import queue
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assay.errors import UsageError

__all__ = [
    "SqlBusy",
    "SqlLimits",
    "SqlPool",
    "configure_sql_pool",
    "sql_pool",
]


@dataclass(frozen=True)
class SqlLimits:
    """The bounds of the workbench's SQL runs (module docs)."""

    workers: int = 2
    per_user: int = 2
    queued: int = 16
    wait: float = 20.0
    timeout: float = 5.0
    grace: float = 5.0
    memory_mb: int = 256
    max_rows: int = 10_000
    max_bytes: int = 4_000_000

    def __post_init__(self) -> None:
        for name in ("workers", "per_user", "memory_mb", "max_rows", "max_bytes"):
            if getattr(self, name) < 1:
                raise UsageError(f"sql {name} must be at least 1")
        if self.queued < 0 or min(self.wait, self.timeout, self.grace) <= 0:
            raise UsageError("sql queue, wait, timeout and grace must be positive")


class SqlBusy(UsageError):
    """A SQL request refused before it ran: the user's or the server's queue is full."""


# ----------------------------------------------------------------------------------- the worker


def _bounded_database(path: str, limits: SqlLimits) -> Any:
    """A read-only database whose DuckDB connection has a memory limit and never spills, and
    whose results are counted in bytes as they are fetched."""
    from assay.sql.engine import (
        DUCKDB_READONLY_CONFIG,
        QueryError,
        QueryResult,
        ReadOnlyDatabase,
        to_json_value,
    )

    class Bounded(ReadOnlyDatabase):
        def _connect(self) -> Any:
            if self.engine != "duckdb":
                return super()._connect()
            import duckdb

            config = {
                "memory_limit": f"{limits.memory_mb}MB",
                "max_temp_directory_size": "0KiB",
                **DUCKDB_READONLY_CONFIG,
            }
            return duckdb.connect(str(self.path), read_only=True, config=config)

        def _fetch(self, cur: Any) -> Any:
            cols = tuple(str(d[0]) for d in (cur.description or ()))
            rows: list[tuple[Any, ...]] = []
            size = 0
            while batch := cur.fetchmany(500):
                for r in batch:
                    row = tuple(to_json_value(v) for v in r)
                    size += sum(len(v) if isinstance(v, str) else 8 for v in row)
                    rows.append(row)
                if len(rows) > self.max_rows:
                    raise QueryError("row_cap", f"more than {self.max_rows} rows (the row cap)")
                if size > limits.max_bytes:
                    raise QueryError(
                        "byte_cap", f"more than {limits.max_bytes:,} bytes (the result size cap)"
                    )
            return QueryResult(cols, tuple(rows))

    return Bounded(path, timeout=limits.timeout, max_rows=limits.max_rows)


def run_queries(
    path: str, queries: Sequence[tuple[str, str]], limits: SqlLimits
) -> list[dict[str, Any]]:
    """Run each (query, dialect) on a fresh bounded connection to `path`: per query
    ``{"columns", "rows"}`` or ``{"error": kind, "message"}``. Closed afterwards: no cache."""
    from assay.sql.engine import QueryError

    try:
        db = _bounded_database(path, limits)
    except (UsageError, QueryError) as exc:
        return [{"error": "error", "message": str(exc)} for _ in queries]
    out: list[dict[str, Any]] = []
    try:
        for sql, dialect in queries:
            try:
                res = db.execute(sql, dialect=dialect)
                out.append({"columns": list(res.columns), "rows": [list(r) for r in res.rows]})
            except QueryError as exc:
                out.append({"error": exc.kind, "message": str(exc)})
            except UsageError as exc:
                out.append({"error": "error", "message": str(exc)})
    finally:
        db.close()
    return out


def _serve(conn: Any, limits: dict[str, Any]) -> None:  # pragma: no cover (a child process)
    bounds = SqlLimits(**limits)
    try:  # imported once, before the first query's deadline starts
        import assay.sql.engine  # noqa: F401
        from assay.sql._deps import need_duckdb, need_sqlglot

        need_duckdb()
        need_sqlglot()
    except Exception:
        pass
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        path, queries = job
        try:
            conn.send(run_queries(path, queries, bounds))
        except MemoryError:
            conn.send([{"error": "memory", "message": "out of memory"} for _ in queries])


_STARTUP = 60.0  # seconds a new worker may take to import the engine


class _Worker:
    def __init__(self, limits: SqlLimits) -> None:
        # forked from a clean single-threaded server process that has imported the engine once
        # (never from the threaded web server itself); a new worker then starts in milliseconds
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(
            ["assay.workbench.sqlpool", "assay.sql.engine", "assay.sql.safety", "duckdb", "sqlglot"]
        )
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_serve, args=(child, asdict(limits)), daemon=True, name="assay-sql-worker"
        )
        self.proc.start()
        child.close()
        self.ready = False

    def call(self, job: tuple[str, list[tuple[str, str]]], seconds: float) -> Any:
        """The worker's answer, or None when it did not answer in time or died (then it is
        killed and must be replaced)."""
        try:
            if not self.ready:  # a new worker: its imports are not the query's time
                if not self.conn.poll(_STARTUP) or self.conn.recv() != "ready":
                    raise EOFError
                self.ready = True
            self.conn.send(job)
            if self.conn.poll(seconds):
                return self.conn.recv()
        except (EOFError, OSError):
            pass
        self.kill()
        return None

    @property
    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
            self.proc.join(5)
        with contextlib.suppress(Exception):
            self.conn.close()


# ------------------------------------------------------------------------------------- the pool


class SqlPool:
    """Worker processes, the admission rules and the waiting threads (module docs)."""

    def __init__(self, limits: SqlLimits | None = None) -> None:
        self.limits = limits or SqlLimits()
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(self.limits.workers):
            self._idle.put(None)  # a slot: its worker is started on first use
        self._lock = threading.Lock()
        self._per_user: Counter[str] = Counter()
        self._admitted = 0
        self._threads = ThreadPoolExecutor(
            max_workers=self.limits.workers + self.limits.queued, thread_name_prefix="assay-sql"
        )
        self.killed = 0  # workers killed at the deadline (or found dead)

    @contextlib.contextmanager
    def _admit(self, user: str) -> Iterator[None]:
        lim = self.limits
        with self._lock:
            if self._per_user[user] >= lim.per_user:
                raise SqlBusy(
                    f"you already have {lim.per_user} SQL queries queued or running; "
                    "wait for them to finish"
                )
            if self._admitted >= lim.workers + lim.queued:
                raise SqlBusy("the server's SQL queue is full; try again shortly")
            self._per_user[user] += 1
            self._admitted += 1
        try:
            yield
        finally:
            with self._lock:
                self._per_user[user] -= 1
                if self._per_user[user] <= 0:
                    del self._per_user[user]
                self._admitted -= 1

    def run(self, user: str, path: str | Path, queries: Sequence[tuple[str, str]]) -> list[Any]:
        """Run (query, dialect) pairs on the database at `path` for `user` (a key for the
        per-user limit) in a worker: the results as `run_queries` gives them. `SqlBusy` when
        refused by the limits; a worker past its deadline is killed (kind ``timeout``)."""
        if not queries:
            return []
        with self._admit(user):
            return self._run_admitted(path, queries)

    def _run_admitted(self, path: str | Path, queries: Sequence[tuple[str, str]]) -> list[Any]:
        try:
            worker = self._idle.get(timeout=self.limits.wait)
        except queue.Empty:
            raise SqlBusy(
                f"no SQL worker was free within {self.limits.wait:g} s; try again shortly"
            ) from None
        try:
            if worker is None or not worker.alive:
                worker = _Worker(self.limits)
            seconds = self.limits.timeout * len(queries) + self.limits.grace
            got = worker.call((str(path), list(queries)), seconds)
            if got is None:
                self.killed += 1
                worker = None
                msg = f"stopped after {self.limits.timeout:g} s (the timeout); worker replaced"
                return [{"error": "timeout", "message": msg} for _ in queries]
            return list(got)
        finally:
            self._idle.put(worker)

    async def arun(
        self, user: str, path: str | Path, queries: Sequence[tuple[str, str]]
    ) -> list[Any]:
        """`run` awaited from the event loop, waiting on the pool's own threads."""
        if not queries:
            return []
        loop = asyncio.get_running_loop()
        with self._admit(user):  # refused at once, before it waits for anything
            return await loop.run_in_executor(
                self._threads, functools.partial(self._run_admitted, path, queries)
            )

    def close(self) -> None:
        """Stop the workers (a running query's worker is killed)."""
        self._threads.shutdown(wait=False, cancel_futures=True)
        while True:
            try:
                w = self._idle.get_nowait()
            except queue.Empty:
                return
            if w is not None:
                w.kill()


_POOL: SqlPool | None = None
_POOL_LOCK = threading.Lock()
_LIMITS = SqlLimits()


def configure_sql_pool(limits: SqlLimits) -> None:
    """Set the limits of the process-wide pool (replacing a pool made with other limits)."""
    global _POOL, _LIMITS
    with _POOL_LOCK:
        _LIMITS = limits
        if _POOL is not None and _POOL.limits != limits:
            _POOL.close()
            _POOL = None


def sql_pool() -> SqlPool:
    """The process-wide pool, made on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = SqlPool(_LIMITS)
        return _POOL
