"""What a system is, for caches and run journals: its spec, arguments, code and data.

`system_identity` is what the request cache keys on and what every run journal row records, so
that a result is replayed only for the system that produced it:

- ``spec``: how the system was named (``bm25``, ``pkg.mod:build``, a URL);
- ``args``: the options it was built with that change its answers (paths as strings);
- ``identity``: what the system declares through ``identity()`` (or an attribute of that name),
  when it does;
- ``code``: otherwise a hash of the source of the system's module(s): the module of its class
  and, for an import path, the module named in the spec; a module that is a package's
  ``__init__`` stands for every ``.py`` file of the package. Editing that code is a cache miss.

`corpus_hash_of` reads the optional ``corpus_hash`` of a system (attribute or method).
"""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from assay._io import dumps_canonical, sha256_bytes
from assay.errors import UsageError
from assay.systems.registry import find_adapter

__all__ = ["corpus_hash_of", "identity_hash", "source_hash", "system_identity"]

_IMPORT_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _module_files(module: str | ModuleType) -> list[tuple[str, Path]]:
    mod = module if isinstance(module, ModuleType) else sys.modules.get(module)
    if mod is None:
        try:
            mod = importlib.import_module(str(module))
        except ImportError:
            return []
    file = getattr(mod, "__file__", None)
    if not file:
        return []  # built in, or a namespace package
    path = Path(file)
    if path.suffix != ".py" or not path.exists():
        return []  # compiled extension or frozen: nothing to read
    if path.name == "__init__.py":
        root = path.parent
        return [
            (f"{mod.__name__}/{p.relative_to(root).as_posix()}", p)
            for p in sorted(root.rglob("*.py"))
        ]
    return [(mod.__name__, path)]


def source_hash(*modules: str | ModuleType) -> str | None:
    """A hash of the source files of `modules` (a package's ``__init__`` stands for the whole
    package folder), or None when none has a readable ``.py`` file. Names, not locations, enter
    the hash: moving a checkout does not change it, editing a file does."""
    files: dict[str, Path] = {}
    for m in modules:
        if isinstance(m, str) and m in ("builtins", "__builtin__"):
            continue
        files.update(_module_files(m))
    if not files:
        return None
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode("utf-8") + b"\0")
        h.update(files[name].read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _declared(system: Any) -> Any:
    ident = getattr(system, "identity", None)
    return ident() if callable(ident) else ident


def corpus_hash_of(system: Any) -> str | None:
    """The system's ``corpus_hash`` (attribute or method), or None when it declares none."""
    value = getattr(system, "corpus_hash", None)
    if callable(value):
        value = value()
    return None if value is None else str(value)


def _arg(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_arg(v) for v in value]
    return value


def system_identity(
    system: Any,
    spec: str | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    modules: Iterable[str] = (),
) -> dict[str, Any]:
    """What makes a system's answers what they are (see the module docs).

    `options` are the arguments it was built with (None values and options an adapter marks as
    not changing answers are left out); `modules` adds modules whose source counts.
    """
    out: dict[str, Any] = {"spec": spec or f"{type(system).__module__}.{type(system).__qualname__}"}
    if options:
        adapter = None
        if spec is not None:
            try:
                adapter = find_adapter(spec)
            except UsageError:  # an ad-hoc spec (a label): every option counts
                adapter = None
        args = {}
        for name, value in sorted(options.items()):
            opt = adapter.option(name) if adapter is not None else None
            if value is None or (opt is not None and not opt.identity):
                continue
            args[name] = _arg(value)
        if args:
            out["args"] = args
    declared = _declared(system)
    if declared is not None:
        out["identity"] = declared
    else:
        mods = [type(system).__module__, *modules]
        # the module an import path names (only when it was imported: a spec may be a label)
        if spec is not None and _IMPORT_SPEC.match(spec) and spec.partition(":")[0] in sys.modules:
            mods.append(spec.partition(":")[0])
        code = source_hash(*dict.fromkeys(mods))
        if code is not None:
            out["code"] = code
    return out


def identity_hash(identity: Mapping[str, Any]) -> str:
    """A short stable hash of an identity (what journal rows and cache listings show)."""
    return sha256_bytes(dumps_canonical(dict(identity)).encode("utf-8"))[:16]
