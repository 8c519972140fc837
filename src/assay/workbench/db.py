"""Engines, sessions and migrations of the workbench store (SQLite by default, PostgreSQL for teams).

SQLite runs in WAL mode with `synchronous=NORMAL` by default: a committed label survives a killed
or crashed server (the WAL is in the OS before the commit returns) and the file stays consistent
through a power cut, which may lose only the last commits; pass `sqlite_synchronous="FULL"` to
fsync every commit as well (each commit then waits for the disk). Also a busy timeout and foreign
keys on. Write transactions on SQLite start with
`BEGIN IMMEDIATE`, so concurrent writers queue on the busy timeout instead of failing on a lock
upgrade; reads use plain deferred transactions and never block writers (WAL).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import MultipleResultsFound, NoResultFound
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from assay.errors import AssayError, UsageError


class StoreRefused(AssayError):
    """The store refused a write for its data (a value too long, a character it cannot hold):
    said in the database's own first line, never with the statement or its parameters. With
    `unavailable`, it refused for want of room (a full disk, SQLite's SQLITE_FULL, PostgreSQL's
    class 53): the store's fault, not the data's, and worth a retry later."""

    def __init__(self, message: str, *, unavailable: bool = False) -> None:
        super().__init__(message)
        self.unavailable = unavailable


def _refusal(orig: BaseException | None) -> StoreRefused:
    """The `StoreRefused` of the driver's error `orig`: its first line, and whether it is a want
    of room (SQLite's error code, PostgreSQL's SQLSTATE, or the system's "No space left")."""
    lines = str(orig).strip().splitlines() or [type(orig).__name__]
    state = getattr(orig, "sqlstate", None) or ""
    full = (
        getattr(orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        or state.startswith("53")
        or "No space left on device" in str(orig)
    )
    return StoreRefused(f"the store refused the write: {lines[0]}", unavailable=full)


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    from sqlalchemy.exc import DBAPIError, IntegrityError

    try:
        yield
    except IntegrityError:
        raise  # a race the callers resolve (a claim or a retry from another tab)
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise
        raise _refusal(exc.orig) from None


__all__ = [
    "BatchResult",
    "Database",
    "Direct",
    "LiteDirect",
    "StoreRefused",
    "WouldBlock",
    "case_collisions",
    "collision_message",
    "migrate",
    "normalize_url",
]

_MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0007"


def normalize_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` as the psycopg 3 driver; pass others through."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    if url.startswith(("sqlite:", "postgresql+psycopg:")):
        return url
    if "://" not in url:  # a bare path means a SQLite file
        return f"sqlite:///{url}"
    raise UsageError(f"unsupported database URL {url!r}: use sqlite:///FILE or postgresql://...")


def _sqlite_setup(engine: Engine, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 30000")
        cur.execute("PRAGMA foreign_keys = ON")
        if engine.url.database not in (None, "", ":memory:"):
            cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("assay_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


_POSTCOMPILE_IN = re.compile(r"(?<!NOT )IN \(__\[POSTCOMPILE_(\w+)\]\)")


_TUPLES_OK = 2  # psycopg.pq.ExecStatus.TUPLES_OK (a statement that returned rows)


class _Rows:
    """The rows of one statement run by `Direct`: the part of SQLAlchemy's `Result` the hot
    path uses (`first`, `one`, `all`, `scalar`, `scalar_one`, `scalars`, `rowcount`)."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self.rowcount = rows, rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise NoResultFound if not self._rows else MultipleResultsFound
        return self._rows[0]

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> _Rows:
        return _Rows([r[0] for r in self._rows], self.rowcount)


class _Compiled:
    """A Core statement compiled once for psycopg: its SQL, the default values of its
    parameters (LIMIT 1 and the like), the parameters that are JSON, and the row class."""

    __slots__ = ("defaults", "json", "row", "sql", "stmt")

    def __init__(self, stmt: Any, dialect: Any) -> None:
        from sqlalchemy.types import JSON

        compiled = stmt.compile(dialect=dialect)
        sql = compiled.string
        # an expanding IN (a list parameter) becomes `= ANY(%(name)s)`: one array parameter
        sql = _POSTCOMPILE_IN.sub(lambda m: f"= ANY(%({m.group(1)})s)", sql)
        if "POSTCOMPILE" in sql:
            raise UsageError(f"Direct cannot run this statement's list parameter: {sql[:200]}")
        self.stmt, self.sql = stmt, sql
        self.defaults = {k: v for k, v in compiled.params.items() if v is not None}
        self.json = frozenset(b.key for b in compiled.binds.values() if isinstance(b.type, JSON))
        self.row: Any = None


_RETRIED = frozenset({"40P01", "40001"})  # deadlock detected, serialization failure
_RETRIES = 3


class Direct:
    """PostgreSQL: Core statements run on the psycopg connection itself, each compiled once
    (per statement object) and executed without SQLAlchemy's execution and result layers,
    which took most of the hot path's CPU on the store threads (docs/workbench.md). The
    connection is in autocommit: each statement is its own transaction. It answers the part
    of `Connection` the hot path uses (`execute`, `scalar`, `scalars`) with rows that allow
    attribute access; a row the store refuses raises as SQLAlchemy would (`IntegrityError`
    for a race the callers resolve, else `StoreRefused` from `Database`). A statement the
    store chose as a deadlock's (or a serialization failure's) victim is run again, up to
    `_RETRIES` times: it was its own transaction, so nothing of it stayed (two claims locking
    rows that another claim had just updated could deadlock under load, and the annotator got
    an error for a claim). Listeners of the engine's `before_cursor_execute` event see every
    statement, as on a `Connection`."""

    _cache: ClassVar[dict[int, _Compiled]] = {}
    _cache_lock = threading.Lock()

    def __init__(self, dbapi: Any, engine: Engine, cursor: Any) -> None:
        self._dbapi, self._engine, self._cur = dbapi, engine, cursor
        self._dispatch = engine.dispatch

    def _compiled(self, stmt: Any) -> _Compiled:
        found = self._cache.get(id(stmt))
        if found is not None and found.stmt is stmt:
            return found
        made = _Compiled(stmt, self._engine.dialect)
        with self._cache_lock:
            if len(self._cache) > 256:  # statements built per call come and go
                self._cache.clear()
            self._cache[id(stmt)] = made
        return made

    def execute(self, stmt: Any, params: dict[str, Any] | None = None) -> _Rows:
        import psycopg
        from psycopg.types.json import Json

        c = self._compiled(stmt)
        values = c.defaults | params if params else dict(c.defaults)
        for k in c.json & values.keys():
            if values[k] is not None:  # json, not jsonb: the text is stored as given
                values[k] = Json(values[k], dumps=_json_dumps)
        cur = self._cur
        if self._dispatch.before_cursor_execute:
            self._dispatch.before_cursor_execute(None, cur, c.sql, values, None, False)
        for attempt in range(_RETRIES + 1):
            try:
                cur.execute(c.sql, values)
                break
            except psycopg.IntegrityError as exc:  # a race the callers resolve
                from sqlalchemy.exc import IntegrityError

                raise IntegrityError(c.sql, None, exc) from exc
            except psycopg.Error as exc:
                if self._dbapi.broken or self._dbapi.closed:
                    raise  # the connection is lost: `Database.direct` drops it from the pool
                if exc.sqlstate in _RETRIED and attempt < _RETRIES:
                    continue  # the statement was its own transaction, rolled back whole
                raise _refusal(exc) from None
        result = cur.pgresult
        if result is None or result.status != _TUPLES_OK:
            return _Rows([], cur.rowcount)
        if c.row is None:  # (the description is built on demand: once per statement)
            import collections

            names = [d.name for d in cur.description]
            make_class: Any = collections.namedtuple  # (mypy wants literal field names)
            row_class = make_class("Row", names, rename=True)
            c.row = row_class._make
        make = c.row
        return _Rows([make(r) for r in cur.fetchall()], cur.rowcount)

    @property
    def engine(self) -> Engine:
        """The engine whose pooled connection this is (as `Connection.engine`)."""
        return self._engine

    def scalar(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        return self.execute(stmt, params).scalar()

    def scalars(self, stmt: Any, params: dict[str, Any] | None = None) -> _Rows:
        return self.execute(stmt, params).scalars()


_EXPANDING = re.compile(r"__\[POSTCOMPILE_(\w+)\]")


class _LiteCompiled:
    """A Core statement compiled once for sqlite3: its SQL with `?` placeholders, the bind
    names in placeholder order, the default values of its parameters, the names a value is
    required for, the bind and result processors of SQLAlchemy's SQLite types (dates stored as
    text, JSON, booleans), the list parameters (an expanding IN, given one placeholder per
    element at each call) and the row class."""

    __slots__ = (
        "binds",
        "defaults",
        "expanding",
        "names",
        "required",
        "results",
        "row",
        "sql",
        "stmt",
    )

    def __init__(self, stmt: Any, compiled: Any) -> None:
        sql = compiled.string
        if compiled.insert_prefetch or compiled.update_prefetch:
            cols = ", ".join(c.key for c in (*compiled.insert_prefetch, *compiled.update_prefetch))
            raise UsageError(f"LiteDirect: give the columns with Python defaults ({cols})")
        if compiled.literal_execute_params or compiled.positiontup is None:
            raise UsageError(f"LiteDirect cannot run this statement: {sql[:200]}")
        if "NOT IN (__[POSTCOMPILE_" in sql:
            raise UsageError(f"LiteDirect cannot run a NOT IN of a list: {sql[:200]}")
        self.stmt, self.sql = stmt, sql
        self.expanding = frozenset(_EXPANDING.findall(sql))
        self.names: tuple[str, ...] = tuple(compiled.positiontup)
        self.defaults = {k: v for k, v in compiled.params.items() if v is not None}
        self.required = frozenset(
            name for b, name in compiled.bind_names.items() if b.required and b.value is None
        )
        self.binds = dict(compiled._bind_processors)
        dialect = compiled.dialect
        results = [
            rc.type._cached_result_processor(dialect, None)
            for rc in (compiled._result_columns or ())
        ]
        self.results: list[Any] | None = results if any(results) else None
        self.row: Any = None

    def bound(self, params: dict[str, Any] | None) -> tuple[str, tuple[Any, ...]]:
        """The SQL and the positional values of one execution."""
        values = self.defaults | params if params else self.defaults
        missing = self.required - values.keys()
        if missing:
            raise UsageError(f"LiteDirect: no value for {', '.join(sorted(missing))}")
        binds = self.binds
        if not self.expanding:
            return self.sql, tuple(
                binds[n](values[n]) if n in binds else values.get(n) for n in self.names
            )
        sql, args = self.sql, []
        for n in self.names:
            v = values.get(n)
            if n not in self.expanding:
                args.append(binds[n](v) if n in binds else v)
                continue
            items = list(v or ())
            # an empty list matches nothing (IN (NULL)), as SQLAlchemy's empty IN
            marks = ", ".join("?" * len(items)) or "NULL"
            sql = sql.replace(f"__[POSTCOMPILE_{n}]", marks, 1)
            proc = binds.get(n)
            args.extend(proc(x) if proc else x for x in items)
        return sql, tuple(args)


def _store_error(sql: str, args: Any, exc: sqlite3.Error) -> Exception:
    """A sqlite3 error as SQLAlchemy raises it (`IntegrityError`, `OperationalError`...)."""
    from sqlalchemy.exc import DBAPIError

    return DBAPIError.instance(sql, args, exc, sqlite3.Error)


class LiteDirect:
    """SQLite: the Core statements of one write transaction (`Database.write_direct`) run on
    the sqlite3 connection itself, each compiled once (per statement object, and per set of
    columns for an INSERT) and executed without SQLAlchemy's connection, execution and result
    layers, with SQLAlchemy's own conversions of the values (so what is stored and read back
    is exactly what a `Connection` stores and reads). Same interface as `Direct`; a row the
    store refuses raises as on a `Connection` (`IntegrityError` for a race the callers
    resolve, else `StoreRefused` from `write_direct`). Listeners of the engine's
    `before_cursor_execute` event see every statement, BEGIN and COMMIT included."""

    _cache: ClassVar[dict[tuple[int, tuple[str, ...]], _LiteCompiled]] = {}
    _cache_lock = threading.Lock()

    def __init__(self, dbapi: Any, engine: Engine) -> None:
        self._dbapi, self._engine = dbapi, engine
        self._dispatch = engine.dispatch

    @property
    def engine(self) -> Engine:
        return self._engine

    def _compiled(self, stmt: Any, params: dict[str, Any] | None) -> _LiteCompiled:
        keys: tuple[str, ...] = ()
        if getattr(stmt, "is_insert", False) and params:
            keys = tuple(sorted(params))  # an INSERT's columns are those given
        key = (id(stmt), keys)
        found = self._cache.get(key)
        if found is not None and found.stmt is stmt:
            return found
        compiled = stmt.compile(dialect=self._engine.dialect, column_keys=list(keys) or None)
        made = _LiteCompiled(stmt, compiled)
        with self._cache_lock:
            if len(self._cache) > 256:  # statements built per call come and go
                self._cache.clear()
            self._cache[key] = made
        return made

    def run(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        """One statement on the connection (the listeners see it); sqlite3's cursor."""
        if self._dispatch.before_cursor_execute:
            self._dispatch.before_cursor_execute(None, None, sql, args, None, False)
        try:
            return self._dbapi.execute(sql, args)
        except sqlite3.Error as exc:
            raise _store_error(sql, args, exc) from exc

    def execute(self, stmt: Any, params: dict[str, Any] | None = None) -> _Rows:
        c = self._compiled(stmt, params)
        sql, args = c.bound(params)
        cur = self.run(sql, args)
        if cur.description is None:
            return _Rows([], cur.rowcount)
        try:
            raw = cur.fetchall()
        except sqlite3.Error as exc:
            raise _store_error(sql, args, exc) from exc
        if c.row is None:
            import collections

            names = [d[0] for d in cur.description]
            make_class: Any = collections.namedtuple  # (mypy wants literal field names)
            c.row = make_class("Row", names, rename=True)._make
        make = c.row
        procs = c.results
        if procs is not None and len(procs) == len(cur.description):
            return _Rows(
                [make([p(v) if p else v for p, v in zip(procs, r, strict=True)]) for r in raw],
                cur.rowcount,
            )
        return _Rows([make(r) for r in raw], cur.rowcount)

    def scalar(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        return self.execute(stmt, params).scalar()

    def scalars(self, stmt: Any, params: dict[str, Any] | None = None) -> _Rows:
        return self.execute(stmt, params).scalars()


def _json_dumps(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


_T = TypeVar("_T")


@dataclass(frozen=True)
class BatchResult(Generic[_T]):
    """One call of `Database.write_batch`: its value, or the exception it raised (its writes
    rolled back), or `again`: it needed a write transaction of its own (run it alone)."""

    value: _T | None
    error: Exception | None
    again: bool


class WouldBlock(Exception):
    """A write transaction asked for inside `Database.no_wait()` would have had to wait for
    another writer; nothing was written by it."""


class _FileLock:
    """An exclusive advisory lock (`fcntl.flock`) on a file, held across a write transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - systems without flock
            self._fcntl: Any = None
        else:
            self._fcntl = fcntl

    def __enter__(self) -> None:
        self.acquire(wait=True)

    def acquire(self, *, wait: bool) -> bool:
        """Take the lock; without `wait`, False at once when another process holds it."""
        if self._fcntl is None:
            return True
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            self._fcntl.flock(self._fd, self._fcntl.LOCK_EX | (0 if wait else self._fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        if self._fcntl is not None and self._fd is not None:
            self._fcntl.flock(self._fd, self._fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Database:
    """One store: an engine plus read and write session factories."""

    def __init__(
        self, url: str, *, pool_size: int = 10, sqlite_synchronous: str = "NORMAL"
    ) -> None:
        self.url = normalize_url(url)
        u = make_url(self.url)
        self.dialect = u.get_backend_name()
        self._auto: Engine | None = None
        if self.dialect == "sqlite":
            memory = u.database in (None, "", ":memory:")
            self.engine = create_engine(
                self.url,
                connect_args={"check_same_thread": False, "timeout": 30},
                # Connections stay open: closing the last one checkpoints the WAL (an fsync).
                **(
                    {"poolclass": StaticPool}
                    if memory
                    else {"pool_size": pool_size, "max_overflow": 60, "pool_timeout": 60}
                ),
            )
            if sqlite_synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
                raise UsageError("sqlite_synchronous must be NORMAL, FULL or EXTRA")
            _sqlite_setup(self.engine, sqlite_synchronous.upper())
        elif self.dialect == "postgresql":
            try:
                import psycopg  # noqa: F401
            except ImportError as exc:  # pragma: no cover - depends on the environment
                from assay.errors import MissingExtraError

                raise MissingExtraError("postgres", "a PostgreSQL store", "psycopg") from exc
            self.engine = create_engine(
                self.url, pool_size=pool_size, max_overflow=40, pool_recycle=1800
            )
            # the hot path's plain reads and claims: connections kept in autocommit (no BEGIN,
            # no ROLLBACK, no mode switch per checkout) that do not wait for the WAL flush when
            # they commit, which only claims do (see `direct`); labels use `self.engine`
            self._auto = create_engine(
                self.url,
                isolation_level="AUTOCOMMIT",
                connect_args={"options": "-c synchronous_commit=off"},
                pool_size=pool_size,
                max_overflow=40,
                pool_recycle=1800,
            )
        else:
            raise UsageError(f"unsupported database {self.dialect!r}")
        self._lock: threading.Lock | None = threading.Lock() if self.dialect == "sqlite" else None
        self._local = threading.local()
        self._file_lock: _FileLock | None = None
        if self.dialect == "sqlite" and u.database not in (None, "", ":memory:"):
            self._file_lock = _FileLock(Path(str(u.database) + ".writelock"))
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        # task id -> kind, of tasks the hot path saw not to be calibration tasks
        # (`service._common.remember_kind`)
        self.task_kinds: dict[int, str] = {}
        self._writer = self.engine.execution_options(assay_write=True)
        self._write = sessionmaker(self._writer, expire_on_commit=False)

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        with self._read() as s:
            yield s

    @contextlib.contextmanager
    def quick_read(self) -> Iterator[Connection]:
        """A Core connection for a few plain reads of the hot path (no ORM). On PostgreSQL it
        runs in autocommit, so each statement is its own snapshot and costs one round trip (a
        transaction would add BEGIN and ROLLBACK); on SQLite the reads share one deferred
        transaction, rolled back at the end. Never write through it."""
        if self._auto is not None:
            with self._auto.connect() as conn:
                yield conn
            return
        with self.engine.connect() as conn:
            try:
                yield conn
            finally:
                conn.rollback()

    @contextlib.contextmanager
    def direct(self, *, durable: bool) -> Iterator[Direct]:
        """PostgreSQL only: a pooled connection in autocommit run by `Direct` (statements
        compiled once, executed by psycopg without SQLAlchemy's execution layer), for the hot
        path. `durable`: a label's write, each statement its own transaction committed and
        flushed to the WAL before it returns (the store's own `synchronous_commit`), so a write
        done in one statement costs one round trip instead of BEGIN, the statement and COMMIT;
        else the quick reads' and claims' connection (`synchronous_commit = off`: a claim's
        commit does not wait for the WAL flush; a claim lost in a crash only frees its slot).
        A write the store refuses for its data raises `StoreRefused`, as in `write`."""
        if self._auto is None:
            raise UsageError("direct statements are for a PostgreSQL store")
        engine = self.engine if durable else self._auto
        raw = engine.raw_connection()
        dbapi: Any = raw.driver_connection
        try:
            if durable:
                dbapi.autocommit = True  # client side: no round trip; reset below
            # one cursor per pooled connection, kept with it (psycopg cursors are reusable)
            cursor = raw.info.get("assay_cursor")
            if cursor is None:
                cursor = raw.info["assay_cursor"] = dbapi.cursor()
            try:
                yield Direct(dbapi, engine, cursor)
            finally:
                if durable and not (dbapi.broken or dbapi.closed):
                    dbapi.autocommit = False
        except BaseException:
            if dbapi.broken or dbapi.closed:
                raw.invalidate()  # never handed out again
            raise
        finally:
            raw.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed on success, rolled back on any exception.

        On SQLite, writers queue on a lock first: SQLite's own busy handler sleeps in growing
        steps (up to 100 ms) while it waits, which would turn a burst of submissions into long
        tails; a lock hands over at once. Threads of this process queue on a thread lock, then
        processes (`serve --workers N`) on an advisory lock (`flock`) of the file
        `<store>.writelock` beside the store, which the kernel hands to the next waiter as soon
        as it is released. Where the system has no `flock`, other processes wait on the busy
        timeout as before. Inside `no_wait()`, a lock held by another writer raises
        `WouldBlock` instead of waiting.
        """
        with _refused(), self._write_locks(), self._write() as s, s.begin():
            yield s

    @contextlib.contextmanager
    def write_core(self) -> Iterator[Connection]:
        """The same write transaction as `write`, on a Core connection without an ORM session
        (the hot path's claims and submissions, which issue Core statements only)."""
        with _refused(), self._write_locks(), self._writer.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def write_direct(self) -> Iterator[LiteDirect | Connection]:
        """The write transaction of `write_core` (the same locks, BEGIN IMMEDIATE, committed
        on success, rolled back on any exception); on SQLite run on a pooled sqlite3
        connection by `LiteDirect`, without SQLAlchemy's connection and execution layers,
        which took most of the hot path's store time (docs/workbench.md); on PostgreSQL the
        `Connection` of `write_core` itself. Inside `write_batch` (on its thread) the block is
        a savepoint of the batch's transaction instead, committed with the batch."""
        if self.dialect != "sqlite":
            with self.write_core() as conn:
                yield conn
            return
        batch: LiteDirect | None = getattr(self._local, "batch", None)
        if batch is not None:
            with _refused():
                batch.run("SAVEPOINT assay_write")
                try:
                    yield batch
                except BaseException:
                    with contextlib.suppress(Exception):
                        batch.run("ROLLBACK TO assay_write")
                        batch.run("RELEASE assay_write")
                    raise
                batch.run("RELEASE assay_write")
            return
        with _refused(), self._write_locks(), self._lite_transaction() as direct:
            yield direct

    @contextlib.contextmanager
    def _lite_transaction(self) -> Iterator[LiteDirect]:
        """One SQLite write transaction on a pooled sqlite3 connection (the caller holds the
        write locks): BEGIN IMMEDIATE, the block, COMMIT; ROLLBACK when the block or the COMMIT
        raises; the connection back to the pool either way."""
        raw = self.engine.raw_connection()
        try:
            direct = LiteDirect(raw.driver_connection, self.engine)
            direct.run("BEGIN IMMEDIATE")
            try:
                yield direct
                direct.run("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    direct.run("ROLLBACK")
                raise
        finally:
            raw.close()

    def write_batch(self, calls: Sequence[Callable[[], _T]]) -> list[BatchResult[_T]]:
        """SQLite group commit: run `calls` one after another in ONE write transaction (one
        BEGIN IMMEDIATE, one COMMIT, under the write locks), each in a savepoint of its own,
        so a call that raises leaves nothing behind and the others stand. Their
        `write_direct` blocks join the batch's transaction; any other write (`write`,
        `write_core`) inside a call raises `WouldBlock`, and that call, its savepoint rolled
        back, is answered `again` (to be run on its own, after). Nothing a call wrote is
        committed before the COMMIT of the whole batch returns: a caller must answer no one
        before this returns, and if the COMMIT fails this raises (every call's work is lost
        together, none was acknowledged). Raises `WouldBlock` before running anything when
        inside `no_wait()` another writer holds the store."""
        if self.dialect != "sqlite":
            raise UsageError("write_batch is for a SQLite store")
        if getattr(self._local, "batch", None) is not None:
            raise UsageError("write_batch cannot nest")
        out: list[BatchResult[_T]] = []
        with _refused(), self._write_locks(), self._lite_transaction() as direct:
            self._local.batch = direct
            try:
                for call in calls:
                    direct.run("SAVEPOINT assay_call")
                    try:
                        value = call()
                    except Exception as exc:
                        direct.run("ROLLBACK TO assay_call")
                        direct.run("RELEASE assay_call")
                        again = isinstance(exc, WouldBlock)
                        out.append(BatchResult(None, None if again else exc, again))
                    else:
                        direct.run("RELEASE assay_call")
                        out.append(BatchResult(value, None, False))
            finally:
                self._local.batch = None
        return out

    @contextlib.contextmanager
    def _write_locks(self) -> Iterator[None]:
        if self._lock is None:
            yield
            return
        if getattr(self._local, "batch", None) is not None:
            # a write of its own inside a batch (which holds the locks): the batch runs the
            # call again after, on its own
            raise WouldBlock("a write transaction of its own, inside a batch")
        wait = not getattr(self._local, "no_wait", False)
        if not self._lock.acquire(blocking=wait):
            raise WouldBlock("another writer of this process holds the store")
        try:
            if self._file_lock is not None and not self._file_lock.acquire(wait=wait):
                raise WouldBlock("another process is writing to the store")
            try:
                yield
            finally:
                if self._file_lock is not None:
                    self._file_lock.release()
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def no_wait(self) -> Iterator[None]:
        """Within this block (on this thread), a write transaction that would wait for another
        writer raises `WouldBlock` instead. The workbench runs its hot calls on SQLite directly
        on the event loop this way, where waiting would stall every request, and hands them to
        a thread when this raises: so a call run here must be safe to run again after
        `WouldBlock` (its earlier writes, if any, complete and idempotent). On PostgreSQL
        writers never queue here (the server's row locks order them), so nothing raises."""
        before = getattr(self._local, "no_wait", False)
        self._local.no_wait = True
        try:
            yield
        finally:
            self._local.no_wait = before

    def migrate(self) -> None:
        migrate(self.engine)

    def dispose(self) -> None:
        self.engine.dispose()
        if self._auto is not None:
            self._auto.dispose()
        if self._file_lock is not None:
            self._file_lock.close()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent; alembic loads only when needed)."""
    if schema_version(engine) == HEAD:
        return
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
        conn.commit()


def case_collisions(users: list[tuple[int, str]]) -> list[list[str]]:
    """Groups of account names that are one name regardless of letter case (`ANA`, `ana`):
    usernames are unique by `assay.workbench.auth.username_key`, so such a store must be
    repaired by hand before it can be upgraded."""
    from assay.workbench.models import username_key

    groups: dict[str, list[str]] = {}
    for _uid, name in sorted(users):
        groups.setdefault(username_key(name), []).append(name)
    return [names for _k, names in sorted(groups.items()) if len(names) > 1]


def collision_message(groups: list[list[str]]) -> str:
    listed = "; ".join(" and ".join(repr(n) for n in g) for g in groups)
    return (
        "the store has accounts whose names differ only by letter case: "
        f"{listed}. Usernames are now unique regardless of case, and accounts are never merged "
        "silently: rename one of each (UPDATE users SET username = ... WHERE id = ...) or delete "
        "it, then start again. Nothing was changed."
    )


def schema_version(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        row = conn.exec_driver_sql("SELECT version_num FROM alembic_version").first()
        return None if row is None else str(row[0])
