"""Plug-in authors get types: the context a check receives and the one a metric family reads
are exported from the package, and assay's own contexts satisfy the protocols the registries
declare (a check or a family written against them runs on what assay builds)."""

from __future__ import annotations

import numpy as np

import assay


def test_the_contexts_are_exported_and_assays_own_satisfy_the_protocols() -> None:
    from assay.dataset import Entry
    from assay.judge.context import CheckContext
    from assay.metrics.context import Context

    assert assay.CheckContext is CheckContext and assay.Outcome is assay.judge.Outcome
    assert assay.MetricContext is assay.metrics.MetricContext
    e = Entry.model_validate({"id": "e", "query": "q", "category": "c"})
    ctx = assay.CheckContext(e, "It was $5 million.", citations=["c1"])
    assert isinstance(ctx, assay.CheckInput) and not isinstance(object(), assay.CheckInput)

    class Gold:
        entry_ids = ("a", "b")
        alt_piece = np.array([0, 1], dtype=np.int64)
        alt_gain = np.array([1.0, 1.0])
        piece_path = np.array([0, 1], dtype=np.int64)
        path_entry = np.array([0, 1], dtype=np.int64)

    mctx = Context(Gold(), np.array([0, 7], dtype=np.int64))
    assert isinstance(mctx, assay.MetricContext) and not isinstance(ctx, assay.MetricContext)
    assert mctx.recall(5).tolist() == [1.0, 0.0]


def test_a_check_over_the_protocol_is_registered_and_run() -> None:
    """A check written against `CheckInput` alone (what every context offers) runs."""
    from assay.dataset import Entry
    from assay.judge import check, check_entry, unregister

    @check("cites_one", default=False)
    def cites_one(ctx: assay.CheckInput) -> bool | None:
        return None if ctx.answer is None else len(ctx.citations) == 1

    try:
        e = Entry.model_validate({"id": "e", "query": "q", "category": "c"})
        assert check_entry(e, "x", citations=["c1"], checks="cites_one").values == {
            "cites_one": True
        }
    finally:
        unregister("cites_one")


def test_a_check_function_and_the_entries_a_group_applies_to_are_typed() -> None:
    """`Check.fn` takes a context bound to the `CheckInput` protocol (assay passes its own
    `CheckContext`) and returns a check's result; a group's (or a check's) entry test takes an
    `Entry`: no `Any` (mypy --strict holds a check to them)."""
    import typing
    from collections.abc import Callable

    from assay.dataset import Entry
    from assay.judge import registry
    from assay.judge.context import CheckContext

    ns = {"Entry": Entry}
    hints = typing.get_type_hints(registry.Check, localns=ns)
    ctx = registry.C
    assert isinstance(ctx, typing.TypeVar) and ctx.__bound__ is assay.CheckInput
    assert hints["fn"] == Callable[[ctx], registry.Outcome | bool | float | None]
    assert hints["rates"] == Callable[[Entry], bool] | None
    group = typing.get_type_hints(registry.CheckGroup, localns=ns)
    assert group["applies"] == Callable[[Entry], bool]
    assert typing.get_type_hints(registry, localns=ns)["PLUGIN_MODULES"] == tuple[str, ...]
    assert all(h is not typing.Any for h in hints.values())
    assert isinstance(CheckContext(Entry(id="e", query="q", category="c"), None), ctx.__bound__)


def test_every_builtin_check_annotates_its_context() -> None:
    """assay's own checks take a typed context (`CheckContext` or a protocol it satisfies),
    never `Any`: mypy --strict then holds each to what the context offers, as it holds a
    plug-in's."""
    import inspect
    import typing

    from assay.judge import registry
    from assay.judge.context import CheckContext

    untyped = []
    for name in registry.check_names():
        fn = registry.get_check(name).fn
        if not fn.__module__.startswith("assay."):
            continue
        (param,) = inspect.signature(fn).parameters
        hint = typing.get_type_hints(fn).get(param)
        if hint not in (CheckContext, assay.CheckInput):
            untyped.append(f"{fn.__module__}.{fn.__qualname__}: {hint}")
    assert untyped == []
