"""The `assay` command line: every command is a thin parse-call-format wrapper over the library."""

from __future__ import annotations

from assay.cli._app import app

__all__ = ["app", "main"]


def main() -> None:
    import assay._io
    from assay.cli import _register  # noqa: F401  (imports every command module)
    from assay.cli._common import leave_at_once

    assay._io.HELD = []  # a command's inputs are held until it leaves (`hold_until_exit`)
    try:
        app()
    except SystemExit as stop:  # every command ends here, with its exit status
        leave_at_once(stop.code)
        raise
