"""The `assay` command line: every command is a thin parse-call-format wrapper over the library."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="assay",
    help="Golden datasets as the backbone of RAG evaluation: validate, run, score, compare, gate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from assay import __version__

        typer.echo(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_version,
        is_eager=True,
    ),
) -> None:
    """Golden datasets as the backbone of RAG evaluation: validate, run, score, compare, gate."""


def main() -> None:
    from assay.cli import _register  # noqa: F401  (imports every command module)

    app()
