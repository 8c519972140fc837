"""The per-user index of comparison ledgers by dataset content.

One JSON line per (ledger, content of its dataset): ``{"content_hash", "ledger", "identity"}``,
the dataset file's SHA-256 and its content identity (`assay._io.jsonl_identity`: what the file
says, whatever its spelling). A dataset renamed, copied or re-encoded finds its original's
ledger here (`indexed`), and the file hashes that spell its content (`spellings`), so its
ledger continues the original's count and a comparison the original made is a repeat
(`assay.compare.ledger.append_ledger`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from assay._io import json_loads

__all__ = ["identity_of", "indexed", "ledger_index_path", "locked", "register", "spellings"]


def ledger_index_path() -> Path:
    """The per-user index of ledgers by dataset content: ``$ASSAY_LEDGER_INDEX``, else
    ``$XDG_DATA_HOME/assay/ledgers.jsonl`` (``~/.local/share/assay/ledgers.jsonl``)."""
    env = os.environ.get("ASSAY_LEDGER_INDEX")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "assay" / "ledgers.jsonl"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[IO[str]]:
    """``path`` opened for reading and appending under an exclusive ``flock``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield fh
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _lines() -> list[dict[str, Any]]:
    path = ledger_index_path()
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            rec = json_loads(line)
            if isinstance(rec, dict):
                out.append(rec)
    return out


def indexed(content_hash: str, identity: str | None = None) -> list[Path]:
    """The ledgers indexed under this file hash or this content identity."""
    return [
        Path(str(rec.get("ledger")))
        for rec in _lines()
        if rec.get("content_hash") == content_hash
        or (identity is not None and rec.get("identity") == identity)
    ]


def identity_of(content_hash: str, compute: Callable[[], str]) -> str:
    """The content identity of the file with this hash: as indexed, else ``compute()``."""
    for rec in _lines():
        if rec.get("content_hash") == content_hash and isinstance(rec.get("identity"), str):
            return str(rec["identity"])
    return compute()


def spellings(identity: str) -> set[str]:
    """The file hashes indexed with this content identity (the files that say the same)."""
    return {
        str(rec["content_hash"])
        for rec in _lines()
        if rec.get("identity") == identity and isinstance(rec.get("content_hash"), str)
    }


def register(content_hash: str, ledger: Path, identity: Callable[[], str] | None) -> None:
    """Index ``ledger`` under its dataset's file hash (and content identity), once."""
    if ledger.resolve() in {p.resolve() for p in indexed(content_hash)}:
        return
    rec = {"content_hash": content_hash, "ledger": str(ledger.resolve())}
    if identity is not None:  # computed once per new content of the ledger's dataset
        rec["identity"] = identity()
    line = json.dumps(rec) + "\n"
    with locked(ledger_index_path()) as fh:
        fh.seek(0, os.SEEK_END)
        fh.write(line)
