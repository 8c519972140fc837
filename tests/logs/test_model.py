"""OpenInference / Phoenix retriever spans map onto log records."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from assay.logs import ReadStats, read_log
from assay.logs.model import normalize_query

NESTED = {
    "name": "retrieve",
    "span_kind": "RETRIEVER",
    "context": {"trace_id": "t1", "span_id": "s1"},
    "start_time": "2026-10-03T14:05:11.000000+00:00",
    "end_time": "2026-10-03T14:05:11.250000+00:00",
    "attributes": {
        "input": {"value": "AVER sub rev growth y/y"},
        "session": {"id": "sess-9"},
        "metadata": json.dumps({"as_of": "2026-09-30"}),
        "retrieval": {
            "documents": [
                {"document": {"id": "aver#p3#c2", "score": 0.91, "content": "..."}},
                {"document": {"id": "aver#p4#c1", "score": 0.5}},
            ]
        },
    },
}
LLM_SPAN = {**NESTED, "span_kind": "LLM", "attributes": {"input": {"value": "prompt"}}}
FLAT = {
    "name": "VectorStoreRetriever",
    "start_time": "2026-10-04T08:00:00Z",
    "attributes": {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "KEST EIN",
        "retrieval.documents.1.document.id": "b",
        "retrieval.documents.0.document.id": "a",
        "retrieval.documents.0.document.score": 2.0,
    },
}
OTLP = {
    "resourceSpans": [
        {
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "name": "retriever",
                            "startTimeUnixNano": "1791100800000000000",
                            "endTimeUnixNano": "1791100800040000000",
                            "attributes": [
                                {"key": "openinference.span.kind",
                                 "value": {"stringValue": "RETRIEVER"}},
                                {"key": "input.value", "value": {"stringValue": "latest RPO"}},
                                {"key": "retrieval.documents.0.document.id",
                                 "value": {"stringValue": "z"}},
                                {"key": "retrieval.documents.0.document.score",
                                 "value": {"doubleValue": 0.25}},
                            ],
                        }
                    ]
                }
            ]
        }
    ]
}  # fmt: skip


def test_phoenix_json_export(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"data": [NESTED, LLM_SPAN, FLAT]}, indent=2))
    stats = ReadStats()
    recs = list(read_log(path, stats))
    assert stats.skipped_spans == 1 and stats.bad == 0 and len(recs) == 2
    a, b = recs
    assert a.query == "AVER sub rev growth y/y"
    assert a.retrieved == (("aver#p3#c2", 0.91), ("aver#p4#c1", 0.5))
    assert a.ts == dt.datetime(2026, 10, 3, 14, 5, 11, tzinfo=dt.UTC)
    assert a.latency_ms is not None and abs(a.latency_ms - 250.0) < 1e-6
    assert a.session == "sess-9" and a.as_of == dt.date(2026, 9, 30)
    assert b.retrieved == (("a", 2.0), ("b", None))  # ordered by index
    assert b.as_of == dt.date(2026, 10, 4)  # defaults to the span's date


def test_phoenix_jsonl_and_otlp(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    bad = {**FLAT, "attributes": {"openinference.span.kind": "RETRIEVER"}}
    path.write_text("\n".join(json.dumps(x) for x in (NESTED, OTLP, bad)) + "\n")
    stats = ReadStats()
    recs = list(read_log(path, stats))
    assert [r.query for r in recs] == ["AVER sub rev growth y/y", "latest RPO"]
    otlp = recs[1]
    assert otlp.retrieved == (("z", 0.25),)
    assert otlp.ts == dt.datetime.fromtimestamp(1791100800, tz=dt.UTC)
    assert otlp.latency_ms is not None and abs(otlp.latency_ms - 40.0) < 1e-6
    assert stats.bad == 1
    assert str(stats.problems[0]) == (
        f"{path}:3: attributes.input.value: a retriever span needs its query in input.value"
    )


def test_normalize_query() -> None:
    assert normalize_query("  AVER  Sub-Rev, growth (y/y)? ") == "aver sub-rev growth y/y"
    assert normalize_query("ＡＶＥＲ") == "aver"
