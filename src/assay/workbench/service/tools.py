"""The tool-call task kind: an expert passes or fails each call an agent made.

`import-run` opens a tool task (kind ``tool``) for a run row on an item whose entry has
``expected_tool_calls`` (`assay.dataset.toolgold`), or whose row made tool calls (``tool_calls``,
else its trace's); one task per (entry, run). The task page shows the question, the gold calls
(expected, ordered or not, forbidden tools) beside the calls the system made, paired as
`assay.checks.tools` pairs them for ``tool_arguments`` (`assay.dataset.matching` over
`call_matches`): a call made is marked ``matched`` (with the expected call it answers, and
``out of order`` when the gold is ordered and it comes after a later expected call),
``forbidden``, ``wrong arguments`` (an expected tool whose arguments do not match: each argument
of the closest unanswered expected call of that tool is shown with the value made and whether it
matches) or ``not expected``; an expected call no call answers is listed as missing.

The expert gives Pass or Fail per call made (a Fail needs a one-sentence critique), says for each
missing expected call whether it was needed, and may add a note
(`assay.workbench.payloads.ToolPayload`). Blind like every kind: the other experts' labels are
never shown before submitting, nor are the automatic checks' verdicts (``tool_selection``,
``tool_arguments``, ``tool_order``, ``forbidden_tool``, ``trajectory_match``): those are in the
panel only for someone who has submitted a label on the task, or for an adjudicator who did not
label it (`checks_visible`). Labels are double-annotated by the queue's overlap, adjudicated per
call, counted in agreement per call (`assay.workbench.agreement`) and exported with each
annotator's label per call (`assay.workbench.export.labels_long`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from assay.dataset import (
    ToolCall,
    ToolCallGold,
    argument_matches,
    call_matches,
    matching,
    parse_calls,
)
from assay.errors import DataError
from assay.workbench.models import Item, Output, Task

__all__ = [
    "ToolPanel",
    "automatic_checks",
    "check_tool_label",
    "is_tool_item",
    "row_tool_calls",
    "stored_panel",
    "tool_feedback",
    "tool_gold",
    "tool_panel",
]


def is_tool_item(entry: dict[str, Any]) -> bool:
    """An entry that names the tool calls it expects (or forbids)."""
    return entry.get("expected_tool_calls") is not None


def row_tool_calls(row: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The calls a run row made, as ``{name, arguments, result}``: its ``tool_calls`` (what the
    adapters write and `assay.checks.tools` reads), else its trace's (``trace.tool_calls``, at the
    top level or under ``extra``); None when it has neither (``[]``: it says it made none)."""
    calls = row.get("tool_calls")
    if calls is None:
        trace = row.get("trace")
        if trace is None and isinstance(row.get("extra"), dict):
            trace = row["extra"].get("trace")
        calls = trace.get("tool_calls") if isinstance(trace, dict) else None
    if not isinstance(calls, list):
        return None
    out = []
    for c in calls[:200]:
        if not isinstance(c, dict):
            continue
        out.append(
            {
                "name": str(c.get("name") or c.get("tool") or "?")[:200],
                "arguments": c.get("arguments", c.get("args", c.get("input"))),
                "result": c.get("result", c.get("output")),
            }
        )
    return out


def _made(calls: list[dict[str, Any]] | None) -> list[ToolCall]:
    """The stored calls as `ToolCall` values (arguments that are not an object, as a trace may
    hold a JSON string, match no gold argument)."""
    rows = [
        {
            "name": c.get("name") or "?",
            "arguments": c["arguments"] if isinstance(c.get("arguments"), dict) else {},
        }
        for c in calls or []
    ]
    return parse_calls(rows)


@dataclass(frozen=True)
class ToolPanel:
    """What a tool task page shows besides the question: the gold (None when the entry has no
    tool-call gold), each call made with its mark, the expected calls no call answers, and the
    automatic checks' verdicts (None until `checks_visible`)."""

    gold: dict[str, Any] | None
    calls: list[dict[str, Any]]
    missing: list[dict[str, Any]]
    checks: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold": self.gold,
            "calls": self.calls,
            "missing": self.missing,
            "checks": self.checks,
        }


def _args_diff(gold_args: dict[str, Any], got: dict[str, Any]) -> list[dict[str, Any]]:
    """Each argument the gold names: its gold, the value made (absent: ``present`` false) and
    whether it matches (`argument_matches`)."""
    return [
        {
            "name": k,
            "gold": v,
            "got": got.get(k),
            "present": k in got,
            "ok": k in got and argument_matches(v, got[k]),
        }
        for k, v in gold_args.items()
    ]


def tool_panel(entry: dict[str, Any], stored: list[dict[str, Any]] | None) -> ToolPanel:
    """The tool panel of an item (its entry as imported) whose output made the `stored` calls
    (`row_tool_calls`)."""
    raw = entry.get("expected_tool_calls")
    gold = ToolCallGold.model_validate(raw) if raw is not None else None
    made = _made(stored)
    expected = list(gold.calls) if gold is not None else []
    pair = matching(len(expected), len(made), lambda a, b: call_matches(expected[a], made[b]))
    answered = set(pair.values())
    last = -1
    calls: list[dict[str, Any]] = []
    for j, (m, shown) in enumerate(zip(made, stored or [], strict=True)):
        row: dict[str, Any] = {
            "index": j + 1,
            "name": m.name,
            "arguments": shown.get("arguments"),
            "result": shown.get("result"),
            "expected": None,
            "args": [],
        }
        if j in pair:
            i = pair[j]
            row["mark"] = "matched"
            row["expected"] = i + 1
            row["args"] = _args_diff(expected[i].arguments, m.arguments)
            if gold is not None and gold.ordered and i < last:
                row["mark"] = "out of order"
            last = max(last, i)
        elif gold is not None and m.name in gold.forbidden:
            row["mark"] = "forbidden"
        elif any(c.name == m.name for c in expected):
            row["mark"] = "wrong arguments"
            same = [i for i, c in enumerate(expected) if c.name == m.name]
            open_ = [i for i in same if i not in answered] or same
            # the closest: the unanswered expected call of this tool with most arguments right
            i = max(
                open_,
                key=lambda k: (
                    sum(d["ok"] for d in _args_diff(expected[k].arguments, m.arguments)),
                    -k,
                ),
            )
            row["expected"] = i + 1
            row["args"] = _args_diff(expected[i].arguments, m.arguments)
        else:
            row["mark"] = "not expected"
        calls.append(row)
    missing = [
        {"index": i + 1, "name": c.name, "arguments": c.arguments}
        for i, c in enumerate(expected)
        if i not in answered
    ]
    shown_gold = (
        None
        if gold is None
        else {
            "calls": [{"name": c.name, "arguments": c.arguments} for c in gold.calls],
            "ordered": gold.ordered,
            "forbidden": list(gold.forbidden),
        }
    )
    return ToolPanel(gold=shown_gold, calls=calls, missing=missing)


# the known verdict on a call by its mark against the tool-call gold (the page's rule: pass a
# call the question needed, made with the right arguments at the right point); a call the gold
# does not name ("not expected") has none: the gold does not say whether it was needed
_KNOWN_VERDICT = {
    "matched": "pass",
    "wrong arguments": "fail",
    "forbidden": "fail",
    "out of order": "fail",
}


def _show(value: Any) -> str:
    """An argument value as the feedback prints it (JSON, cut at 200 characters)."""
    import orjson

    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 200 else text[:199] + "\u2026"


def _why(call: dict[str, Any], gold_calls: list[dict[str, Any]]) -> str:
    """One sentence on a call's known verdict: the gold call it answers or should have."""
    mark, expected = call["mark"], call.get("expected")
    want = gold_calls[expected - 1] if expected else None
    if mark == "matched" and want is not None:
        return f"matches expected call {expected} ({want['name']})"
    if mark == "out of order":
        return f"answers expected call {expected} ({call['name']}), after a later expected call"
    if mark == "forbidden":
        return f"{call['name']} is a forbidden tool"
    if mark == "wrong arguments" and want is not None:
        wrong = [
            f"{d['name']}: {_show(d['got']) if d['present'] else 'absent'}, gold {_show(d['gold'])}"
            for d in call["args"]
            if not d["ok"]
        ]
        return f"expected call {expected} ({want['name']}) with other arguments: " + "; ".join(
            wrong
        )
    return "the gold does not name this call: no known verdict"


def tool_gold(entry: dict[str, Any], stored: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """A calibration tool task's known label, from its entry's tool-call gold (None without
    one): the gold calls (``tool_calls``), and per call made its mark, the known verdict (pass
    when it matches its expected call; fail when forbidden, with wrong arguments or out of
    order; None when the gold does not name it) and why; each missing expected call is needed.
    Stored as the task's gold at import; `tool_feedback` compares a label with it."""
    panel = tool_panel(entry, stored)
    if panel.gold is None:
        return None
    gold_calls = panel.gold["calls"]
    calls = [
        {
            "index": c["index"],
            "name": c["name"],
            "mark": c["mark"],
            "verdict": _KNOWN_VERDICT.get(c["mark"]),
            "expected": c["expected"],
            "why": _why(c, gold_calls),
        }
        for c in panel.calls
    ]
    missing = [
        {
            "index": m["index"],
            "name": m["name"],
            "needed": True,
            "why": f"expected call {m['index']} ({m['name']}) was never made",
        }
        for m in panel.missing
    ]
    return {"tool_calls": panel.gold, "calls": calls, "missing": missing}


def tool_feedback(gold: dict[str, Any], payload: dict[str, Any]) -> dict[str, bool]:
    """Whether a tool label agrees with the known one (`tool_gold`), per call made with a known
    verdict (``call N``) and per missing expected call (``missing N``)."""
    mine_calls, mine_missing = payload.get("calls") or [], payload.get("missing") or []
    out: dict[str, bool] = {}
    for i, g in enumerate(gold.get("calls") or []):
        if g.get("verdict") is not None:
            got = mine_calls[i].get("verdict") if i < len(mine_calls) else None
            out[f"call {i + 1}"] = got == g["verdict"]
    for i, g in enumerate(gold.get("missing") or []):
        got = mine_missing[i].get("needed") if i < len(mine_missing) else None
        out[f"missing {i + 1}"] = got == g["needed"]
    return out


_Q_STORED = (
    select(Item.entry, Output.tool_calls)
    .select_from(Task)
    .join(Item, Item.id == Task.item_id)
    .outerjoin(Output, Output.id == Task.output_id)
)


def stored_panel(conn: Any, task_id: int) -> ToolPanel:
    """The `tool_panel` of a stored task: its item's entry and its output's calls, read in one
    statement on `conn` (a Core connection or an ORM session)."""
    found = conn.execute(_Q_STORED.where(Task.id == task_id)).first()
    entry, calls = found if found is not None else (None, None)
    return tool_panel(dict(entry or {}), calls)


def automatic_checks(
    entry: dict[str, Any], stored: list[dict[str, Any]] | None
) -> dict[str, Any] | None:
    """The tool-call checks' values and notes on this output (`assay.checks.tools`), or None when
    the entry has no tool-call gold (the checks abstain)."""
    if entry.get("expected_tool_calls") is None:
        return None
    from assay.checks.tools import TOOL_CHECKS
    from assay.dataset import Entry
    from assay.judge import check_entry
    from assay.runs import RunRow

    e = Entry.model_validate(entry)
    row = RunRow(
        id=e.id,
        retrieved=None,
        extra={"tool_calls": [{"name": c.name, "arguments": c.arguments} for c in _made(stored)]},
    )
    res = check_entry(e, None, checks=list(TOOL_CHECKS), row=row)
    return {
        "values": {k: res.values[k] for k in TOOL_CHECKS if res.values.get(k) is not None},
        "notes": list(res.notes),
    }


def check_tool_label(
    panel: ToolPanel, payload: dict[str, Any], where: str = "<submission>"
) -> None:
    """Refuse a tool label that does not give one verdict per call made and one answer per
    missing expected call (a DataError naming the field)."""
    n_calls, n_missing = len(panel.calls), len(panel.missing)
    got_calls, got_missing = len(payload.get("calls") or []), len(payload.get("missing") or [])
    if got_calls != n_calls:
        raise DataError(
            f"give one verdict per call made: {n_calls} call(s), not {got_calls}",
            file=where,
            field="calls",
        )
    if got_missing != n_missing:
        raise DataError(
            f"say for each missing expected call whether it was needed: {n_missing} "
            f"missing, not {got_missing}",
            file=where,
            field="missing",
        )
