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

from assay.corpus import ChunkTable, load_chunks
from assay.errors import DataError
from assay.runs.model import Run

__all__ = [
    "UNKNOWN_SHARE",
    "RunTable",
    "UnknownHits",
    "bind_run",
    "check_hit_content",
    "check_unknown_hits",
    "chunk_table_for",
    "hit_content",
    "recorded_chunks",
    "recorded_fingerprint",
    "unknown_hits",
]

UNKNOWN_SHARE = 0.05
"""The share of a run's hits its chunk table may not know before a comparison stops."""


@dataclass(frozen=True)
class RunTable:
    """The chunk table a run's gold is resolved against, and where it came from: ``given``
    (for this run), ``recorded`` (the run's metadata), ``shared`` (--chunks) or ``none``.

    ``binding`` says how far the table is known to be the run's own: ``bound`` (the run
    recorded this table and it still holds the same chunks), ``checked`` (the run recorded
    none, and the chunk text or content hashes its hits carry match this table), ``unbound``
    (the run recorded none and carries nothing to check it by), ``overridden`` (the run
    recorded another table, read against this one as asked by --allow-corpus-change), or
    ``none`` (no table)."""

    table: ChunkTable | None
    source: str
    path: str | None = None
    binding: str = "none"
    recorded: str | None = None  # the fingerprint (or, for older runs, file hash) recorded
    by_bytes: bool = False  # the run recorded its table's file hash only (no fingerprint)

    def describe(self) -> str:
        if self.table is None:
            return "no chunk table"
        where = self.path or self.table.path or "?"
        return f"{where} ({self.source}, {self.table.fingerprint})"

    def to_dict(self) -> dict[str, Any]:
        """What a result and the ledger record of the table a run was read against."""
        t = self.table
        where = self.path or (t.path if t is not None else None)
        return {
            "source": self.source,
            "file": Path(where).name if where else None,  # the name: results move between machines
            "fingerprint": t.fingerprint if t is not None else None,
            "hash": t.version if t is not None else None,
            "binding": self.binding,
            "recorded": self.recorded,
        }

    def notes(self, run: Run, label: str = "scored") -> list[str]:
        """Every line a result prints about this table: the run's binding (`note`) and a table
        written before content hashes (`ChunkTable.unaddressed_note`)."""
        out = [n for n in (self.note(label, run),) if n]
        if self.table is not None and (old := self.table.unaddressed_note()):
            out.append(old)
        return out

    def note(self, label: str, run: Run) -> str | None:
        """The line a result prints when the table is not known to be the run's own (files are
        named without their folders, so a result does not depend on where it was made)."""
        name = Path(run.path).name if run.path else f"the {label} run"
        t = self.table
        table = (
            "no table"
            if t is None
            else f"{Path(self.path or t.path or '?').name} ({t.fingerprint})"
        )
        if self.binding == "unbound" and self.table is not None:
            return (
                f"{name} is unbound: it recorded no chunk table and its hits carry no chunk "
                f"text or content hashes, so nothing checks that its ids mean the text of "
                f"{table}. Record the table when running (assay run), or write each "
                "hit's text or content_hash"
            )
        if self.binding == "bound" and self.by_bytes:
            return (
                f"{name} recorded its chunk table by file hash only (made before content "
                "fingerprints): it was checked by the file's bytes"
            )
        if self.binding == "overridden":
            return (
                f"{name} was made on chunk table {self.recorded} and was read against "
                f"{table} as asked (--allow-corpus-change)"
            )
        return None


def recorded_chunks(run: Run) -> tuple[str | None, str | None]:
    """(path, hash) of the chunk table a run's metadata records; None where it does not say."""
    rec: Any = run.meta.get("chunks")
    if not isinstance(rec, dict):
        return None, None
    path, digest = rec.get("path"), rec.get("hash")
    return (str(path) if path else None), (str(digest) if digest else None)


def recorded_fingerprint(run: Run) -> str | None:
    """The content fingerprint of the chunk table a run recorded (runs made before content
    fingerprints recorded only the file's hash: None)."""
    rec: Any = run.meta.get("chunks")
    fp = rec.get("fingerprint") if isinstance(rec, dict) else None
    return str(fp) if fp else None


def _load(table: ChunkTable | str | Path) -> ChunkTable:
    return table if isinstance(table, ChunkTable) else load_chunks(table)


def _differs(table: ChunkTable, fingerprint: str | None, digest: str | None) -> str | None:
    """What the run recorded when `table` is not it (its fingerprint, else its file hash)."""
    if fingerprint is not None:
        return fingerprint if table.fingerprint != fingerprint else None
    if digest is not None and table.version is not None:
        return digest if table.version != digest else None
    return None


def chunk_table_for(
    run: Run,
    *,
    given: ChunkTable | str | Path | RunTable | None = None,
    shared: ChunkTable | str | Path | None = None,
    allow_change: bool = False,
    flag: str = "--chunks",
) -> RunTable:
    """The chunk table to resolve `run`'s gold against: the table the run was made on, always.

    A run that recorded its table (`assay run` does) is read against it: from the recorded
    file, or from `given` (this run's table, named by `flag`) or `shared` (--chunks) when they
    hold the same chunks. A table given by hand whose content fingerprint differs from the one
    the run recorded (its file hash, for runs made before fingerprints) is refused
    (`DataError`, both fingerprints and both paths named) unless `allow_change`
    (--allow-corpus-change): the result is then ``overridden`` and says so. A recorded file
    that changed since is refused the same way. A run that recorded no table is read against
    `given`, else `shared`, checked by content where its hits carry chunk text or content
    hashes (`check_hit_content`: ``checked``), and otherwise ``unbound``: the caller says so.
    A `RunTable` (already bound) is returned as it is."""
    if isinstance(given, RunTable):
        return given
    path, digest = recorded_chunks(run)
    fp = recorded_fingerprint(run)
    recorded = fp or digest
    legacy = fp is None
    if recorded is None:
        for other, source in ((given, "given"), (shared, "shared")):
            if other is not None:
                t = _load(other)
                checked = check_hit_content(run, t, allow_change=allow_change)
                return RunTable(t, source, t.path, "checked" if checked else "unbound")
        return RunTable(None, "none")
    if given is not None:
        g = _load(given)
        if _differs(g, fp, digest) is None:
            return RunTable(g, "given", g.path, "bound", recorded, legacy)
        if not allow_change:
            raise _refuse(run, path, recorded, g, flag, legacy)
        return RunTable(g, "given", g.path, "overridden", recorded)
    if path is not None and Path(path).is_file():
        own = load_chunks(path)
        if _differs(own, fp, digest) is None:
            return RunTable(own, "recorded", path, "bound", recorded, legacy)
        if shared is not None:  # the file changed: --chunks may hold what it held
            t = _load(shared)
            if _differs(t, fp, digest) is None:
                return RunTable(t, "shared", t.path, "bound", recorded, legacy)
        if not allow_change:
            now = own.version if legacy else own.fingerprint
            raise DataError(
                f"the run was made on the chunk table {path} ({_what(fp, digest)}), which "
                f"has changed since ({_what(None if legacy else now, now)}): its chunk ids "
                "may now hold other text. Pass the table the run was made on (--chunks, "
                "or --base-chunks / --cand-chunks), or run again",
                file=run.path or "<run>",
                field="chunks",
            )
        return RunTable(own, "recorded", path, "overridden", recorded)
    if shared is not None:
        t = _load(shared)
        if _differs(t, fp, digest) is None:
            return RunTable(t, "shared", t.path, "bound", recorded, legacy)
        if not allow_change:
            raise _refuse(run, path, recorded, t, "--chunks", legacy)
        return RunTable(t, "shared", t.path, "overridden", recorded)
    return RunTable(None, "none", None, "none", recorded)


def _what(fp: str | None, digest: str | None) -> str:
    return f"fingerprint {fp}" if fp else f"file hash {digest}"


def _refuse(
    run: Run, path: str | None, recorded: str, table: ChunkTable, flag: str, legacy: bool
) -> DataError:
    what = "file hash" if legacy else "fingerprint"
    theirs = table.version if legacy else table.fingerprint
    return DataError(
        f"the run was made on the chunk table {path or '(path not recorded)'} ({what} "
        f"{recorded}), but {flag} gives {table.path or 'another table'} ({what} "
        f"{theirs}): another chunking or parse, whose ids name other text. "
        f"Drop {flag} to read the run against its own table, give the table it was made "
        "on, or pass --allow-corpus-change to read it against this one anyway",
        file=run.path or "<run>",
        field="chunks",
    )


def hit_content(run: Run) -> dict[str, tuple[str, str]]:
    """The chunk text or content hash a run's hits carry, by chunk id (``("text", text)`` or
    ``("hash", content_hash)``), read from the run's JSONL file; empty when they carry none
    (or the run has no JSONL file). A run whose reader saw no such field in the bytes it
    parsed (``Run.hit_content`` False) is not read again."""
    if run.hit_content is False:
        return {}
    if not run.path or not Path(run.path).is_file() or run.path.endswith(".parquet"):
        return {}
    data = Path(run.path).read_bytes()
    if b'"content_hash"' not in data and b'"text"' not in data:
        return {}
    import orjson

    out: dict[str, tuple[str, str]] = {}
    for raw in data.splitlines():
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # not JSONL (a TREC run), or a line the reader already named
        hits = obj.get("retrieved") if isinstance(obj, dict) else None
        for h in hits if isinstance(hits, list) else ():
            if not isinstance(h, dict) or not isinstance(h.get("chunk_id"), str):
                continue
            if isinstance(h.get("content_hash"), str):
                out.setdefault(h["chunk_id"], ("hash", h["content_hash"]))
            elif isinstance(h.get("text"), str):
                out.setdefault(h["chunk_id"], ("text", h["text"]))
    return out


def check_hit_content(run: Run, table: ChunkTable, *, allow_change: bool = False) -> bool:
    """Check the chunk text or content hashes a run's hits carry against `table`: True when
    there was something to check and it matched, False when the hits carry nothing; a
    mismatch is refused (`DataError`) unless `allow_change`. Text is compared with whitespace
    runs made one space (a system may re-flow it); a content hash must be equal."""
    carried = hit_content(run)
    if not carried:
        return False
    wrong: list[str] = []
    for cid, (kind, value) in carried.items():
        chunk = table.by_id.get(cid)
        if chunk is None:
            continue  # an unknown id: counted by `unknown_hits`
        if kind == "hash":
            same = value == chunk.content_hash or value == chunk.content_hash[: len(value)]
        else:
            same = " ".join(value.split()) == " ".join(chunk.text.split())
        if not same:
            wrong.append(cid)
    if wrong and not allow_change:
        raise DataError(
            f"{len(wrong)} of the {len(carried)} hits that carry chunk text or content "
            f"hashes hold other content than {table.path or 'the chunk table'} (fingerprint "
            f"{table.fingerprint}) gives their ids (e.g. {', '.join(sorted(wrong)[:5])}): "
            "the run was made on another chunking or parse. Give the table it was made on, "
            "or pass --allow-corpus-change to read it against this one anyway",
            file=run.path or "<run>",
            field="retrieved",
        )
    return True


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
    # the table's index asked at C speed (a chunk id, a string, is in it or not)
    known = np.fromiter(map(table.by_id.__contains__, run.vocab), dtype=bool, count=len(run.vocab))
    unknown = ~known
    hits = int(unknown[run.codes].sum()) if len(run.codes) else 0
    ids = sorted(run.vocab[i] for i in np.flatnonzero(unknown))
    return UnknownHits(hits, len(run.codes), len(ids), tuple(ids[:5]))


def check_unknown_hits(
    run: Run,
    table: RunTable,
    *,
    label: str,
    max_share: float = UNKNOWN_SHARE,
    flag: str | None = None,
) -> UnknownHits | None:
    """Stop (DataError, exit 2) when more than `max_share` of `run`'s hits are unknown to its
    chunk table: the run was made on another index, and its misses would read as a regression.
    Returns the count (None without a table)."""
    if table.table is None:
        return None
    found = unknown_hits(run, table.table)
    if found.share > max_share:
        raise DataError(
            f"{found.share:.0%} of the {label} run's hits ({found.hits} of {found.total}; "
            f"{found.distinct} distinct ids, e.g. {', '.join(found.examples)}) are not in "
            f"its chunk table {table.describe()}: the run was made on another index. "
            f"Give the table it was made on "
            f"({flag or f'--{label.split()[0][:4]}-chunks'}), or run the "
            f"system again on this one (at most {max_share:.0%} may be unknown)",
            file=run.path or f"<{label} run>",
            field="retrieved",
        )
    return found


def bind_run(
    run: Run,
    *,
    given: ChunkTable | str | Path | RunTable | None = None,
    shared: ChunkTable | str | Path | None = None,
    allow_change: bool = False,
    label: str = "scored",
    flag: str = "--chunks",
    max_share: float | None = None,
) -> RunTable:
    """The one place a run meets its chunk table: `chunk_table_for` (the table it was made on,
    a wrong one refused), then `check_unknown_hits` (a run whose hits its table does not know
    was made on another index; skipped when the table was overridden on purpose)."""
    if isinstance(given, RunTable):
        return given
    table = chunk_table_for(run, given=given, shared=shared, allow_change=allow_change, flag=flag)
    if table.binding != "overridden":
        share = UNKNOWN_SHARE if max_share is None else max_share
        check_unknown_hits(run, table, label=label, max_share=share, flag=flag)
    return table
