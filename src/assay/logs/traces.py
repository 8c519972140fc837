"""Runs from traces: an agent's OpenInference spans (as Arize Phoenix exports them) read back
into a run that assay scores and checks like any other, tool calls included.

One trace is one row. Its root span (no parent) gives the query (``input.value``; from a JSON
input, its ``query``, ``question`` or ``input``) and the answer (``output.value``, as
`assay.logs.model` reads it); its ``metadata.entry_id`` (when the instrumentation records the
golden entry it ran) names the entry, else the query does, matched on its normalised form
(`normalize_query`). The first RETRIEVER span (by start time) gives the hits. The TOOL spans,
by start time, give ``tool_calls``: ``tool.name`` (else the span's name) and the arguments in
``input.value`` (a JSON object; anything else is kept as ``{"input": value}``). A trace with no
TOOL span falls back to the calls its LLM spans asked for
(``llm.output_messages.N.message.tool_calls.M.tool_call.function.name`` / ``.arguments``).

Traces that match no entry, and entries that several traces match (the latest is kept), are
counted in the result's notes; nothing is guessed silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import loads_line as _loads
from assay.dataset import Entry
from assay.errors import DataError
from assay.logs.model import (
    _attributes,
    _is_root,
    _output_text,
    _parse_ts,
    _spans_of,
    _trace_id,
    normalize_query,
)

__all__ = ["TraceRun", "run_from_traces"]

_LLM_CALL = re.compile(
    r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.function\.(name|arguments)$"
)
_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score)$")


@dataclass
class TraceRun:
    """Rows built from traces, and what could not be placed."""

    rows: list[dict[str, Any]]
    traces: int
    notes: list[str] = field(default_factory=list)


def _kind(span: Mapping[str, Any], attrs: Mapping[str, Any]) -> str:
    k = span.get("span_kind") or span.get("spanKind") or attrs.get("openinference.span.kind")
    return str(k or span.get("kind") or "").upper()


def _start(span: Mapping[str, Any]) -> float:
    v = span.get("start_time", span.get("startTimeUnixNano"))
    return 0.0 if v is None else _parse_ts(v, "start_time").timestamp()


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            got = _loads(raw)
        except ValueError:
            return {"input": raw}
        return dict(got) if isinstance(got, dict) else {"input": got}
    return {} if raw is None else {"input": raw}


def _query(attrs: Mapping[str, Any]) -> str | None:
    v = attrs.get("input.value")
    if isinstance(v, str) and v.lstrip().startswith("{"):
        try:
            obj = _loads(v)
        except ValueError:
            return v
        if isinstance(obj, dict):
            for k in ("query", "question", "input"):
                if isinstance(obj.get(k), str):
                    return str(obj[k])
    return v if isinstance(v, str) else None


def _meta(attrs: Mapping[str, Any], key: str) -> Any:
    if attrs.get(f"metadata.{key}") is not None:
        return attrs[f"metadata.{key}"]
    meta = attrs.get("metadata")
    if isinstance(meta, str):
        try:
            meta = _loads(meta)
        except ValueError:
            return None
    return meta.get(key) if isinstance(meta, dict) else None


def _llm_calls(
    spans: Sequence[tuple[float, dict[str, Any], Mapping[str, Any]]],
) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for _, span, attrs in spans:
        if _kind(span, attrs) != "LLM":
            continue
        found: dict[tuple[int, int], dict[str, Any]] = {}
        for k, v in attrs.items():
            m = _LLM_CALL.match(k)
            if m:
                found.setdefault((int(m.group(1)), int(m.group(2))), {})[m.group(3)] = v
        for key in sorted(found):
            c = found[key]
            if isinstance(c.get("name"), str):
                calls.append({"name": c["name"], "arguments": _arguments(c.get("arguments"))})
    return calls


def _read_spans(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    try:
        docs = [_loads(raw)]
    except ValueError:
        docs = []
        for n, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(_loads(line))
            except ValueError as exc:
                raise DataError(f"bad JSON: {exc}", file=path, line=n) from None
    return [s for d in docs for s in _spans_of(d) if isinstance(s, dict)]


def _row(
    spans: list[tuple[float, dict[str, Any], Mapping[str, Any]]], entry: Entry
) -> dict[str, Any]:
    row: dict[str, Any] = {"id": entry.id}
    root = next((a for _, s, a in spans if _is_root(s)), None)
    retr = next((a for _, s, a in spans if _kind(s, a) == "RETRIEVER"), None)
    if retr is not None:
        docs: dict[int, dict[str, Any]] = {}
        for k, v in retr.items():
            m = _DOC.match(k)
            if m:
                docs.setdefault(int(m.group(1)), {})[m.group(2)] = v
        row["retrieved"] = [
            {"chunk_id": str(d["id"]), "score": float(d["score"])}
            if isinstance(d.get("score"), int | float)
            else {"chunk_id": str(d["id"])}
            for _, d in sorted(docs.items())
            if d.get("id") not in (None, "")
        ]
    answer = None if root is None else _output_text(root)
    if answer is not None:
        row["answer"] = answer
    tools = [
        {
            "name": str(a.get("tool.name") or s.get("name") or "?"),
            "arguments": _arguments(a.get("input.value")),
        }
        for _, s, a in spans
        if _kind(s, a) == "TOOL"
    ]
    row["tool_calls"] = tools or _llm_calls(spans)
    if entry.as_of is not None:
        row["as_of"] = entry.as_of.isoformat()
    return row


def run_from_traces(path: str | Path, entries: Iterable[Entry]) -> TraceRun:
    """One run row per trace of the span file at `path` that matches an entry (module docs)."""
    path = Path(path)
    by_id = {e.id: e for e in entries}
    by_query: dict[str, Entry] = {}
    for e in by_id.values():
        by_query.setdefault(normalize_query(e.query), e)
    traces: dict[str, list[tuple[float, dict[str, Any], Mapping[str, Any]]]] = {}
    for n, span in enumerate(_read_spans(path)):
        tid = _trace_id(span) or f"(no trace id) {n}"
        traces.setdefault(tid, []).append((_start(span), span, _attributes(span)))
    rows: dict[str, tuple[float, dict[str, Any]]] = {}
    unmatched = repeated = 0
    for spans in traces.values():
        spans.sort(key=lambda x: x[0])
        root = next(((t, a) for t, s, a in spans if _is_root(s)), None)
        if root is None:
            unmatched += 1
            continue
        eid = _meta(root[1], "entry_id")
        q = _query(root[1])
        entry = by_id.get(str(eid)) if eid is not None else None
        if entry is None and q is not None:
            entry = by_query.get(normalize_query(q))
        if entry is None:
            unmatched += 1
            continue
        if entry.id in rows:
            repeated += 1
            if rows[entry.id][0] > root[0]:
                continue
        rows[entry.id] = (root[0], _row(spans, entry))
    notes = []
    if unmatched:
        notes.append(f"{unmatched} traces match no entry (by metadata.entry_id or query): left out")
    if repeated:
        notes.append(f"{repeated} traces repeat an entry already matched: the latest is kept")
    order = [e for e in by_id if e in rows]
    return TraceRun([rows[i][1] for i in order], len(traces), notes)
