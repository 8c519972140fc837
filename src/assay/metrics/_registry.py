"""Declaring metrics: a `Metric` is a hashable value (family + cutoff), parsed once, registered once.

This module holds the registry and the one parser of metric names. It imports no numpy, so the
command line can list the registered metrics in its help without loading the numeric stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, runtime_checkable

from assay._registry import Registry, RegistryError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


__all__ = [
    "DEFAULT_PAIR",
    "HEADLINE",
    "Compute",
    "Metric",
    "MetricContext",
    "MetricError",
    "MetricFamily",
    "default_metrics",
    "families",
    "family",
    "listing",
    "parse",
    "parse_list",
    "register",
    "unregister",
]


@runtime_checkable
class MetricContext(Protocol):
    """What a metric family's compute function reads: the per-entry arrays of one scoring
    (`assay.metrics.context.Context` is the one assay builds; this protocol keeps the registry
    free of numpy). Ranks are 0-based, `NEVER` when not retrieved; per-path values are mapped
    to entries with `on_best_path`."""

    @property
    def n_entries(self) -> int: ...

    @property
    def alt_rank(self) -> NDArray[np.int64]: ...

    @property
    def alt_entry(self) -> NDArray[np.int64]: ...

    @property
    def first_rank(self) -> NDArray[np.int64]: ...

    @property
    def n_paths(self) -> int: ...

    @property
    def piece_rank(self) -> NDArray[np.int64]: ...

    @property
    def piece_entry(self) -> NDArray[np.int64]: ...

    @property
    def piece_path(self) -> NDArray[np.int64]: ...

    @property
    def pieces_per_path(self) -> NDArray[np.float64]: ...

    @property
    def judged_rank(self) -> NDArray[np.int64]: ...

    @property
    def judged_entry(self) -> NDArray[np.int64]: ...

    def best_of_paths(self, per_path: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def within(self, k: int) -> NDArray[np.bool_]: ...

    def path_recall(self, k: int) -> NDArray[np.float64]: ...

    def path_ndcg(self, k: int) -> NDArray[np.float64]: ...

    def best_path(self, k: int) -> NDArray[np.int64]: ...

    def on_best_path(self, per_path: NDArray[np.float64], k: int) -> NDArray[np.float64]: ...

    def recall(self, k: int) -> NDArray[np.float64]: ...


Compute = Callable[[MetricContext, "int | None"], "NDArray[np.float64]"]
"""A family's vectorised compute: the shared per-entry context and the cutoff (None when the
family takes none) -> one value per entry, aligned with the gold's entries."""

Aggregate = Literal["mean"]

F = TypeVar("F", bound=Compute)

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_SPEC = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:@\s*(\S*))?\s*\Z")


HEADLINE = "complete"
"""The headline metric family: ``complete@k``, every required piece of evidence in the top k. The
gate gates on it, the explorer and the demo lead with it, when nothing else is named."""

DEFAULT_PAIR: tuple[str, ...] = (HEADLINE, "recall")
"""What a comparison compares when no metric is named (each at the comparison's k): the headline
and recall@k, its graded partner."""


class MetricError(RegistryError):
    """A metric name that does not parse, is not registered or is registered twice (a
    `RegistryError`: a `UsageError` and a `ValueError`, exit 2 on the command line)."""


@dataclass(frozen=True)
class MetricFamily:
    """One registered family: how its values are computed and how they are tested and aggregated.

    ``binary`` families take 0/1 per entry and are compared with the exact McNemar test on the
    entries that flipped; graded ones with the Wilcoxon signed-rank test over the entries that
    moved. ``cutoff`` families are always named with one (``recall@5``). ``aggregate`` is how a
    category's value comes from its entries' values; every family is a ``mean`` (the bootstrap
    intervals and the paired tests assume it, and `register` refuses anything else). ``default``
    is the family's column in the score table shown when no metrics are asked for (1 = first;
    None: shown only when asked for).
    """

    name: str
    compute: Compute
    binary: bool
    cutoff: bool
    description: str
    aggregate: Aggregate = "mean"
    default: int | None = None

    @property
    def pattern(self) -> str:
        """How the family is written: ``recall@k`` or ``mrr``."""
        return f"{self.name}@k" if self.cutoff else self.name


_REGISTRY: Registry[MetricFamily] = Registry(
    "metric", group="assay.metrics", listing=lambda: listing(), error=MetricError
)
"""Every registered family; third-party families plug in through the ``assay.metrics``
entry-point group (`assay._registry`)."""


def families() -> list[MetricFamily]:
    """Every registered family, by name."""
    return [_REGISTRY[n] for n in sorted(_REGISTRY)]


def family(name: str) -> MetricFamily:
    """The registered family called ``name`` (MetricError listing the registered ones if none)."""
    fam = _REGISTRY.get(name.lower())
    if fam is None:
        raise MetricError(f"unknown metric {name!r}; registered metrics: {listing()}")
    return fam


def listing(*, strict: bool = True) -> str:
    """The registered families as they are written: ``recall@k, complete@k, mrr, ...``.

    ``strict=False`` (help text built at import time) lists what loaded when a plug-in is
    broken instead of raising; the plug-in's error is raised by the first lookup instead."""
    names = _REGISTRY.names(strict=strict)
    return ", ".join(_REGISTRY.raw(n).pattern for n in sorted(names))


def register(
    name: str,
    *,
    binary: bool,
    cutoff: bool,
    description: str | None = None,
    aggregate: Aggregate = "mean",
    default: int | None = None,
    replace: bool = False,
) -> Callable[[F], F]:
    """Register the decorated compute function as the metric family ``name``.

    ``description`` defaults to the function's docstring (its first paragraph). Registering a
    name twice is an error unless ``replace``. Returns the function unchanged.
    """
    if not _NAME.match(name):
        raise MetricError(
            f"metric family name {name!r} must be lower-case letters, digits and '_', "
            "starting with a letter"
        )
    if aggregate != "mean":
        raise MetricError(
            f"metric {name!r}: aggregate {aggregate!r} is not supported (per-category values, "
            "their bootstrap intervals and the paired tests are means over entries)"
        )

    def deco(fn: F) -> F:
        text = description if description is not None else (fn.__doc__ or "")
        text = " ".join(text.strip().split("\n\n", 1)[0].split())
        if not text:
            raise MetricError(f"metric {name!r}: give a description or a docstring")
        family = MetricFamily(name, fn, binary, cutoff, text, aggregate, default)
        _REGISTRY.add(name, family, replace=replace)
        return fn

    return deco


def unregister(name: str) -> None:
    """Remove a family (a no-op when it is not registered)."""
    _REGISTRY.remove(name)


@dataclass(frozen=True)
class Metric:
    """A metric value: its family and cutoff. Hashable; ``str(m)`` is its name; parse(str(m)) == m.

    Construct it with `parse` (``parse("ndcg@10")``, ``parse("recall", k=5)``) or directly
    (``Metric("ndcg", 10)``); either way the family must be registered and the cutoff must fit it.
    """

    family: str
    k: int | None = None

    def __post_init__(self) -> None:
        fam = family(self.family)
        if fam.name != self.family:
            object.__setattr__(self, "family", fam.name)
        if fam.cutoff:
            if self.k is None:
                raise MetricError(f"{fam.name} needs a cutoff, e.g. {fam.name}@5")
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise MetricError(f"{fam.name}@{self.k}: the cutoff must be an integer >= 1")
        elif self.k is not None:
            raise MetricError(f"{fam.name} takes no cutoff (write {fam.name!r})")

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __str__(self) -> str:
        return self.name

    @property
    def spec(self) -> MetricFamily:
        """The registered family (looked up now, so a replaced family takes effect)."""
        return family(self.family)

    @property
    def binary(self) -> bool:
        return self.spec.binary

    @property
    def aggregate(self) -> Aggregate:
        return self.spec.aggregate

    def compute(self, ctx: MetricContext) -> NDArray[np.float64]:
        """One value per gold entry, from the shared context."""
        return self.spec.compute(ctx, self.k)


def parse(text: str | Metric, *, k: int | None = None) -> Metric:
    """The one parser of metric names: ``"ndcg@10"`` -> Metric("ndcg", 10).

    Case and surrounding spaces do not matter. A cutoff family given bare (``"recall"``) takes
    ``k`` when it is given; otherwise it is an error. Raises `MetricError` naming what exists.
    """
    if isinstance(text, Metric):
        return text
    m = _SPEC.match(text)
    if m is None:
        raise MetricError(f"cannot read metric {text!r}; registered metrics: {listing()}")
    name, cut = m.group(1).lower(), m.group(2)
    fam = _REGISTRY.get(name)
    if fam is None:
        raise MetricError(f"unknown metric {text.strip()!r}; registered metrics: {listing()}")
    if cut is None:
        if fam.cutoff and k is None:
            raise MetricError(f"{name} needs a cutoff, e.g. {name}@5")
        return Metric(name, k if fam.cutoff else None)
    if not fam.cutoff:
        raise MetricError(f"{name} takes no cutoff (write {name!r}, not {text.strip()!r})")
    if not cut.isdigit() or int(cut) < 1:
        raise MetricError(f"bad cutoff in {text.strip()!r}: k must be an integer >= 1")
    return Metric(name, int(cut))


def parse_list(spec: str | Iterable[str | Metric], *, k: int | None = None) -> list[Metric]:
    """Parse ``"recall@5,hit@5,mrr"`` (or a list of names, each possibly comma-separated) in order,
    dropping repeats."""
    items = [spec] if isinstance(spec, str) else list(spec)
    out: list[Metric] = []
    for item in items:
        parts = [item] if isinstance(item, Metric) else [p for p in item.split(",") if p.strip()]
        for part in parts:
            metric = parse(part, k=k)
            if metric not in out:
                out.append(metric)
    if not out:
        raise MetricError(f"no metric given; registered metrics: {listing()}")
    return out


def default_metrics(k: int) -> list[Metric]:
    """The metrics of the default score table at cutoff ``k``, in its column order."""
    table = sorted((f.default, f.name) for f in _REGISTRY.values() if f.default is not None)
    return [Metric(name, k if _REGISTRY[name].cutoff else None) for _, name in table]
