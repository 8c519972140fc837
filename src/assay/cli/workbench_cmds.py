"""`assay workbench ...`: serve the expert workbench, import into it, export gold from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from assay.cli._common import FORMAT_OPTION, Format, emit
from assay.cli.groups import workbench_app
from assay.errors import AssayError, DataError, MissingExtraError, UsageError

__all__ = ["workbench_app"]

DB_HELP = (
    "Store URL: sqlite:///labels.db (a file; the default) or "
    "postgresql://user@host:port/dbname for a team server."
)
FORMAT_HELP = "Output format: table, json or markdown."
_console = Console()
_err = Console(stderr=True)


def _db(url: str) -> Any:
    try:
        from assay.workbench.db import Database
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("workbench", "the workbench", exc.name or "fastapi") from exc
    db = Database(url)
    db.migrate()
    return db


def _fail(exc: AssayError) -> None:
    if isinstance(exc, DataError):
        for p in exc.problems:
            _err.print(f"[red]error[/red] {p}", highlight=False)
    else:
        _err.print(f"[red]error[/red] {exc}", highlight=False)
    raise typer.Exit(2)


def _show(rows: list[dict[str, Any]], fmt: str, title: str) -> None:
    if fmt == "json":
        typer.echo(json.dumps(rows if len(rows) != 1 else rows[0], indent=2, default=str))
        return
    cols = list(rows[0]) if rows else []
    if fmt == "markdown":
        typer.echo("| " + " | ".join(cols) + " |")
        typer.echo("|" + "---|" * len(cols))
        for r in rows:
            typer.echo("| " + " | ".join(str(r[c]) for c in cols) + " |")
        return
    if fmt != "table":
        raise typer.BadParameter("use table, json or markdown", param_hint="--format")
    t = Table(title=title)
    for c in cols:
        t.add_column(c)
    for r in rows:
        t.add_row(*(str(r[c]) for c in cols))
    _console.print(t)


@workbench_app.command("serve")
def serve(
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
    host: str = typer.Option(
        "127.0.0.1", help="Address to listen on (keep 127.0.0.1 unless behind a TLS proxy)."
    ),
    port: int = typer.Option(8000, help="Port to listen on."),
    secure_cookies: bool = typer.Option(
        False, "--secure-cookies", help="Mark cookies Secure (set when served over HTTPS)."
    ),
    idle_minutes: int = typer.Option(480, help="Log a session out after this many idle minutes."),
    workers: int = typer.Option(
        1,
        help="Server processes. On SQLite their writers queue on one lock file beside the store; "
        "2 on a 2-core machine served 1.4x the labels/s of 1 (docs/workbench.md).",
    ),
    trusted_proxy: list[str] = typer.Option(
        [],
        "--trusted-proxy",
        help="Address or network of a reverse proxy whose X-Forwarded-For is believed "
        "(repeatable). Without it the client address is the connection's peer.",
    ),
    max_body: int = typer.Option(
        1_000_000, "--max-body", help="Largest request body accepted, in bytes (413 above it)."
    ),
    db_threads: int | None = typer.Option(
        None,
        "--db-threads",
        min=1,
        help="Threads doing the store work of claims and submissions, per process "
        "(default 2; more threads contend for the GIL and lengthen the tail).",
    ),
) -> None:
    """Start the workbench web app. Every page needs a login: create accounts with
    `assay workbench adduser` (or load `assay workbench demo`)."""
    try:
        import uvicorn  # noqa: F401

        from assay.workbench.app import WorkbenchConfig
        from assay.workbench.app import serve as run
        from assay.workbench.auth import AuthPolicy
    except ImportError as exc:
        _fail(MissingExtraError("workbench", "assay workbench serve", exc.name or "uvicorn"))
        return
    config = WorkbenchConfig(
        db_url=db,
        secure_cookies=secure_cookies,
        policy=AuthPolicy(idle_minutes=idle_minutes),
        trusted_proxies=tuple(trusted_proxy),
        max_body_bytes=max_body,
        db_threads=db_threads,
    )
    _err.print(
        f"assay workbench on http://{host}:{port}  (store: {db.split('?')[0]}, "
        f"{workers} process{'es' if workers > 1 else ''})"
    )
    try:
        run(config, host=host, port=port, workers=workers)
    except AssayError as exc:
        _fail(exc)


@workbench_app.command("adduser")
def adduser(
    username: str = typer.Argument(..., help="Login name."),
    role: str = typer.Option("annotator", help="annotator, adjudicator or admin."),
    domains: str = typer.Option(
        "", help="Comma-separated companies or sectors whose items this expert labels (empty: all)."
    ),
    password: str = typer.Option(
        ...,
        prompt=True,
        hide_input=True,
        confirmation_prompt=True,
        help="At least 12 characters, not a common password, not the username.",
    ),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
) -> None:
    """Create an account (the password is stored as an argon2id hash)."""
    from assay.workbench.auth import create_user

    try:
        uid = create_user(
            _db(db),
            username,
            password,
            role,
            domains=[d.strip() for d in domains.split(",") if d.strip()],
        )
    except AssayError as exc:
        _fail(exc)
        return
    _err.print(f"created {role} {username!r} (id {uid})")


@workbench_app.command("import-corpus")
def import_corpus(
    chunks: Path = typer.Argument(..., help="chunks.jsonl: chunk_id, doc_id, text, page or pages."),
    documents: Path | None = typer.Option(
        None,
        help="documents.jsonl: company, form, fiscal_year, period_end, version_date per doc_id.",
    ),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """Load the corpus that experts search (full-text) when labelling evidence."""
    from assay.workbench.service import import_corpus as run

    try:
        s = run(_db(db), chunks, documents)
    except AssayError as exc:
        _fail(exc)
        return
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("import-entries")
def import_entries(
    entries: Path = typer.Argument(..., help="A dataset JSONL of entries (the golden schema)."),
    tasks: str = typer.Option(
        "evidence,reference", help="Task kinds to open per entry: evidence, reference or both."
    ),
    overlap: int = typer.Option(2, help="How many experts label each item independently."),
    calibration: str = typer.Option(
        "", help="Comma-separated entry ids used as calibration items (served first in sessions)."
    ),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """Import questions as items and open labelling tasks on them."""
    from assay.workbench.service import import_entries as run

    try:
        s = run(
            _db(db),
            entries,
            kinds=[k.strip() for k in tasks.split(",") if k.strip()],
            overlap=overlap,
            calibration=[c.strip() for c in calibration.split(",") if c.strip()],
        )
    except AssayError as exc:
        _fail(exc)
        return
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("import-run")
def import_run(
    run_file: Path = typer.Argument(
        ..., help="A run JSONL (id, retrieved, answer, citations[, draft])."
    ),
    name: str = typer.Option("", help="Name of the system run (default: the file name)."),
    overlap: int = typer.Option(2, help="How many experts judge each answer independently."),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """Import a system's answers and open a judging task for each."""
    from assay.workbench.service import import_run as run

    try:
        s = run(_db(db), run_file, run_name=name or None, overlap=overlap)
    except AssayError as exc:
        _fail(exc)
        return
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("export")
def export(
    out: Path = typer.Option(
        ..., "--out", help="Dataset JSONL to write (its manifest is written beside it)."
    ),
    message: str = typer.Option("", "-m", "--message", help="Changelog note for this version."),
    only_settled: bool = typer.Option(
        False, help="Write only items with settled expert gold (default: every item)."
    ),
    fewshot: Path | None = typer.Option(
        None, help="Also write adjudicated hard judging cases as judge few-shot examples here."
    ),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """Export gold as a dataset the core validates, bumping its version with a changelog entry."""
    from assay.workbench.export import export_fewshot, export_gold

    try:
        store = _db(db)
        res = export_gold(store, out, message=message, only_settled=only_settled)
        if fewshot is not None:
            res["fewshot"] = export_fewshot(store, fewshot)["n_examples"]
    except AssayError as exc:
        _fail(exc)
        return
    _show([res], fmt, "exported")


@workbench_app.command("release-stale")
def release_stale(
    hours: float = typer.Option(24.0, help="Release claims left unsubmitted for this many hours."),
    db: str = typer.Option("sqlite:///labels.db", "--db", help=DB_HELP),
) -> None:
    """Give the slots of abandoned claims back to the queue (run it daily, e.g. from cron)."""
    from assay.workbench.service import release_stale_claims

    try:
        n = release_stale_claims(_db(db), hours=hours)
    except AssayError as exc:
        _fail(exc)
        return
    _err.print(f"released {n} stale claim(s)")


@workbench_app.command("plan")
def plan(
    rows: int = typer.Option(..., "--rows", help="Rows (questions) to label."),
    overlap: float = typer.Option(0.5, help="Share of rows labelled by a second expert (0-1)."),
    minutes: float | None = typer.Option(
        None, help="Minutes per label (default: measured in --db, else 3)."
    ),
    adjudication_rate: float | None = typer.Option(
        None,
        "--adjudication-rate",
        help="Share of double-labelled rows needing adjudication (default: measured, else 0.3).",
    ),
    adjudication_minutes: float = typer.Option(
        10.0, "--adjudication-minutes", help="Minutes per adjudication."
    ),
    kind: str = typer.Option("", help="Measure minutes of one task kind only (evidence, ...)."),
    db: str = typer.Option(
        "", "--db", help="A store whose recorded label times to use (" + DB_HELP + ")"
    ),
    fmt: Format = FORMAT_OPTION,
) -> None:
    """Project the expert hours for N rows: labels x minutes per label (measured in the store
    when given) + adjudications x minutes per adjudication."""
    from assay.workbench.service import measured_time, plan_budget

    try:
        measured = measured_time(_db(db)) if db else None
        budget = plan_budget(
            rows,
            overlap=overlap,
            minutes_per_label=minutes,
            adjudication_rate=adjudication_rate,
            adjudication_minutes=adjudication_minutes,
            measured=measured,
            kind=kind or None,
        )
    except AssayError as exc:
        _fail(exc)
        return
    emit(budget, fmt)


@workbench_app.command("demo")
def demo(
    db: str = typer.Option("sqlite:///workbench-demo.db", "--db", help=DB_HELP),
    serve_it: bool = typer.Option(False, "--serve", help="Start the server right away."),
    port: int = typer.Option(8000, help="Port for --serve."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Load into a store that already has users (demo accounts get random passwords).",
    ),
) -> None:
    """Load a small example (two companies, six questions, a system run, four users) so a new
    user can click through evidence, reference, judging and adjudication in a minute. Only into
    a new store (or one made by this command): its accounts have published passwords."""
    from assay.workbench.demo import load_demo

    try:
        store = _db(db)
        res = load_demo(store, force=force)
    except (AssayError, UsageError) as exc:
        _fail(exc)
        return
    _show(res["users"], "table", "demo accounts (local use only)")
    _err.print(f"store: {db}\nstart it with: assay workbench serve --db {db}")
    if serve_it:
        serve(
            db=db,
            host="127.0.0.1",
            port=port,
            secure_cookies=False,
            idle_minutes=480,
            workers=1,
            trusted_proxy=[],
            max_body=1_000_000,
        )
