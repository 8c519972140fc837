"""The log store: a Parquet dataset partitioned by month, read and written with DuckDB.

A store is a folder::

    logs/                                   the path given as --db
      store.json                            format, classifier, one record per ingest (its parts)
      queries/month=2026-10/part-*.parquet  one row per distinct logged query (Hive layout)

The Parquet files are the durable format: any tool that reads Parquet (DuckDB, pandas, Spark,
Polars) reads the store as it is, e.g. ``SELECT * FROM read_parquet('logs/queries/*/*.parquet',
hive_partitioning = true)``. assay itself uses DuckDB, embedded (no server): `connect` opens an
in-memory DuckDB with a ``queries`` view over the files and a ``meta`` table, so the report,
the sample and the failures are SQL over the store.

Columns of the files (`COLUMNS`): ``key`` (the record's identity, see `assay.logs.ingest`),
``ts`` (TIMESTAMP, UTC), ``week`` (ISO week), ``as_of`` (DATE), ``query``, ``norm`` (the
normalised query), ``hits`` (JSON text: ``[{"chunk_id": ..., "score": ...}, ...]``, the score
null when none was logged), ``n_hits``, ``top_score``,
``answer``, ``abstained`` (the refusal check on the answer; null without one), ``citations``,
``feedback``, ``session``, ``latency_ms``, ``system``, ``category``, ``confidence``, ``method``
(how the category was found: golden, nearest, rule, none), ``reason``, ``origin`` (FILE:LINE
of the line it came from), ``seq`` (its position in its ingest); ``month`` is the partition.

The ``queries`` view of `connect` shows ``ts`` as ISO text (``2026-10-03T14:05:11Z``), ``as_of``
as ``YYYY-MM-DD`` and ``abstained`` as 0/1, as the report, the sample and the failures use them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay._io import json_loads, write_text_atomic
from assay.errors import DataError, Problem

__all__ = [
    "COLUMNS",
    "STORE_VERSION",
    "connect",
    "duckdb_connection",
    "missing_parts",
    "parquet_files",
    "read_manifest",
    "unreadable",
    "write_manifest",
]

STORE_VERSION = "assay-logs/2"
MANIFEST = "store.json"
QUERIES = "queries"

# name -> DuckDB type, in file order (``month`` is the partition)
COLUMNS: dict[str, str] = {
    "key": "VARCHAR",
    "ts": "TIMESTAMP",
    "week": "VARCHAR",
    "as_of": "DATE",
    "query": "VARCHAR",
    "norm": "VARCHAR",
    "hits": "VARCHAR",
    "n_hits": "INTEGER",
    "top_score": "DOUBLE",
    "answer": "VARCHAR",
    "abstained": "BOOLEAN",
    "citations": "VARCHAR[]",
    "feedback": "VARCHAR",
    "session": "VARCHAR",
    "latency_ms": "DOUBLE",
    "system": "VARCHAR",
    "category": "VARCHAR",
    "confidence": "DOUBLE",
    "method": "VARCHAR",
    "reason": "VARCHAR",
    "origin": "VARCHAR",
    "seq": "BIGINT",
}

# the ``queries`` view: the files' columns as the report, sample and failures read them
_VIEW = """
SELECT key,
       strftime(ts, '%Y-%m-%dT%H:%M:%S')
         || CASE WHEN microsecond(ts) % 1000000 = 0 THEN ''
                 ELSE printf('.%06d', microsecond(ts) % 1000000) END || 'Z' AS ts,
       ts AS ts_utc, month, week, strftime(as_of, '%Y-%m-%d') AS as_of, query, norm, hits,
       n_hits, top_score, answer, abstained::INTEGER AS abstained, citations, feedback, session,
       latency_ms, system, category, confidence, method, reason, origin
FROM {source}
"""


def duckdb_connection(*, threads: int | None = None, memory: str | None = None) -> Any:
    """An in-memory DuckDB for the store's work (the `duckdb` package: a core dependency).
    `memory` caps what DuckDB holds before it spills to its temporary files."""
    import duckdb

    con = duckdb.connect(":memory:")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    if memory is not None:
        con.execute(f"SET memory_limit = '{memory}'")
    con.execute("SET preserve_insertion_order = true")
    return con


def parquet_files(store: str | Path, months: list[str] | None = None) -> list[str]:
    """The store's Parquet files (of `months` when given), in a stable order."""
    root = Path(store) / QUERIES
    if not root.is_dir():
        return []
    out: list[str] = []
    for part in sorted(root.iterdir()):
        if not part.is_dir() or not part.name.startswith("month="):
            continue
        if months is not None and part.name[len("month=") :] not in months:
            continue
        out.extend(str(f) for f in sorted(part.glob("*.parquet")))
    damaged = [Problem(f, None, None, why) for f in out if (why := _not_parquet(f)) is not None]
    if damaged:
        raise DataError(damaged)
    return out


def _not_parquet(path: str) -> str | None:
    """Why a store's file is not a whole Parquet file (None when it is one): Parquet starts and
    ends with ``PAR1``; a file cut short (a full disk, a copy stopped) or of another kind has
    not, and DuckDB's error on it was an "internal error" quoting the SQL."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            size = fh.seek(0, os.SEEK_END)
            if size >= 12:
                fh.seek(-4, os.SEEK_END)
            tail = fh.read(4)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if size < 12 or head != b"PAR1" or tail != b"PAR1":
        return (
            f"damaged: not a whole Parquet file ({size:,} bytes); move it out of the store "
            "(its queries are lost: ingest their logs again)"
        )
    return None


def read_manifest(store: str | Path) -> dict[str, Any]:
    """store.json, or a DataError naming the path when the folder is not a store."""
    p = Path(store)
    m = p / MANIFEST
    if not p.exists():
        raise DataError("log store not found (run `assay logs ingest`)", file=p)
    if not p.is_dir():
        raise DataError(
            (
                "a file, not a log store (a folder); a store of an older assay was one SQLite "
                "file: ingest its logs again into a folder"
            ),
            file=p,
        )
    if not m.exists():
        others = foreign_entries(p)
        if others:
            listed = ", ".join(others[:5]) + (
                f" and {len(others) - 5} more" if len(others) > 5 else ""
            )
            raise DataError(
                (
                    f"not an assay log store: no {MANIFEST}, and it holds {listed}, which no "
                    "ingest writes (give `assay logs ingest` an empty or new folder)"
                ),
                file=p,
            )
        raise DataError(
            (
                f"not an assay log store yet: no {MANIFEST} (an ingest into it was stopped "
                "before it first committed); `assay logs ingest` into it again repairs it"
            ),
            file=p,
        )
    try:
        data = json_loads(m.read_text(encoding="utf-8"), m)
    except (OSError, ValueError) as exc:
        raise DataError(f"the store's record cannot be read: {exc}", file=m) from None
    if not isinstance(data, dict) or data.get("format") != STORE_VERSION:
        got = data.get("format") if isinstance(data, dict) else None
        raise DataError(f"log store format {got}, not {STORE_VERSION}", file=p)
    ingests, classifier = data.get("ingests", []), data.get("classifier")
    bad = (
        "ingests"
        if not isinstance(ingests, list) or not all(isinstance(i, dict) for i in ingests)
        else "classifier"
        if classifier is not None and not isinstance(classifier, dict)
        else None
    )
    if bad is not None:
        raise DataError(
            f"the store's record is damaged: `{bad}` is "
            f"{'a list of objects' if bad == 'ingests' else 'an object'} in a store, not "
            f"{json.dumps(data.get(bad))[:80]}",
            file=m,
            field=bad,
        )
    return data


STAGING = ".staging-"
ALIVE = ".alive"


def foreign_entries(store: Path) -> list[str]:
    """What a store folder holds that no ingest writes: anything but store.json, ``.lock``,
    staging folders and ``queries/month=*/`` folders of Parquet files (sorted, relative)."""
    out: list[str] = []
    for entry in sorted(store.iterdir()):
        name = entry.name
        if name in (MANIFEST, ".lock") and not entry.is_dir():
            continue
        if name.startswith(STAGING) and entry.is_dir() and not entry.is_symlink():
            continue
        if name == QUERIES and entry.is_dir() and not entry.is_symlink():
            for part in sorted(entry.iterdir()):
                if not (part.is_dir() and part.name.startswith("month=")):
                    out.append(f"{QUERIES}/{part.name}")
                    continue
                out.extend(
                    f"{QUERIES}/{part.name}/{f.name}"
                    for f in sorted(part.iterdir())
                    if not (f.is_file() and f.name.endswith((".parquet", ".parquet.part")))
                )
            continue
        out.append(name + ("/" if entry.is_dir() else ""))
    return out


def sweep_staging(store: Path) -> list[str]:
    """Remove the staging folders of ingests that are no longer running (killed: their
    ``.alive`` lock is free, or was never taken); returns their names."""
    import fcntl
    import shutil

    gone: list[str] = []
    for folder in sorted(store.glob(STAGING + "*")):
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            fd = os.open(folder / ALIVE, os.O_RDWR)
        except FileNotFoundError:
            fd = None
        except OSError:
            continue
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a running ingest's
            finally:
                os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        gone.append(folder.name)
    return gone


@contextlib.contextmanager
def alive(staging: Path) -> Iterator[None]:
    """Mark `staging` as a running ingest's (an exclusive lock on its ``.alive`` for as long as
    the ingest runs: a killed process drops it), so `sweep_staging` leaves it alone."""
    import fcntl

    fd = os.open(staging / ALIVE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_manifest(store: str | Path, data: dict[str, Any]) -> None:
    write_text_atomic(Path(store) / MANIFEST, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _empty() -> str:
    cols = ", ".join(f"NULL::{t} AS {c}" for c, t in COLUMNS.items())
    return f"(SELECT {cols}, NULL::VARCHAR AS month WHERE false)"


def source_sql(files: list[str], *, filename: bool = False) -> str:
    """A FROM clause over `files` (Hive-partitioned by month), or an empty relation; `filename`
    adds each row's file as a ``filename`` column (not for an empty relation)."""
    if not files:
        return _empty()
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    extra = ", filename = true" if filename else ""
    return (
        f"read_parquet([{listed}], hive_partitioning = true, "
        f"hive_types = {{'month': VARCHAR}}{extra})"
    )


PARTS = "parts"
"""An ingest's record in store.json lists the Parquet files it wrote (relative to the store)."""


def missing_parts(store: str | Path, manifest: dict[str, Any]) -> list[Problem]:
    """The parts store.json lists that are gone (deleted, moved out), one problem each: their
    queries are lost, and a report over what is left would undercount without a word."""
    out: list[Problem] = []
    for ing in manifest.get("ingests", []):
        for rel in ing.get(PARTS, []) if isinstance(ing.get(PARTS), list) else []:
            if isinstance(rel, str) and not (Path(store) / rel).is_file():
                out.append(
                    Problem(
                        str(Path(store) / rel),
                        None,
                        None,
                        f"missing: store.json lists this part (written by the ingest of "
                        f"{ing.get('at', '?')}) and it is gone, with its queries; `assay logs "
                        "ingest` their logs again (it drops the part from the record)",
                    )
                )
    return out


def unreadable(files: list[str], exc: Exception, store: str | Path) -> DataError:
    """The DataError for DuckDB's failure `exc` reading the store's `files`: each file that does
    not read whole on its own (a Parquet file damaged inside, its magic bytes intact) named,
    else the store with DuckDB's first line (never the SQL it ran)."""
    import duckdb

    con = duckdb_connection(memory="256MB")
    bad: list[Problem] = []
    try:
        for f in files:
            try:
                con.execute("SELECT * FROM read_parquet(?)", [f]).fetchall()
            except duckdb.Error as err:
                why = str(err).split("\n", 1)[0].rstrip(".")
                bad.append(
                    Problem(
                        f,
                        None,
                        None,
                        f"damaged: {why}; move it out of the store (its queries are lost: "
                        "ingest their logs again)",
                    )
                )
    finally:
        con.close()
    if not bad:
        first = str(exc).split("\n", 1)[0]
        bad.append(Problem(str(store), None, None, f"the log store cannot be read: {first}"))
    return DataError(bad)


@contextlib.contextmanager
def connect(store: str | Path) -> Iterator[Any]:
    """Open a store read-only: an in-memory DuckDB with a ``queries`` view over its Parquet files
    and a ``meta(key, value)`` table (``classifier``, ``store_version``); a missing folder or one
    that is not a store is a DataError naming it, and so is a part store.json lists that is
    gone, or a part DuckDB cannot read (the error names the file, not the SQL)."""
    import duckdb

    manifest = read_manifest(store)
    gone = missing_parts(store, manifest)
    if gone:
        raise DataError(gone)
    files = parquet_files(store)
    con = duckdb_connection(memory="512MB")
    try:
        con.execute(f"CREATE VIEW queries AS {_VIEW.format(source=source_sql(files))}")
        con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
        con.execute(
            "INSERT INTO meta VALUES ('store_version', ?), ('classifier', ?)",
            [STORE_VERSION, json.dumps(manifest.get("classifier"))],
        )
        yield con
    except duckdb.Error as exc:
        raise unreadable(files, exc, store) from None
    finally:
        con.close()


@contextlib.contextmanager
def locked(store: Path) -> Iterator[None]:
    """One writer at a time: an exclusive lock on ``<store>/.lock`` while an ingest commits."""
    import fcntl

    store.mkdir(parents=True, exist_ok=True)
    fd = os.open(store / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
