"""Shared CLI plumbing: output formats, error reporting, exit codes."""

from __future__ import annotations

import functools
import gc
import os
import sqlite3
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from typer._click import Context as ClickContext
from typer._click import HelpFormatter
from typer.core import TyperCommand
from typer.exceptions import TyperException

from assay.errors import AssayError, DataError, UsageError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_FAIL = 1  # a check ran and failed (gate, validate with problems)
EXIT_USAGE = 2  # bad input or usage


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


class GoldLevel(StrEnum):
    auto = "auto"
    chunk = "chunk"
    page = "page"


def gold_level(level: GoldLevel) -> Literal["chunk", "page"]:
    """The level a retrieval command scores at: auto is chunk level, where gold that resolves
    only at page level stops the command with one message suggesting --level page
    (`assay.gold.resolve.split_quotes`)."""
    return "page" if level is GoldLevel.page else "chunk"


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


def describe_os_error(exc: OSError) -> str:
    """One line naming the path: `PATH: is a directory`, `PATH: permission denied`, ..."""
    reason = {
        IsADirectoryError: "is a directory, not a file",
        NotADirectoryError: "a parent of this path is not a directory",
        PermissionError: "permission denied",
        FileNotFoundError: "file not found",
    }.get(type(exc), (exc.strerror or str(exc)).lower())
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else f"{reason}: {exc}"


def _error(message: str) -> NoReturn:
    err_console().print(f"error: {message}", style="bold red", markup=False, highlight=False)
    raise typer.Exit(EXIT_USAGE)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn assay errors into a clear message and exit code 2 (no traceback for data problems)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except DataError as exc:
            report_problems(exc)
            raise typer.Exit(EXIT_USAGE) from None
        except (UsageError, AssayError) as exc:
            _error(str(exc))
        except OSError as exc:  # a directory, an unreadable or unwritable path, a full disk
            _error(describe_os_error(exc))
        except UnicodeDecodeError as exc:
            _error(f"input is not UTF-8 text ({exc.reason} at byte {exc.start})")
        except ValueError as exc:  # a value the library refuses (a margin, a size, a level)
            _error(str(exc))
        except (typer.Exit, typer.Abort, TyperException, KeyboardInterrupt):
            raise
        except sqlite3.Error as exc:
            _error(f"database: {exc}")
        except Exception as exc:  # a bug: say so in one line, never a traceback
            if isinstance(getattr(exc, "orig", None), sqlite3.Error):  # wrapped by SQLAlchemy
                _error(f"database: {exc.orig}")  # type: ignore[attr-defined]
            if os.environ.get("ASSAY_DEBUG"):
                raise
            _error(
                f"internal error: {type(exc).__name__}: {exc} (set ASSAY_DEBUG=1 for the traceback)"
            )

    return wrapper


_ONE_SHOT: list[bool] = []  # a one-shot command ran in this process (`collector_paused`)


def collector_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """Run a one-shot batch command (one that reads its inputs, computes and exits, such as
    ``assay gate``) with the cyclic garbage collector paused (`assay._io.gc_paused`): its
    imports, inputs and results are millions of long-lived objects, and each collection would
    walk them all to find no cycle (a second of CPU at 100,000 entries). Reference counting
    frees everything as before; the collector's previous state is restored on the way out.
    Run from the command line (`assay.cli.main`), the process then leaves at once once its
    output is written (`leave_at_once`), and the collector stays paused to the end: turned back
    on, its first collection would walk every object built since the pause (0.3 s at 100,000
    entries) just before the process leaves."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        import assay._io

        _ONE_SHOT.append(True)
        if assay._io.HELD is not None:  # the command line, which leaves after this command
            gc.disable()
            return fn(*args, **kwargs)
        with assay._io.gc_paused():
            return fn(*args, **kwargs)

    return wrapper


def leave_at_once(code: object) -> None:
    """End the process with exit status ``code`` without tearing the interpreter down, when a
    one-shot command (`collector_paused`) ran and no other non-daemon thread is left: the
    output is flushed and the exit handlers run (`atexit`), but the modules, the last
    collection and the freeing of every object one by one (a fifth of a second after a gate)
    are skipped, as the operating system reclaims the memory whole. Daemon threads do not hold
    it back: the usual exit does not wait for them either (a progress bar's refresh thread,
    told to stop, may not have woken yet: it kept one gate in three from leaving at once on a
    loaded machine). Otherwise (or for an exit status that is not a number) this returns, and
    the process exits as usual."""
    import atexit
    import threading

    main = threading.main_thread()
    if not _ONE_SHOT or any(t is not main and not t.daemon for t in threading.enumerate()):
        return
    if code is None:
        code = 0
    if not isinstance(code, int):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the usual exit reports it
        return
    atexit._run_exitfuncs()
    os._exit(code)


def emit(obj: Any, fmt: Format) -> None:
    """Print an object with to_table/to_json/to_markdown in the chosen format."""
    if fmt is Format.json:
        sys.stdout.write(obj.to_json() + "\n")
    elif fmt is Format.markdown:
        sys.stdout.write(obj.to_markdown())
    else:
        out_console().print(obj.to_table())


class RegistryHelp(TyperCommand):
    """A command whose ``--help`` ends with the registered metrics and answer checks, read from
    the registries when the help is shown (plug-ins included; nothing heavy is imported when
    the command line starts)."""

    def format_help(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        from assay.judge.registry import listing as check_listing
        from assay.metrics import listing as metric_listing

        self.epilog = (
            f"Registered metrics: {metric_listing(strict=False)}.\n\n"
            f"Registered answer checks: {check_listing(strict=False)}."
        )
        super().format_help(ctx, formatter)
