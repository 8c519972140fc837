"""The root `assay` Typer app and its `--version` callback; every command module registers on it."""

from __future__ import annotations

from typing import Annotated

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
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Golden datasets as the backbone of RAG evaluation: validate, run, score, compare, gate."""
