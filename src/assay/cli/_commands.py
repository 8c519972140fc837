"""Which module registers which command, and the registration itself: the command modules are
imported (each registers its commands on `assay.cli.app`), then every command is put behind the
one error route (`_common.handle_errors`: bad input exits 2 with a one-line message, never a
traceback). Command modules do not apply it themselves.

The command line (`assay.cli.main`) imports only the modules of the command it is given
(`modules_for`): ``assay gate`` needs none of the other twenty, whose imports took a tenth of a
second of every command's start. Help, a mistyped name and anything unusual load them all, as
importing `assay.cli._register` does. `COMMANDS` is written out here, so finding a command costs
no import; tests/cli/test_every_command.py checks it against what the modules register.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence

from typer import Typer

from assay.cli._app import app
from assay.cli._common import handle_errors

#: every command module, in the order `assay --help` lists their commands
MODULES = (
    "agreement_cmds", "attribute_cmds", "audit_cmds", "bench_cmds", "cache_cmds", "core_cmds",
    "corpus_cmds", "dataset_cmds", "demo_cmds", "explorer_cmds", "formats_cmds", "groups",
    "judge_cmds", "ledger_cmds", "logs_cmds", "routing_cmds", "sql_cmds", "stats_cmds",
    "sweep_cmds", "synth_cmds", "workbench_cmds",
)  # fmt: skip

#: each top-level command or group: the modules that define it and its subcommands (with
#: `groups`, which holds the groups several modules share, always imported)
COMMANDS: dict[str, tuple[str, ...]] = {
    "agreement": ("agreement_cmds",), "attribute": ("attribute_cmds",),
    "audit": ("audit_cmds",), "bench": ("bench_cmds",), "cache": ("cache_cmds",),
    "certify": ("agreement_cmds",), "check": ("judge_cmds",), "compare": ("stats_cmds",),
    "corpus": ("corpus_cmds",), "demo": ("demo_cmds",), "diff": ("dataset_cmds",),
    "export": ("explorer_cmds",), "export-as": ("formats_cmds",), "fresh": ("stats_cmds",),
    "gate": ("stats_cmds",), "import": ("bench_cmds", "formats_cmds"),
    "judge": ("agreement_cmds", "judge_cmds"), "keyfacts": ("dataset_cmds",),
    "ledger": ("ledger_cmds",), "logs": ("logs_cmds",), "plan": ("stats_cmds",),
    "report": ("explorer_cmds",), "routing": ("routing_cmds",), "run": ("core_cmds",),
    "schema": ("core_cmds",), "score": ("core_cmds",), "split": ("stats_cmds",),
    "sql": ("sql_cmds",), "sweep": ("sweep_cmds",),
    "synth": ("routing_cmds", "sql_cmds", "synth_cmds"), "trec": ("core_cmds",),
    "validate": ("core_cmds",), "workbench": ("workbench_cmds",),
}  # fmt: skip


def modules_for(args: Sequence[str]) -> tuple[str, ...]:
    """The command modules a command line needs: those of the command it starts with, or every
    one (no command, an option first such as ``--help``, a name no module registers)."""
    if args and args[0] in COMMANDS:
        return ("groups", *COMMANDS[args[0]])
    return MODULES


def register(modules: Sequence[str] = MODULES) -> None:
    """Import ``modules`` (names in `MODULES`), list the commands in `MODULES`' order and put
    each behind `handle_errors` once (a command registered before is not wrapped again)."""
    for name in modules:
        importlib.import_module(f"assay.cli.{name}")
    app.registered_commands.sort(key=_place)
    _guard(app)


def _guard(typer_app: Typer) -> None:
    for info in typer_app.registered_commands:
        if info.callback is not None and not getattr(info.callback, "_guarded", False):
            info.callback = handle_errors(info.callback)
            info.callback._guarded = True  # type: ignore[attr-defined]
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _guard(group.typer_instance)


def _place(info: object) -> tuple[int, int]:
    """A top-level command's place in `assay --help`: its module's in `MODULES`, then its line
    there, whichever module was imported first (a program that imported
    ``assay.cli.stats_cmds`` first would otherwise list compare and gate first)."""
    fn = getattr(info, "callback", None)
    fn = inspect.unwrap(fn) if callable(fn) else fn  # through every decorator
    module = getattr(fn, "__module__", "") or ""
    short = module.rsplit(".", 1)[-1]
    line = getattr(getattr(fn, "__code__", None), "co_firstlineno", 0)
    return (MODULES.index(short) if short in MODULES else len(MODULES), line)
