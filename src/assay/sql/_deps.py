"""The optional dependencies of gold SQL: sqlglot (parse, normalise, transpile) and duckdb.

Both are core dependencies (the `sql` extra names them too, ``pip install 'assay[sql]'``).
Importing `assay.sql` never needs them; the first function that parses or executes a query does,
and says which extra to install if an environment lacks them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.errors import MissingExtraError

__all__ = ["need_duckdb", "need_sqlglot"]


def _need(module: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError("sql", what, module) from exc


def need_sqlglot() -> ModuleType:
    """The `sqlglot` module, or a `MissingExtraError` naming the `sql` extra."""
    return _need("sqlglot", "Parsing SQL")


def need_duckdb() -> ModuleType:
    """The `duckdb` module, or a `MissingExtraError` naming the `sql` extra."""
    return _need("duckdb", "Running SQL on DuckDB")
