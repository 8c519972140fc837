"""Shared CLI plumbing: output formats, error reporting, exit codes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console

from assay.errors import AssayError, DataError, UsageError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_OK = 0
EXIT_FAIL = 1  # a check ran and failed (gate, validate with problems)
EXIT_USAGE = 2  # bad input or usage


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


FORMAT_OPTION = typer.Option(
    Format.table,
    "--format",
    "-f",
    help="Output: a table for people, json for programs, markdown for pull requests.",
)


def out_console() -> Console:
    """Standard output; tables keep their full width when piped to a file or a CI log."""
    probe = Console()
    return Console(soft_wrap=False, width=max(probe.width, 120) if probe.is_terminal else 200)


def err_console() -> Console:
    return Console(stderr=True, soft_wrap=True)


def report_problems(exc: DataError, *, limit: int = 200) -> None:
    con = err_console()
    for p in exc.problems[:limit]:
        con.print(str(p), markup=False, highlight=False)
    if len(exc.problems) > limit:
        con.print(f"... and {len(exc.problems) - limit} more problems", markup=False)
    con.print(f"{len(exc.problems)} problem(s); nothing was written.", style="bold red")


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn assay errors into a clear message and exit code 2 (no traceback for data problems)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except DataError as exc:
            report_problems(exc)
            raise typer.Exit(EXIT_USAGE) from None
        except (UsageError, AssayError, FileNotFoundError) as exc:
            err_console().print(f"error: {exc}", style="bold red", markup=False, highlight=False)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def emit(obj: Any, fmt: Format) -> None:
    """Print an object with to_table/to_json/to_markdown in the chosen format."""
    if fmt is Format.json:
        sys.stdout.write(obj.to_json() + "\n")
    elif fmt is Format.markdown:
        sys.stdout.write(obj.to_markdown())
    else:
        out_console().print(obj.to_table())
