"""Tool-call checks: did an agent call the right tools, with the right arguments, in the right
order, and never a forbidden one?

They read the entry's ``expected_tool_calls`` (`assay.dataset.toolgold`) and the run row's
``tool_calls`` (``[{"name", "arguments"}]``, what the Python and HTTP adapters hand over; a row
without it made no call), and abstain on entries without expected tool calls. They run on rows
without an answer too.

* ``tool_selection`` (binary): the tools called are exactly the tools expected, each called at
  least as many times as the gold lists it (arguments are not looked at).
* ``tool_arguments`` (binary): every expected call is made: each is paired with a distinct call
  of the same tool whose arguments match the gold (exactly, within a numeric tolerance, or by
  pattern); arguments the gold does not name are free.
* ``tool_order`` (binary; only entries whose gold is ``ordered``): the expected tools' names
  appear in the order listed within the sequence of calls made (other calls may come between).
* ``forbidden_tool`` (count, lower is better, ceiling 0): calls made to a tool the gold forbids;
  a gate fails on a single one.
* ``trajectory_match`` (graded): the whole sequence against the gold's. m is the number of
  expected calls matched by calls made (name and arguments): in order (the longest common
  subsequence) when the gold is ``ordered``, else as a pairing; the credit is
  m / max(expected, made), so a missing call, a wrong one, an extra one and a forbidden one each
  cost, and 1 means the trajectory is the gold's call for call.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from assay.dataset import (
    ExpectedToolCall,
    ToolCall,
    ToolCallGold,
    call_matches,
    longest_common,
    max_matching,
    parse_calls,
)
from assay.errors import DataError
from assay.judge.context import CheckContext
from assay.judge.registry import Outcome, check, check_group

__all__ = ["TOOL_CHECKS", "made_calls"]

TOOL_CHECKS = (
    "tool_selection",
    "tool_arguments",
    "tool_order",
    "forbidden_tool",
    "trajectory_match",
)
"""The tool-call checks, in the order reports show them."""


def _gold(entry: Any) -> ToolCallGold | None:
    return getattr(entry, "expected_tool_calls", None)


def _expects_calls(entry: Any) -> bool:
    gold = _gold(entry)
    return gold is not None and bool(gold.calls)


def _ordered(entry: Any) -> bool:
    gold = _gold(entry)
    return gold is not None and gold.ordered and len(gold.calls) > 1


check_group(
    "tools",
    applies=lambda entry: _gold(entry) is not None,
    description="agents' tool calls: entries with expected_tool_calls",
)


def made_calls(ctx: CheckContext) -> list[ToolCall]:
    """The calls the run row says the system made ([] without a row or a ``tool_calls``); a
    malformed one is a DataError naming the entry and the field."""
    row = ctx.row
    if row is None:
        return []
    memo: dict[int, list[ToolCall]] = ctx.__dict__.setdefault("_made_calls", {})
    got = memo.get(id(row))  # the five checks read one row: parsed once
    if got is not None:
        return got
    try:
        got = memo[id(row)] = parse_calls(row.extra.get("tool_calls"))
        return got
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise DataError(f"entry {ctx.entry.id}: {message}", file="run", field=field) from None


def _names(calls: list[ToolCall]) -> str:
    return ", ".join(c.name for c in calls) or "no call"


@check("tool_selection", group="tools", needs_answer=False, rates=_expects_calls)
def tool_selection(ctx: CheckContext) -> Outcome | None:
    """The tools called are exactly the expected ones, each at least as often as expected."""
    gold = _gold(ctx.entry)
    if gold is None or not gold.calls:
        return None
    made = made_calls(ctx)
    want = Counter(c.name for c in gold.calls)
    got = Counter(c.name for c in made)
    missing = sorted(n for n, k in want.items() if got.get(n, 0) < k)
    extra = sorted(set(got) - set(want))
    notes = [f"missing: {', '.join(missing)}"] if missing else []
    notes += [f"not expected: {', '.join(extra)}"] if extra else []
    return Outcome(not missing and not extra, tuple(notes))


def _paired(calls: list[ExpectedToolCall], made: list[ToolCall]) -> int:
    """How many expected calls are matched, each by a distinct call made."""
    return max_matching(len(calls), len(made), lambda a, b: call_matches(calls[a], made[b]))


def _unmatched(calls: list[ExpectedToolCall], made: list[ToolCall]) -> list[str]:
    """The expected calls left without a matching call: those whose leaving out loses nothing
    from the largest pairing."""
    best = _paired(calls, made)
    return [
        f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})"
        for i, c in enumerate(calls)
        if _paired(calls[:i] + calls[i + 1 :], made) == best
    ]


@check("tool_arguments", group="tools", needs_answer=False, rates=_expects_calls)
def tool_arguments(ctx: CheckContext) -> Outcome | None:
    """Every expected call is made with matching arguments (exact, numeric tolerance or
    pattern), each by a distinct call."""
    gold = _gold(ctx.entry)
    if gold is None or not gold.calls:
        return None
    made = made_calls(ctx)
    if _paired(gold.calls, made) == len(gold.calls):
        return Outcome(True)
    return Outcome(False, tuple(f"no matching call: {u}" for u in _unmatched(gold.calls, made)))


@check("tool_order", group="tools", needs_answer=False, rates=_ordered)
def tool_order(ctx: CheckContext) -> Outcome | None:
    """The expected tools are called in the order listed (other calls may come between);
    only for entries whose gold is ordered."""
    if not _ordered(ctx.entry):
        return None
    gold = _gold(ctx.entry)
    assert gold is not None
    made = made_calls(ctx)
    names = [c.name for c in gold.calls]
    m = longest_common(len(names), len(made), lambda a, b: names[a] == made[b].name)
    if m == len(names):
        return Outcome(True)
    return Outcome(False, (f"expected {', '.join(names)}; made {_names(made)}",))


@check(
    "forbidden_tool",
    kind="count",
    higher_is_better=False,
    ceiling=0,
    group="tools",
    needs_answer=False,
    rates=lambda entry: _gold(entry) is not None,
)
def forbidden_tool(ctx: CheckContext) -> Outcome | None:
    """Calls made to a tool the entry forbids (a write, an external send): a gate fails on one."""
    gold = _gold(ctx.entry)
    if gold is None:
        return None
    bad = [c.name for c in made_calls(ctx) if c.name in gold.forbidden]
    return Outcome(len(bad), (f"forbidden call: {', '.join(bad)}",) if bad else ())


@check("trajectory_match", kind="graded", group="tools", needs_answer=False, rates=_expects_calls)
def trajectory_match(ctx: CheckContext) -> Outcome | None:
    """The call sequence against the gold's: expected calls matched (in order when the gold is
    ordered) over the larger of expected and made; 1 when it is the gold's call for call."""
    gold = _gold(ctx.entry)
    if gold is None or not gold.calls:
        return None
    made = made_calls(ctx)
    calls = gold.calls
    pair = max_matching if not gold.ordered else longest_common
    m = pair(len(calls), len(made), lambda a, b: call_matches(calls[a], made[b]))
    value = m / max(len(calls), len(made))
    notes = () if value == 1.0 else (f"{m} of {len(calls)} expected matched; made {_names(made)}",)
    return Outcome(value, notes)
