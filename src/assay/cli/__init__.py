"""The `assay` command line: every command is a thin parse-call-format wrapper over the library."""

from __future__ import annotations

from assay.cli._app import app

__all__ = ["app", "main"]


def main() -> None:
    import sys

    import assay._io
    from assay.cli._commands import modules_for, register
    from assay.cli._common import leave_at_once

    register(modules_for(sys.argv[1:]))  # the command's own modules: no other's imports
    assay._io.HELD = []  # a command's inputs are held until it leaves (`hold_until_exit`)
    try:
        app()
    except SystemExit as stop:  # every command ends here, with its exit status
        leave_at_once(stop.code)
        raise
