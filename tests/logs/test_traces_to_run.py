"""`assay logs to-run`: an agent's OpenInference traces read back into a run whose tool calls
the tool-call checks decide (TOOL spans in order; the LLM's requested calls when a trace has
none), matched to entries by metadata.entry_id or by query; unmatched traces counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import Entry
from assay.logs.traces import run_from_traces

runner = CliRunner()


def _span(
    tid: str, sid: str, parent: str | None, kind: str, t: int, **attrs: Any
) -> dict[str, Any]:
    return {
        "name": attrs.pop("name", kind.lower()),
        "context": {"trace_id": tid, "span_id": sid},
        "parent_id": parent,
        "span_kind": kind,
        "start_time": f"2026-10-03T14:05:{t:02d}Z",
        "end_time": f"2026-10-03T14:05:{t + 1:02d}Z",
        "attributes": {"openinference.span.kind": kind, **attrs},
    }


ENTRIES = [
    Entry.model_validate(
        {
            "id": "agent-1",
            "query": "What was 3M's FY2022 capex?",
            "category": "tools",
            "expected_tool_calls": {
                "calls": [
                    {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2022"}},
                    {"name": "calculator", "arguments": {"op": "div"}},
                ],
                "ordered": True,
                "forbidden": ["send_email"],
            },
        }
    ),
    Entry.model_validate(
        {
            "id": "agent-2",
            "query": "Email the CFO the margin",
            "category": "tools",
            "expected_tool_calls": {"calls": [], "forbidden": ["send_email"]},
        }
    ),
]


def _traces() -> list[dict[str, Any]]:
    return [
        # trace a: matched by query (another spelling); two tools out of order in the file
        _span(
            "a",
            "a1",
            None,
            "CHAIN",
            0,
            **{"input.value": "what was 3M’s  FY2022 capex", "output.value": "$1,577 million"},
        ),
        _span(
            "a",
            "a3",
            "a1",
            "TOOL",
            5,
            **{"tool.name": "calculator", "input.value": '{"op": "div", "a": 1577, "b": 1}'},
        ),
        _span(
            "a",
            "a2",
            "a1",
            "TOOL",
            2,
            **{
                "tool.name": "search_filings",
                "input.value": '{"company": "3M", "period": "FY2022"}',
            },
        ),
        _span(
            "a",
            "a4",
            "a1",
            "RETRIEVER",
            3,
            **{
                "input.value": "3M capex",
                "retrieval.documents.0.document.id": "3m-2022#p40",
                "retrieval.documents.0.document.score": 9.5,
            },
        ),
        # trace b: matched by metadata.entry_id; no TOOL span, the LLM asked for a send
        _span(
            "b",
            "b1",
            None,
            "CHAIN",
            10,
            **{
                "input.value": "a paraphrase no entry has",
                "metadata": json.dumps({"entry_id": "agent-2"}),
            },
        ),
        _span(
            "b",
            "b2",
            "b1",
            "LLM",
            11,
            **{
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "send_email",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"to": "cfo@x.com"}',
            },
        ),
        # trace c: matches nothing
        _span("c", "c1", None, "CHAIN", 20, **{"input.value": "unrelated question"}),
    ]


def test_traces_become_rows_with_tool_calls_in_order() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "spans.jsonl"
        f.write_text("".join(json.dumps(s) + "\n" for s in _traces()))
        got = run_from_traces(f, ENTRIES)
    a, b = got.rows
    assert a["id"] == "agent-1" and a["answer"] == "$1,577 million"
    assert [c["name"] for c in a["tool_calls"]] == ["search_filings", "calculator"]
    assert a["tool_calls"][1]["arguments"] == {"op": "div", "a": 1577, "b": 1}
    assert a["retrieved"] == [{"chunk_id": "3m-2022#p40", "score": 9.5}]
    assert b["id"] == "agent-2" and b["tool_calls"] == [
        {"name": "send_email", "arguments": {"to": "cfo@x.com"}}
    ]
    assert got.traces == 3 and got.notes == [
        "1 traces match no entry (by metadata.entry_id or query): left out"
    ]


def test_the_tool_checks_decide_a_run_made_from_traces(tmp_path: Path) -> None:
    spans = tmp_path / "spans.json"
    spans.write_text(json.dumps({"data": _traces()}))  # one document, as Phoenix exports it
    ds = tmp_path / "agent.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in ENTRIES))
    run = tmp_path / "run.jsonl"
    res = runner.invoke(
        app, ["logs", "to-run", str(spans), "--dataset", str(ds), "--out", str(run)]
    )
    assert res.exit_code == 0, res.output
    assert "2 rows from 3 traces" in res.output
    res = runner.invoke(
        app,
        [
            "check",
            str(ds),
            str(run),
            "--checks",
            "tool_arguments,tool_order,forbidden_tool",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["agent-1"]["tool_arguments"] is True and rows["agent-1"]["tool_order"] is True
    assert rows["agent-2"]["forbidden_tool"] == 1  # the send the LLM asked for
