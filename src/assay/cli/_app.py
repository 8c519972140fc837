"""The root `assay` Typer app and its `--version` callback; every command module registers on it."""

from __future__ import annotations

import typer

from assay._version import __version__

app = typer.Typer(
    name="assay",
    help="Golden datasets as the backbone of RAG evaluation: validate, run, score, compare, gate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
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
