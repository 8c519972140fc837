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
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from assay.errors import AssayError, UsageError


class StoreRefused(AssayError):
    """The store refused a write for its data (a value too long, a character it cannot hold):
    said in the database's own first line, never with the statement or its parameters."""


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
        lines = str(exc.orig).strip().splitlines() or [type(exc.orig).__name__]
        raise StoreRefused(f"the store refused the write: {lines[0]}") from None


__all__ = [
    "Database",
    "StoreRefused",
    "WouldBlock",
    "case_collisions",
    "collision_message",
    "migrate",
    "normalize_url",
]

_MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0004"


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
            # they commit, which only claims do (see fast_claims); labels use `self.engine`
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
    def fast_claims(self) -> Iterator[Connection]:
        """PostgreSQL only: a connection for single-statement claims, in autocommit and with
        `synchronous_commit = off` (a commit does not wait for the WAL flush: a claim lost in a
        crash only frees its slot). The pool is the quick reads', never a label's."""
        if self._auto is None:
            raise UsageError("fast_claims is for a PostgreSQL store")
        with self._auto.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def durable_statements(self) -> Iterator[Connection]:
        """PostgreSQL only: a connection in autocommit whose commits are durable (the store's
        own `synchronous_commit`, unlike `fast_claims`): each statement is its own transaction,
        committed and flushed to the WAL before it returns, so a write done in one statement
        costs one round trip instead of BEGIN, the statement and COMMIT. The hot path's
        submissions use it (see `assay.workbench.service.labels.submit_label`). A write the
        store refuses for its data raises `StoreRefused`, as in `write`."""
        if self.dialect != "postgresql":
            raise UsageError("durable_statements is for a PostgreSQL store")
        # the isolation level is a client-side flag of psycopg: no round trip to set or reset
        with _refused(), self.engine.connect() as conn:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")

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
    def _write_locks(self) -> Iterator[None]:
        if self._lock is None:
            yield
            return
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
