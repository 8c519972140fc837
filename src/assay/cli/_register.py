"""Imports every command module so that each registers its commands on `assay.cli.app`, then puts
every command behind the one error route (`_common.handle_errors`): bad input exits 2 with a
one-line message, never a traceback. Command modules do not apply it themselves."""

import inspect

from typer import Typer

from assay.cli import (
    agreement_cmds,
    attribute_cmds,
    audit_cmds,
    bench_cmds,
    cache_cmds,
    core_cmds,
    corpus_cmds,
    dataset_cmds,
    demo_cmds,
    explorer_cmds,
    formats_cmds,
    groups,
    judge_cmds,
    ledger_cmds,
    logs_cmds,
    routing_cmds,
    sql_cmds,
    stats_cmds,
    sweep_cmds,
    synth_cmds,
    workbench_cmds,
)
from assay.cli._app import app
from assay.cli._common import handle_errors


def _guard(typer_app: Typer) -> None:
    for info in typer_app.registered_commands:
        if info.callback is not None:
            info.callback = handle_errors(info.callback)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _guard(group.typer_instance)


_MODULES = [
    name.rsplit(".", 1)[-1]
    for name in (
        agreement_cmds.__name__, attribute_cmds.__name__, audit_cmds.__name__,
        bench_cmds.__name__, cache_cmds.__name__, core_cmds.__name__, corpus_cmds.__name__,
        dataset_cmds.__name__, demo_cmds.__name__, explorer_cmds.__name__,
        formats_cmds.__name__, groups.__name__, judge_cmds.__name__, ledger_cmds.__name__,
        logs_cmds.__name__, routing_cmds.__name__, sql_cmds.__name__, stats_cmds.__name__,
        sweep_cmds.__name__, synth_cmds.__name__, workbench_cmds.__name__,
    )
]  # fmt: skip


def _place(info: object) -> tuple[int, int]:
    """A top-level command's place in `assay --help`: its module's in the list above, then its
    line there, whichever module was imported first (a program that imported
    ``assay.cli.stats_cmds`` before this module would otherwise list compare and gate first)."""
    fn = getattr(info, "callback", None)
    fn = inspect.unwrap(fn) if callable(fn) else fn  # through every decorator
    module = getattr(fn, "__module__", "") or ""
    short = module.rsplit(".", 1)[-1]
    line = getattr(getattr(fn, "__code__", None), "co_firstlineno", 0)
    return (_MODULES.index(short) if short in _MODULES else len(_MODULES), line)


app.registered_commands.sort(key=_place)
_guard(app)
