"""The `assay` command line: every command is a thin parse-call-format wrapper over the library."""

from __future__ import annotations

from assay.cli._app import app

__all__ = ["app", "main"]


def main() -> None:
    from assay.cli import _register  # noqa: F401  (imports every command module)

    app()
