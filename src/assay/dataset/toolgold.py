"""Gold for an agent's tool calls: the calls an entry expects, how their arguments are matched,
whether their order matters, and which tools must never be called.

An entry's ``expected_tool_calls``::

    {"calls": [{"name": "search_filings",
                "arguments": {"company": "3M", "period": "FY2022"}},
               {"name": "calculator",
                "arguments": {"a": {"approx": 8.7, "abs": 0.05}, "op": "div",
                              "b": {"pattern": "^2\\\\d$"}}}],
     "ordered": true,
     "forbidden": ["send_email"]}

An argument's gold is a JSON value matched exactly (``1`` matches ``1.0``; a string matches
case-sensitively), or one matcher object: ``{"approx": x, "abs": a, "rel": r}`` (a number within
``max(a, r * |x|)`` of x; both default 0), ``{"pattern": regex}`` (a string the regex matches
in full), or ``{"equals": value}`` (exactly ``value``, for a gold that is itself an object with
those keys). Arguments the gold does not name are not looked at. A call made by the system is
``{"name": str, "arguments": {...}}`` (`parse_calls`: a run row's ``tool_calls``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ExpectedToolCall",
    "ToolCall",
    "ToolCallGold",
    "argument_matches",
    "call_matches",
    "longest_common",
    "matching",
    "max_matching",
    "parse_calls",
]

_MATCHERS = ({"approx", "abs", "rel"}, {"pattern"}, {"equals"})


def _matcher(gold: Any) -> str | None:
    """The matcher a gold argument is (``approx``, ``pattern``, ``equals``), None for a plain
    value."""
    if isinstance(gold, Mapping) and gold:
        keys = set(gold)
        if "approx" in keys and keys <= _MATCHERS[0]:
            return "approx"
        if keys == _MATCHERS[1]:
            return "pattern"
        if keys == _MATCHERS[2]:
            return "equals"
    return None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _same(gold: Any, got: Any) -> bool:
    """JSON equality with numbers compared by value (1 == 1.0) and bools kept apart from them."""
    if _number(gold) and _number(got):
        return bool(gold == got)
    if isinstance(gold, bool) or isinstance(got, bool):
        return type(gold) is type(got) and gold == got
    if isinstance(gold, Mapping) and isinstance(got, Mapping):
        return set(gold) == set(got) and all(_same(gold[k], got[k]) for k in gold)
    if isinstance(gold, list) and isinstance(got, list):
        return len(gold) == len(got) and all(_same(a, b) for a, b in zip(gold, got, strict=True))
    return type(gold) is type(got) and bool(gold == got)


def argument_matches(gold: Any, got: Any) -> bool:
    """Does the argument value ``got`` match its gold (a value, or a matcher object)?"""
    kind = _matcher(gold)
    if kind == "approx":
        if not _number(got) or not math.isfinite(float(got)):
            return False
        x = float(gold["approx"])
        tol = max(float(gold.get("abs", 0.0)), float(gold.get("rel", 0.0)) * abs(x))
        return abs(float(got) - x) <= tol
    if kind == "pattern":
        return isinstance(got, str) and re.fullmatch(str(gold["pattern"]), got) is not None
    if kind == "equals":
        return _same(gold["equals"], got)
    return _same(gold, got)


class ExpectedToolCall(BaseModel):
    """One call the system should make: the tool's name and the arguments that must match."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _matchers_well_formed(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key, gold in v.items():
            kind = _matcher(gold)
            if kind == "approx":
                for part in ("approx", "abs", "rel"):
                    x = gold.get(part, 0.0)
                    if (
                        not _number(x)
                        or not math.isfinite(float(x))
                        or (part != "approx" and x < 0)
                    ):
                        raise ValueError(
                            f"argument {key!r}: {part} must be a finite number"
                            + (" >= 0" if part != "approx" else "")
                        )
            elif kind == "pattern":
                try:
                    re.compile(str(gold["pattern"]))
                except re.error as exc:
                    raise ValueError(f"argument {key!r}: bad pattern: {exc}") from None
            elif isinstance(gold, Mapping) and ({"approx", "pattern", "equals"} & set(gold)):
                raise ValueError(
                    f"argument {key!r}: a matcher is one of {{approx[, abs][, rel]}}, {{pattern}} "
                    "or {equals}; wrap an object gold in {equals: ...}"
                )
        return v


class ToolCallGold(BaseModel):
    """The tool calls an entry expects (see the module docs)."""

    model_config = ConfigDict(extra="forbid")

    calls: list[ExpectedToolCall] = Field(default_factory=list)
    ordered: bool = Field(
        default=False, description="the calls must be made in the order listed (tool_order)"
    )
    forbidden: list[str] = Field(
        default_factory=list, description="tools that must never be called (forbidden_tool)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> ToolCallGold:
        if not self.calls and not self.forbidden:
            raise ValueError("expects no call and forbids none: give calls or forbidden")
        clash = sorted({c.name for c in self.calls} & set(self.forbidden))
        if clash:
            raise ValueError(f"tool(s) both expected and forbidden: {', '.join(clash)}")
        if any(not f.strip() for f in self.forbidden):
            raise ValueError("forbidden: a tool name must not be blank")
        return self


@dataclass(frozen=True)
class ToolCall:
    """A call the system made."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def parse_calls(value: Any, where: str = "tool_calls") -> list[ToolCall]:
    """A run row's ``tool_calls`` (a list of ``{"name", "arguments"}``; None: no call) as
    `ToolCall` values; a ValueError naming the field (``tool_calls.2.name``) otherwise."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{where}: must be a list of {{name, arguments}} objects")
    out: list[ToolCall] = []
    for i, item in enumerate(value):
        if isinstance(item, ToolCall):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}.{i}: must be an object with name and arguments")
        name, args = item.get("name"), item.get("arguments", {})
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.{i}.name: must be a non-empty string")
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ValueError(f"{where}.{i}.arguments: must be an object")
        out.append(ToolCall(name, dict(args)))
    return out


def call_matches(gold: ExpectedToolCall, got: ToolCall) -> bool:
    """Same tool, and every argument the gold names present and matching."""
    return gold.name == got.name and all(
        k in got.arguments and argument_matches(v, got.arguments[k])
        for k, v in gold.arguments.items()
    )


def max_matching(n_gold: int, n_got: int, ok: Callable[[int, int], bool]) -> int:
    """The most gold items paired each with a distinct item made, ``ok(i, j)`` saying which
    pairs may be (augmenting paths; the sets are small)."""
    return len(matching(n_gold, n_got, ok))


def matching(n_gold: int, n_got: int, ok: Callable[[int, int], bool]) -> dict[int, int]:
    """A largest pairing of gold items with distinct items made, as ``{made index: gold
    index}`` (`max_matching` counts it): which call answers which expected call. Deterministic:
    gold items are placed in order, each trying the items made in order."""
    owner: list[int | None] = [None] * n_got

    def place(i: int, seen: set[int]) -> bool:
        for j in range(n_got):
            if j not in seen and ok(i, j):
                seen.add(j)
                held = owner[j]
                if held is None or place(held, seen):
                    owner[j] = i
                    return True
        return False

    for i in range(n_gold):
        place(i, set())
    return {j: i for j, i in enumerate(owner) if i is not None}


def longest_common(n_gold: int, n_got: int, ok: Callable[[int, int], bool]) -> int:
    """The longest subsequence of the gold matched, in order, by a subsequence of the calls
    made."""
    prev = [0] * (n_got + 1)
    for i in range(n_gold):
        cur = [0] * (n_got + 1)
        for j in range(n_got):
            cur[j + 1] = prev[j] + 1 if ok(i, j) else max(prev[j + 1], cur[j])
        prev = cur
    return prev[n_got]
