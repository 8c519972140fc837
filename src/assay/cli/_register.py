"""Imports every command module so that each registers its commands on `assay.cli.app`, then puts
every command behind the one error route (`_common.handle_errors`): bad input exits 2 with a
one-line message, never a traceback, whether or not its module decorated it."""

from typer import Typer

from assay.cli import (  # noqa: F401
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
        if info.callback is not None and not getattr(info.callback, "_assay_guarded", False):
            info.callback = handle_errors(info.callback)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _guard(group.typer_instance)


_guard(app)
