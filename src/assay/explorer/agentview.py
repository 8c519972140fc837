"""The explorer's panels for agents and routers: an entry's expected tool calls beside each
run's calls, differences marked, and its gold label beside each run's label and scores.

Calls are paired as `assay.checks.tools` pairs them for ``tool_arguments`` (`assay.dataset.matching`:
the largest set of expected calls each matched by a distinct call made, name and arguments); a call made is marked
``matched`` (with the expected call it answers), ``forbidden`` (a tool the gold forbids),
``wrong arguments`` (an expected tool, but no pairing uses it) or ``not expected``; an expected
call no call matches is listed as ``missing``.
"""

from __future__ import annotations

from typing import Any

from assay.dataset import (
    Entry,
    call_matches,
    matching,
    parse_calls,
    predicted,
    scores_of,
)
from assay.runs import RunRow

__all__ = ["label_gold", "label_run", "tools_gold", "tools_run"]


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def tools_gold(entry: Entry) -> dict[str, Any] | None:
    """The entry's expected calls as the page shows them (None without tool-call gold)."""
    gold = entry.expected_tool_calls
    if gold is None:
        return None
    return {
        "calls": [_call(c.name, c.arguments) for c in gold.calls],
        "ordered": gold.ordered,
        "forbidden": list(gold.forbidden),
    }


def tools_run(entry: Entry, row: RunRow | None) -> dict[str, Any] | None:
    """One run's calls against the entry's gold, each marked (module docs); a malformed
    ``tool_calls`` is shown as such, not raised (the checks name it)."""
    gold = entry.expected_tool_calls
    if gold is None:
        return None
    try:
        made = parse_calls(None if row is None else row.extra.get("tool_calls"))
    except ValueError as exc:
        return {"error": str(exc), "calls": [], "missing": []}
    calls = list(gold.calls)
    pair = matching(len(calls), len(made), lambda i, j: call_matches(calls[i], made[j]))
    expected_names = {c.name for c in gold.calls}
    out = []
    for j, m in enumerate(made):
        if j in pair:
            mark, note = "matched", f"expected call {pair[j] + 1}"
        elif m.name in gold.forbidden:
            mark, note = "forbidden", "a tool this entry must never call"
        elif m.name in expected_names:
            mark, note = "wrong arguments", "an expected tool, arguments not as expected"
        else:
            mark, note = "not expected", ""
        out.append(_call(m.name, m.arguments) | {"mark": mark, "note": note})
    matched = set(pair.values())
    missing = [
        _call(c.name, c.arguments) | {"index": i + 1}
        for i, c in enumerate(gold.calls)
        if i not in matched
    ]
    return {"calls": out, "missing": missing}


def label_gold(entry: Entry) -> dict[str, Any] | None:
    """The entry's gold label and its set (None without one)."""
    g = entry.expected_label
    if g is None:
        return None
    return {"label": g.label, "set": g.set_name, "allowed": list(g.allowed or ())}


def label_run(entry: Entry, row: RunRow | None) -> dict[str, Any] | None:
    """One run's label (and its scores, highest first) against the entry's gold label."""
    g = entry.expected_label
    if g is None:
        return None
    data = None if row is None else {"label": row.extra.get("label"), **row.extra}
    try:
        given = predicted(data)
        labels = tuple(g.allowed or sorted((data or {}).get("label_scores") or {}))
        scores = scores_of(data, labels) if labels else None
    except ValueError as exc:
        return {"error": str(exc)}
    ranked = sorted(zip(labels, scores, strict=True), key=lambda x: (-x[1], x[0])) if scores else []
    return {
        "label": given,
        "correct": given == g.label,
        "scores": [{"label": lab, "score": s, "gold": lab == g.label} for lab, s in ranked],
    }
