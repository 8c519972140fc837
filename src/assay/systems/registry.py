"""The adapter registry: how a `--system` spec becomes a system, and which options it takes.

An *adapter* turns a spec string (``bm25``, ``http://host/retrieve``, ``pkg.mod:attr``) and a
few declared options into an object that honours the system contract (`assay.systems.protocol`).
Each adapter declares its options once, as `Option` values (name, type, help); `load_system`
validates against them and `assay run --help` lists them, one panel per adapter. Adding an
adapter is one module that calls `register_adapter` (the built-in ones are in
`assay.systems.adapters`) and one test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._registry import Registry, RegistryError
from assay.errors import UsageError
from assay.systems.kinds import kind_of

__all__ = [
    "RESERVED_OPTION_NAMES",
    "Adapter",
    "Option",
    "find_adapter",
    "list_adapters",
    "load_system",
    "register_adapter",
]

# `assay run`'s own options: an adapter option of one of these names would shadow them
RESERVED_OPTION_NAMES = frozenset(
    {"dataset", "system", "out", "k", "workers", "no_cache", "cache_dir", "no_answers"}
    | {"restart", "fmt", "format", "help", "spec", "options", "corpus_id", "executor", "log"}
)


@dataclass(frozen=True, slots=True)
class Option:
    """One option of an adapter, as `assay run` shows it (``--name``) and `load_system` takes it.

    `type` is str, int, float, bool (a flag: ``--name``) or Path; `multiple=True` makes a repeatable option (a list).
    `identity=False` marks an option that does not change the system's answers (a timeout, a
    cache folder): it is left out of the system's identity, so changing it does not invalidate
    the request cache. Names of `assay run`'s own options are reserved.
    """

    name: str
    type: type = str
    help: str = ""
    default: Any = None
    required: bool = False
    multiple: bool = False
    choices: tuple[str, ...] = ()
    identity: bool = True

    def __post_init__(self) -> None:
        if self.type not in (str, int, float, bool, Path):
            raise ValueError(f"option {self.name!r}: type must be str, int, float, bool or Path")
        if not self.name.isidentifier() or self.name in RESERVED_OPTION_NAMES:
            raise ValueError(f"option name {self.name!r} is not a Python name or is reserved")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def coerce(self, value: Any, adapter: str) -> Any:
        if self.multiple:
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            return [self._one(v, adapter) for v in items]
        return self._one(value, adapter)

    def _one(self, value: Any, adapter: str) -> Any:
        try:
            if self.type is Path:
                out: Any = Path(value)
            elif self.type is bool and not isinstance(value, bool):
                text = str(value).strip().lower()
                if text not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                out = text in ("true", "1", "yes")
            elif isinstance(value, self.type):
                out = value
            elif self.type in (int, float) and isinstance(value, bool):
                raise ValueError(value)
            else:
                out = self.type(value)
        except (TypeError, ValueError):
            raise UsageError(
                f"--system {adapter}: {self.flag} must be {self.type.__name__}, not {value!r}"
            ) from None
        if self.choices and str(out) not in self.choices:
            raise UsageError(
                f"--system {adapter}: {self.flag} must be one of {', '.join(self.choices)}, "
                f"not {out!r}"
            )
        return out


@dataclass(frozen=True)
class Adapter:
    """A kind of system: its name, how its spec is written, its options and its builder.

    `build(spec, options)` gets the spec as given and the validated options (declared ones with
    their defaults, plus undeclared ones when `passthrough`). `matches` decides which specs the
    adapter takes (default: the spec equals `name`). `passthrough=True` lets library callers
    pass options the adapter does not declare (the import-path adapter hands them to a factory).
    """

    name: str
    help: str
    build: Callable[[str, dict[str, Any]], Any]
    options: tuple[Option, ...] = ()
    usage: str = ""  # how --system is written, for help: "bm25", "http(s)://HOST/PATH"
    matches: Callable[[str], bool] | None = None
    passthrough: bool = False
    examples: tuple[str, ...] = field(default_factory=tuple)

    def takes(self, spec: str) -> bool:
        return self.matches(spec) if self.matches is not None else spec == self.name

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def resolve(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Validated options: declared ones coerced, defaults filled in, required ones present."""
        out: dict[str, Any] = {}
        unknown = [k for k in options if self.option(k) is None]
        if unknown and not self.passthrough:
            known = ", ".join(o.flag for o in self.options) or "none"
            raise UsageError(
                f"--system {self.usage or self.name} does not take "
                f"{', '.join('--' + k.replace('_', '-') for k in unknown)} (its options: {known})"
            )
        for opt in self.options:
            value = options.get(opt.name)
            if value is None or (opt.multiple and value in ([], ())):
                if opt.required:
                    raise UsageError(
                        f"--system {self.usage or self.name} needs {opt.flag} ({opt.help})"
                    )
                out[opt.name] = opt.default
                continue
            out[opt.name] = opt.coerce(value, self.usage or self.name)
        for k in unknown:
            out[k] = options[k]
        return out


def _register_plugin(name: str, adapter: object) -> None:
    assert isinstance(adapter, Adapter)
    register_adapter(adapter)


_REGISTRY: Registry[Adapter] = Registry(
    "system adapter",
    group="assay.systems",
    item_type=Adapter,
    register_item=_register_plugin,
)
"""Every registered adapter; third-party adapters plug in through the ``assay.systems``
entry-point group (a module that calls `register_adapter`, or an `Adapter`; `assay._registry`)."""


def register_adapter(adapter: Adapter, *, replace: bool = False) -> Adapter:
    """Add an adapter (or, with `replace`, swap the one of that name). Returns it."""
    names = [o.name for o in adapter.options]
    if len(set(names)) != len(names):
        raise ValueError(f"adapter {adapter.name!r} declares an option twice")
    return _REGISTRY.add(adapter.name, adapter, replace=replace)


def list_adapters(*, strict: bool = True) -> list[Adapter]:
    """Every registered adapter, in registration order (``strict=False``: a broken plug-in does
    not raise here, for help text; the next lookup raises its error)."""
    return [_REGISTRY.raw(n) for n in _REGISTRY.names(strict=strict)]


def find_adapter(spec: str) -> Adapter:
    """The adapter that takes `spec`: an exact name first, then the first whose `matches` does."""
    if spec in _REGISTRY and _REGISTRY[spec].takes(spec):
        return _REGISTRY[spec]
    for adapter in _REGISTRY.values():
        if adapter.takes(spec):
            return adapter
    forms = ", ".join(a.usage or a.name for a in _REGISTRY.values())
    raise RegistryError(f"--system {spec!r}: expected one of: {forms}")


def load_system(spec: str | Any, **options: Any) -> Any:
    """A system from a spec string and its adapter's options, or an object passed through.

    An object is checked against the protocol and returned as is. A string goes to the adapter
    that takes it (see `list_adapters()`): ``"pkg.mod:attr"`` (an instance, a class or a factory,
    called with the options), an ``http(s)://`` URL, ``"bm25"`` (option `chunks`) or
    ``"filings"`` (options `corpus`, `mode`, ...).
    """
    if not isinstance(spec, str):
        kind_of(spec, type(spec).__name__)
        return spec
    adapter = find_adapter(spec)
    system = adapter.build(spec, adapter.resolve(options))
    kind_of(system, spec)
    return system
