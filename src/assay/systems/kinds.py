"""System kinds: what a system is asked per entry, and what its row holds.

An *adapter* (`assay.systems.registry`) turns a spec into an object; a *kind* says how the runner
(`assay.runner.run_system`) talks to that object. Every kind gets the same run: the request
cache, the journal and resume, the executors, the binding of rows to their entries, progress.
A kind declares:

- `accepts(obj)`: does the object honour this kind's contract (the runner takes the first kind,
  in registration order, that accepts it); `contract` is that contract in words, for the error
  when no kind accepts an object; `check(obj, spec)` (optional) refuses an object that looks like
  the kind but cannot be called as it (a `UsageError`);
- `call(system, entry, ctx)`: one entry asked of the system, the run row as a dict (no cache);
  `ctx` is a `CallContext` (`k`, whether answers were asked for, the source named in errors, the
  dataset's folder);
- `applies(entry)`: the entries the kind asks (the others are left out of the run and counted);
- `inputs(entry, ctx)` (optional): what else the system is handed for an entry (a schema's hash,
  say): part of the entry's cache key and journal provenance, so a change is a miss;
- `uses_k`: False when ``k`` means nothing to the kind (it is then left out of the key).

Built in: ``retrieval`` (``retrieve``, optional ``answer``: `assay.systems.protocol`), ``sql``
(``sql(question, *, schema, as_of)``: `assay.sql.systems`) and ``classification``
(``classify(query, *, as_of, labels)``: `assay.systems.router`). A distribution adds a kind through
the ``assay.kinds`` entry-point group (a module that calls `register_kind`, or a `SystemKind`
named by the entry point), as it adds adapters, checks and metrics (`assay._registry`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._registry import Registry
from assay.errors import UsageError
from assay.systems.protocol import check_protocol

if TYPE_CHECKING:
    from assay.dataset import Entry

__all__ = ["CallContext", "SystemKind", "get_kind", "kind_of", "list_kinds", "register_kind"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a kind's `call` is given beside the system and the entry (picklable: it travels to
    Ray workers)."""

    k: int
    answers: bool
    source: str
    base: Path | None = None  # the dataset's folder (files the entries name are found there)
    # the history each conversation turn of this step is given (entry id -> messages); an entry
    # of no conversation is not in it, and its system is called without one
    history: Mapping[str, tuple[Mapping[str, str], ...]] | None = None


@dataclass(frozen=True)
class SystemKind:
    """A kind of system under test (module docs)."""

    name: str
    contract: str
    accepts: Callable[[Any], bool]
    call: Callable[[Any, Entry, CallContext], dict[str, Any]]
    applies: Callable[[Entry], bool] = lambda _entry: True
    inputs: Callable[[Entry, CallContext], Mapping[str, Any]] | None = None
    check: Callable[[Any, str], None] | None = None
    uses_k: bool = True
    help: str = ""


def _register_plugin(name: str, kind: object) -> None:
    assert isinstance(kind, SystemKind)
    _KINDS.add(kind.name, kind)


_KINDS: Registry[SystemKind] = Registry(
    "system kind", group="assay.kinds", item_type=SystemKind, register_item=_register_plugin
)


def register_kind(kind: SystemKind, *, replace: bool = False) -> SystemKind:
    """Add a kind (or, with `replace`, swap the one of that name). Returns it."""
    return _KINDS.add(kind.name, kind, replace=replace)


def get_kind(name: str) -> SystemKind:
    """The kind registered as `name` (a `RegistryError` listing them otherwise)."""
    return _KINDS.lookup(name)


def list_kinds(*, strict: bool = True) -> list[SystemKind]:
    """Every registered kind, in registration order."""
    return [_KINDS.raw(n) for n in _KINDS.names(strict=strict)]


def kind_of(system: Any, spec: str) -> SystemKind:
    """The first kind that accepts `system`, after its own check; a `UsageError` naming every
    kind's contract when none does."""
    for kind in _KINDS.values():
        if kind.accepts(system):
            if kind.check is not None:
                kind.check(system, spec)
            return kind
    contracts = " or ".join(f"{k.contract} ({k.name})" for k in _KINDS.values())
    raise UsageError(f"{spec}: a system needs a {contracts} method")


def _lazy(target: str) -> Callable[..., Any]:
    """A function named ``module:attr``, imported on its first call: kinds register when the
    command line starts, and what they call may sit in a package above this one (`assay.sql`,
    which takes seconds to import) or import the runner."""
    mod, _, attr = target.partition(":")

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(mod), attr)(*args)

    call.__qualname__ = call.__name__ = attr
    return call


register_kind(
    SystemKind(
        name="retrieval",
        contract="retrieve(query, *, as_of, k)",
        accepts=lambda obj: callable(getattr(obj, "retrieve", None)),
        call=_lazy("assay.runner:call_retrieval"),
        check=check_protocol,
        help="retrieve (and answer): hits, an answer and citations per entry",
    )
)
register_kind(
    SystemKind(
        name="sql",
        contract="sql(question, *, schema, as_of)",
        accepts=lambda obj: callable(getattr(obj, "sql", None)),
        call=_lazy("assay.sql.systems:call_sql"),
        applies=lambda entry: entry.sql is not None,
        inputs=_lazy("assay.sql.systems:sql_inputs"),
        uses_k=False,
        help="text-to-SQL: one query (or a refusal) per entry with sql gold",
    )
)
register_kind(
    SystemKind(
        name="classification",
        contract="classify(query, *, as_of, labels)",
        accepts=lambda obj: callable(getattr(obj, "classify", None)),
        call=_lazy("assay.systems.router:call_classify"),
        applies=lambda entry: entry.expected_label is not None,
        inputs=_lazy("assay.systems.router:classify_inputs"),
        uses_k=False,
        help="routing and guardrails: a label (and scores) per entry with expected_label",
    )
)
