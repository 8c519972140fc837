"""Agents and routers in the explorer: an entry's expected tool calls beside each run's calls,
each call marked (matched, wrong arguments, forbidden, not expected; expected calls missing),
and its gold label beside each run's label and scores."""

from __future__ import annotations

import html
import json
from pathlib import Path

from assay.dataset import Entry, call_matches, matching, parse_calls
from assay.explorer import entry_filenames, export_bundle, render_site
from assay.explorer.agentview import tools_run
from assay.runs import RunRow, write_run

from .conftest import Case

FAST = {"n_resamples": 200, "n_permutations": 200}
TOOLS = {
    "calls": [
        {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2022"}},
        {"name": "calculator", "arguments": {"op": "div"}},
    ],
    "ordered": True,
    "forbidden": ["send_email"],
}
CALLS = {  # per run (by file stem order): the first right, the second wrong in three ways
    0: [
        {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2022"}},
        {"name": "calculator", "arguments": {"op": "div", "a": 1577}},
    ],
    1: [
        {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2021"}},
        {"name": "send_email", "arguments": {"to": "cfo@x.com"}},
        {"name": "web_search", "arguments": {"q": "3M capex"}},
    ],
}
LABELS = ["10-K", "10-Q", "8-K", "DEF 14A"]


def _add(case: Case) -> None:
    entries = [
        {
            "id": "agent:capex",
            "query": "3M FY2022 capex per share?",
            "category": "agent",
            "answerable": False,
            "expected_tool_calls": TOOLS,
        },
        {
            "id": "route:pay",
            "query": "What is the CEO pay ratio?",
            "category": "routing",
            "answerable": False,
            "expected_label": {"label": "DEF 14A", "label_set": "filing", "allowed": LABELS},
        },
    ]
    with open(case.dataset, "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in entries)
    for i, path in enumerate(case.runs):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        rows.append({"id": "agent:capex", "retrieved": [], "tool_calls": CALLS[min(i, 1)]})
        label = "DEF 14A" if i == 0 else "8-K"
        scores = (
            {"DEF 14A": 0.7, "8-K": 0.2, "10-K": 0.1} if i == 0 else {"8-K": 0.6, "DEF 14A": 0.4}
        )
        rows.append({"id": "route:pay", "retrieved": [], "label": label, "label_scores": scores})
        write_run(path, rows)


def test_the_bundle_marks_each_call_and_each_label(case: Case) -> None:
    _add(case)
    data = export_bundle(case.dataset, case.runs, chunks=case.chunks, **FAST).data
    agent = next(e for e in data["entries"] if e["id"] == "agent:capex")
    assert [c["name"] for c in agent["tools"]["calls"]] == ["search_filings", "calculator"]
    good, bad = (agent["runs"][n]["tools"] for n in list(agent["runs"])[:2])
    assert [c["mark"] for c in good["calls"]] == ["matched", "matched"] and good["missing"] == []
    assert [c["mark"] for c in bad["calls"]] == ["wrong arguments", "forbidden", "not expected"]
    assert [c["name"] for c in bad["missing"]] == ["search_filings", "calculator"]
    route = next(e for e in data["entries"] if e["id"] == "route:pay")
    assert route["label"] == {"label": "DEF 14A", "set": "filing", "allowed": LABELS}
    first, second = (route["runs"][n]["label"] for n in list(route["runs"])[:2])
    assert first["correct"] and first["scores"][0] == {
        "label": "DEF 14A",
        "score": 0.7,
        "gold": True,
    }
    assert not second["correct"] and second["label"] == "8-K"


def test_the_entry_page_shows_calls_beside_the_gold(case: Case, tmp_path: Path) -> None:
    _add(case)
    bundle = export_bundle(case.dataset, case.runs, chunks=case.chunks, **FAST)
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    names = entry_filenames([e["id"] for e in bundle.data["entries"]])
    page = html.unescape((site / names["agent:capex"]).read_text(encoding="utf-8"))
    assert "expected tool calls (in this order)" in page and "never: " in page
    assert 'class="call forbidden"' in page and 'class="call wrong-arguments"' in page
    assert "missing: " in page
    page = html.unescape((site / names["route:pay"]).read_text(encoding="utf-8"))
    assert "expected label (filing)" in page and "label given: <b>8-K</b>" in page


def test_calls_are_paired_as_the_judge_pairs_them() -> None:
    """A pairing that needs an augmenting path: the first expected call (any search) takes the
    first call made, then gives it up to the second (search 3M) and takes the other; a greedy
    pairing would leave the second expected call missing. The explorer marks both matched, each
    against the expected call `assay.dataset.matching` pairs it with (the workbench's pairing)."""
    gold = {"calls": [{"name": "search"}, {"name": "search", "arguments": {"company": "3M"}}]}
    entry = Entry.model_validate(
        {
            "id": "a",
            "query": "q",
            "category": "agent",
            "answerable": False,
            "expected_tool_calls": gold,
        }
    )
    made = [{"name": "search", "arguments": {"company": "3M"}}, {"name": "search"}]
    got = tools_run(entry, RunRow(id="a", retrieved=None, extra={"tool_calls": made}))
    assert got is not None and got["missing"] == []
    assert [(c["mark"], c["note"]) for c in got["calls"]] == [
        ("matched", "expected call 2"),
        ("matched", "expected call 1"),
    ]
    calls, parsed = list(entry.expected_tool_calls.calls), parse_calls(made)  # type: ignore[union-attr]
    pair = matching(2, 2, lambda i, j: call_matches(calls[i], parsed[j]))
    assert [f"expected call {pair[j] + 1}" for j in range(2)] == [c["note"] for c in got["calls"]]
