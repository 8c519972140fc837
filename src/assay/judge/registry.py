"""The registry of answer checks: a check is a named function over one shared `CheckContext`.

    from assay.judge import CheckContext, check

    @check("cites_something")
    def cites_something(ctx: CheckContext) -> bool | None:
        '''The answer cites at least one chunk (abstains on refusals).'''
        return None if ctx.refused else bool(ctx.citations)

A check returns True (pass), False (fail), None (abstain: the check does not apply to this
entry), or an `Outcome` (one of those plus notes for the people reading the report). The context
computes what checks share (the refusal verdict, cited chunks, figures read from the answer, the
numeric verdict, ...) once per entry, lazily, and `ctx.result("other_check")` reuses another
check's value. Registering a name twice is an error; `default=False` registers a check that
`assay check` runs only when named in `--checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from assay.errors import UsageError

# A check's argument is an `assay.judge.context.CheckContext`. It is typed `Any` here because the
# context module imports this one (it looks up other checks by name): the dependency goes one way.
CheckContext: TypeAlias = Any

__all__ = [
    "Check",
    "CheckFn",
    "CheckValue",
    "Outcome",
    "check",
    "check_names",
    "get_check",
    "register",
    "resolve_checks",
    "unregister",
]


@dataclass(frozen=True, slots=True)
class Outcome:
    """A check's value with notes that say why (shown beside the entry in reports)."""

    value: bool | None
    notes: tuple[str, ...] = ()


CheckValue: TypeAlias = "bool | Outcome | None"
CheckFn: TypeAlias = Callable[[CheckContext], "bool | Outcome | None"]


@dataclass(frozen=True, slots=True)
class Check:
    """One registered check: its name, its function, its one-line description."""

    name: str
    fn: Callable[[CheckContext], bool | Outcome | None]
    description: str
    default: bool = True

    def __call__(self, ctx: CheckContext) -> Outcome:
        out = self.fn(ctx)
        if isinstance(out, Outcome):
            return out
        if out is not None and not isinstance(out, bool):
            raise TypeError(
                f"check {self.name!r} returned {type(out).__name__}: expected True, False, None "
                "or an Outcome"
            )
        return Outcome(out)


_REGISTRY: dict[str, Check] = {}


def register(c: Check) -> Check:
    """Add a check to the registry (its name must be new)."""
    if c.name in _REGISTRY:
        raise ValueError(f"an answer check named {c.name!r} is already registered")
    _REGISTRY[c.name] = c
    return c


def unregister(name: str) -> None:
    """Remove a check (for tests and for replacing a built-in check with your own)."""
    _REGISTRY.pop(name, None)


def check(
    name: str, *, default: bool = True, description: str | None = None
) -> Callable[[Callable[[CheckContext], bool | Outcome | None]], Check]:
    """Decorator: register `fn(ctx) -> True | False | None | Outcome` as the check `name`.

    The description defaults to the first line of the function's docstring.
    """

    def deco(fn: Callable[[CheckContext], bool | Outcome | None]) -> Check:
        doc = description if description is not None else (fn.__doc__ or "").strip()
        return register(Check(name, fn, doc.splitlines()[0] if doc else "", default))

    return deco


def check_names(*, default_only: bool = False) -> tuple[str, ...]:
    """Registered check names in registration order (built-ins first: `assay.judge` imports
    `assay.judge.checks`, which registers them, before any lookup can reach this module)."""
    return tuple(n for n, c in _REGISTRY.items() if c.default or not default_only)


def get_check(name: str) -> Check:
    """The check registered as `name`; a clear error listing the registered ones otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown answer check {name!r}; registered checks: {', '.join(_REGISTRY)}"
        ) from None


def resolve_checks(names: str | Iterable[str] | None) -> list[Check]:
    """Checks by name ("a,b" or a list); None means the default set, in registry order."""
    if names is None:
        return [get_check(n) for n in check_names(default_only=True)]
    items: Sequence[str] = (
        [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    )
    wanted = [n for n in items if n]
    if not wanted:
        raise UsageError(f"no check named; registered checks: {', '.join(check_names())}")
    out: list[Check] = []
    for n in dict.fromkeys(wanted):
        out.append(get_check(n))
    return out
