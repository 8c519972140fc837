"""`ingest`: log files into the store (`assay.logs.store`), each record once, bad lines counted.

A log is not a dataset: one bad line must not stop a month. Each bad line is reported as
FILE:LINE: field: message and skipped; the ingest goes on. It refuses (DataError, nothing
written) only when a file is missing or nothing at all could be read. Ingesting a line twice
stores it once. Every record gets its traffic category from the classifier
(`assay.logs.classify`) and, when it logged an answer, whether the answer abstains
(`assay.judge.detect_refusal`, the refusal check the answer checks use).

How, so that a month of traffic costs about what DuckDB alone takes to read it:

1. Stage. Each JSONL file is read in blocks of whole lines (`BLOCK` bytes). DuckDB parses a
   block (``read_json``) and SQL checks and normalises every line of the common shape: the
   known fields, ``ts`` as ``YYYY-MM-DDTHH:MM:SSZ`` within `TS_MIN`..`TS_MAX`, hits as
   ``{chunk_id, score}`` or bare ids with finite scores, and so on (`_NORMALISE`). Every other
   line -- a span, a time zone, a numeric string, a bad value, bad JSON -- goes through the
   record-by-record reader (`assay.logs.model`), which normalises it the same way or names what
   is wrong as FILE:LINE; a block DuckDB cannot parse (bad JSON, blank lines) is split into
   lines first, by DuckDB too. A JSON document (a span export) is read record by record. Each
   distinct query is classified once, each distinct answer checked once (in Python, on a few
   thousand strings, not millions), and the block is written as Parquet, by month, to a staging
   folder inside the store, with its key.
2. Commit. The key of a record is the MD5 (hex) of its normalised fields, joined by a
   separator no JSON text holds unescaped: time (UTC, ISO), query, as_of, the hits as JSON,
   answer, citations, feedback, session, latency, system -- so a line spelled differently (key
   order, ``Z`` vs ``+00:00``, a bare id vs ``{"chunk_id": id}``) has the same key. When no
   staged key repeats and none is in the store already (the months touched are checked), the
   staged files move into the store as they are; otherwise the first occurrence of each new
   key is rewritten into the store. Store writes hold ``<store>/.lock``.

`executor="ray"` (or ``ray:ADDRESS``) stages the blocks on Ray workers, each writing its
Parquet files in parallel (the store must be on a filesystem the workers share: this machine's
disk for a local Ray); this process commits. The store is the one a local ingest writes, also
when a worker dies: its block is staged again elsewhere, a file it was writing is not read
(staged files are written under another name, then renamed), and rows it wrote already are
stored once (the commit keeps one row per key, telling the two copies apart by file).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from assay.errors import DataError, Problem, UsageError
from assay.executors import Executor, parse_executor
from assay.logs.classify import (
    CLASSIFIER_VERSION,
    Classifier,
    check_golden_categories,
    golden_pairs,
    rules_apply,
)
from assay.logs.model import (
    TS_MAX,
    TS_MIN,
    LogRecord,
    ReadStats,
    _is_whole_document,
    _read,
    _read_lines,
    normalize_query,
    trace_answers_of_file,
)
from assay.logs.store import (
    COLUMNS,
    MANIFEST,
    PARTS,
    QUERIES,
    STAGING,
    STORE_VERSION,
    alive,
    duckdb_connection,
    foreign_entries,
    locked,
    missing_parts,
    parquet_files,
    read_manifest,
    source_sql,
    sweep_staging,
    unreadable,
    write_manifest,
)
from assay.report import ReportMixin, Tabular

__all__ = ["BLOCK", "MAX_LINE_BYTES", "IngestReport", "ingest_logs"]

BLOCK = 16 << 20  # bytes of whole lines staged at once
MAX_LINE_BYTES = 1 << 20
"""A longer line is a bad line, skipped and counted unread (`ingest_logs(max_line_bytes=...)`):
a logged query with its hits and answer is a few kilobytes; a line of megabytes is a dump."""
_KEEP_PROBLEMS = 1000
_PARQUET = "FORMAT PARQUET, COMPRESSION zstd"
_FILE_SHIFT = 40  # seq = file index << 40 | line: a record's place in its ingest
_PART = ".part"  # a staged file being written


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
    repaired: list[str] = field(default_factory=list)  # staging folders of killed ingests
    parts: list[str] = field(default_factory=list)  # the Parquet files written (store-relative)

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
            "repaired": self.repaired,
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
        if self.repaired:
            footer.append(
                f"repaired: removed {len(self.repaired)} staging folder(s) of ingests that were "
                "stopped before they finished"
            )
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


# ---------------------------------------------------------------- the SQL of a block

# the fields read from each line, as raw JSON text (type checks and normalisation follow)
_FIELDS = (
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
_MARKS = ("span_kind", "spanKind", "context", "startTimeUnixNano", "resourceSpans", "spans")
_RAW = {c: "JSON" for c in (*_FIELDS, *_MARKS)}
_RAW_STRUCT = "{" + ",".join(f'"{c}":"JSON"' for c in _RAW) + "}"
_HITS = "STRUCT(chunk_id VARCHAR, score DOUBLE)[]"
_HIT_SHAPES = {
    '[{"chunk_id":"VARCHAR","score":"DOUBLE"}]',
    '[{"chunk_id":"VARCHAR","score":"UBIGINT"}]',
    '[{"chunk_id":"VARCHAR","score":"BIGINT"}]',
    '[{"chunk_id":"VARCHAR"}]',
}
# what Python's str.strip() removes: a query with one of these at an end takes the slow path
_WS = r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"

# raw (lineno, the _RAW columns) -> blk: the normalised columns, and `ok` for the lines of the
# common shape (the others go to the record-by-record reader, which is the reference)
_NORMALISE = f"""
CREATE OR REPLACE TEMP TABLE blk AS
WITH r AS (
  SELECT lineno,
    CASE WHEN left(ts, 1) = '"' THEN ts->>'$' END AS ts_s,
    CASE WHEN left(query, 1) = '"' THEN query->>'$' END AS q,
    as_of, CASE WHEN left(as_of, 1) = '"' THEN as_of->>'$' END AS as_of_s,
    retrieved, CASE WHEN retrieved IS NOT NULL THEN json_structure(retrieved) END AS shape,
    answer, CASE WHEN left(answer, 1) = '"' THEN answer->>'$' END AS answer_s,
    citations,
    CASE WHEN citations IS NOT NULL THEN json_structure(citations) END AS cit_shape,
    feedback, CASE WHEN left(feedback, 1) = '"' THEN lower(feedback->>'$') END AS fb,
    session, CASE WHEN left(session, 1) = '"' THEN session->>'$' END AS session_s,
    system, CASE WHEN left(system, 1) = '"' THEN system->>'$' END AS system_s,
    latency_ms,
    CASE WHEN regexp_matches(latency_ms, '^-?[0-9]') THEN TRY_CAST(latency_ms AS DOUBLE) END AS lat,
    coalesce({" OR ".join(f"{m} IS NOT NULL" for m in _MARKS)}, false) AS span
  FROM $SOURCE
), t AS (
  SELECT *,
    CASE WHEN regexp_full_match(ts_s, '\\d{{4}}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ')
         THEN try_strptime(ts_s, '%Y-%m-%dT%H:%M:%SZ') END AS ts_t,
    CASE WHEN retrieved IS NULL THEN []::{_HITS}
         WHEN shape = '["NULL"]' AND json_array_length(retrieved) = 0 THEN []::{_HITS}
         WHEN shape IN ({", ".join(f"'{s}'" for s in sorted(_HIT_SHAPES))})
           THEN json_transform(retrieved, '[{{"chunk_id":"VARCHAR","score":"DOUBLE"}}]')
         WHEN shape = '["VARCHAR"]'
           THEN list_transform(json_transform(retrieved, '["VARCHAR"]'),
                               lambda x: {{'chunk_id': x, 'score': NULL::DOUBLE}})
    END AS hits,
    CASE WHEN citations IS NULL THEN NULL
         WHEN cit_shape = '["NULL"]' AND json_array_length(citations) = 0 THEN []::VARCHAR[]
         WHEN cit_shape = '["VARCHAR"]' THEN json_transform(citations, '["VARCHAR"]')
    END AS cits
  FROM r
)
SELECT lineno,
  NOT span
  AND ts_t IS NOT NULL AND ts_t >= TIMESTAMP '{TS_MIN:%Y-%m-%d}'
  AND ts_t < TIMESTAMP '{TS_MAX:%Y-%m-%d}'
  AND q IS NOT NULL AND q <> '' AND NOT regexp_matches(q, '^{_WS}|{_WS}$')
  AND (as_of IS NULL OR (regexp_matches(as_of_s, '^\\d{{4}}-\\d\\d-\\d\\d')
       AND left(as_of_s, 4) <> '0000' AND TRY_CAST(left(as_of_s, 10) AS DATE) IS NOT NULL))
  AND hits IS NOT NULL
  AND list_bool_and(list_transform(hits, lambda h: h IS NOT NULL AND h.chunk_id IS NOT NULL
                    AND h.chunk_id <> '' AND (h.score IS NULL OR isfinite(h.score))))
       IS NOT false
  AND (citations IS NULL OR cits IS NOT NULL)
  AND (answer IS NULL OR answer_s IS NOT NULL)
  AND (feedback IS NULL OR fb IN ('up', 'down'))
  AND (session IS NULL OR session_s IS NOT NULL)
  AND (system IS NULL OR system_s IS NOT NULL)
  AND (latency_ms IS NULL OR (lat IS NOT NULL AND isfinite(lat) AND lat >= 0))
  AS ok,
  ts_t AS ts, q AS query,
  coalesce(TRY_CAST(left(as_of_s, 10) AS DATE), ts_t::DATE) AS as_of,
  to_json(hits)::VARCHAR AS hits, len(hits)::INTEGER AS n_hits,
  list_max(list_transform(hits, lambda h: h.score)) AS top_score,
  answer_s AS answer, cits AS citations, fb AS feedback, session_s AS session,
  lat AS latency_ms, system_s AS system
FROM t
"""

# blk + cls(query -> norm, category, ...) + ref(answer -> abstained): the store's rows
_ROWS = """
SELECT md5(concat_ws(chr(30),
         strftime(b.ts, '%Y-%m-%dT%H:%M:%S')
           || CASE WHEN microsecond(b.ts) % 1000000 = 0 THEN ''
                   ELSE printf('.%06d', microsecond(b.ts) % 1000000) END || '+00:00',
         b.query, strftime(b.as_of, '%Y-%m-%d'), b.hits,
         coalesce(b.answer, chr(0)), coalesce(to_json(b.citations)::VARCHAR, chr(0)),
         coalesce(b.feedback, chr(0)), coalesce(b.session, chr(0)),
         coalesce(b.latency_ms::VARCHAR, chr(0)), coalesce(b.system, chr(0)))) AS key,
       b.ts, strftime(b.ts, '%G-W%V') AS week, b.as_of, b.query, c.norm, b.hits,
       b.n_hits, b.top_score,
       b.answer, CASE WHEN b.answer IS NOT NULL THEN f.abstained END AS abstained,
       b.citations, b.feedback, b.session, b.latency_ms, b.system,
       c.category, c.confidence, c.method, c.reason,
       {origin} AS origin, ({file}::BIGINT << {shift}) + b.lineno AS seq
FROM blk b
JOIN cls c ON b.query = c.query LEFT JOIN ref f ON b.answer = f.answer
"""


# ---------------------------------------------------------------- staging


@dataclass(frozen=True)
class _Slice:
    """Whole lines of one file: bytes [offset, offset + length), the first being line `first`
    (for a JSON document: the whole file, read record by record)."""

    file: int
    path: str
    offset: int
    length: int
    first: int
    whole: bool = False
    lines: int = 0  # how many lines (the last one may lack its newline)
    data: bytes | None = field(default=None, repr=False, compare=False)  # read already

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            return fh.read(self.length)


@dataclass
class _Staged:
    """What staging one slice found."""

    file: int
    offset: int = 0
    lines: int = 0
    ok: int = 0
    bad: int = 0
    skipped_spans: int = 0
    problems: list[Problem] = field(default_factory=list)
    bytes: int = 0


def _slices(
    file: int, path: Path, block: int | None = None, *, keep: bool = False
) -> Iterator[_Slice]:
    """The slices of one file: blocks of about `block` bytes cut after a newline (`keep`: with
    their bytes, for a stager in this process)."""
    block = block or BLOCK
    with open(path, "rb") as fh:
        if _is_whole_document(fh.read(1 << 16)):
            yield _Slice(file, str(path), 0, path.stat().st_size, 1, whole=True)
            return
        fh.seek(0)
        offset, first = 0, 1
        while True:
            data = fh.read(block)
            if not data:
                return
            if not data.endswith(b"\n"):
                data += fh.readline()
            n = data.count(b"\n") + (not data.endswith(b"\n"))
            yield _Slice(
                file, str(path), offset, len(data), first, lines=n, data=data if keep else None
            )
            offset += len(data)
            first += n


@lru_cache(maxsize=200_000)
def _refused(answer: str) -> bool:
    """The refusal check on an answer. Most answers hold none of its cues anywhere, and an
    answer without a cue is not a refusal, so one search of all the cues at once settles them
    before the sentence-by-sentence check."""
    from assay.judge.refusal import detect_refusal

    if answer.strip() and not _any_cue().search(answer):
        return False
    return bool(detect_refusal(answer).refused)


@lru_cache(maxsize=1)
def _any_cue() -> re.Pattern[str]:
    from assay.judge.refusal import _CUES

    return re.compile("|".join(f"(?:{p})" for p in _CUES.values()), re.IGNORECASE)


class _Stager:
    """Stages slices: one DuckDB connection, the classifier, and the staging folder. Built once
    per worker (or once here, for a local ingest). `records_only` sends every line through the
    record-by-record reader (the reference the SQL path is tested against)."""

    records_only = False

    def __init__(
        self,
        staging: str,
        pairs: list[tuple[str, str]],
        rules: bool | None,
        threads: int | None,
        memory: str,
        memo: dict[str, tuple[Any, ...]] | None = None,
        max_line: int = MAX_LINE_BYTES,
        answers: dict[int, dict[str, str]] | None = None,
    ) -> None:
        self.staging = staging
        self.max_line = max_line
        # file index -> trace id -> the answer of the trace's root span (span files only)
        self.answers = answers or {}
        self.classifier = Classifier(pairs, rules=rules)
        # query -> its classification: shared by the stagers of one ingest on threads, so a
        # query is classified once per ingest, not once per stager (the classifier is pure)
        self.memo: dict[str, tuple[Any, ...]] = {} if memo is None else memo
        self.con = duckdb_connection(threads=threads, memory=memory)
        # a folder of its own: stagers side by side (threads, Ray workers) never share one
        tmp = os.path.join(staging, f".tmp-{uuid.uuid4().hex[:8]}")
        self.con.execute(f"SET temp_directory = '{_sql_str(tmp)}'")
        self.con.execute(
            "CREATE TEMP TABLE cls (query VARCHAR, norm VARCHAR, category VARCHAR, "
            "confidence DOUBLE, method VARCHAR, reason VARCHAR)"
        )
        self.con.execute("CREATE TEMP TABLE ref (answer VARCHAR, abstained BOOLEAN)")
        self.n = 0

    def close(self) -> None:
        self.con.close()

    def __call__(self, sl: _Slice) -> _Staged:
        import duckdb

        out = _Staged(sl.file, sl.offset)
        name = os.path.basename(sl.path)
        routed: list[tuple[int, bytes]] = []
        if sl.whole:
            rows = self._whole(sl, out)
        else:
            data = sl.read()
            out.bytes = len(data)
            n_lines = sl.lines
            lines: list[bytes] = []
            if len(data) > self.max_line:
                lines = self._too_long(data, sl, out)
                if lines:
                    data = b"\n".join(lines) + b"\n"
            counted, by_records = out.lines, self.records_only
            if not by_records and not self._fast(data, sl.first, n_lines, out):
                lines = _split(data)
                try:
                    self._by_line(lines, sl.first, out, routed)
                except duckdb.OutOfMemoryException:
                    # a line too big for DuckDB's cap (max_line_bytes raised): record by record
                    del routed[:]
                    out.lines, by_records = counted, True
            if by_records:
                lines = lines or _split(data)
                routed = [(sl.first + i, x) for i, x in enumerate(lines) if x.strip()]
                out.lines += len(routed)
                self.con.execute(f"CREATE OR REPLACE TEMP TABLE blk AS {_EMPTY_BLK} LIMIT 0")
            not_ok = self.con.execute("SELECT lineno FROM blk WHERE NOT ok").fetchall()
            if not_ok:
                lines = lines or _split(data)
                routed.extend((n, lines[n - sl.first]) for (n,) in not_ok)
                self.con.execute("DELETE FROM blk WHERE NOT ok")
            rows = self._by_record(sorted(routed), sl.path, out, self.answers.get(sl.file))
        if rows:
            try:
                self._insert(rows)
            except duckdb.OutOfMemoryException:  # one at a time; what still cannot fit is bad
                for row in rows:
                    try:
                        self._insert([row])
                    except duckdb.OutOfMemoryException:
                        out.bad += 1
                        out.problems.append(
                            Problem(
                                sl.path,
                                None if sl.whole else row[0],
                                None,
                                "a record too large for the ingest's memory cap (DuckDB): "
                                "skipped (lower --max-line-bytes to skip such lines unread)",
                            )
                        )
        (out.ok,) = self.con.execute("SELECT count(*) FROM blk").fetchone()
        if out.ok:
            self._classify()
            self._write(sl, name)
        out.problems.sort(key=lambda p: p.line or 0)
        return out

    def _too_long(self, data: bytes, sl: _Slice, out: _Staged) -> list[bytes]:
        """The block's lines with each one longer than `max_line` bytes made blank, each counted
        as a bad line and named (never parsed: a line of 100 MB or of 200,000 hits would take
        DuckDB past its memory cap); empty when no line is that long."""
        # a line longer than 2h holds a whole window [kh, kh + h): when every window holds a
        # newline, no line is too long (a few searches per block, not one per line)
        h = max(1, self.max_line // 2)
        if all(data.find(b"\n", k, k + h) >= 0 for k in range(0, len(data) - h + 1, h)):
            return []
        long: list[tuple[int, int]] = []
        start, i = 0, 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            if end - start > self.max_line:
                long.append((i, end - start))
            start, i = end + 1, i + 1
        if not long:
            return []
        lines = _split(data)
        for i, n in long:
            lines[i] = b""
            out.lines += 1
            out.bad += 1
            if len(out.problems) < _KEEP_PROBLEMS:
                out.problems.append(
                    Problem(
                        sl.path,
                        sl.first + i,
                        None,
                        f"a line of {n:,} bytes, over the limit of {self.max_line:,} "
                        "(max_line_bytes): skipped unread",
                    )
                )
        return lines

    def _write(self, sl: _Slice, name: str) -> None:
        """The block's rows as Parquet, one file per month, in the staging folder."""
        origin = (
            f"'{_sql_str(name)}[' || (b.lineno - 1) || ']'"
            if sl.whole
            else f"'{_sql_str(name)}:' || b.lineno"
        )
        sql = _ROWS.format(origin=origin, file=sl.file, shift=_FILE_SHIFT)
        months = [
            m
            for (m,) in self.con.execute(
                "SELECT DISTINCT strftime(ts, '%Y-%m') FROM blk"
            ).fetchall()
        ]
        # the writer's process id in the name: which worker wrote which block shows in the store
        tag = f"f{sl.file:04d}-{sl.offset:013d}-p{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.con.execute("SET preserve_insertion_order = false")  # rows in any order: in parallel
        for m in sorted(months):
            folder = os.path.join(self.staging, f"month={m}")
            os.makedirs(folder, exist_ok=True)
            where = "" if len(months) == 1 else f" WHERE strftime(b.ts, '%Y-%m') = '{m}'"
            # written under a name the commit does not read, then renamed: a worker that dies
            # while writing (its block is then staged again elsewhere) leaves no half file
            target = os.path.join(folder, f"{tag}.parquet")
            self.con.execute(f"COPY ({sql}{where}) TO '{_sql_str(target + _PART)}' ({_PARQUET})")
            os.replace(target + _PART, target)
        self.con.execute("SET preserve_insertion_order = true")  # `_fast` numbers lines by it

    # -- the block's lines, normalised in SQL

    def _fast(self, data: bytes, first: int, n_lines: int, out: _Staged) -> bool:
        """DuckDB's JSON reader over the block, straight into `blk` (rows in line order: no
        blank lines, or the numbering would slip); False when it cannot read the block (then
        `_by_line`)."""
        import duckdb

        if not data or data.isspace():
            return False
        try:
            rel = self.con.read_json(
                io.BytesIO(data), format="newline_delimited", columns=dict(_RAW)
            )
            self.con.register("block_json", rel)
            source = (
                f"(SELECT {int(first)} + row_number() OVER () - 1 AS lineno, * FROM block_json)"
            )
            self.con.execute(_NORMALISE.replace("$SOURCE", source))
        except duckdb.Error:
            return False
        finally:
            with contextlib.suppress(Exception):
                self.con.unregister("block_json")
        (n,) = self.con.execute("SELECT count(*) FROM blk").fetchone()
        if n != n_lines:
            # the reader skips blank lines (and refuses a line of two values or a value over two
            # lines), so equal counts mean row i is line first + i; else, line by line
            return False
        out.lines += n
        return True

    def _by_line(
        self, lines: list[bytes], first: int, out: _Staged, routed: list[tuple[int, bytes]]
    ) -> None:
        """The block split into lines by DuckDB; lines that are not one JSON object (or not
        UTF-8) go to the record-by-record reader, which names what is wrong."""
        texts: list[str] = []
        for i, raw in enumerate(lines):
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append("")
                routed.append((first + i, raw))
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE lines AS SELECT $1 + i - 1 AS lineno, l AS line "
            "FROM (SELECT unnest(ls) AS l, generate_subscripts(ls, 1) AS i "
            "FROM (SELECT $2::VARCHAR[] AS ls))",
            [first, texts],
        )
        blank = "trim(line, ' \t\r' || chr(11) || chr(12)) = ''"
        (n,) = self.con.execute(f"SELECT count(*) FROM lines WHERE NOT {blank}").fetchone()
        out.lines += int(n) + sum(1 for _, raw in routed if raw.strip())
        is_object = "json_valid(line) AND left(ltrim(line, ' \t\r'), 1) = '{'"
        routed.extend(
            (ln, lines[ln - first])
            for (ln,) in self.con.execute(
                f"SELECT lineno FROM lines WHERE NOT {blank} AND NOT ({is_object})"
            ).fetchall()
        )
        source = (
            f"(SELECT lineno, unnest(json_transform(line, '{_RAW_STRUCT}')) FROM lines "
            f"WHERE NOT {blank} AND {is_object})"
        )
        self.con.execute(_NORMALISE.replace("$SOURCE", source))

    # -- the record-by-record reader

    def _by_record(
        self,
        routed: list[tuple[int, bytes]],
        path: str,
        out: _Staged,
        answers: dict[str, str] | None = None,
    ) -> list[tuple[Any, ...]]:
        if not routed:
            return []
        stats = ReadStats()

        def bad(line: int | None, fld: str | None, msg: str) -> None:
            stats.bad += 1
            if len(stats.problems) < _KEEP_PROBLEMS:
                stats.problems.append(Problem(path, line, fld, msg))

        rows: list[tuple[Any, ...]] = []
        for rec in _read_lines(routed, stats, bad, None, answers):
            assert isinstance(rec, LogRecord)
            assert stats.lineno is not None
            rows.append(_normalised(stats.lineno, rec))
        out.bad += stats.bad
        out.skipped_spans += stats.skipped_spans
        out.problems.extend(stats.problems)
        return rows

    def _whole(self, sl: _Slice, out: _Staged) -> list[tuple[Any, ...]]:
        """A JSON document (a span export): every record through the record-by-record reader."""
        stats = ReadStats()
        rows: list[tuple[Any, ...]] = []
        for i, rec in enumerate(_read(sl.path, stats, _KEEP_PROBLEMS, None), start=1):
            assert isinstance(rec, LogRecord)
            rows.append(_normalised(i, rec))
        out.lines += stats.lines
        out.bad += stats.bad
        out.skipped_spans += stats.skipped_spans
        out.problems.extend(stats.problems)
        out.bytes = stats.bytes_read
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE blk AS {_EMPTY_BLK} LIMIT 0")
        return rows

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        cols = list(zip(*rows, strict=True))
        self.con.execute(
            "INSERT INTO blk SELECT lineno, true, ts, query, as_of, to_json(h)::VARCHAR, "
            "len(h)::INTEGER, list_max(list_transform(h, lambda x: x.score)), answer, citations, "
            "feedback, session, latency_ms, system FROM (SELECT unnest($1::BIGINT[]) AS lineno, "
            "unnest($2::TIMESTAMP[]) AS ts, unnest($3::VARCHAR[]) AS query, "
            f"unnest($4::DATE[]) AS as_of, unnest($5::{_HITS}[]) AS h, "
            "unnest($6::VARCHAR[]) AS answer, unnest($7::VARCHAR[][]) AS citations, "
            "unnest($8::VARCHAR[]) AS feedback, unnest($9::VARCHAR[]) AS session, "
            "unnest($10::DOUBLE[]) AS latency_ms, unnest($11::VARCHAR[]) AS system)",
            [list(c) for c in cols],
        )

    def _classify(self) -> None:
        """Classify each query (and check each answer) not seen before by this stager."""
        new = [
            q
            for (q,) in self.con.execute(
                "SELECT DISTINCT b.query FROM blk b ANTI JOIN cls c ON b.query = c.query"
            ).fetchall()
        ]
        if new:
            out: list[list[Any]] = [[], [], [], [], [], []]
            memo = self.memo
            for q in new:
                row = memo.get(q)
                if row is None:
                    norm = normalize_query(q)
                    c = self.classifier.classify(q, norm=norm)
                    row = memo[q] = (q, norm, c.category, c.confidence, c.method, c.reason)
                for col, v in zip(out, row, strict=True):
                    col.append(v)
            self.con.execute(
                "INSERT INTO cls SELECT unnest($1::VARCHAR[]), unnest($2::VARCHAR[]), "
                "unnest($3::VARCHAR[]), unnest($4::DOUBLE[]), unnest($5::VARCHAR[]), "
                "unnest($6::VARCHAR[])",
                out,
            )
        answers = [
            a
            for (a,) in self.con.execute(
                "SELECT DISTINCT b.answer FROM blk b ANTI JOIN ref f ON b.answer = f.answer "
                "WHERE b.answer IS NOT NULL"
            ).fetchall()
        ]
        if answers:
            self.con.execute(
                "INSERT INTO ref SELECT unnest($1::VARCHAR[]), unnest($2::BOOLEAN[])",
                [answers, [_refused(a) for a in answers]],
            )


_EMPTY_BLK = (
    "SELECT NULL::BIGINT AS lineno, NULL::BOOLEAN AS ok, NULL::TIMESTAMP AS ts, "
    "NULL::VARCHAR AS query, NULL::DATE AS as_of, NULL::VARCHAR AS hits, "
    "NULL::INTEGER AS n_hits, NULL::DOUBLE AS top_score, "
    "NULL::VARCHAR AS answer, NULL::VARCHAR[] AS citations, NULL::VARCHAR AS feedback, "
    "NULL::VARCHAR AS session, NULL::DOUBLE AS latency_ms, NULL::VARCHAR AS system"
)


def _normalised(lineno: int, rec: LogRecord) -> tuple[Any, ...]:
    """A record as the columns of `blk` (after `lineno` and `ok`)."""
    return (
        lineno,
        rec.ts.astimezone(dt.UTC).replace(tzinfo=None),
        rec.query,
        rec.as_of,
        [{"chunk_id": c, "score": s} for c, s in rec.retrieved],
        rec.answer,
        None if rec.citations is None else list(rec.citations),
        rec.feedback,
        rec.session,
        rec.latency_ms,
        rec.system,
    )


def _split(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def _sql_str(s: str) -> str:
    return s.replace("'", "''")


def _stage_one(stager: _Stager, sl: _Slice) -> _Staged:
    return stager(sl)


# ---------------------------------------------------------------- committing


def _commit(
    con: Any, store: Path, staging: Path, ingest_id: str, parts: list[str]
) -> dict[int, int]:
    """Move the staged rows into the store, each key once; returns rows added per file, and
    appends the parts written (relative to the store) to `parts`.

    Month by month (a key's time, and so its month, is part of it: two months never share a
    key), so memory is bounded by the largest month, not the whole ingest."""
    import duckdb

    try:
        return _commit_months(con, store, staging, ingest_id, parts)
    except duckdb.Error as exc:  # a part of the store damaged inside: named, not the SQL
        raise unreadable(parquet_files(store), exc, store) from None


def _commit_months(
    con: Any, store: Path, staging: Path, ingest_id: str, parts: list[str]
) -> dict[int, int]:
    added: dict[int, int] = {}
    target = store / "queries"
    for folder in sorted(staging.glob("month=*")):
        staged = sorted(str(p) for p in folder.glob("*.parquet"))
        if not staged:
            continue
        month = folder.name[len("month=") :]
        src = source_sql(staged)
        existing = parquet_files(store, [month])
        n, distinct = con.execute(f"SELECT count(*), count(DISTINCT key) FROM {src}").fetchone()
        overlap = 0
        if existing:
            (overlap,) = con.execute(
                f"SELECT count(*) FROM {src} s SEMI JOIN {source_sql(existing)} e ON s.key = e.key"
            ).fetchone()
        (target / folder.name).mkdir(parents=True, exist_ok=True)
        if n == distinct and overlap == 0:  # the staged files, as they are
            counts = con.execute(
                f"SELECT seq >> {_FILE_SHIFT} AS f, count(*) FROM {src} GROUP BY f"
            ).fetchall()
            for p in staged:
                os.replace(p, target / folder.name / f"part-{ingest_id}-{Path(p).name}")
                parts.append(f"{QUERIES}/{folder.name}/part-{ingest_id}-{Path(p).name}")
        else:  # the first occurrence of each key the store lacks, rewritten
            # a row is (key, seq, file): a block staged twice (its worker died after writing,
            # and it was staged again elsewhere) holds the same key and seq in two files
            src = source_sql(staged, filename=True)
            anti = f"ANTI JOIN {source_sql(existing)} e ON s.key = e.key" if existing else ""
            con.execute(
                "CREATE OR REPLACE TEMP TABLE kept AS SELECT s.key, s.seq, s.filename FROM "
                f"{src} s {anti} "
                "QUALIFY row_number() OVER (PARTITION BY s.key ORDER BY s.seq, s.filename) = 1"
            )
            counts = con.execute(
                f"SELECT seq >> {_FILE_SHIFT} AS f, count(*) FROM kept GROUP BY f"
            ).fetchall()
            if counts:
                out = staging / ".commit" / f"part-{ingest_id}-{month}.parquet"
                out.parent.mkdir(exist_ok=True)
                cols = ", ".join(f"s.{c}" for c in COLUMNS)
                con.execute(
                    f"COPY (SELECT {cols} FROM {src} s SEMI JOIN kept k "
                    "ON s.key = k.key AND s.seq = k.seq AND s.filename = k.filename) "
                    f"TO '{_sql_str(str(out))}' ({_PARQUET})"
                )
                os.replace(out, target / folder.name / out.name)
                parts.append(f"{QUERIES}/{folder.name}/{out.name}")
        for f, c in counts:
            added[int(f)] = added.get(int(f), 0) + int(c)
    return added


# ---------------------------------------------------------------- the ingest


def ingest_logs(
    paths: Sequence[str | Path],
    db: str | Path,
    *,
    golden: str | Path | None = None,
    progress: bool = True,
    executor: Executor | str = "local",
    rules: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> IngestReport:
    """Ingest every log in `paths` into the store at `db` (a folder, created if needed).

    `golden` (a dataset) lends the classifier its labelled queries: a golden query asked again
    takes its entry's category, others their nearest neighbours' (see `assay.logs.classify`);
    without it the category comes from the wording rules alone. `rules` None uses the built-in
    wording rules unless the golden set has a taxonomy of its own; True / False force them.
    Returns an `IngestReport`; bad lines are in its ``problems`` (the first 1,000) and counts.

    `executor` (`local`, `ray`, `ray:ADDRESS`; see `assay.executors`) stages blocks of the
    files in parallel on workers, each writing its Parquet files (see the module docstring). A
    local executor without `workers` stages on one thread per CPU (at most 4); ``workers=1``
    stages one block at a time, for the least memory.

    A line longer than `max_line_bytes` is a bad line, named and counted but not parsed. A
    store folder left without its store.json by an ingest killed before its first commit is
    repaired (its staging folders removed) when nothing else is in it; a folder holding
    anything else is named, with what it holds.
    """
    if max_line_bytes < 1:
        raise UsageError(f"max_line_bytes must be at least 1, not {max_line_bytes}")
    ex = parse_executor(executor)
    if ex.is_local and ex.workers is None:
        ex = ex.with_workers(_default_workers())
    t0 = time.perf_counter()
    files = [Path(p) for p in paths]
    missing = [Problem(str(p), None, None, "file not found") for p in files if not p.is_file()]
    if missing:
        raise DataError(missing)
    pairs: list[tuple[str, str]] = []
    golden_hash = None
    if golden is not None:
        from assay.dataset import load_dataset

        ds = load_dataset(golden)
        check_golden_categories(ds.entries, golden)
        pairs = golden_pairs(ds.entries)
        golden_hash = ds.content_hash
    store = Path(db)
    existed = store.exists()
    # an empty folder is new, and so is one that holds only what a killed first ingest left
    # (repaired below); anything else is a store, or a DataError naming what the folder is
    leftovers = store.is_dir() and not (store / MANIFEST).exists() and not foreign_entries(store)
    if existed and (not store.is_dir() or any(store.iterdir())) and not leftovers:
        read_manifest(store)
    rep = IngestReport(str(store), golden=golden_hash)
    store.mkdir(parents=True, exist_ok=True)
    # what killed ingests left (their staging folders; before a first commit, all there is)
    rep.repaired = sweep_staging(store)
    ingest_id = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    staging = store / f"{STAGING}{ingest_id}"
    staging.mkdir()
    per_file: dict[int, list[_Staged]] = {i: [] for i in range(len(files))}
    with alive(staging):  # stage, then commit under the store's lock
        try:
            answers = {i: a for i, p in enumerate(files) if (a := trace_answers_of_file(p))}
            stage = _stage_all(
                ex, files, str(staging), pairs, rules, progress, max_line_bytes, answers
            )
            for got in stage:
                per_file[got.file].append(got)
            for parts in per_file.values():
                parts.sort(key=lambda s: s.offset)
            any_read = any(s.ok for parts in per_file.values() for s in parts)
            spans = sum(s.skipped_spans for parts in per_file.values() for s in parts)
            problems = [p for i in sorted(per_file) for s in per_file[i] for p in s.problems]
            rep.problems = problems[:_KEEP_PROBLEMS]
            if not any_read and spans == 0:
                raise DataError(
                    rep.problems
                    or [Problem(str(p), None, None, "no log records in this file") for p in files]
                )
            con = duckdb_connection(memory="512MB")
            con.execute(f"SET temp_directory = '{_sql_str(str(staging / '.tmp'))}'")
            try:
                with locked(store):
                    # read under the lock: another ingest may have committed since this one began
                    manifest = read_manifest(store) if (store / MANIFEST).exists() else None
                    written: list[str] = []
                    added = _commit(con, store, staging, ingest_id, written)
                    rep.parts = written
                    _record(store, manifest, rep, files, per_file, added, pairs, golden_hash, rules)
                    all_files = parquet_files(store)
                    (rep.total_in_store,) = con.execute(
                        f"SELECT count(*) FROM {source_sql(all_files)}"
                    ).fetchone()
            finally:
                con.close()
        except BaseException:
            if not existed:
                shutil.rmtree(store, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    rep.seconds = time.perf_counter() - t0
    return rep


_MAX_DEFAULT_WORKERS = 4
_MEMORY_MB = 512  # DuckDB's cap for all local stagers together (each at least 128 MB)


def _default_workers() -> int:
    """The local ingest's stagers when none are asked for: one per CPU this process may use,
    at most `_MAX_DEFAULT_WORKERS` (each adds its block and buffers, about 150 MB of peak RSS;
    four keep 10 million lines under 1 GB)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_DEFAULT_WORKERS))


def _stager_memory(workers: int) -> str:
    """DuckDB's memory cap for each of `workers` stagers: 256 MB for one or two."""
    return f"{max(128, _MEMORY_MB // max(2, workers))}MB"


def _record(
    store: Path,
    manifest: dict[str, Any] | None,
    rep: IngestReport,
    files: list[Path],
    per_file: dict[int, list[_Staged]],
    added: dict[int, int],
    pairs: list[tuple[str, str]],
    golden_hash: str | None,
    rules: bool | None,
) -> None:
    """Fill the report's per-file counts and append this ingest to store.json."""
    import duckdb

    for i, path in enumerate(files):
        parts = per_file[i]
        ok = sum(s.ok for s in parts)
        rep.files.append(
            {
                "file": str(path),
                "lines": sum(s.lines for s in parts),
                "added": added.get(i, 0),
                "duplicates": ok - added.get(i, 0),
                "bad": sum(s.bad for s in parts),
                "skipped_spans": sum(s.skipped_spans for s in parts),
            }
        )
    data = dict(manifest or {"format": STORE_VERSION, "ingests": []})
    gone = missing_parts(store, data)  # reported, and dropped: this ingest may hold their rows
    if gone:
        rep.problems.extend(gone)
        lost = {p.file for p in gone}
        data["ingests"] = [
            {**i, PARTS: [r for r in i[PARTS] if str(store / r) not in lost]} if PARTS in i else i
            for i in data.get("ingests", [])
        ]
    data["classifier"] = {
        "version": CLASSIFIER_VERSION,
        "golden": golden_hash,
        "rules": sorted(rules_apply((c for _, c in pairs), rules)),
    }
    data["duckdb"] = duckdb.__version__
    data["ingests"] = [
        *data.get("ingests", []),
        {
            "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "files": [str(p) for p in files],
            **{k: rep.total(k) for k in ("lines", "added", "duplicates", "bad", "skipped_spans")},
            PARTS: rep.parts,
        },
    ]
    write_manifest(store, data)


def _stage_all(
    ex: Executor,
    files: list[Path],
    staging: str,
    pairs: list[tuple[str, str]],
    rules: bool | None,
    progress: bool,
    max_line: int = MAX_LINE_BYTES,
    answers: dict[int, dict[str, str]] | None = None,
) -> Iterator[_Staged]:
    """Stage every slice of every file, here (one slice at a time, or `workers` side by side on
    threads) or on the executor's workers, each stager with one DuckDB thread: a block of 16 MiB
    is some 28,000 lines, less than one DuckDB row group, so more DuckDB threads add their
    buffers (about 30 MB of peak RSS) and a little CPU, not speed; parallel staging is whole
    blocks at once (local workers or `--executor ray`)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    total = sum(p.stat().st_size for p in files)
    columns = (
        TextColumn("[bold]ingest[/]"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, disable=not progress, transient=True) as bar:
        task = bar.add_task("", total=total)
        # no more stagers than blocks (a small log is staged by one)
        blocks = sum(-(-p.stat().st_size // BLOCK) for p in files)
        workers = max(1, min(ex.workers or 1, blocks))
        if ex.is_local and workers > 1:
            for sl, got in _stage_threads(workers, files, staging, pairs, rules, max_line, answers):
                bar.advance(task, sl.length)
                yield got
            return
        if ex.is_local:
            stager = _Stager(staging, pairs, rules, 1, _stager_memory(1), None, max_line, answers)
            try:
                for i, path in enumerate(files):
                    for sl in _slices(i, path, keep=True):
                        got = stager(sl)
                        bar.advance(task, sl.length)
                        yield got
            finally:
                stager.close()
            return
        slices = [sl for i, path in enumerate(files) for sl in _slices(i, path)]
        setup = partial(
            _Stager, staging, pairs, rules, 1, _stager_memory(1), None, max_line, answers
        )
        for _i, got in ex.imap(_stage_one, slices, setup=setup):
            bar.advance(task, slices[_i].length)
            yield got


def _stage_threads(
    workers: int,
    files: list[Path],
    staging: str,
    pairs: list[tuple[str, str]],
    rules: bool | None,
    max_line: int = MAX_LINE_BYTES,
    answers: dict[int, dict[str, str]] | None = None,
) -> Iterator[tuple[_Slice, _Staged]]:
    """Stage the slices on `workers` threads, each with a stager of its own (DuckDB releases the
    GIL while it works), at most `workers` blocks in flight (so memory grows with `workers`, not
    with the file); results as they complete (the caller orders them)."""
    import queue
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    memo: dict[str, tuple[Any, ...]] = {}
    stagers = [
        _Stager(staging, pairs, rules, 1, _stager_memory(workers), memo, max_line, answers)
        for _ in range(workers)
    ]
    idle: queue.SimpleQueue[_Stager] = queue.SimpleQueue()
    for st in stagers:
        idle.put(st)

    def run(sl: _Slice) -> _Staged:
        st = idle.get()
        try:
            return st(sl)
        finally:
            idle.put(st)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-ingest")
    pending: dict[Future[_Staged], _Slice] = {}
    try:
        for i, path in enumerate(files):
            for sl in _slices(i, path, keep=True):
                while len(pending) >= workers:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        yield pending.pop(f), f.result()
                pending[pool.submit(run, sl)] = sl
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield pending.pop(f), f.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for st in stagers:
            st.close()
