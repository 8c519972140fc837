"""`assay cache ls|clear`: what the request cache holds, and dropping it."""

from __future__ import annotations

from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import Format, emit, err_console
from assay.cli.options import CacheDirOpt, FmtOpt

cache_app = typer.Typer(
    help="The request cache: list what it holds (by system) and clear it.", no_args_is_help=True
)
app.add_typer(cache_app, name="cache")


@cache_app.command("ls")
def cache_ls(
    cache_dir: CacheDirOpt = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """List the cache's entries by namespace and system: spec, identity hash, corpus, count.

    Example: assay cache ls -f json
    """
    from assay.cache import default_cache_path, list_cache

    emit(list_cache(default_cache_path(cache_dir)), fmt)


@cache_app.command("clear")
def cache_clear(
    cache_dir: CacheDirOpt = None,
    system: Annotated[
        str | None,
        typer.Option(
            "--system", help="Only this system's entries: its spec or identity hash (a prefix)."
        ),
    ] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", help="Only this namespace (default, llm-judge).")
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Delete cache entries (all, or one system's, or one namespace's); prints what is left.

    Example: assay cache clear --system bm25
    """
    from assay.cache import clear_cache, default_cache_path, list_cache

    path = default_cache_path(cache_dir)
    n = clear_cache(path, system=system, namespace=namespace)
    err_console().print(f"deleted {n} entries from {path}", markup=False)
    emit(list_cache(path), fmt)
