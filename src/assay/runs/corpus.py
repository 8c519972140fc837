"""A run knows its corpus: which chunk table its hits come from, and a check that they do.

`assay run` records in the run's metadata the hash of the corpus the system searched
(``corpus_hash``: what the system declares, what an HTTP system's reply says, or ``--corpus-id``)
and, when the system says where its chunk table is, its location and hash (``chunks``:
``{"path", "hash"}``). Everything that resolves a run's gold reads it against *that run's own*
chunk table (`chunk_table_for`): an explicit table for the run (``--base-chunks`` /
``--cand-chunks``) first, then the table the run recorded (refused when the file there changed
since the run), then the shared ``--chunks``.

A run made on another index shows itself by hits its chunk table does not know: `unknown_hits`
counts them, and `check_unknown_hits` stops a comparison when more than `UNKNOWN_SHARE` of a
run's hits are unknown (a share, not zero: a chunk dropped by a re-parse is not another index).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import sha256_file
from assay.corpus.chunks import ChunkTable, load_chunks
from assay.errors import DataError, Problem
from assay.runs.model import Run

__all__ = [
    "UNKNOWN_SHARE",
    "RunTable",
    "UnknownHits",
    "check_unknown_hits",
    "chunk_table_for",
    "recorded_chunks",
    "unknown_hits",
]

UNKNOWN_SHARE = 0.05
"""The share of a run's hits its chunk table may not know before a comparison stops."""


@dataclass(frozen=True)
class RunTable:
    """The chunk table a run's gold is resolved against, and where it came from: ``given``
    (for this run), ``recorded`` (the run's metadata), ``shared`` (--chunks) or ``none``."""

    table: ChunkTable | None
    source: str
    path: str | None = None

    def describe(self) -> str:
        if self.table is None:
            return "no chunk table"
        where = self.path or self.table.path or "?"
        return f"{where} ({self.source}, {self.table.version})"


def recorded_chunks(run: Run) -> tuple[str | None, str | None]:
    """(path, hash) of the chunk table a run's metadata records; None where it does not say."""
    rec: Any = run.meta.get("chunks")
    if not isinstance(rec, dict):
        return None, None
    path, digest = rec.get("path"), rec.get("hash")
    return (str(path) if path else None), (str(digest) if digest else None)


def chunk_table_for(
    run: Run,
    *,
    given: ChunkTable | str | Path | None = None,
    shared: ChunkTable | str | Path | None = None,
) -> RunTable:
    """The chunk table to resolve `run`'s gold against: `given` (this run's, explicitly), else
    the table the run recorded when it still holds what it held then, else `shared`."""
    if given is not None:
        table = given if isinstance(given, ChunkTable) else load_chunks(given)
        return RunTable(table, "given", table.path)
    path, digest = recorded_chunks(run)
    if path is not None and Path(path).is_file():
        now = sha256_file(path)[:16]
        if digest is not None and now != digest:
            raise DataError(
                Problem(
                    run.path or "<run>",
                    None,
                    "chunks",
                    f"the run was made on the chunk table {path} (hash {digest}), which has "
                    f"changed since (hash {now}): its chunk ids may now hold other text. Pass the "
                    "table the run was made on (--base-chunks / --cand-chunks), or run again",
                )
            )
        return RunTable(load_chunks(path), "recorded", path)
    if shared is not None:
        table = shared if isinstance(shared, ChunkTable) else load_chunks(shared)
        return RunTable(table, "shared", table.path)
    return RunTable(None, "none")


@dataclass(frozen=True)
class UnknownHits:
    """How many of a run's hits its chunk table does not know."""

    hits: int
    total: int
    distinct: int
    examples: tuple[str, ...]

    @property
    def share(self) -> float:
        return self.hits / self.total if self.total else 0.0


def unknown_hits(run: Run, table: ChunkTable) -> UnknownHits:
    """Count the hits of `run` whose chunk id `table` lacks (every occurrence, and distinct)."""
    unknown = np.fromiter((cid not in table for cid in run.vocab), dtype=bool, count=len(run.vocab))
    hits = int(unknown[run.codes].sum()) if len(run.codes) else 0
    ids = sorted(run.vocab[i] for i in np.flatnonzero(unknown))
    return UnknownHits(hits, len(run.codes), len(ids), tuple(ids[:5]))


def check_unknown_hits(
    run: Run, table: RunTable, *, label: str, max_share: float = UNKNOWN_SHARE
) -> UnknownHits | None:
    """Stop (DataError, exit 2) when more than `max_share` of `run`'s hits are unknown to its
    chunk table: the run was made on another index, and its misses would read as a regression.
    Returns the count (None without a table)."""
    if table.table is None:
        return None
    found = unknown_hits(run, table.table)
    if found.share > max_share:
        raise DataError(
            Problem(
                run.path or f"<{label} run>",
                None,
                "retrieved",
                f"{found.share:.0%} of the {label} run's hits ({found.hits} of {found.total}; "
                f"{found.distinct} distinct ids, e.g. {', '.join(found.examples)}) are not in "
                f"its chunk table {table.describe()}: the run was made on another index. "
                f"Give the table it was made on (--{label.split()[0][:4]}-chunks), or run the "
                f"system again on this one (at most {max_share:.0%} may be unknown)",
            )
        )
    return found
