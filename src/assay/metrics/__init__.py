"""Retrieval metrics as values in a registry (the way ir_measures declares measures).

A `Metric` is a hashable value, a registered family plus its cutoff: ``parse("ndcg@10")`` is
``Metric("ndcg", 10)`` and ``str()`` gives the name back. `parse` is the only reader of metric
names; `register` adds a family (one decorated function in one file); `families` / `listing`
enumerate the registry (help text, docs). The compute side reads one shared `Context` built from
the first rank of every gold alternative, so what several metrics need is computed once.

Built-in families are one file each: every public module of this package but `context` (they are
imported, and so registered, with the package). The default score table is recall@k, complete@k,
mrr and ndcg@k, in that order.

The scoring level (chunk or page) is not a metric parameter: it decides how gold and hits are
mapped to keys before any metric runs, so one scoring has one level and every metric in it shares
it (``recall@5`` means the same formula at either level).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

from assay.metrics._registry import (
    DEFAULT_PAIR,
    HEADLINE,
    Compute,
    Metric,
    MetricContext,
    MetricError,
    MetricFamily,
    default_metrics,
    families,
    family,
    listing,
    parse,
    parse_list,
    register,
    unregister,
)

if TYPE_CHECKING:
    from assay.metrics.context import NEVER, Context, GoldArrays, evaluate

__all__ = [
    "DEFAULT_PAIR",
    "HEADLINE",
    "NEVER",
    "Compute",
    "Context",
    "GoldArrays",
    "Metric",
    "MetricContext",
    "MetricError",
    "MetricFamily",
    "default_metrics",
    "evaluate",
    "families",
    "family",
    "listing",
    "parse",
    "parse_list",
    "register",
    "unregister",
]

# every public module here but `context` is one built-in family: importing it registers it
BUILTIN = tuple(
    sorted(
        m.name
        for m in pkgutil.iter_modules(__path__)
        if not m.name.startswith("_") and m.name != "context"
    )
)
for _name in BUILTIN:
    importlib.import_module(f"{__name__}.{_name}")

_LAZY = {"NEVER", "Context", "GoldArrays", "evaluate"}  # numpy: loaded on first use


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from assay.metrics import context

        return getattr(context, name)
    raise AttributeError(f"module 'assay.metrics' has no attribute {name!r}")
