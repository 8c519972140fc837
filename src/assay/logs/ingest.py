"""`ingest`: stream log files into the store, each record once, bad lines counted and skipped.

A log is not a dataset: one bad line must not stop a month. Each bad line is reported as
FILE:LINE: field: message and skipped; the ingest goes on. It refuses (DataError, nothing
written) only when a file is missing or nothing at all could be read. Ingesting a line twice
stores it once (the store's key is the hash of the normalised record). Every record gets its
traffic category from the classifier (`assay.logs.classify`) and, when it logged an answer,
whether the answer abstains (`assay.judge.detect_refusal`, the refusal check the answer checks use).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import sqlite3
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import orjson

from assay.errors import DataError, Problem
from assay.executors import Executor, imap, parse_executor
from assay.logs.classify import CLASSIFIER_VERSION, Classifier, golden_pairs
from assay.logs.model import (
    LogRecord,
    ReadStats,
    _is_whole_document,
    _read,
    _read_lines,
    normalize_query,
)
from assay.logs.store import COLUMNS, open_store
from assay.report import ReportMixin, Tabular

__all__ = ["IngestReport", "ingest_logs", "record_row"]

_BATCH = 5000


@dataclass
class IngestReport(ReportMixin):
    """What an ingest did: per file, lines read, records added, duplicates, bad lines."""

    db: str
    files: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    classifier: str = CLASSIFIER_VERSION
    golden: str | None = None
    total_in_store: int = 0

    def total(self, key: str) -> int:
        return sum(int(f[key]) for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "files": self.files,
            "lines": self.total("lines"),
            "added": self.total("added"),
            "duplicates": self.total("duplicates"),
            "bad": self.total("bad"),
            "skipped_spans": self.total("skipped_spans"),
            "problems": [str(p) for p in self.problems],
            "seconds": self.seconds,
            "classifier": self.classifier,
            "golden": self.golden,
            "total_in_store": self.total_in_store,
        }

    def tabular(self) -> Tabular:
        rows = [
            [
                f["file"],
                str(f["lines"]),
                str(f["added"]),
                str(f["duplicates"]),
                str(f["bad"]),
                str(f["skipped_spans"]),
            ]
            for f in self.files
        ]
        footer = [str(p) for p in self.problems[:20]]
        if len(self.problems) > 20:
            footer.append(f"... and {self.total('bad') - 20} more bad lines")
        footer.append(
            f"{self.total('bad')} bad line(s) skipped; {self.total_in_store} queries in "
            f"{self.db}; {self.seconds:.1f}s"
        )
        return Tabular(
            "logs ingest",
            ["file", "lines", "added", "duplicates", "bad (skipped)", "other spans"],
            rows,
            footer,
        )


def _iso_week(d: dt.date) -> str:
    y, w, _ = d.isocalendar()
    return f"{y}-W{w:02d}"


@lru_cache(maxsize=100_000)
def _refused(answer: str) -> int:
    from assay.judge.refusal import detect_refusal

    return int(detect_refusal(answer).refused)


def record_row(rec: LogRecord, classifier: Classifier, origin: str) -> tuple[Any, ...]:
    """The store row of one record (columns in `assay.logs.store.COLUMNS` order)."""
    norm = normalize_query(rec.query)
    c = classifier.classify(rec.query, norm=norm)
    day = rec.ts.date()
    abstained = None if rec.answer is None else _refused(rec.answer)
    hits = rec.hits_json()
    return (
        rec.key(hits),
        rec.ts.isoformat().replace("+00:00", "Z"),
        f"{day.year:04d}-{day.month:02d}",
        _iso_week(day),
        rec.as_of.isoformat(),
        rec.query,
        norm,
        hits,
        len(rec.retrieved),
        rec.top_score,
        rec.answer,
        abstained,
        None if rec.citations is None else json.dumps(list(rec.citations), ensure_ascii=False),
        rec.feedback,
        rec.session,
        rec.latency_ms,
        rec.system,
        c.category,
        c.confidence,
        c.reason,
        origin,
    )


_KNOWN = frozenset(
    (
        "ts",
        "query",
        "as_of",
        "retrieved",
        "answer",
        "citations",
        "feedback",
        "session",
        "latency_ms",
        "system",
    )
)
_UTC_SECOND = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_encode_str: Callable[[str], str] = json.encoder.encode_basestring
_CACHE_MAX = 500_000


class _FastRows:
    """The store row of a plain log line, built straight from the parsed JSON object.

    It takes only the common shape -- an object of the known fields, ``ts`` as
    ``YYYY-MM-DDTHH:MM:SSZ``, hits with a string id and a float score (or bare ids), latency a
    float -- and returns None for anything else, which then goes through `LogRecord` and
    `record_row` (the path that validates and names what is wrong). What it returns is exactly
    what `record_row(parse_log_line(obj), ...)` returns (tests/logs/test_ingest_fast.py checks);
    it skips building the record, re-serialising the hits through the json module, and
    normalising and classifying a query it has seen before (traffic repeats queries).
    """

    def __init__(self, classifier: Classifier, name: str):
        self.classifier = classifier
        self.name = name
        self._queries: dict[str, tuple[str, str, float, str]] = {}
        self._weeks: dict[str, str] = {}
        self._dates: dict[str, str] = {}

    def __call__(self, obj: dict[str, Any], lineno: int) -> tuple[Any, ...] | None:
        if not _KNOWN.issuperset(obj):
            return None
        ts = obj.get("ts")
        if type(ts) is not str or len(ts) != 20 or not _UTC_SECOND.fullmatch(ts):
            return None
        q = obj.get("query")
        if type(q) is not str:
            return None
        q = q.strip()
        if not q:
            return None
        day = ts[:10]
        week = self._weeks.get(day)
        if week is None:
            try:
                dt.datetime.fromisoformat(ts[:19])
            except ValueError:
                return None
            week = _iso_week(dt.date.fromisoformat(day))
            self._weeks[day] = week
        else:
            try:
                dt.time.fromisoformat(ts[11:19])
            except ValueError:
                return None
        as_of = obj.get("as_of")
        if as_of is None:
            as_of = day
        else:
            if type(as_of) is not str:
                return None
            iso = self._dates.get(as_of)
            if iso is None:
                try:
                    iso = dt.date.fromisoformat(as_of[:10]).isoformat()
                except ValueError:
                    return None
                if len(self._dates) < _CACHE_MAX:
                    self._dates[as_of] = iso
            as_of = iso
        raw = obj.get("retrieved")
        if raw is None:
            hits, n_hits, top = "[]", 0, None
        elif type(raw) is not list:
            return None
        else:
            got = _hits_json(raw)
            if got is None:
                return None
            hits, n_hits, top = got
        answer = obj.get("answer")
        session = obj.get("session")
        system = obj.get("system")
        if (
            (answer is not None and type(answer) is not str)
            or (session is not None and type(session) is not str)
            or (system is not None and type(system) is not str)
        ):
            return None
        fb = obj.get("feedback")
        if fb is not None and fb != "up" and fb != "down":
            return None
        lat = obj.get("latency_ms")
        if lat is not None and (type(lat) is not float or not math.isfinite(lat) or lat < 0):
            return None
        cits = obj.get("citations")
        cits_key = cits_row = None
        if cits is not None:
            if type(cits) is not list or not all(type(c) is str for c in cits):
                return None
            cits_key = json.dumps(cits)
            cits_row = json.dumps(cits, ensure_ascii=False)
        known = self._queries.get(q)
        if known is None:
            norm = normalize_query(q)
            c = self.classifier.classify(q, norm=norm)
            known = (norm, c.category, c.confidence, c.reason)
            if len(self._queries) < _CACHE_MAX:
                self._queries[q] = known
        ts_iso = ts[:19] + "+00:00"
        key = hashlib.sha256(
            "\x1e".join(
                (
                    ts_iso,
                    q,
                    as_of,
                    hits,
                    "\x00" if answer is None else answer,
                    "\x00" if cits_key is None else cits_key,
                    fb or "\x00",
                    "\x00" if session is None else session,
                    "\x00" if lat is None else repr(lat),
                    "\x00" if system is None else system,
                )
            ).encode("utf-8", "surrogatepass")
        ).hexdigest()[:32]
        return (
            key,
            ts[:19] + "Z",
            ts[:7],
            week,
            as_of,
            q,
            known[0],
            hits,
            n_hits,
            top,
            answer,
            None if answer is None else _refused(answer),
            cits_row,
            fb,
            session,
            lat,
            system,
            known[1],
            known[2],
            known[3],
            f"{self.name}:{lineno}",
        )


def _hits_json(raw: list[Any]) -> tuple[str, int, float | None] | None:
    """(hits as `LogRecord.hits_json` writes them, how many, the top score) of a ``retrieved``
    list, or None when a hit is not a non-empty string id or ``{chunk_id, finite float score}``.

    orjson writes a float exactly as ``repr`` (which `json.dumps` uses) does when its magnitude is
    0 or in [1e-4, 1e16), and a string exactly as ``json.dumps(ensure_ascii=False)`` does; outside
    that range, or with a string orjson cannot encode, the hits are written one by one."""
    if not raw:
        return "[]", 0, None
    try:
        ids = [h["chunk_id"] for h in raw]
        scores = [h["score"] for h in raw]
    except (TypeError, KeyError):
        ids = scores = []
    if (
        ids
        and set(map(type, ids)) == {str}
        and set(map(type, scores)) == {float}
        and all(ids)
        and math.isfinite(sum(scores))
    ):
        lo, hi = min(scores), max(scores)
        if lo >= 1e-4 and hi < 1e16:
            try:
                return orjson.dumps(list(zip(ids, scores, strict=True))).decode(), len(ids), hi
            except orjson.JSONEncodeError:
                pass
    parts: list[str] = []
    top: float | None = None
    for h in raw:
        if type(h) is dict:
            cid = h.get("chunk_id")
            sc = h.get("score")
            if type(cid) is not str or not cid or type(sc) is not float:
                return None
            if not math.isfinite(sc):
                return None
            parts.append(f"[{_encode_str(cid)},{sc!r}]")
            if top is None or sc > top:
                top = sc
        elif type(h) is str and h:
            parts.append(f"[{_encode_str(h)},null]")
        else:
            return None
    return "[" + ",".join(parts) + "]", len(parts), top


def _open_for_ingest(db: Path) -> sqlite3.Connection:
    """The store, opened for a bulk ingest: a 64 MiB page cache, so inserting a million random
    keys into the key index does not re-read its pages through the operating system, and a WAL
    checkpoint every 10,000 pages rather than 1,000. Durability is the store's own (WAL,
    ``synchronous=NORMAL``): each batch is one transaction, so a crash keeps or loses a whole
    batch, never half of one. ``synchronous=OFF`` is not used: in WAL mode NORMAL already skips
    the sync at each commit, and OFF would let a power cut corrupt the file."""
    con = open_store(db)
    con.execute("PRAGMA cache_size=-65536")
    con.execute("PRAGMA wal_autocheckpoint=10000")
    return con


def _insert(con: sqlite3.Connection, sql: str, batch: list[tuple[Any, ...]]) -> int:
    """Insert a batch in one transaction; returns how many rows were new."""
    before = con.total_changes
    con.execute("BEGIN")
    con.executemany(sql, batch)
    con.execute("COMMIT")
    batch.clear()
    return con.total_changes - before


def _row(item: Any, classifier: Classifier, name: str, stats: ReadStats) -> tuple[Any, ...]:
    """The store row of what `_read` yielded: a row already (the fast path) or a `LogRecord`."""
    if type(item) is tuple:
        return item
    assert isinstance(item, LogRecord)
    origin = f"{name}:{stats.lineno}" if stats.lineno is not None else f"{name}[{stats.lines - 1}]"
    return record_row(item, classifier, origin)


def _whole(path: Path) -> bool:
    with open(path, "rb") as fh:
        return _is_whole_document(fh.read(1 << 16))


class _Slices(Sequence[tuple[str, str, int, bytes]]):
    """The slices of JSONL files, `_BATCH` lines each, as (file, name, first line, raw bytes),
    file after file; `counts[i]` is how many slices file i has.

    Only the slice boundaries are held (found by one pass over each file); a slice's bytes are
    read when the executor ships it, so memory is bounded by the slices in flight, and the
    workers need not see this machine's disk."""

    def __init__(self, paths: Sequence[Path]):
        self.paths = list(paths)
        self.starts: list[tuple[int, int, int, int]] = []  # (file, offset, end, first line)
        self.counts: list[int] = []
        for f, path in enumerate(self.paths):
            mine: list[tuple[int, int]] = []
            pos = 0
            with open(path, "rb") as fh:
                for lineno, raw in enumerate(fh, start=1):
                    if (lineno - 1) % _BATCH == 0:
                        mine.append((pos, lineno))
                    pos += len(raw)
            ends = [o for o, _ in mine[1:]] + [pos]
            self.starts.extend((f, o, e, n) for (o, n), e in zip(mine, ends, strict=True))
            self.counts.append(len(mine))

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        f, offset, end, first = self.starts[i]
        path = self.paths[f]
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(end - offset)
        return str(path), path.name, first, data


class _Worker:
    """Per-worker state for a parallel ingest: the classifier (built once) and its caches."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.classifier = Classifier(pairs)
        self.fast: dict[str, _FastRows] = {}


def _slice_rows(
    state: _Worker, item: tuple[str, str, int, bytes]
) -> tuple[list[tuple[Any, ...]], ReadStats]:
    """The store rows of one slice and what reading it found (bad lines as FILE:LINE)."""
    file, name, first, data = item
    stats = ReadStats()

    def bad(line: int | None, fld: str | None, msg: str) -> None:
        stats.bad += 1
        if len(stats.problems) < 1000:
            stats.problems.append(Problem(file, line, fld, msg))

    fast = state.fast.get(name)
    if fast is None:
        fast = state.fast[name] = _FastRows(state.classifier, name)
    lines = enumerate(data.splitlines(keepends=True), start=first)
    rows = [
        _row(got, state.classifier, name, stats) for got in _read_lines(lines, stats, bad, fast)
    ]
    return rows, stats


def _remote_rows(
    ex: Executor, slices: _Slices, pairs: list[tuple[str, str]]
) -> Generator[tuple[list[tuple[Any, ...]], ReadStats], None, None]:
    """The rows of each slice, computed by `ex`'s workers (started once for all the files),
    in the order of the slices."""
    ready: dict[int, tuple[list[tuple[Any, ...]], ReadStats]] = {}
    nxt = 0
    for i, out in imap(ex, _slice_rows, slices, setup=partial(_Worker, pairs)):
        ready[i] = out
        while nxt in ready:
            yield ready.pop(nxt)
            nxt += 1


def ingest_logs(
    paths: Sequence[str | Path],
    db: str | Path,
    *,
    golden: str | Path | None = None,
    progress: bool = True,
    executor: Executor | str = "local",
) -> IngestReport:
    """Stream every log in `paths` into the store at `db` (created if needed).

    `golden` (a dataset) lends the classifier its labelled queries as nearest neighbours; without
    it the category comes from the wording rules alone. Returns an `IngestReport`; bad lines are
    in its ``problems`` (the first 1,000) and counts.

    `executor` (`local`, `ray`, `ray:ADDRESS`; see `assay.executors`) parses and classifies slices
    of each JSONL file on workers; this process reads the slices, owns the store and writes them
    in file order, so the store and the report are those of a local ingest. A JSON document (a
    span export) is read here.
    """
    ex = parse_executor(executor)
    t0 = time.perf_counter()
    files = [Path(p) for p in paths]
    missing = [Problem(str(p), None, None, "file not found") for p in files if not p.is_file()]
    if missing:
        raise DataError(missing)
    pairs: list[tuple[str, str]] = []
    golden_hash = None
    if golden is not None:
        from assay.dataset.io import load_dataset

        ds = load_dataset(golden)
        pairs = golden_pairs(ds.entries)
        golden_hash = ds.content_hash
    classifier = Classifier(pairs)
    db = Path(db)
    existed = db.exists()
    rep = IngestReport(str(db), golden=golden_hash)
    con: sqlite3.Connection | None = None
    total_bytes = sum(p.stat().st_size for p in files)
    placeholders = ",".join("?" * len(COLUMNS))
    sql = f"INSERT OR IGNORE INTO queries({','.join(COLUMNS)}) VALUES ({placeholders})"
    any_read = False
    remote_files = [] if ex.is_local else [p for p in files if not _whole(p)]
    slices = _Slices(remote_files)
    remote = _remote_rows(ex, slices, pairs)

    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[bold]ingest[/] {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns, disable=not progress, transient=True) as bar:
            task = bar.add_task("", total=total_bytes)
            for path in files:
                bar.update(task, description=path.name)
                stats = ReadStats()
                added = lines_ok = 0
                batch: list[tuple[Any, ...]] = []
                last_bytes = 0
                if path in remote_files:
                    for _ in range(slices.counts[remote_files.index(path)]):
                        rows, chunk = next(remote)
                        lines_ok += len(rows)
                        stats.lines += chunk.lines
                        stats.bad += chunk.bad
                        stats.skipped_spans += chunk.skipped_spans
                        stats.bytes_read += chunk.bytes_read
                        room = max(0, 1000 - len(stats.problems))
                        stats.problems.extend(chunk.problems[:room])
                        con = con or _open_for_ingest(db)
                        added += _insert(con, sql, rows)
                        bar.advance(task, stats.bytes_read - last_bytes)
                        last_bytes = stats.bytes_read
                fast = _FastRows(classifier, path.name)
                for item in _read(path, stats, 1000, fast) if path not in remote_files else ():
                    lines_ok += 1
                    batch.append(_row(item, classifier, path.name, stats))
                    if len(batch) >= _BATCH:
                        con = con or _open_for_ingest(db)
                        added += _insert(con, sql, batch)
                        bar.advance(task, stats.bytes_read - last_bytes)
                        last_bytes = stats.bytes_read
                if batch:
                    con = con or _open_for_ingest(db)
                    added += _insert(con, sql, batch)
                bar.advance(task, stats.bytes_read - last_bytes)
                any_read = any_read or lines_ok > 0
                rep.problems.extend(stats.problems[: max(0, 1000 - len(rep.problems))])
                rep.files.append(
                    {
                        "file": str(path),
                        "lines": stats.lines,
                        "added": added,
                        "duplicates": lines_ok - added,
                        "bad": stats.bad,
                        "skipped_spans": stats.skipped_spans,
                    }
                )
        if not any_read and rep.total("skipped_spans") == 0:
            raise DataError(
                rep.problems
                or [Problem(str(p), None, None, "no log records in this file") for p in files]
            )
        if con is None:
            con = open_store(db)
        con.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('classifier', ?)",
            (json.dumps({"version": CLASSIFIER_VERSION, "golden": golden_hash}),),
        )
        con.execute(
            "INSERT INTO ingests VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                json.dumps([str(p) for p in files]),
                rep.total("lines"),
                rep.total("added"),
                rep.total("duplicates"),
                rep.total("bad"),
                rep.total("skipped_spans"),
            ),
        )
        (rep.total_in_store,) = con.execute("SELECT COUNT(*) FROM queries").fetchone()
    except BaseException:
        if con is not None:
            con.close()
            con = None
        if not existed:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        remote.close()  # releases the workers, should anything above have stopped early
        if con is not None:
            con.close()
    rep.seconds = time.perf_counter() - t0
    return rep
