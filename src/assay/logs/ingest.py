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
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay.errors import DataError, Problem
from assay.logs.classify import CLASSIFIER_VERSION, Classifier, golden_pairs
from assay.logs.model import LogRecord, ReadStats, normalize_query, read_log
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


def _insert(con: sqlite3.Connection, sql: str, batch: list[tuple[Any, ...]]) -> int:
    """Insert a batch in one transaction; returns how many rows were new."""
    before = con.total_changes
    con.execute("BEGIN")
    con.executemany(sql, batch)
    con.execute("COMMIT")
    batch.clear()
    return con.total_changes - before


def ingest_logs(
    paths: Sequence[str | Path],
    db: str | Path,
    *,
    golden: str | Path | None = None,
    progress: bool = True,
) -> IngestReport:
    """Stream every log in `paths` into the store at `db` (created if needed).

    `golden` (a dataset) lends the classifier its labelled queries as nearest neighbours; without
    it the category comes from the wording rules alone. Returns an `IngestReport`; bad lines are
    in its ``problems`` (the first 1,000) and counts.
    """
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
                for rec in read_log(path, stats):
                    lines_ok += 1
                    origin = (
                        f"{path.name}:{stats.lineno}"
                        if stats.lineno is not None
                        else f"{path.name}[{stats.lines - 1}]"
                    )
                    batch.append(record_row(rec, classifier, origin))
                    if len(batch) >= _BATCH:
                        con = con or open_store(db)
                        added += _insert(con, sql, batch)
                        bar.advance(task, stats.bytes_read - last_bytes)
                        last_bytes = stats.bytes_read
                if batch:
                    con = con or open_store(db)
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
        if con is not None:
            con.close()
    rep.seconds = time.perf_counter() - t0
    return rep
