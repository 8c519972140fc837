"""A request cache for every call to a system or a model.

Keys are SHA-256 of canonical JSON of the request parts (system identity, corpus hash, query,
as_of, k, ...). Values are JSON. Each entry also keeps its provenance, the parts in readable form
(which system, which corpus, which query, when), so `assay cache ls` can say what is in the cache
and `assay cache clear --system ...` can drop one system's replies. Storage is one SQLite file in
WAL mode, safe for threads and processes, so a rerun reproduces a run exactly without calling
the system. The default location is `$ASSAY_CACHE_DIR` or `.assay-cache/` in the working
directory.

The cache sits at the ground floor beside `_io` rather than under the runner: the runner, the
LLM judge and the LLM answerer of the filings pipeline all keep their calls in it (in separate
namespaces).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._io import dumps_canonical, sha256_bytes
from assay.errors import UsageError
from assay.report import ReportMixin, Tabular

__all__ = [
    "CacheGroup",
    "CacheListing",
    "RequestCache",
    "cache_key",
    "clear_cache",
    "default_cache_dir",
    "list_cache",
]


def default_cache_dir() -> Path:
    return Path(os.environ.get("ASSAY_CACHE_DIR", ".assay-cache"))


def default_cache_path(cache_dir: str | Path | None = None) -> Path:
    return Path(cache_dir if cache_dir is not None else default_cache_dir()) / "requests.sqlite"


def cache_key(**parts: Any) -> str:
    """Stable key for a request: every part that changes the answer must be passed."""
    return sha256_bytes(dumps_canonical(parts).encode("utf-8"))


_COLUMNS = {
    "system": "TEXT",  # short hash of the system identity (None: not a system call)
    "label": "TEXT",  # the system's spec, for people
    "provenance": "TEXT",  # JSON: system identity, corpus, query, as_of, k, ...
    "created": "TEXT",  # ISO time the entry was written
}


class RequestCache:
    """Persistent JSON key-value cache. `enabled=False` makes every lookup miss and stores nothing."""

    def __init__(
        self, path: str | Path | None = None, *, namespace: str = "default", enabled: bool = True
    ):
        self.enabled = enabled
        self.namespace = namespace
        self.path = Path(path) if path is not None else default_cache_path()
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
            have = {row[1] for row in con.execute("PRAGMA table_info(cache)")}
            for col, kind in _COLUMNS.items():
                if col not in have:  # a cache written by an older assay
                    con.execute(f"ALTER TABLE cache ADD COLUMN {col} {kind}")
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

    def put(self, key: str, value: Any, *, provenance: Mapping[str, Any] | None = None) -> None:
        """Store `value` under `key`; `provenance` says what produced it (its ``system`` and
        ``spec`` keys are kept in their own columns, for listing and clearing by system)."""
        if not self.enabled:
            return
        prov = dict(provenance) if provenance is not None else None
        con = self._con()
        con.execute(
            "INSERT OR REPLACE INTO cache (ns, key, value, system, label, provenance, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self.namespace,
                key,
                json.dumps(value, ensure_ascii=False),
                None if prov is None else prov.get("system"),
                None if prov is None else prov.get("spec"),
                None if prov is None else dumps_canonical(prov),
                dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            ),
        )
        con.commit()

    def provenance(self, key: str) -> dict[str, Any] | None:
        """The provenance stored with `key` (None when absent or stored without one)."""
        if not self.enabled:
            return None
        row = (
            self._con()
            .execute("SELECT provenance FROM cache WHERE ns = ? AND key = ?", (self.namespace, key))
            .fetchone()
        )
        if row is None or row[0] is None:
            return None
        out: dict[str, Any] = json.loads(row[0])
        return out

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


# ---------------------------------------------------------------- listing and clearing


@dataclass(frozen=True)
class CacheGroup:
    """The entries of one namespace written by one system."""

    namespace: str
    system: str | None  # identity hash; None for entries without provenance (judge calls, ...)
    label: str | None
    entries: int
    first: str | None
    last: str | None
    corpus: str | None


@dataclass
class CacheListing(ReportMixin):
    """What a request cache holds, grouped by namespace and system."""

    path: str
    groups: list[CacheGroup]
    size_bytes: int

    @property
    def entries(self) -> int:
        return sum(g.entries for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "entries": self.entries,
            "size_bytes": self.size_bytes,
            "groups": [g.__dict__ for g in self.groups],
        }

    def tabular(self) -> Tabular:
        rows = [
            [
                g.namespace,
                g.label or "-",
                g.system or "(no provenance)",
                g.corpus or "-",
                str(g.entries),
                g.last or "-",
            ]
            for g in self.groups
        ]
        return Tabular(
            title=f"request cache {self.path}",
            header=["namespace", "system", "identity", "corpus", "entries", "last written"],
            rows=rows,
            footer=[f"{self.entries} entries, {self.size_bytes / 1e6:.1f} MB"],
            emphasis=set(),
        )


def _open_existing(path: Path) -> sqlite3.Connection | None:
    if path.parent.exists() and not path.parent.is_dir():
        raise UsageError(f"{path.parent}: the cache folder is a file, not a folder")
    if path.is_dir():
        raise UsageError(f"{path}: is a directory, not a cache file")
    if not path.exists():
        return None
    RequestCache(path)  # brings an older file's columns up to date
    return sqlite3.connect(path, timeout=30.0)


def list_cache(path: str | Path | None = None) -> CacheListing:
    """Group the entries of the cache at `path` (default: the default cache) by system."""
    p = Path(path) if path is not None else default_cache_path()
    con = _open_existing(p)
    groups: list[CacheGroup] = []
    if con is not None:
        try:
            rows = con.execute(
                "SELECT ns, system, label, COUNT(*), MIN(created), MAX(created),"
                " MAX(json_extract(provenance, '$.corpus'))"
                " FROM cache GROUP BY ns, system, label ORDER BY ns, label, system"
            ).fetchall()
        finally:
            con.close()
        groups = [CacheGroup(*r) for r in rows]
    size = sum(f.stat().st_size for f in p.parent.glob(p.name + "*") if f.is_file())
    return CacheListing(str(p), groups, size)


def clear_cache(
    path: str | Path | None = None,
    *,
    system: str | None = None,
    namespace: str | None = None,
) -> int:
    """Delete entries (all of them, or those of one `system`, matched by identity hash prefix
    or by spec, and/or one `namespace`); returns how many were deleted."""
    p = Path(path) if path is not None else default_cache_path()
    con = _open_existing(p)
    if con is None:
        return 0
    where: list[str] = []
    args: list[str] = []
    if system is not None:
        where.append("(system LIKE ? OR label = ?)")
        args += [system + "%", system]
    if namespace is not None:
        where.append("ns = ?")
        args.append(namespace)
    sql = "DELETE FROM cache" + (" WHERE " + " AND ".join(where) if where else "")
    try:
        n = con.execute(sql, args).rowcount
        con.commit()
        if not where:
            con.execute("VACUUM")
    finally:
        con.close()
    return int(n)
