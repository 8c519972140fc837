"""One registry of named things, used by all five: metrics, answer checks, system adapters, system
kinds and agreement coefficients.

A `Registry[T]` maps names to registered items and fails the same way everywhere: an unknown
name and a name registered twice are both a `RegistryError` (a `UsageError`, so exit 2 on the
command line) that names the registry and lists what is registered. It is a
``MutableMapping[str, T]`` in registration order (``reg[name]`` raises ``KeyError`` as a mapping
does, ``reg[name] = item`` replaces and ``del reg[name]`` removes, for tests; `Registry.lookup`
raises the `RegistryError`, `Registry.add` refuses a name already taken).

Third-party packages plug in through entry points, one group per registry: ``assay.metrics``,
``assay.checks``, ``assay.systems``, ``assay.kinds`` and ``assay.coefficients``. A distribution declares, e.g. in
its ``pyproject.toml``::

    [project.entry-points."assay.metrics"]
    mymetric = "mypkg.metrics"

assay declares its own checks the same way (``assay.checks`` in its ``pyproject.toml``); they are
loaded first, by the same scan. The entry points of a group are loaded the first time the registry is read (a lookup, a
listing, an iteration), not when assay is imported. Loading imports the entry point's object: a
module that registers what it defines with the registry's decorator (``@register``, ``@check``,
``register_adapter``, ``register_kind``, ``@coefficient``), or an item itself, which is then registered under the
entry point's name. A plug-in that fails to import, or registers a name already taken, is a
`RegistryError` naming the distribution and the entry point.

This module is on the ground floor with `assay.errors` and `assay._io`: it imports nothing else
of assay, so `assay.stats` may use it and stay free of the rest of the package.
"""

from __future__ import annotations

import importlib.metadata
import types
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Generic, TypeVar

from assay.errors import UsageError

__all__ = ["GROUPS", "Registry", "RegistryError", "plugin_names"]


def _ep_key(ep: importlib.metadata.EntryPoint) -> tuple[bool, str, str, str]:
    """Entry points load in a fixed order whatever the order of sys.path: assay's own first,
    then by distribution, name."""
    dist = ep.dist.name if ep.dist is not None else ""
    return (not _own(ep), dist, ep.name, ep.value)


def _own(ep: importlib.metadata.EntryPoint) -> bool:
    """Whether assay's own distribution declares `ep` (in its ``pyproject.toml``)."""
    return ep.dist is not None and ep.dist.name.lower().replace("_", "-") == "assay"


T = TypeVar("T")

GROUPS = ("assay.metrics", "assay.checks", "assay.systems", "assay.kinds", "assay.coefficients")
"""The entry-point groups assay reads plug-ins from, one per registry."""


def plugin_names(group: str) -> tuple[str, ...]:
    """The names of the plug-ins installed now in ``group``: its entry points other than
    assay's own (none of them is loaded)."""
    return tuple(ep.name for ep in importlib.metadata.entry_points(group=group) if not _own(ep))


class RegistryError(UsageError, ValueError):
    """An unknown name, a name registered twice, or a plug-in that failed to load."""


class Registry(MutableMapping[str, T], Generic[T]):
    """Named items of one kind, in registration order, with plug-ins from one entry-point group.

    ``kind`` names one item in messages ("metric", "answer check"); ``group`` is the
    entry-point group (None: no plug-ins); ``listing`` renders the registered names for a
    message (default: comma-separated names); ``error`` is the error type raised (a
    `RegistryError` subclass: `assay.metrics.MetricError` keeps its name); ``item_type`` lets
    an entry point name an item directly (it is registered under the entry point's name);
    ``modules`` are assay's own modules that register items when imported, imported on first
    use (never at start-up) when assay's installed metadata declares none of them in ``group``
    (assay run from its sources, or installed before it declared them): where it does, assay's
    own entry points are loaded first, by the same scan and the same loader as the plug-ins'.
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        plural: str | None = None,
        listing: Callable[[], str] | None = None,
        error: type[RegistryError] = RegistryError,
        item_type: type | None = None,
        register_item: Callable[[str, object], object] | None = None,
        modules: Sequence[str] = (),
    ) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.group = group
        self.error = error
        self._items: dict[str, T] = {}
        self._listing = listing
        self._item_type = item_type
        self._register_item = register_item
        self._modules = tuple(modules)
        self._plugins_loaded = group is None and not self._modules
        self._broken: RegistryError | None = None

    # ------------------------------------------------------------------ writing

    def add(self, name: str, item: T, *, replace: bool = False) -> T:
        """Register ``item`` as ``name``; a name already taken is an error unless ``replace``."""
        if name in self._items and not replace:
            raise self.error(
                f"{self.kind} {name!r} is already registered; registered {self.plural}: "
                f"{self.names_text()}"
            )
        self._items[name] = item
        return item

    def remove(self, name: str) -> None:
        """Remove ``name`` (a no-op when it is not registered)."""
        self._items.pop(name, None)

    def __setitem__(self, name: str, item: T) -> None:
        self.add(name, item, replace=True)

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    # ------------------------------------------------------------------ reading

    def lookup(self, name: str) -> T:
        """The item registered as ``name``; a `RegistryError` listing the registered ones."""
        self.load_plugins()
        try:
            return self._items[name]
        except KeyError:
            raise self.error(
                f"unknown {self.kind} {name!r}; registered {self.plural}: {self.names_text()}"
            ) from None

    def raw(self, name: str) -> T:
        """The item registered as ``name`` so far (no plug-in is loaded; ``KeyError``)."""
        return self._items[name]

    def __getitem__(self, name: str) -> T:
        self.load_plugins()
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        self.load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        self.load_plugins()
        return iter(list(self._items))

    def __len__(self) -> int:
        self.load_plugins()
        return len(self._items)

    def names(self, *, plugins: bool = True, strict: bool = True) -> list[str]:
        """The registered names, in registration order.

        ``plugins=False``: without loading the plug-ins (at import time, when a plug-in
        importing assay would find it half made). ``strict=False``: a broken plug-in does not
        raise here (help text built when the command line starts lists what loaded); its error
        is raised again by the next lookup."""
        if plugins:
            try:
                self.load_plugins()
            except RegistryError:
                if strict:
                    raise
        return list(self._items)

    def names_text(self) -> str:
        if self._listing is not None:
            return self._listing()
        return ", ".join(self._items) or "none"

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._items)!r})"

    # ------------------------------------------------------------------ plug-ins

    def load_plugins(self) -> None:
        """Load the entry points of this registry's group (once; later calls do nothing)."""
        if self._broken is not None:
            raise self._broken  # a broken plug-in stays an error, not a silently missing name
        if self._plugins_loaded:
            return
        self._plugins_loaded = True  # before loading: a plug-in may read the registry
        found = () if self.group is None else importlib.metadata.entry_points(group=self.group)
        eps = sorted(found, key=_ep_key)
        if not any(_own(ep) for ep in eps):
            for module in self._modules:  # no metadata declares assay's own: the fallback
                importlib.import_module(module)
        for ep in eps:
            try:
                self._load(ep)
            except RegistryError as exc:
                self._broken = exc
                raise

    def reset_plugins(self) -> None:
        """Forget that the plug-ins were loaded (they are looked for again on the next read;
        for tests and for a program that installs a plug-in while it runs)."""
        self._plugins_loaded = self.group is None and not self._modules
        self._broken = None

    def _load(self, ep: importlib.metadata.EntryPoint) -> None:
        dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
        where = f"plug-in {ep.name!r} ({ep.value}, entry point group {self.group}) of {dist}"
        try:
            obj = ep.load()
        except Exception as exc:
            if _own(ep):
                raise  # a module of assay's own: a bug, shown with its traceback
            raise self.error(f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
        if isinstance(obj, types.ModuleType) or self._item_type is None:
            return  # importing it registered what it defines
        if isinstance(obj, self._item_type) and ep.name not in self._items:
            try:
                if self._register_item is not None:
                    self._register_item(ep.name, obj)
                else:
                    self.add(ep.name, obj)  # type: ignore[arg-type]
            except RegistryError as exc:
                raise self.error(f"{where}: {exc}") from exc
