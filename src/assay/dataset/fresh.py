"""Sealed fresh samples: new entries labelled blind, measured once, then retired into the main set.

A regression set that every change is tested against slowly stops being a fair judge (see the
comparison ledger). A fresh sample restores an honest measurement: a file of new entries that no
one has tuned against. Its life:

1. ``seal``: the sample is registered, by content, in the fresh-sample *registry* (a small SQLite
   file, per user: ``$ASSAY_FRESH_REGISTRY``, else ``$XDG_DATA_HOME/assay/fresh.sqlite``, else
   ``~/.local/share/assay/fresh.sqlite``). The manifest beside the sample gets a ``"fresh"``
   block too, for people to read, but the registry is what counts.
2. Every path that scores a sealed sample or reads its per-entry results (``score``,
   ``compare``, ``gate``, ``check``, ``trec export``, ``attribute``, ``export``, ``report`` and
   the explorer rendering a bundle of it, and the library functions behind them) records a use
   through `using`, under the registry's lock. The first use is the honest one. A second use is refused unless
   ``allow_reuse=True`` (``--allow-reuse``), and an allowed reuse is recorded as such.
3. ``retire``: the entries are merged into the main set with provenance (``split`` set to the
   sample's name, ``added`` set to the sealing date where absent, ``source`` filled where absent)
   and the sample is closed; the sample file itself is refused from then on, the main set that
   now holds its entries is not.

What gets around it, and what does not. The registry recognises a sample by the SHA-256 of its
bytes *and* by the content of each of its entries (`content_key`: the normalised query and the
evidence, ids left out), so a copy, a rename of the file or of the entries' ids, a reordering, a
manifest edit, or pasting the sealed entries into another dataset is still a use of the sample.
An entry edited a little is still the sealed entry (`near_duplicate`): its evidence shares at
least 60% of its tokens (token-set Jaccard over the pages, chunk ids and quote words it names)
and 60% of the pages, documents and chunk ids, and its normalised query is within
``max(2, 5% of its length)`` character edits of the sealed query, or is once the words that only
ask or thank are set aside from both ("Please tell me: ... Thanks"). Measured with
``bench/bench_fresh_match.py`` on FinanceBench's 75 questions and the synthetic room's 376 golden
entries (seed 7): no pair of distinct entries matches (0 of 2,775 and 0 of 70,482 pairs; "KEST
2023 total rev" and "KEST 2024 total rev" share half their pages and stay apart), and every
one-character query edit (1,500 and 7,520 tried), one-token evidence edit (75 and 328) and query
wrapped in asking words (75 and 376) is recognised. The registry cannot see another user's or another machine's
registry (point ``ASSAY_FRESH_REGISTRY`` at a shared path for a team), and a sample whose
questions and evidence are rewritten is a new sample.

Concurrency: uses are recorded in one ``BEGIN IMMEDIATE`` transaction (SQLite's file lock), so
processes racing for the first use get exactly one first use; the others are refused.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._io import sha256_file
from assay._stopwords import ASKING_FILLER
from assay._text import normalise_query
from assay.dataset.io import (
    Dataset,
    load_dataset,
    load_manifest,
    manifest_path,
    save_manifest,
    write_dataset,
)
from assay.dataset.schema import Anchor, Entry, Source
from assay.dataset.versions import bump_version
from assay.errors import DataError, Problem, UsageError

__all__ = [
    "EVIDENCE_JACCARD",
    "LOCATION_JACCARD",
    "QUERY_EDITS",
    "FreshReuseError",
    "FreshSession",
    "FreshUse",
    "SealedSample",
    "content_key",
    "evidence_tokens",
    "fresh_name",
    "fresh_status",
    "near_duplicate",
    "record_use",
    "registry_path",
    "retire",
    "seal",
    "sealed_samples",
    "uses",
    "using",
]


class FreshReuseError(UsageError):
    """A sealed fresh sample was about to be used again without ``allow_reuse``."""


@dataclass(frozen=True)
class FreshUse:
    """The outcome of recording one use of a fresh sample."""

    name: str
    uses: int
    reused: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uses": self.uses,
            "reused": self.reused,
            "message": self.message,
        }


@dataclass(frozen=True)
class SealedSample:
    """One registered sample: its content hash, name, status and how many times it was used."""

    content_hash: str
    name: str
    status: str
    sealed_at: str
    n_entries: int
    uses: int
    retired_into: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "content_hash": self.content_hash,
            "name": self.name,
            "status": self.status,
            "sealed_at": self.sealed_at,
            "n_entries": self.n_entries,
            "uses": self.uses,
            "retired_into": self.retired_into,
        }


def fresh_name(path: str | Path) -> str:
    p = Path(path)
    return p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


# -------------------------------------------------------------------------------- the registry


def registry_path() -> Path:
    """Where the fresh-sample registry lives (see the module docstring)."""
    env = os.environ.get("ASSAY_FRESH_REGISTRY")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "assay" / "fresh.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    content_hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    sealed_at TEXT NOT NULL,
    n_entries INTEGER NOT NULL,
    retired_into TEXT
);
CREATE TABLE IF NOT EXISTS fingerprints (
    fingerprint TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (fingerprint, content_hash)
);
CREATE TABLE IF NOT EXISTS contents (
    content_hash TEXT NOT NULL,
    query TEXT NOT NULL,
    evidence TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS uses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT NOT NULL,
    at TEXT NOT NULL,
    command TEXT NOT NULL,
    path TEXT,
    runs TEXT NOT NULL,
    reuse INTEGER NOT NULL
);
"""


@contextlib.contextmanager
def _registry(*, write: bool) -> Iterator[sqlite3.Connection | None]:
    """A connection in one transaction (``BEGIN IMMEDIATE`` when writing: the registry's lock).

    Yields None when reading and no registry exists yet (nothing was ever sealed here).
    """
    path = registry_path()
    if not write and not path.exists():
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    try:
        con.execute("PRAGMA busy_timeout = 60000")
        if write:
            con.executescript(_SCHEMA)
            con.execute("BEGIN IMMEDIATE")
        else:
            con.execute("BEGIN")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # an empty registry file: nothing sealed
            return
        raise UsageError(f"fresh-sample registry {path}: {exc}") from exc
    finally:
        con.close()


_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_PLACES = ("page:", "chunk:", "doc:")

EVIDENCE_JACCARD = 0.6
"""Near-duplicate entries share at least this share of their evidence tokens (token-set Jaccard)."""
LOCATION_JACCARD = 0.6
"""... at least this share of the pages, documents and chunk ids they name ..."""
QUERY_EDITS = 0.05
"""... and their normalised queries are within max(2, this share of the longer one) edits."""


def _fingerprint(e: Entry) -> str:
    """The fingerprint of registries written before content keys (id + normalised query)."""
    q = _SPACE.sub(" ", e.query.strip().lower())
    return hashlib.sha256(json.dumps([e.id, q]).encode()).hexdigest()


def _query(e: Entry) -> str:
    return normalise_query(e.query)


def evidence_tokens(e: Entry) -> frozenset[str]:
    """What an entry's evidence names: each page (``page:doc#n``, or ``doc:doc`` for an anchor
    without a page), each chunk id (``chunk:id``) and the words of each quote, case folded."""
    return frozenset(_evidence_names(e, quotes=True))


def content_key(e: Entry, tokens: frozenset[str] | None = None) -> str:
    """An entry by what it asks and where its answer lies, not by its id: SHA-256 of the
    normalised query and the sorted evidence tokens (``tokens``, when already read)."""
    tokens = evidence_tokens(e) if tokens is None else tokens
    blob = json.dumps(["content/2", _query(e), sorted(tokens)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _content_key_v1(e: Entry, tokens: frozenset[str]) -> str:
    """The content key of registries sealed before the shared query normaliser (the query case
    folded and whitespace collapsed, nothing else)."""
    old = " ".join(e.query.casefold().split())
    blob = json.dumps(["content/1", old, sorted(tokens)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _within(a: str, b: str, limit: int) -> bool:
    """Whether the Levenshtein distance of `a` and `b` is at most `limit` (banded, early exit)."""
    if abs(len(a) - len(b)) > limit:
        return False
    if a == b:
        return True
    big = limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        lo, hi = max(1, i - limit), min(len(b), i + limit)
        cur = [i] + [big] * len(b)
        for j in range(lo, hi + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != b[j - 1]))
        if min(cur[lo - 1 : hi + 1]) > limit:
            return False
        prev = cur
    return prev[-1] <= limit


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def _located(tokens: frozenset[str]) -> frozenset[str]:
    return frozenset(t for t in tokens if t.startswith(_PLACES))


def _places(e: Entry) -> set[str]:
    """The pages, documents and chunk ids an entry's evidence names: ``_located`` of its
    `evidence_tokens` (a quote's words hold no colon), without reading the quotes."""
    return _evidence_names(e, quotes=False)


def _evidence_names(e: Entry, *, quotes: bool) -> set[str]:
    out: set[str] = set()
    for path in e.evidence_paths:
        for piece in path:
            for alt in piece:
                if isinstance(alt, str):
                    out.add(f"chunk:{alt}")
                    continue
                out.add(_anchor_place(alt))
                if quotes:
                    out.update(_WORD.findall(alt.quote.casefold()))
    return out


def _anchor_place(alt: Anchor) -> str:
    return f"page:{alt.doc}#{alt.page}" if alt.page is not None else f"doc:{alt.doc}"


def _shared_places(
    e: Entry, chunk_ids: frozenset[str], index: Mapping[str, list[int]]
) -> list[str]:
    """The places of an entry (`_places`) that some sealed entry names too (``index``; its
    chunk ids bare in ``chunk_ids``), or ``["\x00none"]`` for an entry without evidence. A
    chunk id is looked up as it is: no place is spelt for one no sealed entry names."""
    out: list[str] = []
    named = False
    for path in e.evidence_paths:
        for piece in path:
            for alt in piece:
                named = True
                if isinstance(alt, str):
                    if alt in chunk_ids:
                        out.append(f"chunk:{alt}")
                elif (place := _anchor_place(alt)) in index:
                    out.append(place)
    return out if named else ["\x00none"]


def near_duplicate(
    query_a: str, evidence_a: frozenset[str], query_b: str, evidence_b: frozenset[str]
) -> bool:
    """Whether two entries (normalised query, `evidence_tokens`) are the same entry edited a
    little: evidence Jaccard >= `EVIDENCE_JACCARD` (two entries without evidence agree) and the
    queries within ``max(2, QUERY_EDITS x the longer length)`` character edits; and at least
    `LOCATION_JACCARD` of the pages, documents and chunk ids they name in common. Queries that
    differ by more are compared again without the words that only ask or thank, so a query
    wrapped in "Please tell me: ... Thanks" is still the sealed one."""
    if _jaccard(evidence_a, evidence_b) < EVIDENCE_JACCARD:
        return False
    if _jaccard(_located(evidence_a), _located(evidence_b)) < LOCATION_JACCARD:
        return False  # the same words on other pages: another year's filing, another company
    limit = max(2, int(QUERY_EDITS * max(len(query_a), len(query_b))))
    if _within(query_a, query_b, limit):
        return True
    core_a, core_b = _asked(query_a), _asked(query_b)
    if not core_a or not core_b or (core_a, core_b) == (query_a, query_b):
        return False
    return _within(core_a, core_b, max(2, int(QUERY_EDITS * max(len(core_a), len(core_b)))))


def _asked(query: str) -> str:
    """A normalised query without the words that only ask or thank (`ASKING_FILLER`): "please
    tell me fern net leverage thanks" asks "fern net leverage"."""
    return " ".join(w for w in query.split() if w not in ASKING_FILLER)


def _hashes_of(con: sqlite3.Connection, fingerprints: Sequence[str]) -> set[str]:
    """Content hashes of the registered samples holding any of these entry fingerprints."""
    out: set[str] = set()
    for i in range(0, len(fingerprints), 500):
        part = list(fingerprints[i : i + 500])
        marks = ",".join("?" * len(part))
        sql = f"SELECT DISTINCT content_hash FROM fingerprints WHERE fingerprint IN ({marks})"
        out.update(r[0] for r in con.execute(sql, part))
    return out


def _keyed_only(con: sqlite3.Connection) -> bool:
    """Whether a sealed sample is known by its entries' fingerprints alone (sealed before the
    registry kept each entry's query and evidence). When every sealed sample has its contents,
    `_near` finds any entry whose content key is a sealed entry's (the same query and evidence
    are a near-duplicate at distance 0), and nothing need be fingerprinted."""
    has = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'contents'")
    if has.fetchone() is None:
        return True
    bare = con.execute(
        "SELECT 1 FROM samples s WHERE s.status = 'sealed' AND NOT EXISTS "
        "(SELECT 1 FROM contents c WHERE c.content_hash = s.content_hash) LIMIT 1"
    )
    return bare.fetchone() is not None


def _near(
    con: sqlite3.Connection,
    entries: Sequence[Entry],
    tokens: Sequence[frozenset[str]] | None = None,
) -> set[str]:
    """Content hashes of sealed (not retired) samples holding a near-duplicate of any entry
    (``tokens``: each entry's `evidence_tokens` when already read; else an entry's are read only
    when it shares a place with a sealed entry)."""
    has = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'contents'")
    if has.fetchone() is None:  # a registry written before near-duplicate matching
        return set()
    rows = con.execute(
        "SELECT c.content_hash, c.query, c.evidence FROM contents c JOIN samples s "
        "ON s.content_hash = c.content_hash WHERE s.status = 'sealed'"
    ).fetchall()
    if not rows:
        return set()
    sealed = [(h, q, frozenset(json.loads(ev))) for h, q, ev in rows]
    # candidates share a page, chunk or document with the sealed entry (or both have no evidence)
    index: dict[str, list[int]] = {}
    for i, (_, _, sealed_ev) in enumerate(sealed):
        for tok in _located(sealed_ev) or ["\x00none"]:
            index.setdefault(tok, []).append(i)
    chunk_ids = frozenset(t.removeprefix("chunk:") for t in index if t.startswith("chunk:"))
    found: set[str] = set()
    if tokens is not None and len(tokens) != len(entries):
        raise ValueError("one evidence token set per entry")
    for k, e in enumerate(entries):
        keys = _shared_places(e, chunk_ids, index)
        seen: set[int] = set()
        q: str | None = None  # the normalised query, once a sealed entry shares a place
        mine: frozenset[str] | None = None  # and its evidence tokens
        for tok in keys:
            for i in index.get(tok, ()):
                if i in seen or sealed[i][0] in found:
                    continue
                seen.add(i)
                q = _query(e) if q is None else q
                if mine is None:
                    mine = evidence_tokens(e) if tokens is None else tokens[k]
                if near_duplicate(q, mine, sealed[i][1], sealed[i][2]):
                    found.add(sealed[i][0])
    return found


def _sample(con: sqlite3.Connection, content_hash: str) -> SealedSample | None:
    row = con.execute(
        "SELECT content_hash, name, status, sealed_at, n_entries, retired_into FROM samples "
        "WHERE content_hash = ?",
        (content_hash,),
    ).fetchone()
    if row is None:
        return None
    n = con.execute("SELECT COUNT(*) FROM uses WHERE content_hash = ?", (content_hash,)).fetchone()
    return SealedSample(row[0], row[1], row[2], row[3], int(row[4]), int(n[0]), row[5])


def sealed_samples() -> list[SealedSample]:
    """Every sample in the registry, oldest first."""
    with _registry(write=False) as con:
        if con is None:
            return []
        hashes = [r[0] for r in con.execute("SELECT content_hash FROM samples ORDER BY sealed_at")]
        return [s for h in hashes if (s := _sample(con, h)) is not None]


def uses(path: str | Path) -> list[dict[str, Any]]:
    """The recorded uses of the sample at ``path`` (by content), oldest first."""
    h = sha256_file(path)
    with _registry(write=False) as con:
        if con is None:
            return []
        return [
            {
                "at": r[0],
                "command": r[1],
                "path": r[2],
                "runs": json.loads(r[3]),
                "reuse": bool(r[4]),
            }
            for r in con.execute(
                "SELECT at, command, path, runs, reuse FROM uses WHERE content_hash = ? ORDER BY seq",
                (h,),
            )
        ]


def fresh_status(path: str | Path) -> dict[str, Any] | None:
    """The ``"fresh"`` block of the sample's manifest, or None when the file was never sealed."""
    block = load_manifest(path).get("fresh")
    if block is None:
        return None
    if not isinstance(block, dict):
        raise DataError("must be a JSON object", file=manifest_path(path), field="fresh")
    return block


def seal(path: str | Path, *, force: bool = False) -> dict[str, Any]:
    """Validate the sample and register it by content.

    Sealing content that is already registered is refused (``force`` re-seals a sample that was
    never used; a used sample can never be re-sealed: its first look has been spent).
    """
    path = Path(path)
    ds = load_dataset(path)  # raises DataError naming every bad line
    if not ds.entries:
        raise DataError("a fresh sample needs at least one entry", file=path)
    content_hash = sha256_file(path)
    name = fresh_name(path)
    sealed_at = _now()
    with _registry(write=True) as con:
        assert con is not None
        old = _sample(con, content_hash)
        if old is not None:
            if old.uses or old.status != "sealed" or not force:
                raise UsageError(
                    f"{path} is already {old.status} as fresh sample {old.name} (sealed "
                    f"{old.sealed_at}, used {old.uses} time(s)); "
                    + (
                        "pass --force to seal it again"
                        if not old.uses and old.status == "sealed"
                        else "a sample that was used or retired cannot be sealed again; "
                        "seal a new sample"
                    )
                )
            con.execute("DELETE FROM samples WHERE content_hash = ?", (content_hash,))
            con.execute("DELETE FROM fingerprints WHERE content_hash = ?", (content_hash,))
            con.execute("DELETE FROM contents WHERE content_hash = ?", (content_hash,))
        con.execute(
            "INSERT INTO samples VALUES (?, ?, 'sealed', ?, ?, NULL)",
            (content_hash, name, sealed_at, len(ds.entries)),
        )
        con.executemany(
            "INSERT OR IGNORE INTO fingerprints VALUES (?, ?)",
            [(content_key(e), content_hash) for e in ds.entries],
        )
        con.executemany(
            "INSERT INTO contents VALUES (?, ?, ?)",
            [(content_hash, _query(e), json.dumps(sorted(evidence_tokens(e)))) for e in ds.entries],
        )
    block = {
        "status": "sealed",
        "name": name,
        "sealed_at": sealed_at,
        "content_hash": content_hash,
        "n_entries": len(ds.entries),
        "categories": {c: sum(e.category == c for e in ds.entries) for c in ds.categories()},
        "registry": str(registry_path()),
    }
    manifest = load_manifest(path)
    manifest["fresh"] = block
    save_manifest(path, manifest)
    return block


# ------------------------------------------------------------------------------------ uses

# Samples whose use is already recorded by an enclosing operation (compare scores two runs;
# that is one use of the sample, not two).
_ACTIVE: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "assay_fresh_active", default=frozenset()
)


@dataclass
class _Subject:
    """What a use is checked against, read once: the entries, the file's SHA-256 (the bytes
    `load_dataset` hashed as it read them), its path and manifest (None: not a file)."""

    entries: list[Entry]
    file_hash: str | None
    path: str | None
    manifest: dict[str, Any] | None
    _fps: list[str] | None = None
    _tokens: list[frozenset[str]] | None = None

    @property
    def tokens(self) -> list[frozenset[str]]:
        """Each entry's `evidence_tokens`, read once."""
        if self._tokens is None:
            self._tokens = [evidence_tokens(e) for e in self.entries]
        return self._tokens

    @property
    def fingerprints(self) -> list[str]:
        """Content keys, and the older content keys and id + query fingerprints older registries
        hold."""
        if self._fps is None:
            pairs = list(zip(self.entries, self.tokens, strict=True))
            keys = [content_key(e, t) for e, t in pairs]
            old = [_content_key_v1(e, t) for e, t in pairs]
            self._fps = keys + old + [_fingerprint(e) for e in self.entries]
        return self._fps


def _subject(dataset: Dataset | Sequence[Entry] | str | Path) -> _Subject:
    if isinstance(dataset, (str, Path)):
        dataset = load_dataset(dataset)
    if isinstance(dataset, Dataset):
        on_disk = bool(dataset.path) and Path(str(dataset.path)).is_file()
        return _Subject(
            dataset.entries,
            dataset.content_hash if on_disk else None,
            dataset.path if on_disk else None,
            dataset.manifest if on_disk else None,
        )
    return _Subject(list(dataset), None, None, None)


def _check_manifest(subject: _Subject) -> None:
    """A sample edited after sealing is refused: it is not the sample that was sealed."""
    if subject.path is None or subject.manifest is None:
        return
    block = subject.manifest.get("fresh")
    if not isinstance(block, dict):
        return
    sealed_hash = block.get("content_hash")
    if sealed_hash and subject.file_hash and subject.file_hash != sealed_hash:
        name = str(block.get("name") or fresh_name(subject.path))
        raise DataError(
            Problem(
                subject.path,
                None,
                None,
                f"fresh sample {name} changed since it was sealed (hash {str(sealed_hash)[:12]}); "
                "a sealed sample is measured as sealed. Seal a new sample instead",
            )
        )


def record_use(
    dataset: Dataset | Sequence[Entry] | str | Path,
    *,
    command: str,
    allow_reuse: bool = False,
    runs: list[str] | None = None,
    reuse: bool | None = None,
) -> FreshUse | None:
    """Record a use of every sealed sample ``dataset`` draws on; None when it draws on none.

    Raises `FreshReuseError` for a second use unless ``allow_reuse`` (which is recorded as
    such); `UsageError` when the dataset *is* a retired sample; `DataError` when a sealed sample
    file changed since sealing. ``reuse`` is the older name of ``allow_reuse``.
    """
    if reuse is not None:
        allow_reuse = allow_reuse or reuse
    return _record(_subject(dataset), command=command, allow_reuse=allow_reuse, runs=runs)[0]


def _record(
    subject: _Subject,
    *,
    command: str,
    allow_reuse: bool,
    runs: list[str] | None,
    dry_run: bool = False,
) -> tuple[FreshUse | None, frozenset[str]]:
    """Check (and unless ``dry_run`` record) a use, in one transaction of the registry (its
    write lock when recording). Nothing is fingerprinted when the registry holds no sample."""
    _check_manifest(subject)
    file_hash, path = subject.file_hash, subject.path
    active = _ACTIVE.get()
    with _registry(write=not dry_run) as con:
        if con is None or con.execute("SELECT 1 FROM samples LIMIT 1").fetchone() is None:
            return None, frozenset()
        hashes: set[str] = set()
        if file_hash is not None and _sample(con, file_hash) is not None:
            hashes.add(file_hash)
        if _keyed_only(con):
            hashes.update(_hashes_of(con, subject.fingerprints))
        hashes.update(_near(con, subject.entries, subject._tokens))  # read when needed
        samples = [s for h in sorted(hashes) if (s := _sample(con, h)) is not None]
        # the sample file itself, once retired, is closed; a set that merged it is not
        for s in samples:
            if s.status == "retired" and s.content_hash == file_hash:
                raise UsageError(
                    f"fresh sample {s.name} was retired into {s.retired_into}; "
                    "measure against the main set instead"
                )
        samples = [s for s in samples if s.status == "sealed" and s.content_hash not in active]
        if not samples:
            return None, frozenset()
        for s in samples:
            if s.uses >= 1 and not allow_reuse:
                first = con.execute(
                    "SELECT at, command FROM uses WHERE content_hash = ? ORDER BY seq LIMIT 1",
                    (s.content_hash,),
                ).fetchone()
                raise FreshReuseError(
                    f"fresh sample {s.name} was already used {s.uses} time(s) (first: {first[0]}, "
                    f"{first[1]}); a second look is no longer a blind measurement. Pass "
                    "--allow-reuse to proceed anyway (it will be recorded as a reuse)."
                )
        for s in samples:
            if dry_run:
                break
            con.execute(
                "INSERT INTO uses (content_hash, at, command, path, runs, reuse) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (s.content_hash, _now(), command, path, json.dumps(runs or []), int(s.uses >= 1)),
            )
    s = samples[0]
    n = s.uses + 1
    others = f" (and {len(samples) - 1} other sample(s))" if len(samples) > 1 else ""
    if n == 1:
        message = f"fresh sample {s.name}{others}: first use recorded"
    else:
        message = (
            f"WARNING fresh sample {s.name}{others}: use {n}, recorded as a reuse "
            "(--allow-reuse); it is no longer a blind measurement"
        )
    return FreshUse(s.name, n, n > 1, message), frozenset(x.content_hash for x in samples)


@dataclass
class FreshSession:
    """What `using` recorded: ``use`` is set when the ``with`` block completed."""

    use: FreshUse | None = None


@contextlib.contextmanager
def using(
    dataset: Dataset | Sequence[Entry] | str | Path,
    *,
    command: str,
    allow_reuse: bool = False,
    runs: list[str] | None = None,
) -> Iterator[FreshSession]:
    """One use of any sealed sample ``dataset`` draws on, for the whole ``with`` block.

    On entry a second use without ``allow_reuse`` is refused before any work is done. The use is
    recorded when the block completes (a failed scoring spends nothing), under the registry's
    lock, where the check is made again: of several processes racing for the first use exactly
    one gets it and the others are refused. Library functions that score wrap their work in it;
    nested blocks for the same sample (compare scores two runs) record nothing more.
    """
    session = FreshSession()
    subject = _subject(dataset)
    _, hashes = _record(subject, command=command, allow_reuse=allow_reuse, runs=runs, dry_run=True)
    if not hashes:
        yield session
        return
    token = _ACTIVE.set(_ACTIVE.get() | hashes)
    try:
        yield session
    finally:
        _ACTIVE.reset(token)
    session.use, _ = _record(subject, command=command, allow_reuse=allow_reuse, runs=runs)


def retire(
    path: str | Path,
    *,
    into: str | Path,
    source: Source | None = None,
    split: str | None = None,
    failed: Mapping[str, int | None] | Sequence[str] = (),
    failed_file: str | None = None,
) -> Dataset:
    """Merge the sealed sample into the main set with provenance and close it.

    Each merged entry gets ``split`` (default: the sample's name), ``added`` (the sealing date
    when absent) and ``source`` (when absent and ``source`` is given). Ids already in the main set
    are an error (nothing is written). ``failed`` names the entries the system failed in the
    sample's one use (id -> line of `failed_file`, or just ids): each is marked with the flag
    ``fresh_failure`` and ``metadata.fresh_failed``; an id the sample lacks is an error. The
    changelog line counts the entries marked failed and those that came from production
    failures (``metadata.failure_rules``, as `assay logs failures` drafts them). A main set with
    a named version gets the next one (`assay.dataset.versions.bump_version`): its content
    changed.
    """
    path, into = Path(path), Path(into)
    content_hash = sha256_file(path)
    block = fresh_status(path) or {}
    with _registry(write=False) as con:
        registered = _sample(con, content_hash) if con is not None else None
    if registered is None:
        if block.get("content_hash") and block.get("content_hash") != content_hash:
            raise DataError("fresh sample changed since it was sealed", file=path)
        raise UsageError(f"{path} is not a sealed fresh sample (run `assay fresh seal` first)")
    if registered.status == "retired":
        raise UsageError(f"{path} was already retired into {registered.retired_into}")
    sample = load_dataset(path)
    main = load_dataset(into)
    clash = [e.id for e in sample.entries if e.id in main.by_id]
    if clash:
        raise DataError(
            [
                Problem(str(path), sample.lines.get(i), "id", f"id {i!r} already exists in {into}")
                for i in clash
            ]
        )
    failed_at = dict(failed) if isinstance(failed, Mapping) else dict.fromkeys(failed)
    unknown = [i for i in failed_at if i not in sample.by_id]
    if unknown:
        raise DataError(
            [
                Problem(failed_file or "<failed>", failed_at[i], "id", f"{i!r} is not in {path}")
                for i in unknown
            ]
        )
    name = registered.name
    sealed_on = dt.date.fromisoformat(registered.sealed_at[:10])
    merged = list(main.entries)
    for e in sample.entries:
        update: dict[str, Any] = {"split": split or name}
        if e.added is None:
            update["added"] = sealed_on
        if e.source is None and source is not None:
            update["source"] = source
        meta = dict(e.metadata)
        meta.setdefault("fresh_sample", name)
        if e.id in failed_at:
            meta["fresh_failed"] = True
            if "fresh_failure" not in e.flags:
                update["flags"] = [*e.flags, "fresh_failure"]
        update["metadata"] = meta
        merged.append(e.model_copy(update=update))
    from_failures = sum(1 for e in sample.entries if e.metadata.get("failure_rules"))
    named = main.manifest.get("version")
    out = write_dataset(
        into,
        merged,
        # the main set's content changes: a named version moves with it
        version=bump_version(str(named)) if named else None,
        changelog=f"retired fresh sample {name} ({len(sample.entries)} entries, "
        f"{registered.uses} use(s), content {content_hash[:12]}"
        + (f"; {len(failed_at)} marked failed" if failed_at else "")
        + (f"; {from_failures} from production failures" if from_failures else "")
        + ")",
    )
    retired_at = _now()
    with _registry(write=True) as con:
        assert con is not None
        con.execute(
            "UPDATE samples SET status = 'retired', retired_into = ? WHERE content_hash = ?",
            (str(into), content_hash),
        )
    manifest = load_manifest(path)
    manifest["fresh"] = block | {
        "status": "retired",
        "retired_at": retired_at,
        "retired_into": str(into),
    }
    save_manifest(path, manifest)
    return out
