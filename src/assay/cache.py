"""A request cache for every call to a system or a model.

Keys are SHA-256 of canonical JSON of the request parts (system identity, query, as_of, k, ...).
Values are JSON. Storage is one SQLite file in WAL mode, safe for threads and processes, so a
rerun reproduces a run exactly without calling the system. The default location is
`$ASSAY_CACHE_DIR` or `.assay-cache/` in the working directory.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from assay._io import dumps_canonical, sha256_bytes

__all__ = ["RequestCache", "cache_key", "default_cache_dir"]


def default_cache_dir() -> Path:
    return Path(os.environ.get("ASSAY_CACHE_DIR", ".assay-cache"))


def cache_key(**parts: Any) -> str:
    """Stable key for a request: every part that changes the answer must be passed."""
    return sha256_bytes(dumps_canonical(parts).encode("utf-8"))


class RequestCache:
    """Persistent JSON key-value cache. `enabled=False` makes every lookup miss and stores nothing."""

    def __init__(
        self, path: str | Path | None = None, *, namespace: str = "default", enabled: bool = True
    ):
        self.enabled = enabled
        self.namespace = namespace
        self.path = Path(path) if path is not None else default_cache_dir() / "requests.sqlite"
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        if enabled:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = self._con()
            con.execute(
                "CREATE TABLE IF NOT EXISTS cache (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
                " PRIMARY KEY (ns, key))"
            )
            con.commit()

    def _con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30.0)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con = con
        return con

    def get(self, key: str) -> Any | None:
        if not self.enabled:
            self.misses += 1
            return None
        row = (
            self._con()
            .execute("SELECT value FROM cache WHERE ns = ? AND key = ?", (self.namespace, key))
            .fetchone()
        )
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        if not self.enabled:
            return
        con = self._con()
        con.execute(
            "INSERT OR REPLACE INTO cache (ns, key, value) VALUES (?, ?, ?)",
            (self.namespace, key, json.dumps(value, ensure_ascii=False)),
        )
        con.commit()

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None
