"""`assay synth ...`: generate the synthetic filings room and check its gold against its text."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from assay.cli._common import Format as OutFormat
from assay.cli.groups import synth_app
from assay.errors import AssayError

if TYPE_CHECKING:
    from assay.synth.generate import RoomSummary

__all__ = ["check", "generate"]


# Defaults of `assay.synth.generate` (kept literal so `assay --help` does not import numpy;
# a test checks they agree).
DEFAULT_COMPANIES = 6
DEFAULT_YEARS = 3


def _fail(err: AssayError) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {err}", markup=True, highlight=False)
    return typer.Exit(2)


def _summary_rows(s: RoomSummary) -> list[tuple[str, str]]:
    rows = [
        ("room", str(s.out_dir)),
        ("seed", str(s.seed)),
        ("companies", str(s.companies)),
        ("years", str(s.years)),
        ("filings", str(s.documents)),
        ("pages", str(s.pages)),
        ("ledger facts", str(s.facts)),
        ("golden entries", str(s.entries)),
    ]
    rows += [(f"  {k}", str(v)) for k, v in s.categories.items()]
    rows.append(("room hash", s.room_hash[:16]))
    return rows


@synth_app.command("generate")
def generate(
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="Directory to write the room into (created; a previous room there is replaced).",
    ),
    seed: int = typer.Option(7, help="Random seed: the same seed and scale give the same bytes."),
    companies: int = typer.Option(
        DEFAULT_COMPANIES, min=2, help="Number of companies (half technology, half banks)."
    ),
    years: int = typer.Option(
        DEFAULT_YEARS, min=1, max=20, help="Fiscal years of filings per company."
    ),
    formats: str = typer.Option("html,pdf", help="Comma-separated renderings to write: html, pdf."),
    fmt: OutFormat = typer.Option(OutFormat.table, "--format", help="How to print the summary."),
) -> None:
    """Generate a fictional filings room whose every answer is known.

    Writes docs/ (every 10-K, 10-Q, 10-K/A, 8-K and earnings release as PDF and HTML),
    documents.jsonl, facts.jsonl, xbrl/ (company-facts JSON), golden.jsonl and manifest.json.
    The default scale (6 companies x 3 years, ~275 filings, >200 golden entries) is the demo room;
    `--companies 30 --years 5` gives ~2,200 filings for benchmarking.

    Example: assay synth generate --seed 7 --out room/
    """
    from assay.synth.generate import generate_room

    try:
        with Progress(
            TextColumn("rendering filings"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            disable=fmt != OutFormat.table,
        ) as bar:
            task = bar.add_task("render", total=None)

            def tick(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            summary = generate_room(
                out,
                seed=seed,
                companies=companies,
                years=years,
                formats=tuple(x.strip() for x in formats.split(",") if x.strip()),
                progress=tick,
            )
    except AssayError as err:
        raise _fail(err) from err
    if fmt == OutFormat.json:
        typer.echo(json.dumps(summary.to_dict(), indent=1, sort_keys=True))
    elif fmt == OutFormat.markdown:
        typer.echo("| field | value |\n| --- | --- |")
        for k, v in _summary_rows(summary):
            typer.echo(f"| {k.strip()} | {v} |")
    else:
        t = Table(title="synthetic room")
        t.add_column("field")
        t.add_column("value", justify="right")
        for k, v in _summary_rows(summary):
            t.add_row(k, v)
        Console().print(t)


@synth_app.command("check")
def check(
    room: Path = typer.Argument(..., help="A room directory written by `assay synth generate`."),
    fmt: OutFormat = typer.Option(OutFormat.table, "--format", help="How to print problems."),
) -> None:
    """Read the room back as text and check its gold (exit 1 when any check fails).

    Checks: every anchor's quote is on its page (PDF via pypdfium2 and HTML); evidence respects
    as_of; no filing answers an unanswerable entry; restatements are not contradicted; numeric
    reference answers agree with the ledger; numeric lookups list every page that states them.
    """
    from assay.synth.guards import RoomText, check_room

    try:
        text = RoomText(room) if (room / "documents.jsonl").exists() else None
        if text is not None:  # read every rendering once, with progress; the checks reuse it
            with Progress(
                TextColumn("reading filings"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=True,
                disable=fmt != OutFormat.table,
            ) as bar:
                for doc in bar.track(sorted(text.docs), description="read"):
                    for f in text.formats(doc):
                        text.pages(doc, f)
        problems = check_room(room, text=text)
    except AssayError as err:
        raise _fail(err) from err
    if fmt == OutFormat.json:
        typer.echo(json.dumps([dataclasses.asdict(p) for p in problems], indent=1))
    elif fmt == OutFormat.markdown:
        typer.echo(f"{len(problems)} problem(s)")
        for p in problems:
            typer.echo(f"- {p}")
    else:
        con = Console()
        if not problems:
            con.print(f"[green]ok[/green]: {room} is consistent")
        for p in problems:
            con.print(str(p), highlight=False, markup=False)
    if problems:
        raise typer.Exit(1)
