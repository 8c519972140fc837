"""`assay workbench ...`: serve the expert workbench, import into it, export gold from it."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.table import Table

from assay._io import check_outputs
from assay.cli._common import Format, emit, err_console, out_console
from assay.cli.groups import workbench_app
from assay.cli.options import FmtOpt
from assay.errors import MissingExtraError, UsageError

__all__ = ["workbench_app"]

P = ParamSpec("P")
R = TypeVar("R")

DB_HELP = (
    "Store URL: sqlite:///labels.db (a file; the default) or "
    "postgresql://user@host:port/dbname for a team server."
)


_OPEN: list[Any] = []


def _db(url: str) -> Any:
    """The store at `url`, migrated; closed when the command ends (see `_closing`)."""
    try:
        from assay.workbench.db import Database
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("workbench", "the workbench", exc.name or "fastapi") from exc
    db = Database(url)
    _OPEN.append(db)
    db.migrate()
    return db


def _closing(fn: Callable[P, R]) -> Callable[P, R]:
    """Close every store the command opened, however it ends."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            while _OPEN:
                _OPEN.pop().dispose()

    return wrapper


def _store_files(url: str) -> list[Path]:
    """The files of a SQLite store (the database, its WAL and shared memory, its write lock):
    an output must be none of them. A PostgreSQL store has no file here."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.util import asbool

    try:
        u = make_url(url if "://" in url else f"sqlite:///{url}")
    except Exception:
        return []
    if u.get_backend_name() != "sqlite" or u.database in (None, "", ":memory:"):
        return []
    base = str(u.database)
    files = [base]
    if asbool(u.query.get("uri", False)):
        # SQLite's own URI form (`sqlite:///file:store.db?uri=true&mode=rwc`): the file the
        # driver opens is the URI's path, percent-decoded; the literal name is the lock's
        from urllib.parse import unquote, urlsplit

        if base.startswith("file:"):
            parts = urlsplit(base)
            if parts.netloc not in ("", "localhost"):
                return [Path(base + ".writelock")]
            mode = dict(p.partition("=")[::2] for p in parts.query.split("&") if p)
            mode.update({k: str(v) for k, v in u.query.items()})
            if mode.get("mode") == "memory" or parts.path in ("", ":memory:"):
                return [Path(base + ".writelock")]
            files.insert(0, unquote(parts.path))
    return [Path(f + suffix) for f in files for suffix in ("", "-wal", "-shm", ".writelock")]


def _guard(outputs: list[Path | None], db: str, inputs: list[Path | None] | None = None) -> None:
    """Refuse an output that is the store (by any name: a symlink, a hard link) or an input,
    before the store is opened or anything is written (the core CLI's guard)."""
    check_outputs(outputs, [*_store_files(db), *(inputs or [])])


def _show(rows: list[dict[str, Any]], fmt: Format, title: str) -> None:
    """Rows of plain values: a table, JSON (one object when there is one row) or markdown."""
    if fmt is Format.json:
        sys.stdout.write(json.dumps(rows if len(rows) != 1 else rows[0], indent=2, default=str))
        sys.stdout.write("\n")
        return
    cols = list(rows[0]) if rows else []
    if fmt is Format.markdown:
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    t = Table(title=title)
    for c in cols:
        t.add_column(c)
    for r in rows:
        t.add_row(*(str(r[c]) for c in cols))
    out_console().print(t)


def _serve(
    db: str,
    *,
    host: str,
    port: int,
    secure_cookies: bool = False,
    idle_minutes: int = 480,
    workers: int = 1,
    trusted_proxy: list[str] | None = None,
    max_body: int = 1_000_000,
    db_threads: int | None = None,
    header_timeout: float = 10.0,
    body_timeout: float = 30.0,
    max_per_address: int = 100,
    write_timeout: float = 30.0,
) -> None:
    try:
        import uvicorn  # noqa: F401

        from assay.workbench.app import WorkbenchConfig
        from assay.workbench.app import serve as run
        from assay.workbench.auth import AuthPolicy
    except ImportError as exc:
        raise MissingExtraError(
            "workbench", "assay workbench serve", exc.name or "uvicorn"
        ) from exc
    config = WorkbenchConfig(
        db_url=db,
        secure_cookies=secure_cookies,
        policy=AuthPolicy(idle_minutes=idle_minutes),
        trusted_proxies=tuple(trusted_proxy or ()),
        max_body_bytes=max_body,
        db_threads=db_threads,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_per_address=max_per_address,
        write_timeout=write_timeout,
    )
    err_console().print(
        f"assay workbench on http://{host}:{port}  (store: {db.split('?')[0]}, "
        f"{workers} process{'es' if workers > 1 else ''})",
        markup=False,
        highlight=False,
    )
    run(config, host=host, port=port, workers=workers)


@workbench_app.command("serve")
@_closing
def serve(
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    host: Annotated[
        str, typer.Option(help="Address to listen on (keep 127.0.0.1 unless behind a TLS proxy).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    secure_cookies: Annotated[
        bool,
        typer.Option("--secure-cookies", help="Mark cookies Secure (set when served over HTTPS)."),
    ] = False,
    idle_minutes: Annotated[
        int, typer.Option(help="Log a session out after this many idle minutes.")
    ] = 480,
    workers: Annotated[
        int,
        typer.Option(
            help="Server processes. On SQLite their writers queue on one lock file beside the store; "
            "2 on a 2-core machine served 1.4x the labels/s of 1 (docs/workbench.md)."
        ),
    ] = 1,
    trusted_proxy: Annotated[
        list[str],
        typer.Option(
            "--trusted-proxy",
            help="Address or network of a reverse proxy whose X-Forwarded-For is believed "
            "(repeatable). Without it the client address is the connection's peer.",
        ),
    ] = [],  # noqa: B006 (typer copies it)
    max_body: Annotated[
        int,
        typer.Option("--max-body", help="Largest request body accepted, in bytes (413 above it)."),
    ] = 1_000_000,
    db_threads: Annotated[
        int | None,
        typer.Option(
            "--db-threads",
            min=1,
            help="Threads doing the store work of claims and submissions, per process "
            "(default 2 on SQLite, 4 on PostgreSQL, whose commits hold a thread while the WAL "
            "is flushed; more threads contend for the GIL).",
        ),
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(
            "--header-timeout",
            min=0.1,
            help="Seconds a connection may take to send a request's headers, and may stay idle "
            "between requests; then it is closed.",
        ),
    ] = 10.0,
    body_timeout: Annotated[
        float,
        typer.Option(
            "--body-timeout",
            min=0.1,
            help="Seconds a request's body may take to arrive; then the connection is closed.",
        ),
    ] = 30.0,
    max_per_address: Annotated[
        int,
        typer.Option(
            "--max-per-address",
            min=1,
            help="Open connections allowed from one client address; more are refused (and logged "
            "once a minute, with their count).",
        ),
    ] = 100,
    write_timeout: Annotated[
        float,
        typer.Option(
            "--write-timeout",
            min=0.1,
            help="Seconds a client may leave its replies unread once the send buffer is full; "
            "then the connection is dropped.",
        ),
    ] = 30.0,
    redact: Annotated[
        bool | None,
        typer.Option(
            "--redact/--hide-quoted",
            help="A text (a draft, another expert's label or note) that quotes a restricted chunk "
            "the viewer may not see: --redact shows it with the quoted spans replaced by "
            "'[restricted]'; --hide-quoted hides it whole (the default). Kept in the store.",
        ),
    ] = None,
) -> None:
    """Start the workbench web app. Every page needs a login: create accounts with
    `assay workbench adduser` (or load `assay workbench demo`)."""
    if redact is not None:
        from assay.workbench.service import set_redacting

        set_redacting(_db(db), redact)
    _serve(
        db,
        host=host,
        port=port,
        secure_cookies=secure_cookies,
        idle_minutes=idle_minutes,
        workers=workers,
        trusted_proxy=trusted_proxy,
        max_body=max_body,
        db_threads=db_threads,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_per_address=max_per_address,
        write_timeout=write_timeout,
    )


@workbench_app.command("adduser")
@_closing
def adduser(
    username: Annotated[str, typer.Argument(help="Login name (unique regardless of letter case).")],
    role: Annotated[str, typer.Option(help="annotator, adjudicator or admin.")] = "annotator",
    domains: Annotated[
        str,
        typer.Option(
            help="Comma-separated companies or sectors whose items this expert labels (empty: all)."
        ),
    ] = "",
    groups: Annotated[
        str,
        typer.Option(
            help="Comma-separated access groups (a deal team 'deal:ACME', the board 'board:ACME'): "
            "restricted documents whose label names one of them open to this expert. Exact names."
        ),
    ] = "",
    clearance: Annotated[
        str, typer.Option(help="Clearance tier: public, internal, insider or director.")
    ] = "public",
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            help="The password; asked for (hidden, typed twice) when not given, which keeps it out "
            "of the shell's history. It must be hard to guess: the zxcvbn strength estimator, "
            "told the username, must rate it 3 or 4 of 4.",
        ),
    ] = None,
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Create an account (the password is stored as an argon2id hash).

    An expert sees only the restricted documents their groups and clearance open (none by
    default); `assay workbench access` changes them later.

    Example: assay workbench adduser ana --role adjudicator   (then type the password twice)
    """
    from assay.workbench.auth import check_password_policy, create_user

    store = _db(db)
    if password is None:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    check_password_policy(password, username)  # before the store is touched
    uid = create_user(
        store,
        username,
        password,
        role,
        domains=[d.strip() for d in domains.split(",") if d.strip()],
        groups=_split(groups),
        clearance=clearance,
    )
    _show([{"id": uid, "username": username, "role": role}], fmt, "created")


def _split(text: str) -> list[str]:
    return [g.strip() for g in text.split(",") if g.strip()]


@workbench_app.command("access")
@_closing
def access(
    username: Annotated[str, typer.Argument(help="The account whose access to set.")],
    groups: Annotated[
        str,
        typer.Option(
            help="Comma-separated access groups, replacing the old ones (empty: none). Names are "
            "compared exactly, letter case included: 'DEAL:ACME' does not open 'deal:ACME'."
        ),
    ] = "",
    clearance: Annotated[
        str, typer.Option(help="Clearance tier: public, internal, insider or director.")
    ] = "public",
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Set an expert's own access: the groups they belong to and their clearance tier.

    A restricted document (its access label in documents.jsonl or the chunk table) opens to an
    expert whose groups and clearance its label allows (`assay.corpus.access.allows`). Tasks
    whose material names a document the expert may not see are never served to them, search
    never shows it, and asking for it by id answers 404. Groups that no label names are
    listed (a likely typo).

    Example: assay workbench access ana --groups deal:ACME --clearance insider
    """
    from assay.workbench.service import set_user_access
    from assay.workbench.service.access import check_access_input

    check_access_input(_split(groups), clearance)  # before the store is touched
    got = set_user_access(_db(db), username, groups=_split(groups), clearance=clearance)
    _show([got.to_dict()], fmt, "access")


@workbench_app.command("import-corpus")
@_closing
def import_corpus(
    chunks: Annotated[
        Path, typer.Argument(help="chunks.jsonl: chunk_id, doc_id, text, page or pages.")
    ],
    documents: Annotated[
        Path | None,
        typer.Option(
            help="Document metadata, as `assay corpus build --meta` reads it: one JSON object per "
            "line with doc_id (or id, or doc_name) and company, form (or doc_type), fiscal_year "
            "(or doc_period), period_end, version_date."
        ),
    ] = None,
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Load the corpus that experts search (full-text) when labelling evidence."""
    from assay.workbench.service import import_corpus as run

    s = run(_db(db), chunks, documents)
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("import-entries")
@_closing
def import_entries(
    entries: Annotated[
        Path, typer.Argument(help="A dataset JSONL of entries (the golden schema).")
    ],
    tasks: Annotated[
        str, typer.Option(help="Task kinds to open per entry: evidence, reference or both.")
    ] = "evidence,reference",
    overlap: Annotated[
        int, typer.Option(help="How many experts label each item independently (1-1000).")
    ] = 2,
    calibration: Annotated[
        str,
        typer.Option(
            help="Comma-separated entry ids used as calibration items (served first in sessions)."
        ),
    ] = "",
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Import questions as items and open labelling tasks on them. The file is checked as
    `assay validate` checks it (every problem as FILE:LINE: field) before anything is stored."""
    from assay.workbench.service import import_entries as run

    s = run(
        _db(db),
        entries,
        kinds=[k.strip() for k in tasks.split(",") if k.strip()],
        overlap=overlap,
        calibration=[c.strip() for c in calibration.split(",") if c.strip()],
    )
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("import-run")
@_closing
def import_run(
    run_file: Annotated[
        Path,
        typer.Argument(
            help="A run JSONL (id, retrieved, answer, citations[, draft, trace, tool_calls])."
        ),
    ],
    name: Annotated[
        str, typer.Option(help="Name of the system run (default: the file name).")
    ] = "",
    overlap: Annotated[
        int, typer.Option(help="How many experts judge each answer independently (1-1000).")
    ] = 2,
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Import a system's answers and open a judging task for each. Its answers also prefill the
    reference-answer tasks of the same questions as drafts. A row that made tool calls, or whose
    entry expects some, opens a tool task (Pass/Fail per call)."""
    from assay.workbench.service import import_run as run

    s = run(_db(db), run_file, run_name=name or None, overlap=overlap)
    _show([s.to_dict()], fmt, "imported")


@workbench_app.command("export")
@_closing
def export(
    out: Annotated[
        Path,
        typer.Option("--out", help="Dataset JSONL to write (its manifest is written beside it)."),
    ],
    message: Annotated[
        str, typer.Option("-m", "--message", help="Changelog note for this version.")
    ] = "",
    include_unlabelled: Annotated[
        bool,
        typer.Option(
            "--include-unlabelled",
            help="Also write the items without settled gold, marked label_tier: draft (never as "
            "unanswerable). By default only agreed or adjudicated items are written, and the count "
            "left out is reported.",
        ),
    ] = False,
    fewshot: Annotated[
        Path | None,
        typer.Option(
            help="Also write adjudicated hard judging cases as judge few-shot examples here."
        ),
    ] = None,
    labels_long: Annotated[
        Path | None,
        typer.Option(
            "--labels-long",
            help="Also write every raw label in the long format `assay agreement` reads "
            "(item, rater, field, value; one row per judged field).",
        ),
    ] = None,
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Export gold as a dataset the core validates, bumping its version with a changelog entry."""
    from assay.dataset import manifest_path
    from assay.workbench.export import export_fewshot, export_gold, export_labels_long

    _guard([out, manifest_path(out), fewshot, labels_long], db)
    store = _db(db)
    res = export_gold(store, out, message=message, include_unlabelled=include_unlabelled)
    if fewshot is not None:
        res["fewshot"] = export_fewshot(store, fewshot)["n_examples"]
    if labels_long is not None:
        res["labels_long"] = export_labels_long(store, labels_long)["n_rows"]
    _show([res], fmt, "exported")


@workbench_app.command("release-stale")
@_closing
def release_stale(
    hours: Annotated[
        float,
        typer.Option(help="Release claims left unsubmitted for this many hours (zero or more)."),
    ] = 24.0,
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///labels.db",
    fmt: FmtOpt = Format.table,
) -> None:
    """Give the slots of abandoned claims back to the queue (run it daily, e.g. from cron)."""
    from assay.workbench.service import release_stale_claims

    if not hours >= 0:  # before the store is opened; NaN too
        raise UsageError(f"--hours: must be zero or more (got {hours})")
    n = release_stale_claims(_db(db), hours=hours)
    _show([{"released": n, "hours": hours}], fmt, "released")


@workbench_app.command("plan")
@_closing
def plan(
    rows: Annotated[int, typer.Option("--rows", help="Rows (questions) to label.")],
    overlap: Annotated[
        float, typer.Option(help="Share of rows labelled by a second expert (0-1).")
    ] = 0.5,
    minutes: Annotated[
        float | None, typer.Option(help="Minutes per label (default: measured in --db, else 3).")
    ] = None,
    adjudication_rate: Annotated[
        float | None,
        typer.Option(
            "--adjudication-rate",
            help="Share of double-labelled rows needing adjudication (default: measured, else 0.3).",
        ),
    ] = None,
    adjudication_minutes: Annotated[
        float, typer.Option("--adjudication-minutes", help="Minutes per adjudication.")
    ] = 10.0,
    kind: Annotated[
        str, typer.Option(help="Measure minutes of one task kind only (evidence, ...).")
    ] = "",
    db: Annotated[
        str,
        typer.Option("--db", help="A store whose recorded label times to use (" + DB_HELP + ")"),
    ] = "",
    fmt: FmtOpt = Format.table,
) -> None:
    """Project the expert hours for N rows: labels x minutes per label (measured in the store
    when given) + adjudications x minutes per adjudication. With a store, it also says what the
    system's drafts save: minutes per reference answer started from a draft against from blank."""
    from assay.workbench.service import measured_time, plan_budget

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
    emit(budget, fmt)


@workbench_app.command("demo")
@_closing
def demo(
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = "sqlite:///workbench-demo.db",
    serve_it: Annotated[bool, typer.Option("--serve", help="Start the server right away.")] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port for --serve.")] = 8000,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Load into a store that already has users (demo accounts get random passwords).",
        ),
    ] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Load a small example (two companies, six questions, a system run, four users) so a new
    user can click through evidence, reference, judging and adjudication in a minute. Only into
    a new store (or one made by this command): its accounts have published passwords."""
    from assay.workbench.demo_store import load_demo

    res = load_demo(_db(db), force=force)
    _show(res["users"], fmt, "demo accounts (local use only)")
    err_console().print(
        f"store: {db}\nstart it with: assay workbench serve --db {db}", markup=False
    )
    if serve_it:
        _serve(db, host="127.0.0.1", port=port)
