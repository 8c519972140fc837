"""``--system pkg.module:attr``: your own system, by import path.

`attr` (dotted for nested attributes) is an instance of any system kind (`retrieve`, `sql`:
`assay.systems.kinds`), or a class or factory function, called with the options:
``--system-arg KEY=VALUE`` on the command line (VALUE read as JSON when it parses, else as a
string), any keyword argument of `load_system` in Python.
Its identity hashes the source of the top-level packages of the module named here and of the
system's class, with the arguments (and the declared `identity()` and `data_files()`, when it has
them; `assay.systems.identity`). ``--python PATH`` runs the system in another interpreter
(`assay.systems.isolated`), so its dependencies need not be installed beside assay.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

from assay._io import json_loads
from assay.errors import UsageError
from assay.systems.kinds import list_kinds
from assay.systems.registry import Adapter, Option, register_adapter

__all__ = ["ADAPTER", "parse_system_args"]


def parse_system_args(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["top_k=5", "name=bge"]`` -> ``{"top_k": 5, "name": "bge"}`` (JSON values when they
    parse, strings otherwise)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise UsageError(f"--system-arg {item!r}: expected KEY=VALUE with KEY a Python name")
        try:
            out[key] = json_loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


_MODULE_PREFIX = re.compile(r"^[A-Za-z_][\w.]*:")  # a module path (never "sql-..." or a URL)


def _matches(spec: str) -> bool:
    return _MODULE_PREFIX.match(spec) is not None and not spec.startswith(("http://", "https://"))


def _build(spec: str, options: dict[str, Any]) -> Any:
    kwargs = parse_system_args(options.pop("system_arg", None) or [])
    python = options.pop("python", None)
    kwargs.update(options)
    if python is not None:
        from assay.systems.isolated import IsolatedSystem

        return IsolatedSystem(python, spec, kwargs)
    mod_name, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise UsageError(f"--system {spec!r}: cannot import {mod_name}: {exc}") from exc
    target: Any = mod
    for part in attr.split("."):
        if not hasattr(target, part):
            raise UsageError(f"--system {spec!r}: {mod_name} has no attribute {attr!r}")
        target = getattr(target, part)
    if not inspect.isclass(target) and any(k.accepts(target) for k in list_kinds()):
        if kwargs:
            raise UsageError(
                f"--system {spec!r} is an instance; it takes no arguments "
                f"(got {', '.join(sorted(kwargs))})"
            )
        return target
    if not callable(target):
        raise UsageError(f"--system {spec!r}: not a system, a class or a factory")
    try:
        inspect.signature(target).bind(**kwargs)
    except TypeError as exc:
        raise UsageError(f"--system {spec!r}: cannot be called with {kwargs}: {exc}") from exc
    except ValueError:
        pass  # no signature to check (a builtin): let the call decide
    return target(**kwargs)


ADAPTER = register_adapter(
    Adapter(
        name="python",
        usage="pkg.module:attr",
        help="Your own system by import path: an instance, a class or a factory (called with "
        "the --system-arg values).",
        build=_build,
        matches=_matches,
        passthrough=True,
        options=(
            Option(
                "system_arg",
                str,
                "KEY=VALUE for a class or factory (repeatable; VALUE read as JSON when it parses)",
                multiple=True,
            ),
            Option(
                "python",
                Path,
                "run the system in this Python interpreter (its own environment, with the "
                "system's dependencies; assay need not be installed there)",
            ),
        ),
        examples=(
            "assay run golden.jsonl --system mypkg.pipeline:build --system-arg top_k=20 "
            "--out run.jsonl",
            "assay run golden.jsonl --system mypkg.pipeline:build --python ../rag/.venv/bin/python "
            "--out run.jsonl",
        ),
    )
)
