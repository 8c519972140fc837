"""The production log format, and the readers that turn a log file into `LogRecord`s.

assay's own log is JSONL, one query per line::

    {"ts": "2026-10-03T14:05:11Z", "query": "sub rev growth y/y AVER", "as_of": "2026-10-03",
     "retrieved": [{"chunk_id": "aver-2026-10q#p3#c2", "score": 12.1}, ...],   # or ["id", ...]
     "answer": "...", "citations": ["aver-2026-10q#p3#c2"], "feedback": "up" | "down" | null,
     "session": "s-19", "latency_ms": 812.5, "system": "filings:lexical"}

Only ``ts`` and ``query`` are required; ``as_of`` defaults to the date of ``ts`` (UTC).

OpenInference retriever spans (as Arize Phoenix exports them, JSON or JSONL) are read too: a
span whose kind (``span_kind`` or the ``openinference.span.kind`` attribute) is ``RETRIEVER``
becomes one record: ``input.value`` is the query, ``retrieval.documents.{i}.document.id`` and
``.score`` the hits (in order), ``start_time`` the timestamp, ``end_time - start_time`` the
latency, ``session.id`` the session, and ``metadata.as_of`` (when the instrumentation records
one) the as-of date. Attributes may be nested dicts, flat dotted keys, or OTLP key/value lists
(``resourceSpans[].scopeSpans[].spans[]``); a JSON file may hold one span, a list of them, or
``{"data": [...]}`` / ``{"spans": [...]}``. Spans of other kinds are skipped and counted, not
reported as bad.

A record's identity is the SHA-256 of its canonical normalised form (`LogRecord.key`): the same
query logged twice, at the same instant, with the same hits and answer, is one record however
the line was spelled (key order, whitespace, a bare id vs ``{"chunk_id": id}``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from assay._io import loads_line as _loads  # orjson first, json's value or error
from assay._text import normalise_query
from assay.errors import Problem

__all__ = [
    "FEEDBACK",
    "LogRecord",
    "ReadStats",
    "SkippedSpan",
    "normalize_query",
    "parse_log_line",
    "parse_span",
    "read_log",
]

FEEDBACK = ("up", "down")


class _Bad(Exception):
    def __init__(self, field: str | None, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


class SkippedSpan(Exception):
    """A span that is not a retriever span: skipped and counted, not an error."""


normalize_query = normalise_query
"""The matching form of a query: `assay._text.normalise_query` (the one form every part of assay
compares queries in), under the name the logs API has always had."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One logged query, normalised."""

    ts: dt.datetime  # aware, UTC
    query: str
    as_of: dt.date
    retrieved: tuple[tuple[str, float | None], ...] = ()
    answer: str | None = None
    citations: tuple[str, ...] | None = None
    feedback: str | None = None
    session: str | None = None
    latency_ms: float | None = None
    system: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def top_score(self) -> float | None:
        scores = [s for _, s in self.retrieved if s is not None]
        return max(scores) if scores else None

    def to_dict(self) -> dict[str, Any]:
        """The record in assay's log format (round-trips through `parse_log_line`)."""
        out: dict[str, Any] = {
            "ts": self.ts.isoformat().replace("+00:00", "Z"),
            "query": self.query,
            "as_of": self.as_of.isoformat(),
            "retrieved": [
                {"chunk_id": c} if s is None else {"chunk_id": c, "score": s}
                for c, s in self.retrieved
            ],
        }
        for k in ("answer", "feedback", "session", "latency_ms", "system"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        if self.citations is not None:
            out["citations"] = list(self.citations)
        return out

    def hits_json(self) -> str:
        """The hits as compact JSON, ``[[chunk_id, score or null], ...]`` (how the store keeps them)."""
        return json.dumps(
            [list(h) for h in self.retrieved], ensure_ascii=False, separators=(",", ":")
        )

    def key(self, hits_json: str | None = None) -> str:
        """SHA-256 (hex, 32 digits) of the canonical normalised record: its identity in a store.

        The canonical form joins, with a separator no JSON string holds unescaped, the UTC ISO
        time, query, as_of, the hits as compact JSON, answer, citations (JSON), feedback,
        session, latency and system: a line ingested twice, however it was spelled, is one key."""
        parts = (
            self.ts.isoformat(),
            self.query,
            self.as_of.isoformat(),
            hits_json if hits_json is not None else self.hits_json(),
            "\x00" if self.answer is None else self.answer,
            "\x00" if self.citations is None else json.dumps(list(self.citations)),
            self.feedback or "\x00",
            self.session if self.session is not None else "\x00",
            "\x00" if self.latency_ms is None else repr(self.latency_ms),
            self.system if self.system is not None else "\x00",
        )
        return hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


# the times a log may hold: anything else is a unit or clock error, refused as a bad line
TS_MIN = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
TS_MAX = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
_RANGE = f"outside {TS_MIN:%Y-%m-%d} .. {TS_MAX:%Y-%m-%d}"


def _parse_ts(v: Any, name: str = "ts") -> dt.datetime:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        # epoch seconds, milliseconds or nanoseconds (OTLP) by magnitude
        try:
            x = float(v)
        except OverflowError:  # an integer beyond a float
            raise _Bad(name, f"{v!r} is {_RANGE}") from None
        if not math.isfinite(x):
            raise _Bad(name, f"{v!r} is not a finite time")
        secs = x / 1e9 if x > 1e14 else x / 1e3 if x > 1e11 else x
        if not TS_MIN.timestamp() <= secs < TS_MAX.timestamp():
            raise _Bad(name, f"{v!r} is {_RANGE} (read as epoch seconds, ms or ns)")
        return dt.datetime.fromtimestamp(secs, tz=dt.UTC)
    if isinstance(v, str) and v.isdigit():
        return _parse_ts(int(v), name)
    if not isinstance(v, str) or not v.strip():
        raise _Bad(name, "must be an ISO datetime (e.g. 2026-10-03T14:05:11Z)")
    s = v.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        raise _Bad(name, f"{v!r} is not an ISO datetime") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    try:
        t = t.astimezone(dt.UTC)
    except OverflowError:  # year 1 or 9999 shifted by its offset
        raise _Bad(name, f"{v!r} is {_RANGE}") from None
    if not TS_MIN <= t < TS_MAX:
        raise _Bad(name, f"{v!r} is {_RANGE}")
    return t


def _parse_date(v: Any, name: str) -> dt.date:
    if not isinstance(v, str):
        raise _Bad(name, "must be an ISO date (YYYY-MM-DD)")
    try:
        return dt.date.fromisoformat(v[:10])
    except ValueError:
        raise _Bad(name, f"{v!r} is not an ISO date (YYYY-MM-DD)") from None


def _score(v: Any, name: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                raise _Bad(name, f"{v!r} is not a number") from None
        else:
            raise _Bad(name, "must be a number")
    f = float(v)
    if not math.isfinite(f):
        raise _Bad(name, "must be a finite number")
    return f


def _opt_str(obj: Mapping[str, Any], name: str) -> str | None:
    v = obj.get(name)
    if v is None:
        return None
    if not isinstance(v, str):
        raise _Bad(name, "must be a string")
    return v


def parse_log_line(obj: Any) -> LogRecord:
    """One line of assay's log format; raises ValueError-like `_Bad` (field, message)."""
    if not isinstance(obj, dict):
        raise _Bad(None, "a log line is a JSON object")
    if "ts" not in obj:
        raise _Bad("ts", "is required")
    ts = _parse_ts(obj["ts"])
    q = obj.get("query")
    if not isinstance(q, str) or not q.strip():
        raise _Bad("query", "is required (a non-empty string)")
    as_of = _parse_date(obj["as_of"], "as_of") if obj.get("as_of") is not None else ts.date()
    raw = obj.get("retrieved")
    hits: list[tuple[str, float | None]] = []
    if raw is not None:
        if not isinstance(raw, list):
            raise _Bad("retrieved", "must be a list of chunk ids or {chunk_id, score}")
        for j, h in enumerate(raw):
            if type(h) is dict:
                cid = h.get("chunk_id")
                if type(cid) is str and cid:
                    sc = h.get("score")
                    if type(sc) is float and math.isfinite(sc):  # the common case, fast
                        hits.append((cid, sc))
                    else:
                        hits.append((cid, _score(sc, f"retrieved.{j}.score")))
                    continue
            elif isinstance(h, str) and h:
                hits.append((h, None))
                continue
            raise _Bad(f"retrieved.{j}", "a hit is a chunk id string or {chunk_id, score}")
    cits = obj.get("citations")
    if cits is not None and (
        not isinstance(cits, list) or not all(isinstance(c, str) for c in cits)
    ):
        raise _Bad("citations", "must be a list of chunk id strings")
    fb = obj.get("feedback")
    if fb is not None:
        if not isinstance(fb, str) or fb.lower() not in FEEDBACK:
            raise _Bad("feedback", 'must be "up", "down" or null')
        fb = fb.lower()
    lat = _score(obj.get("latency_ms"), "latency_ms")
    if lat is not None and lat < 0:
        raise _Bad("latency_ms", "must not be negative")
    return LogRecord(
        ts=ts,
        query=q.strip(),
        as_of=as_of,
        retrieved=tuple(hits),
        answer=_opt_str(obj, "answer"),
        citations=tuple(cits) if cits is not None else None,
        feedback=fb,
        session=_opt_str(obj, "session"),
        latency_ms=lat,
        system=_opt_str(obj, "system"),
    )


# ---------------------------------------------------------------- OpenInference spans


def _otlp_value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_otlp_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {
            kv["key"]: _otlp_value(kv.get("value")) for kv in v["kvlistValue"].get("values", [])
        }
    return None


def _flatten(obj: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, list) and prefix.endswith("documents"):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = obj


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    """The span's attributes as one flat dict of dotted keys, whichever way they were exported."""
    attrs = span.get("attributes")
    flat: dict[str, Any] = {}
    if isinstance(attrs, list):  # OTLP: [{"key": ..., "value": {"stringValue": ...}}]
        for kv in attrs:
            if isinstance(kv, dict) and "key" in kv:
                _flatten(_otlp_value(kv.get("value")), str(kv["key"]), flat)
    elif isinstance(attrs, dict):
        _flatten(attrs, "", flat)
    for k, v in span.items():  # a dataframe export: "attributes.input.value" columns
        if isinstance(k, str) and k.startswith("attributes."):
            _flatten(v, k[len("attributes.") :], flat)
    return flat


_DOC_KEY = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score)$")


def _trace_id(span: Mapping[str, Any]) -> str | None:
    ctx = span.get("context")
    tid = ctx.get("trace_id") if isinstance(ctx, dict) else None
    tid = tid or span.get("context.trace_id") or span.get("traceId") or span.get("trace_id")
    return str(tid) if tid else None


def _is_root(span: Mapping[str, Any]) -> bool:
    """A span with no parent: the root of its trace (the chain the application ran)."""
    return not (span.get("parent_id") or span.get("parentSpanId") or span.get("parent_span_id"))


def _output_text(attrs: Mapping[str, Any]) -> str | None:
    """A span's output as text: ``output.value``, or, when it is JSON (``output.mime_type``),
    the answer it holds (``output``, ``answer``, ``result``, ``text`` or ``content``)."""
    out = attrs.get("output.value")
    if not isinstance(out, str):
        return None
    if attrs.get("output.mime_type") == "application/json":
        try:
            obj = _loads(out)
        except ValueError:
            return out
        if isinstance(obj, dict):
            for k in ("output", "answer", "result", "text", "content"):
                if isinstance(obj.get(k), str):
                    return str(obj[k])
        return out if not isinstance(obj, str) else obj
    return out


def trace_answers(spans: Iterable[Any]) -> dict[str, str]:
    """trace id -> the answer of its root span (the chain's ``output.value``): what a retriever
    span of the same trace was retrieved for. OpenInference puts the answer on the chain, not on
    the retriever, so without this a span export has no answers (and no abstention)."""
    out: dict[str, str] = {}
    for span in spans:
        if not isinstance(span, dict) or not _is_root(span):
            continue
        tid = _trace_id(span)
        if tid is None:
            continue
        text = _output_text(_attributes(span))
        if text is not None:
            out.setdefault(tid, text)
    return out


def trace_answers_of_file(path: str | Path) -> dict[str, str]:
    """`trace_answers` of a JSONL file of spans (a span, or a span document, a line; the root
    span may come on any line, before or after its retriever); empty for other files (whose
    first line is not a span: a log of assay's lines is not read twice)."""
    out: dict[str, str] = {}
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
        if _is_whole_document(head):
            return out  # read whole, with its answers, by `_read`
        first = next((x for x in head.split(b"\n") if x.strip()), b"")
        try:
            obj = _loads(first)
        except ValueError:
            return out
        if not (_is_span(obj) or _is_span_doc(obj)):
            return out
        fh.seek(0)
        for raw in fh:
            if b"output" not in raw:
                continue
            try:
                obj = _loads(raw)
            except ValueError:
                continue
            items = list(_spans_of(obj)) if _is_span_doc(obj) else [obj]
            for tid, text in trace_answers(x for x in items if _is_span(x)).items():
                out.setdefault(tid, text)
    return out


def parse_span(span: Any, answers: Mapping[str, str] | None = None) -> LogRecord:
    """One OpenInference retriever span; raises SkippedSpan for spans of other kinds. Its
    answer is its trace's root span's output (`answers`: `trace_answers`), when there is one."""
    if not isinstance(span, dict):
        raise _Bad(None, "a span is a JSON object")
    attrs = _attributes(span)
    kind = (
        span.get("span_kind")
        or span.get("spanKind")
        or attrs.get("openinference.span.kind")
        or span.get("kind")
    )
    if not isinstance(kind, str) or kind.upper() != "RETRIEVER":
        raise SkippedSpan(str(kind))
    q = attrs.get("input.value")
    if not isinstance(q, str) or not q.strip():
        raise _Bad("attributes.input.value", "a retriever span needs its query in input.value")
    start = span.get("start_time", span.get("startTimeUnixNano"))
    if start is None:
        raise _Bad("start_time", "is required")
    ts = _parse_ts(start, "start_time")
    end = span.get("end_time", span.get("endTimeUnixNano"))
    latency = None
    if end is not None:
        latency = max(0.0, (_parse_ts(end, "end_time") - ts).total_seconds() * 1000.0)
    docs: dict[int, dict[str, Any]] = {}
    for k, v in attrs.items():
        m = _DOC_KEY.match(k)
        if m:
            docs.setdefault(int(m.group(1)), {})[m.group(2)] = v
    hits: list[tuple[str, float | None]] = []
    for i in sorted(docs):
        d = docs[i]
        did = d.get("id")
        if did is None or (isinstance(did, str) and not did):
            raise _Bad(f"retrieval.documents.{i}.document.id", "is required")
        hits.append((str(did), _score(d.get("score"), f"retrieval.documents.{i}.document.score")))
    meta = attrs.get("metadata")
    if isinstance(meta, str):
        try:
            meta = _loads(meta)
        except ValueError:
            meta = None
    as_of_v = attrs.get("metadata.as_of") or (meta.get("as_of") if isinstance(meta, dict) else None)
    as_of = _parse_date(as_of_v, "metadata.as_of") if as_of_v else ts.date()
    session = attrs.get("session.id")
    tid = _trace_id(span) if answers else None
    return LogRecord(
        ts=ts,
        query=q.strip(),
        as_of=as_of,
        retrieved=tuple(hits),
        answer=None if tid is None or answers is None else answers.get(tid),
        session=str(session) if session is not None else None,
        latency_ms=latency,
        system=str(span["name"]) if isinstance(span.get("name"), str) else None,
    )


_SPAN_MARKS = ("span_kind", "spanKind", "context", "startTimeUnixNano")


def _is_span(obj: Any) -> bool:
    """Whether a JSON object is a span rather than a log line: it carries a span's marks (a
    kind, a context, a start in ns), or, without a query, OpenInference attributes (nested or
    flat ``attributes.*`` keys). A null counts as absent, as it does for every field."""
    if not isinstance(obj, dict):
        return False
    if any(obj.get(k) is not None for k in _SPAN_MARKS):
        return True
    if obj.get("query") is not None:
        return False
    return isinstance(obj.get("attributes"), (dict, list)) or any(
        isinstance(k, str) and k.startswith("attributes.") for k in obj
    )


def _spans_of(doc: Any) -> Iterator[Any]:
    """Spans in a JSON document: one span, a list, {"data"|"spans": [...]}, or OTLP."""
    if isinstance(doc, list):
        for x in doc:
            yield from _spans_of(x)
    elif isinstance(doc, dict) and "resourceSpans" in doc:
        for rs in doc.get("resourceSpans") or []:
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                yield from ss.get("spans") or []
    elif isinstance(doc, dict) and isinstance(doc.get("data"), list):
        yield from doc["data"]
    elif isinstance(doc, dict) and isinstance(doc.get("spans"), list):
        yield from doc["spans"]
    else:
        yield doc


@dataclass
class ReadStats:
    """What reading one file found: lines read, bad lines (with their problems), skipped spans."""

    lines: int = 0
    bad: int = 0
    skipped_spans: int = 0
    problems: list[Problem] = field(default_factory=list)
    bytes_read: int = 0
    lineno: int | None = None  # the line of the record just yielded (None in a JSON document)


def _parse_any(obj: Any, answers: Mapping[str, str] | None = None) -> LogRecord:
    rec = parse_span(obj, answers) if _is_span(obj) else parse_log_line(obj)
    _check_text(rec)
    return rec


def _not_text(s: str | None) -> bool:
    """A string that is not text: it holds a lone surrogate (JSON's ``"\\ud800"`` escape), which
    no UTF-8 file, Parquet column or database takes."""
    if s is None:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_text(rec: LogRecord) -> None:
    """Raise `_Bad` naming the first field of `rec` holding a lone surrogate."""
    for name in ("query", "answer", "session", "system"):
        value = getattr(rec, name)
        if _not_text(value):
            raise _Bad(name, _SURROGATE.format(_surrogate_at(value)))
    for j, (cid, _) in enumerate(rec.retrieved):
        if _not_text(cid):
            raise _Bad(f"retrieved.{j}", _SURROGATE.format(_surrogate_at(cid)))
    for j, cid in enumerate(rec.citations or ()):
        if _not_text(cid):
            raise _Bad(f"citations.{j}", _SURROGATE.format(_surrogate_at(cid)))


_SURROGATE = "holds a lone surrogate ({}): not text, the line is skipped"


def _surrogate_at(s: str) -> str:
    ch = next(c for c in s if 0xD800 <= ord(c) <= 0xDFFF)
    return f"\\u{ord(ch):04x} at character {s.index(ch) + 1}"


def read_log(
    path: str | Path, stats: ReadStats | None = None, *, keep_problems: int = 1000
) -> Iterator[LogRecord]:
    """Stream the records of one log file (assay JSONL, or Phoenix spans as JSON or JSONL).

    A bad line is recorded in `stats` as FILE:LINE: field: message and skipped. A file whose first
    non-blank character is ``[`` or that parses as one JSON document is read whole (a JSON export);
    otherwise it is read line by line. Raises FileNotFoundError for a missing file.
    """
    for item in _read(path, stats, keep_problems, None):
        assert isinstance(item, LogRecord)
        yield item


_T = TypeVar("_T")


def _read(
    path: str | Path,
    stats: ReadStats | None,
    keep_problems: int,
    fast: Callable[[dict[str, Any], int], _T | None] | None,
) -> Iterator[LogRecord | _T]:
    """`read_log`, with a shortcut: `fast(obj, lineno)`, when given, sees each JSONL object first;
    what it returns (not None) is yielded in place of the object's `LogRecord`; None sends the
    object down the ordinary path (which validates it and names what is wrong)."""
    path = Path(path)
    stats = stats if stats is not None else ReadStats()
    name = str(path)

    def bad(line: int | None, fld: str | None, msg: str) -> None:
        stats.bad += 1
        if len(stats.problems) < keep_problems:
            stats.problems.append(Problem(name, line, fld, msg))

    with open(path, "rb") as fh:
        whole = _is_whole_document(fh.read(1 << 16))
        fh.seek(0)
        if whole:
            data = fh.read()
            stats.bytes_read += len(data)
            try:
                doc = _loads(data)
            except ValueError as exc:
                bad(None, None, f"not valid JSON: {exc}")
                return
            except UnicodeDecodeError as exc:
                bad(None, None, f"not UTF-8: {exc.reason}")
                return
            spans = list(_spans_of(doc))
            answers = trace_answers(spans)
            for i, span in enumerate(spans):
                stats.lines += 1
                try:
                    yield _parse_any(span, answers)
                except SkippedSpan:
                    stats.skipped_spans += 1
                except _Bad as exc:
                    bad(None, f"[{i}].{exc.field}" if exc.field else f"[{i}]", exc.message)
            return
        answers = trace_answers_of_file(path)
        yield from _read_lines(enumerate(fh, start=1), stats, bad, fast, answers)


def _is_whole_document(head: bytes) -> bool:
    """Whether a file starting with `head` is one JSON document (an export) rather than JSONL:
    its first non-blank character is ``[``, or its first line alone is not a JSON value and the
    lines after it are neither JSON objects nor lines opening one at their first column (an
    indented export). A log whose first line is broken, with JSON objects or other broken
    ``{...`` lines after it, is JSONL: each of those is one bad line."""
    first = head.lstrip()[:1]
    if first == b"[":
        return True
    if first == b"{":
        lines = head.lstrip().split(b"\n")
        try:
            _loads(lines[0])
        except ValueError:
            # the complete lines after the first (the last one in `head` may be cut short)
            after = [x for x in lines[1:-1] if x.strip()][:20]
            objects = sum(x.startswith(b"{") or _is_object(x) for x in after)
            return bool(after) and objects * 2 <= len(after)
    return False


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(_loads(line), dict)
    except ValueError:
        return False


def _read_lines(
    lines: Iterable[tuple[int, bytes]],
    stats: ReadStats,
    bad: Callable[[int | None, str | None, str], None],
    fast: Callable[[dict[str, Any], int], _T | None] | None,
    answers: Mapping[str, str] | None = None,
) -> Iterator[LogRecord | _T]:
    """The records of JSONL lines given as (line number, raw bytes): the line-by-line half of
    `_read`, also run on a slice of a file by a worker (`ingest_logs(..., executor=...)`).
    `answers` (`trace_answers_of_file`) give retriever spans their traces' answers; a line that
    is a span document also uses its own root spans'."""
    for lineno, raw in lines:
        stats.bytes_read += len(raw)
        stats.lineno = lineno
        if not raw.strip():
            continue
        stats.lines += 1
        try:
            obj = _loads(raw)
        except UnicodeDecodeError as exc:
            bad(lineno, None, f"not UTF-8: {exc.reason}")
            continue
        except json.JSONDecodeError as exc:
            bad(lineno, None, f"not valid JSON: {exc.msg}")
            continue
        except ValueError as exc:
            bad(lineno, None, f"not valid JSON: {exc}")
            continue
        if fast is not None and type(obj) is dict:
            row = fast(obj, lineno)
            if row is not None:
                yield row
                continue
        items = list(_spans_of(obj)) if _is_span_doc(obj) else [obj]
        mine = answers
        if len(items) > 1 or _is_span_doc(obj):
            mine = {**trace_answers(items), **(answers or {})}
        for item in items:
            try:
                rec = _parse_any(item, mine)
            except SkippedSpan:
                stats.skipped_spans += 1
                continue
            except _Bad as exc:
                bad(lineno, exc.field, exc.message)
                continue
            yield rec


def _is_span_doc(obj: Any) -> bool:
    return isinstance(obj, dict) and (
        obj.get("resourceSpans") is not None or isinstance(obj.get("spans"), list)
    )
