"""Tool calls as gold: the entry's expected calls, the row's calls from the adapters, the five
checks, and the gate on a filings agent that passes the wrong period."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401  (registers the commands)
from assay.checks.tools import TOOL_CHECKS
from assay.cli import app
from assay.dataset import Entry, load_dataset
from assay.errors import DataError
from assay.judge import check_entry
from assay.judge.registry import get_check
from assay.runner import run_system
from assay.runs.model import RunRow
from assay.systems import load_system

COMPANIES = ["3M", "Adobe", "Boeing", "Costco", "Intel", "Nike", "Pepsi", "Verizon"]
PERIODS = ["FY2019", "FY2020", "FY2021", "FY2022", "FY2023", "Q3 2023"]


def _figures(seed: int = 41) -> dict[tuple[str, str], tuple[float, float]]:
    """Revenue and operating income (USD millions) per company and period: the filings."""
    rng = np.random.default_rng(seed)
    out = {}
    for c in COMPANIES:
        for p in PERIODS:
            revenue = float(rng.integers(5_000, 90_000))
            out[(c, p)] = (revenue, round(revenue * float(rng.uniform(0.03, 0.3)), 1))
    return out


FIGURES = _figures()


def filings_agent_set(n: int = 48) -> list[dict[str, Any]]:
    """Entries for a filings agent: search the filings for the company and period asked, divide
    operating income by revenue with the calculator, and never send anything. Half ask about a
    fiscal year, half about another period (the categories)."""
    rows = []
    for i in range(n):
        company = COMPANIES[i % len(COMPANIES)]
        period = PERIODS[(i // len(COMPANIES)) % len(PERIODS)]
        revenue, income = FIGURES[(company, period)]
        rows.append(
            {
                "id": f"tool-{i:03d}",
                "query": f"What was {company}'s operating margin in {period}?",
                "category": "annual" if period.startswith("FY") else "interim",
                "evidence_paths": [[[f"{company}/{period}/income"]]],
                "expected_tool_calls": {
                    "calls": [
                        {
                            "name": "search_filings",
                            "arguments": {
                                "company": company,
                                "period": {"pattern": re.escape(period)},
                            },
                        },
                        {
                            "name": "calculator",
                            "arguments": {
                                "op": "div",
                                "a": {"approx": income, "abs": 0.05},
                                "b": {"approx": revenue, "rel": 0.001},
                            },
                        },
                    ],
                    "ordered": True,
                    "forbidden": ["send_email"],
                },
            }
        )
    return rows


_ASK = re.compile(r"What was (?P<company>.+)'s operating margin in (?P<period>.+)\?")


class FilingsAgent:
    """The reference agent: reads the company and period from the question, searches the
    filings with them, divides with the calculator; its answer hands over the calls it made."""

    shift = 0  # the broken variant asks for another period than the question's

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[str]:
        m = _ASK.match(query)
        assert m is not None
        return [f"{m['company']}/{m['period']}/income"]

    def _period(self, period: str) -> str:
        return PERIODS[(PERIODS.index(period) + self.shift) % len(PERIODS)]

    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
        m = _ASK.match(query)
        assert m is not None
        company, period = m["company"], self._period(m["period"])
        revenue, income = FIGURES[(company, period)]  # the search tool's reply
        margin = income / revenue  # the calculator's
        return {
            "answer": f"{company}'s operating margin in {m['period']} was {margin:.1%}.",
            "citations": [h.chunk_id for h in hits],
            "tool_calls": [
                {"name": "search_filings", "arguments": {"company": company, "period": period}},
                {"name": "calculator", "arguments": {"op": "div", "a": income, "b": revenue}},
            ],
        }


class WrongPeriodAgent(FilingsAgent):
    """The broken variant: searches the period after the one asked (the year before for Q3)."""

    shift = 1


class SendingAgent(FilingsAgent):
    """Right calls, but it mails Nike's figures out."""

    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
        out = super().answer(query, as_of=as_of, hits=hits)
        if "Nike" in query:
            out["tool_calls"].append({"name": "send_email", "arguments": {"to": "x@example.com"}})
        return out


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_gate_on_tool_arguments_fails_the_wrong_period_naming_entries(tmp_path: Path) -> None:
    ds = _write(tmp_path / "agent.jsonl", filings_agent_set())
    dataset = load_dataset(ds)
    assert len(dataset.entries) >= 40
    ref = tmp_path / "ref.jsonl"
    run_system(dataset, FilingsAgent(), k=5, out=ref, progress=False)
    again = tmp_path / "ref2.jsonl"
    run_system(dataset, FilingsAgent(), k=5, out=again, progress=False)
    broken = tmp_path / "broken.jsonl"
    run_system(dataset, WrongPeriodAgent(), k=5, out=broken, progress=False)
    row = json.loads(ref.read_text().splitlines()[0])
    assert row["tool_calls"][0] == {
        "name": "search_filings",
        "arguments": {"company": "3M", "period": "FY2019"},
    }
    fast = ["--metric", "tool_arguments", "--resamples", "200", "--permutations", "200"]
    fast += ["--no-record"]
    summary = tmp_path / "pr.md"
    bad = CliRunner().invoke(
        app, ["gate", str(ds), str(ref), str(broken), *fast, "--summary", str(summary)]
    )
    assert bad.exit_code == 1, bad.output
    assert "tool_arguments regressed in annual, interim" in bad.output
    named = set(re.findall(r"tool-\d{3}", summary.read_text()))
    # every entry's search is wrong; the summary names them per category (the first of each)
    assert named <= {f"tool-{i:03d}" for i in range(48)} and {"tool-000", "tool-040"} <= named
    good = CliRunner().invoke(app, ["gate", str(ds), str(ref), str(again), *fast])
    assert good.exit_code == 0, good.output
    # a forbidden call fails the gate on its own, however few
    sends = tmp_path / "sends.jsonl"
    run_system(dataset, SendingAgent(), k=5, out=sends, progress=False)
    forbidden = ["--metric", "forbidden_tool", *fast[2:]]
    res = CliRunner().invoke(app, ["gate", str(ds), str(ref), str(sends), *forbidden])
    assert res.exit_code == 1, res.output
    res = CliRunner().invoke(app, ["gate", str(ds), str(ref), str(again), *forbidden])
    assert res.exit_code == 0, res.output
    # the retrieval is the same in both: only the tool calls tell the broken agent apart
    same = CliRunner().invoke(app, ["gate", str(ds), str(ref), str(broken), *fast[2:]])
    assert same.exit_code == 0, same.output


# ---------------------------------------------------------------- the checks, one by one

GOLD = filings_agent_set(1)[0]
SEARCH = {"name": "search_filings", "arguments": {"company": "3M", "period": "FY2019"}}
REV, INC = FIGURES[("3M", "FY2019")]
CALC = {"name": "calculator", "arguments": {"op": "div", "a": INC, "b": REV}}
SEND = {"name": "send_email", "arguments": {"to": "x@example.com"}}


def _values(calls: list[dict[str, Any]] | None, gold: dict[str, Any] = GOLD) -> dict[str, Any]:
    entry = Entry.model_validate(gold)
    row = RunRow(entry.id, [], answer=None, extra={} if calls is None else {"tool_calls": calls})
    return check_entry(entry, None, row=row, checks=list(TOOL_CHECKS)).values


def _with(call: dict[str, Any], **args: Any) -> dict[str, Any]:
    return {"name": call["name"], "arguments": {**call["arguments"], **args}}


def test_the_reference_trajectory_passes_every_check() -> None:
    assert _values([SEARCH, CALC]) == {
        "tool_selection": True,
        "tool_arguments": True,
        "tool_order": True,
        "forbidden_tool": 0,
        "trajectory_match": 1.0,
    }


def test_tool_selection_fails_on_a_missing_or_an_unexpected_tool() -> None:
    assert _values([SEARCH])["tool_selection"] is False
    assert (
        _values([SEARCH, CALC, {"name": "web_search", "arguments": {}}])["tool_selection"] is False
    )
    assert _values([CALC, SEARCH])["tool_selection"] is True  # order is tool_order's business
    assert _values([SEARCH, _with(CALC, a=1.0)])["tool_selection"] is True  # so are arguments


def test_tool_arguments_matches_exactly_with_tolerance_or_by_pattern() -> None:
    assert _values([_with(SEARCH, period="FY2020"), CALC])["tool_arguments"] is False
    assert _values([_with(SEARCH, period="fy2019"), CALC])["tool_arguments"] is False
    assert _values([_with(SEARCH, company="3m"), CALC])["tool_arguments"] is False  # exact
    assert _values([_with(SEARCH, extra="ignored"), CALC])["tool_arguments"] is True
    assert _values([SEARCH, _with(CALC, a=INC + 0.04)])["tool_arguments"] is True  # abs 0.05
    assert _values([SEARCH, _with(CALC, a=INC + 0.06)])["tool_arguments"] is False
    assert _values([SEARCH, _with(CALC, b=REV * 1.0009)])["tool_arguments"] is True  # rel 0.001
    assert _values([SEARCH, _with(CALC, b=REV * 1.002)])["tool_arguments"] is False
    assert _values([SEARCH, _with(CALC, a=str(INC))])["tool_arguments"] is False  # not a number
    assert _values([SEARCH, _with(CALC, op="mul")])["tool_arguments"] is False
    assert _values([SEARCH])["tool_arguments"] is False  # the calculator call was never made
    # one call cannot stand for two expected ones
    twice = {**GOLD, "expected_tool_calls": {"calls": [SEARCH, SEARCH]}}
    assert _values([SEARCH], twice)["tool_arguments"] is False
    assert _values([SEARCH, SEARCH], twice)["tool_arguments"] is True
    entry = Entry.model_validate(GOLD)
    row = RunRow(entry.id, [], extra={"tool_calls": [_with(SEARCH, period="FY2020"), CALC]})
    notes = check_entry(entry, None, row=row, checks=["tool_arguments"]).notes
    assert any("search_filings" in n and "FY2019" in n for n in notes)


def test_tool_order_follows_the_gold_order_only_when_it_is_ordered() -> None:
    assert _values([CALC, SEARCH])["tool_order"] is False
    assert _values([SEARCH, SEND, CALC])["tool_order"] is True  # others may come between
    unordered = {**GOLD, "expected_tool_calls": {**GOLD["expected_tool_calls"], "ordered": False}}
    assert _values([CALC, SEARCH], unordered)["tool_order"] is None  # abstains: order is free


def test_forbidden_tool_counts_every_forbidden_call() -> None:
    assert _values([SEARCH, SEND, CALC, SEND])["forbidden_tool"] == 2
    assert _values([SEARCH, CALC, {"name": "send_emails", "arguments": {}}])["forbidden_tool"] == 0
    check = get_check("forbidden_tool")
    assert (check.kind, check.higher_is_better, check.ceiling) == ("count", False, 0)


def test_trajectory_match_gives_the_documented_partial_credit() -> None:
    values = {
        "gold": [SEARCH, CALC],
        "missing": [SEARCH],
        "swapped": [CALC, SEARCH],  # ordered gold: one of the two in order
        "extra": [SEARCH, SEND, CALC],  # both matched, three made
        "wrong": [_with(SEARCH, period="FY2020"), CALC],
        "none": [],
    }
    got = {k: _values(v)["trajectory_match"] for k, v in values.items()}
    assert got == {
        "gold": 1.0,
        "missing": 0.5,
        "swapped": 0.5,
        "extra": pytest.approx(2 / 3),
        "wrong": 0.5,
        "none": 0.0,
    }
    unordered = {**GOLD, "expected_tool_calls": {**GOLD["expected_tool_calls"], "ordered": False}}
    assert _values([CALC, SEARCH], unordered)["trajectory_match"] == 1.0


def test_every_check_abstains_without_expected_tool_calls() -> None:
    plain = {k: v for k, v in GOLD.items() if k != "expected_tool_calls"}
    assert set(_values([SEARCH, SEND], plain).values()) == {None}
    only_forbidden = {**GOLD, "expected_tool_calls": {"forbidden": ["send_email"]}}
    got = _values([SEND], only_forbidden)
    assert got["forbidden_tool"] == 1 and got["tool_arguments"] is None
    assert _values(None)["tool_selection"] is False  # a row with no calls made none


def test_bad_gold_and_bad_calls_are_named(tmp_path: Path) -> None:
    bad = {
        **GOLD,
        "expected_tool_calls": {"calls": [{"name": "x", "arguments": {"p": {"pattern": "("}}}]},
    }
    path = _write(tmp_path / "bad.jsonl", [filings_agent_set(2)[1], bad])
    with pytest.raises(DataError) as ei:
        load_dataset(path)
    assert f"{path}:2" in str(ei.value) and "expected_tool_calls" in str(ei.value)
    for gold, message in [
        ({"calls": [SEARCH], "forbidden": ["search_filings"]}, "both expected and forbidden"),
        ({"calls": []}, "give calls or forbidden"),
        ({"calls": [{"name": "c", "arguments": {"a": {"approx": 1, "abs": -1}}}]}, "abs"),
        ({"calls": [{"name": "c", "arguments": {"a": {"pattern": "x", "abs": 1}}}]}, "matcher"),
    ]:
        with pytest.raises(ValidationError, match=message):
            Entry.model_validate({**GOLD, "expected_tool_calls": gold})
    entry = Entry.model_validate(GOLD)
    row = RunRow(entry.id, [], extra={"tool_calls": [SEARCH, {"arguments": {}}]})
    with pytest.raises(DataError, match=r"tool_calls\.1\.name.*tool-000|entry tool-000"):
        check_entry(entry, None, row=row, checks=["tool_arguments"])


class _Agent(BaseHTTPRequestHandler):
    """An agent behind an HTTP endpoint: its reply carries the calls it made."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        reply = {"hits": ["a"], "answer": "x", "tool_calls": [SEARCH, {"name": "calculator"}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_both_adapters_hand_over_the_calls() -> None:
    entry = Entry.model_validate(GOLD)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        system = load_system(f"http://127.0.0.1:{server.server_address[1]}/agent")
        run = run_system([entry], system, k=1, progress=False, workers=1)
        system.close()
    finally:
        server.shutdown()
        server.server_close()
    assert run.row(entry.id).extra["tool_calls"] == [
        SEARCH,
        {"name": "calculator", "arguments": {}},
    ]
    python = run_system([entry], FilingsAgent(), k=1, progress=False)
    assert python.row(entry.id).extra["tool_calls"] == [SEARCH, CALC]

    class Bad(FilingsAgent):
        def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
            return {"answer": "x", "tool_calls": [{"name": 3}]}

    with pytest.raises(Exception, match=r"tool_calls\.0\.name"):
        run_system([entry], Bad(), k=1, progress=False)


@pytest.mark.parametrize("hits", [[], [{"chunk_id": "a", "score": 1.0}]])
def test_a_run_with_bad_tool_calls_is_refused_naming_file_line_and_field(
    tmp_path: Path, hits: list[Any]
) -> None:
    from assay.runs import load_run

    rows = [
        {"id": "tool-000", "retrieved": hits, "tool_calls": [SEARCH]},
        {"id": "tool-001", "retrieved": hits, "tool_calls": [SEARCH, {"name": 5}]},
        {"id": "tool-002", "retrieved": hits, "tool_calls": {"name": "x"}},
    ]
    path = _write(tmp_path / "run.jsonl", rows)
    for fast in (True, False):
        with pytest.raises(DataError) as ei:
            load_run(path, fast=fast)
        text = str(ei.value)
        assert f"{path}:2: tool_calls.1.name: must be a non-empty string" in text
        assert f"{path}:3: tool_calls: must be a list" in text
    good = _write(tmp_path / "good.jsonl", rows[:1])
    assert load_run(good).row("tool-000").extra["tool_calls"] == [SEARCH]
