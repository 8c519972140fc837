"""Tool-call items planted into a demo store: a filings agent's question whose gold expects a
search with the right company and period, then a calculator with the right operands, in that
order, and forbids sending mail; a run that searches the wrong period, divides right and sends
mail; a second item without tool-call gold whose run's trace made one call; and a row without
an answer that made a call. Shared by the tool-task tests and the browser test."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.workbench import service as svc
from assay.workbench.db import Database
from tests.conftest import write_jsonl

from .conftest import task_id

GOLD = {
    "calls": [
        {"name": "search_filings", "arguments": {"company": "3M", "period": {"pattern": "FY2022"}}},
        {
            "name": "calculator",
            "arguments": {"op": "div", "a": {"approx": 8.7, "abs": 0.05}, "b": 100},
        },
    ],
    "ordered": True,
    "forbidden": ["send_email"],
}
MARGIN_CALLS = [
    {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2021"}},
    {"name": "calculator", "arguments": {"op": "div", "a": 8.71, "b": 100.0}},
    {"name": "send_email", "arguments": {"to": "desk@example.com", "body": "8.7%"}},
]


@dataclass(frozen=True)
class ToolRoom:
    margin: int  # tool task: wrong period, right division, a forbidden send (3 calls, 1 missing)
    free: int  # tool task on an item without tool-call gold (1 call from the trace)
    bare: int  # tool task of a row without an answer (1 call matching the gold's search)
    margin_judge: int  # the judging task beside `margin`


def plant_tools(db: Database, tmp: Path, *, retrieved: list[str] | None = None) -> ToolRoom:
    """Plant the items and runs; `retrieved`: chunk ids the margin row retrieved (a restricted
    one makes its tasks restricted)."""
    entries = [
        {
            "id": "tool:margin",
            "query": "What was 3M's operating margin in FY2022?",
            "category": "agent",
            "metadata": {"domain": "Tools"},
            "expected_tool_calls": GOLD,
        },
        {
            "id": "tool:free",
            "query": "Look up Adobe's latest 10-K.",
            "category": "agent",
            "metadata": {"domain": "Tools"},
        },
        {
            "id": "tool:bare",
            "query": "Find 3M's FY2022 filing.",
            "category": "agent",
            "metadata": {"domain": "Tools"},
            "expected_tool_calls": {"calls": [GOLD["calls"][0]], "forbidden": ["send_email"]},
        },
    ]
    run = [
        {
            "id": "tool:margin",
            "answer": "3M's operating margin was 8.7% in FY2022.",
            "retrieved": retrieved or [],
            "tool_calls": MARGIN_CALLS,
        },
        {
            "id": "tool:free",
            "answer": "Here is Adobe's 10-K.",
            "retrieved": [],
            "trace": {
                "tool_calls": [
                    {"name": "lookup", "arguments": {"ticker": "ADBE"}, "result": "10-K 2023"}
                ]
            },
        },
        {
            "id": "tool:bare",
            "retrieved": [],
            "tool_calls": [
                {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2022"}}
            ],
        },
    ]
    svc.import_entries(db, write_jsonl(tmp / "tool-entries.jsonl", entries), kinds=())
    svc.import_run(db, write_jsonl(tmp / "agent.jsonl", run), run_name="agent")
    return ToolRoom(
        margin=task_id(db, "tool:margin", "tool"),
        free=task_id(db, "tool:free", "tool"),
        bare=task_id(db, "tool:bare", "tool"),
        margin_judge=task_id(db, "tool:margin", "judge"),
    )


def tool_label(*verdicts: str, missing: tuple[bool, ...] = (), note: str = "") -> dict[str, Any]:
    """A tool payload: one verdict per call (a Fail gets a critique naming its call)."""
    return {
        "calls": [
            {"verdict": v, "critique": f"call {i} is wrong" if v == "fail" else ""}
            for i, v in enumerate(verdicts, start=1)
        ],
        "missing": [{"needed": n, "critique": ""} for n in missing],
        "note": note,
    }
