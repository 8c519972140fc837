"""Spans ingest reads each retriever span's answer from its trace's root span (OpenInference puts
the answer on the chain, the retriever's parent): abstention and answers are no longer "-" for
a span export. Phoenix JSON exports, JSONL (the root before or after its retriever, in another
block), OTLP, and a JSON output are read alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay.logs.ingest as ingest_mod
from assay.judge.refusal import detect_refusal
from assay.logs import ingest_logs, read_log, traffic_report
from assay.logs.store import connect

REFUSAL = "I cannot find this in the filings I searched, so I cannot answer."
ANSWER = "3M's FY2018 revenue was $32.8 billion."


def _trace(tid: str, query: str, answer: Any, *, mime: str | None = None) -> list[dict[str, Any]]:
    root: dict[str, Any] = {
        "name": "RetrievalQA",
        "span_kind": "CHAIN",
        "parent_id": None,
        "context": {"trace_id": tid, "span_id": f"{tid}-root"},
        "start_time": "2026-10-03T14:05:10.000000+00:00",
        "end_time": "2026-10-03T14:05:13.000000+00:00",
        "attributes": {"input": {"value": query}, "output": {"value": answer}},
    }
    if mime:
        root["attributes"]["output"]["mime_type"] = mime
    retriever = {
        "name": "retrieve",
        "span_kind": "RETRIEVER",
        "parent_id": f"{tid}-root",
        "context": {"trace_id": tid, "span_id": f"{tid}-ret"},
        "start_time": "2026-10-03T14:05:11.000000+00:00",
        "end_time": "2026-10-03T14:05:11.250000+00:00",
        "attributes": {
            "input": {"value": query},
            "retrieval": {"documents": [{"document": {"id": "3M_2018_10K/60/2", "score": 0.9}}]},
        },
    }
    return [retriever, root]


def _answers(db: Path) -> dict[str, tuple[str | None, int | None]]:
    with connect(db) as con:
        rows = con.execute("SELECT query, answer, abstained FROM queries").fetchall()
    return {q: (a, ab) for q, a, ab in rows}


def test_a_phoenix_export_takes_answers_from_the_root_spans(tmp_path: Path) -> None:
    assert detect_refusal(REFUSAL).refused and not detect_refusal(ANSWER).refused
    spans = [*_trace("t1", "3M revenue FY2018", ANSWER), *_trace("t2", "AVER EIN", REFUSAL)]
    spans.append({**_trace("t3", "orphan", ANSWER)[0], "context": {"trace_id": "t3"}})
    export = tmp_path / "spans.json"
    export.write_text(json.dumps({"data": spans}, indent=2))
    rep = ingest_logs([export], tmp_path / "db", progress=False)
    assert rep.total("added") == 3 and rep.total("skipped_spans") == 2  # the two chains
    assert _answers(tmp_path / "db") == {
        "3M revenue FY2018": (ANSWER, 0),
        "AVER EIN": (REFUSAL, 1),
        "orphan": (None, None),  # a trace whose root span is not in the export: no answer
    }
    month = traffic_report(tmp_path / "db").periods[0].stats
    assert month["answered"] == 2 and month["abstain_rate"] == 0.5
    # the reader on its own agrees
    recs = {r.query: r.answer for r in read_log(export)}
    assert recs == {"3M revenue FY2018": ANSWER, "AVER EIN": REFUSAL, "orphan": None}


@pytest.mark.parametrize("root_first", [False, True])
def test_jsonl_spans_find_their_root_on_any_line_in_any_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root_first: bool
) -> None:
    lines: list[dict[str, Any]] = []
    for i in range(40):
        ret, root = _trace(f"t{i}", f"q{i} revenue", REFUSAL if i % 4 == 0 else ANSWER)
        lines += [root, ret] if root_first else [ret, root]
    # the roots after their retrievers, far apart: retrievers first, roots at the end
    if not root_first:
        lines = lines[0::2] + lines[1::2]
    log = tmp_path / "spans.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(ingest_mod, "BLOCK", 4096)  # many blocks
    rep = ingest_logs([log], tmp_path / "db", progress=False)
    assert rep.total("added") == 40
    got = _answers(tmp_path / "db")
    assert all(got[f"q{i} revenue"] == ((REFUSAL, 1) if i % 4 == 0 else (ANSWER, 0))
               for i in range(40))  # fmt: skip


def test_otlp_and_json_outputs(tmp_path: Path) -> None:
    def kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"key": key, "value": value}

    spans = [
        {
            "traceId": "abc", "spanId": "r1", "parentSpanId": "",
            "name": "chain", "startTimeUnixNano": "1791100800000000000",
            "attributes": [
                kv("openinference.span.kind", {"stringValue": "CHAIN"}),
                kv("output.value", {"stringValue": json.dumps({"output": ANSWER})}),
                kv("output.mime_type", {"stringValue": "application/json"}),
            ],
        },
        {
            "traceId": "abc", "spanId": "r2", "parentSpanId": "r1",
            "name": "retriever", "startTimeUnixNano": "1791100800000000000",
            "attributes": [
                kv("openinference.span.kind", {"stringValue": "RETRIEVER"}),
                kv("input.value", {"stringValue": "latest RPO"}),
                kv("retrieval.documents.0.document.id", {"stringValue": "z"}),
            ],
        },
    ]  # fmt: skip
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "otlp.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    ingest_logs([path], tmp_path / "db", progress=False)
    assert _answers(tmp_path / "db") == {"latest RPO": (ANSWER, 0)}
