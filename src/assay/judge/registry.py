"""The registry of answer checks: a check is a named function over one shared `CheckContext`.

    from assay.judge import CheckContext, check

    @check("cites_something")
    def cites_something(ctx: CheckContext) -> bool | None:
        '''The answer cites at least one chunk (abstains on refusals).'''
        return None if ctx.refused else bool(ctx.citations)

A check has a kind. A *binary* check (the default) returns True (pass), False (fail), None
(abstain: the check does not apply to this entry), or an `Outcome` (one of those plus notes for
the people reading the report). A *graded* check returns a float in [0, 1] or None (a share: the
key facts stated, a judge's score); a *count* check returns a non-negative int or None (a number
of things that went wrong, such as leaked chunks; register it with ``higher_is_better=False``).
A value outside its kind is a `CheckValueError` naming the check. Every registered check is a
per-entry series that `assay compare` and `assay gate` test with the test its kind calls for
(`assay.compare.series`). The context
computes what checks share (the refusal verdict, cited chunks, figures read from the answer, the
numeric verdict, ...) once per entry, lazily, and `ctx.result("other_check")` reuses another
check's value. Registering a name twice is an error; `default=False` registers a check that
`assay check` runs only when named in `--checks`.

A check belongs to a *group*: what it rates (``answer``, the default: prose answers; ``sql``:
gold SQL; ``policy``: access boundaries). A group says which entries it applies to
(`check_group`), and `assay check` without ``--checks`` runs the default checks of every group
that applies to at least one entry of the dataset (`default_checks`).
"""

from __future__ import annotations

import importlib.util
import numbers
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

import numpy as np

from assay._registry import Registry, RegistryError
from assay.errors import UsageError

if TYPE_CHECKING:
    from assay.dataset import Entry


@runtime_checkable
class CheckInput(Protocol):
    """What every check's argument offers (`assay.judge.context.CheckContext` is the one assay
    builds, with much more: annotate a check with it). A protocol here because the context
    module imports this one (it looks up other checks by name): the dependency goes one way."""

    @property
    def answer(self) -> str | None: ...

    @property
    def citations(self) -> list[str]: ...

    def result(self, name: str) -> bool | float | int | None: ...

    def outcome(self, name: str) -> Outcome: ...


C = TypeVar("C", bound=CheckInput)
"""The context a check function takes: `assay.judge.context.CheckContext` for assay's own (and
what assay passes), or any narrower protocol of it, such as `CheckInput`."""


__all__ = [
    "BUILTIN_MODULES",
    "CHECK_KINDS",
    "PLUGIN_MODULES",
    "Check",
    "CheckFn",
    "CheckGroup",
    "CheckInput",
    "CheckKind",
    "CheckResult",
    "CheckValueError",
    "EntryTest",
    "Outcome",
    "RegistryError",
    "builtin_checks",
    "check",
    "check_group",
    "check_groups",
    "check_names",
    "default_checks",
    "get_check",
    "listing",
    "load_plugins",
    "register",
    "resolve_checks",
    "unregister",
    "validate_value",
]


CheckKind: TypeAlias = Literal["binary", "graded", "count"]
CHECK_KINDS: tuple[str, ...] = ("binary", "graded", "count")
"""binary: True/False; graded: a float in [0, 1]; count: a non-negative int (None: abstained)."""


class CheckValueError(UsageError, TypeError, ValueError):
    """A check returned a value its kind does not allow (names the check and the value)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A check's value with notes that say why (shown beside the entry in reports).

    `value` is True/False for a binary check, a float in [0, 1] for a graded one, a
    non-negative int for a count, None when the check abstains.
    """

    value: bool | float | int | None
    notes: tuple[str, ...] = ()


def validate_value(name: str, kind: str, value: object) -> bool | float | int | None:
    """`value` as the check `name` of kind `kind` may return it, or a `CheckValueError`.

    binary: a bool; graded: a finite real in [0, 1] (returned as float); count: a non-negative
    integer (returned as int). None (abstained) is allowed for every kind.
    """
    if value is None:
        return None
    if kind == "binary":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise CheckValueError(
            f"check {name!r} returned {type(value).__name__} {value!r}: a binary check returns "
            "True, False, None or an Outcome"
        )
    if kind == "graded":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise CheckValueError(
                f"check {name!r} returned {type(value).__name__} {value!r}: a graded check "
                "returns a float in [0, 1] or None"
            )
        v = float(value)
        if not (0.0 <= v <= 1.0):  # also refuses nan
            raise CheckValueError(
                f"check {name!r} returned {v!r}: a graded check's value must lie in [0, 1]"
            )
        return v
    if kind == "count":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise CheckValueError(
                f"check {name!r} returned {type(value).__name__} {value!r}: a count check "
                "returns a non-negative int or None"
            )
        n = int(value)
        if n < 0:
            raise CheckValueError(
                f"check {name!r} returned {n}: a count check's value must not be negative"
            )
        return n
    raise CheckValueError(f"check {name!r} has kind {kind!r}; kinds: {', '.join(CHECK_KINDS)}")


CheckResult: TypeAlias = Outcome | bool | float | None
"""What a check function returns: its value (True/False, a float in [0, 1], a non-negative int;
None: abstained), or an `Outcome` holding the value with notes."""

CheckFn: TypeAlias = Callable[[C], CheckResult]
"""A check function: the context of one entry (a `CheckInput`; assay passes its
`assay.judge.context.CheckContext`) -> its result."""

EntryTest: TypeAlias = Callable[["Entry"], bool]
"""Which entries a check group, or a check, applies to."""


@dataclass(frozen=True, slots=True)
class Check(Generic[C]):
    """One registered check: its name, its function, its one-line description, its kind
    (binary, graded or count) and which direction is better."""

    name: str
    fn: CheckFn[C]
    description: str
    default: bool = True
    kind: CheckKind = "binary"
    higher_is_better: bool = True
    needs_answer: bool = True
    ceiling: int | None = None  # a count: a gate fails when a run's total exceeds it
    group: str = "answer"  # what it rates; `check_group` says which entries that is
    # the entries it rates by design (None: every entry of its group); an abstention on any
    # other entry is "not applicable", not "could not decide", and a gate does not hold it
    # against the check (`assay.compare.gate`, max_abstain)
    rates: EntryTest | None = None

    def __post_init__(self) -> None:
        if self.kind not in CHECK_KINDS:
            raise UsageError(
                f"check {self.name!r}: unknown kind {self.kind!r}; kinds: {', '.join(CHECK_KINDS)}"
            )

    def __call__(self, ctx: C) -> Outcome:
        out = self.fn(ctx)
        if isinstance(out, Outcome):
            value = validate_value(self.name, self.kind, out.value)
            return out if value is out.value else Outcome(value, out.notes)
        return Outcome(validate_value(self.name, self.kind, out))


@dataclass(frozen=True, slots=True)
class CheckGroup:
    """What a group of checks rates and which entries it applies to: `applies(entry)` is True
    for an entry the group's checks have something to say about (a gold SQL query, a principal)."""

    name: str
    applies: EntryTest
    description: str = ""


_GROUPS: dict[str, CheckGroup] = {}


def check_group(name: str, *, applies: EntryTest, description: str = "") -> CheckGroup:
    """Declare the group `name` (once): the entries (`assay.dataset.schema.Entry`) its checks
    apply to. A check joins it with ``@check(..., group=name)``; `default_checks` runs its
    default checks on a dataset where `applies` holds for some entry."""
    if name in _GROUPS:
        raise RegistryError(f"check group {name!r} is already declared")
    _GROUPS[name] = CheckGroup(name, applies, description)
    return _GROUPS[name]


def check_groups() -> tuple[CheckGroup, ...]:
    """The declared check groups (plug-ins loaded): assay's own in the order of their modules
    in `assay.checks` (``answer`` first; a group is named like its module), then the plug-ins'
    in declaration order. The order does not depend on which module was imported first."""
    _REGISTRY.load_plugins()
    return tuple(sorted(_GROUPS.values(), key=lambda g: _group_rank(g.name)))


def _group_rank(name: str) -> tuple[int, int]:
    own = ["answer", *(m.rsplit(".", 1)[1] for m in BUILTIN_MODULES if not m.endswith(".answer"))]
    if name in own:
        return (0, own.index(name))
    return (1, list(_GROUPS).index(name) if name in _GROUPS else len(_GROUPS))


def _ordered(names: Iterable[str]) -> list[str]:
    """Check names group by group (`check_groups`' order), each group in registration order."""
    at = {n: i for i, n in enumerate(names)}
    return sorted(at, key=lambda n: (_group_rank(_REGISTRY.raw(n).group), at[n]))


check_group(
    "answer",
    applies=lambda entry: getattr(entry, "sql", None) is None,
    description="answers in prose: every entry without a gold SQL query",
)


def builtin_modules() -> tuple[str, ...]:
    """assay's own check modules: every public module of `assay.checks` (one per group), found
    by `pkgutil` without importing them (``pyproject.toml`` declares the same modules as
    ``assay.checks`` entry points)."""
    spec = importlib.util.find_spec("assay.checks")
    where = [] if spec is None else list(spec.submodule_search_locations or [])
    return tuple(
        sorted(f"assay.checks.{m.name}" for m in pkgutil.iter_modules(where) if m.name[0] != "_")
    )


BUILTIN_MODULES: tuple[str, ...] = builtin_modules()
"""The modules that register assay's own checks. The registry's first read loads them as
``assay.checks`` entry points of assay's metadata, with the plug-ins'; it imports them from this
list only when that metadata declares none (assay run from its sources). Importing assay stays
light and no module imports a check module for its side effect."""

PLUGIN_MODULES: tuple[str, ...] = BUILTIN_MODULES  # the former name

_REGISTRY: Registry[Check[Any]] = Registry(
    "answer check", plural="checks", group="assay.checks", item_type=Check, modules=BUILTIN_MODULES
)
"""Every registered check; third-party checks plug in through the ``assay.checks`` entry-point
group (a module that uses ``@check``, or a `Check` value; `assay._registry`)."""


def register(c: Check[C]) -> Check[C]:
    """Add a check to the registry (its name must be new and its group declared: a
    `RegistryError` otherwise)."""
    if c.group not in _GROUPS:
        raise RegistryError(
            f"check {c.name!r}: group {c.group!r} is not declared (check_group); "
            f"groups: {', '.join(_GROUPS)}"
        )
    return _REGISTRY.add(c.name, c)


def unregister(name: str) -> None:
    """Remove a check (for tests and for replacing a built-in check with your own)."""
    _REGISTRY.remove(name)


def check(
    name: str,
    *,
    kind: CheckKind = "binary",
    default: bool = True,
    higher_is_better: bool = True,
    needs_answer: bool = True,
    description: str | None = None,
    ceiling: int | None = None,
    group: str = "answer",
    rates: EntryTest | None = None,
) -> Callable[[CheckFn[C]], Check[C]]:
    """Decorator: register `fn(ctx)` as the check `name` (`ctx`: a `CheckInput`, annotated
    `assay.CheckContext` in practice).

    `kind="binary"` (the default): `fn` returns True, False, None or an `Outcome`;
    `kind="graded"`: a float in [0, 1] or None; `kind="count"`: a non-negative int or None
    (usually with ``higher_is_better=False``). `default=False` keeps the check out of the set
    `assay check` runs when no `--checks` is given. `needs_answer=False` marks a check that reads
    the run row (`ctx.row.retrieved`, `ctx.row.extra`) and so also runs on rows without an
    answer (a retrieval-only run); other checks abstain there. `ceiling` (a count of harms): a
    gate on this check fails whenever a run's total exceeds it, however the base run did (0:
    zero tolerance, as for leaked chunks); `assay gate --max-leaks N` overrides it. `group`
    names what the check rates (declared with `check_group`; default ``answer``): `default`
    then means "in the default set wherever its group applies". `rates(entry)`: the entries
    the check rates by design (answer_correct: those expected to be answered); a gate counts
    only abstentions on those against its ``max_abstain``. The description defaults to
    the first paragraph of the function's docstring.
    """

    def deco(fn: CheckFn[C]) -> Check[C]:
        doc = description if description is not None else (fn.__doc__ or "").strip()
        first = " ".join(doc.split("\n\n", 1)[0].split())  # the first paragraph, one line
        return register(
            Check(
                name,
                fn,
                first,
                default,
                kind,
                higher_is_better,
                needs_answer,
                ceiling,
                group,
                rates,
            )
        )

    return deco


def load_plugins() -> None:
    """Find every check now: the ``assay.checks`` entry points, assay's own first (the modules
    of `assay.checks`; `BUILTIN_MODULES` when assay's metadata is not installed), then the
    plug-ins'. The registry's first read does it (the one place checks are discovered); later
    calls do nothing."""
    _REGISTRY.load_plugins()


def check_names(
    *, default_only: bool = False, plugins: bool = True, group: str | None = None
) -> tuple[str, ...]:
    """Registered check names group by group (`check_groups`), each in registration order
    (assay's own, then the plug-ins' checks,
    all found now unless ``plugins=False``: then only those registered so far); `group`: only
    that group's; `default_only`: only those in their group's default set."""
    names = _ordered(_REGISTRY.names(plugins=plugins))
    return tuple(
        n
        for n in names
        if (_REGISTRY.raw(n).default or not default_only)
        and (group is None or _REGISTRY.raw(n).group == group)
    )


def listing(*, strict: bool = True) -> str:
    """The registered checks as help text lists them: ``name (kind, lower is better)``, a
    non-default one marked ``not default``, comma-separated, in registry order.

    ``strict=False`` (help built while the command line runs) lists what loaded when a plug-in
    is broken instead of raising; the plug-in's error is raised by the first lookup instead."""
    out = []
    for n in _ordered(_REGISTRY.names(strict=strict)):
        c = _REGISTRY.raw(n)
        notes: list[str] = [c.kind] if c.kind != "binary" else []
        notes += [] if c.higher_is_better else ["lower is better"]
        notes += [] if c.default else ["not default"]
        out.append(f"{n} ({', '.join(notes)})" if notes else n)
    return ", ".join(out)


def builtin_checks(*, default_only: bool = False, group: str | None = None) -> tuple[str, ...]:
    """`check_names` of assay's own checks only (those defined in assay's modules)."""
    names = check_names(default_only=default_only, group=group)
    return tuple(n for n in names if _REGISTRY.raw(n).fn.__module__.split(".")[0] == "assay")


def default_checks(entries: Iterable[Any]) -> list[str]:
    """The checks `assay check` runs when none are named: the default checks of every group
    that applies to at least one of `entries`, group by group in the order they were declared
    (answer first), each in registry order. Nothing applies (no entries): the ``answer``
    group's."""
    items = list(entries)
    wanted = [g.name for g in check_groups() if any(g.applies(e) for e in items)] or ["answer"]
    return [n for g in wanted for n in check_names(default_only=True, group=g)]


def get_check(name: str) -> Check[Any]:
    """The check registered as `name`; a `RegistryError` listing the registered ones otherwise."""
    return _REGISTRY.lookup(name)


def resolve_checks(names: str | Iterable[str] | None) -> list[Check[Any]]:
    """Checks by name ("a,b" or a list); None means the default set of answer checks (the
    ``answer`` group's; `default_checks` picks the groups a dataset calls for), in registry
    order."""
    if names is None:
        return [get_check(n) for n in check_names(default_only=True, group="answer")]
    items: Sequence[str] = (
        [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    )
    wanted = [n for n in items if n]
    if not wanted:
        raise UsageError(f"no check named; registered checks: {', '.join(check_names())}")
    return [get_check(n) for n in dict.fromkeys(wanted)]
