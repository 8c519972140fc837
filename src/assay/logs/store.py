"""The log store: one SQLite file holding every ingested query once.

Table ``queries`` has one row per distinct record (primary key: `LogRecord.key`, the SHA-256 of
the normalised record), with what the report needs as columns (period keys, hit count, top
score, abstention, feedback, latency, category and its confidence) and the hits as JSON.
Table ``meta`` records the store format and the classifier that assigned the categories;
table ``ingests`` one row per ingest (files, lines read, added, duplicates, bad).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.errors import DataError, Problem

__all__ = ["STORE_VERSION", "connect", "open_store"]

STORE_VERSION = "assay-logs/1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queries (
    key TEXT NOT NULL UNIQUE,
    ts TEXT NOT NULL,
    month TEXT NOT NULL,
    week TEXT NOT NULL,
    as_of TEXT NOT NULL,
    query TEXT NOT NULL,
    norm TEXT NOT NULL,
    retrieved TEXT NOT NULL,
    n_hits INTEGER NOT NULL,
    top_score REAL,
    answer TEXT,
    abstained INTEGER,
    citations TEXT,
    feedback TEXT,
    session TEXT,
    latency_ms REAL,
    system TEXT,
    category TEXT NOT NULL,
    confidence REAL NOT NULL,
    reason TEXT NOT NULL,
    origin TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS queries_month ON queries(month);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ingests (
    at TEXT NOT NULL, files TEXT NOT NULL, lines INTEGER NOT NULL, added INTEGER NOT NULL,
    duplicates INTEGER NOT NULL, bad INTEGER NOT NULL, skipped_spans INTEGER NOT NULL
);
"""

COLUMNS = (
    "key",
    "ts",
    "month",
    "week",
    "as_of",
    "query",
    "norm",
    "retrieved",
    "n_hits",
    "top_score",
    "answer",
    "abstained",
    "citations",
    "feedback",
    "session",
    "latency_ms",
    "system",
    "category",
    "confidence",
    "reason",
    "origin",
)


def open_store(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) a log store for writing."""
    con = sqlite3.connect(str(path), isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.executescript(_SCHEMA)
    con.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('store_version', ?)", (STORE_VERSION,)
    )
    return con


@contextmanager
def connect(path: str | Path) -> Iterator[sqlite3.Connection]:
    """Open an existing log store read-only; a missing file or a file that is not a store is a
    DataError naming it."""
    p = Path(path)
    if not p.is_file():
        raise DataError(
            Problem(str(p), None, None, "log store not found (run `assay logs ingest`)")
        )
    try:
        con = sqlite3.connect(f"file:{p.absolute()}?mode=ro", uri=True)
        (version,) = con.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
    except sqlite3.DatabaseError:
        raise DataError(
            Problem(str(p), None, None, "not an assay log store (run `assay logs ingest`)")
        ) from None
    if version != STORE_VERSION:
        con.close()
        raise DataError(
            Problem(str(p), None, None, f"log store format {version}, not {STORE_VERSION}")
        )
    try:
        yield con
    finally:
        con.close()
