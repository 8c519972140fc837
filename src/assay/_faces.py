"""Lazy package faces: a package's ``__init__`` names its public API without importing it.

A face lists, for every name it exports, the module that defines it (``_LAZY``), and the
submodules it exports as namespaces of verbs (``_NAMESPACES``: ``fresh.seal``, ``ocr.available``).
`lazy_face` returns the ``__getattr__`` and ``__dir__`` of such a package: importing the package
imports none of its modules; a name is read from its module on first access and then kept on the
package (so a function-level ``from assay.dataset import Entry`` costs what a deep import did; a
test that patches a function at its module patches it on the face too). A face imports
its names under ``TYPE_CHECKING`` for the type checker and defines ``__getattr__`` only outside
it, so a name the face does not export is a type error, not ``Any``.

This module is on the ground floor: it imports nothing of assay.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str, names: Mapping[str, str], namespaces: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``'s face."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif name in namespaces:
            value = importlib.import_module(namespaces[name])
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names, *namespaces})

    return __getattr__, __dir__
