"""`assay synth ...`: generate the synthetic filings room and check its gold against its text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay.cli._common import EXIT_FAIL, FORMAT_OPTION, Format, emit, handle_errors
from assay.cli.groups import synth_app

__all__ = ["check", "generate"]


# Defaults of `assay.synth.generate` (kept literal so `assay --help` does not import numpy;
# a test checks they agree).
DEFAULT_COMPANIES = 6
DEFAULT_YEARS = 3


@contextmanager
def _progress(label: str, *, show: bool) -> Iterator[Callable[[int, int], None]]:
    """A transient progress bar (shown only for table output, so json and markdown stay clean)."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        disable=not show,
    ) as bar:
        task = bar.add_task(label, total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield tick


@synth_app.command("generate")
@handle_errors
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
    scans: int = typer.Option(
        2,
        min=0,
        help="Quarterly reports rendered as scans (alternately one page and every page); each "
        "scanned page costs seconds of OCR at corpus build.",
    ),
    fmt: Format = FORMAT_OPTION,
) -> None:
    """Generate a fictional filings room whose every answer is known.

    Writes docs/ (every 10-K, 10-Q, 10-K/A, 8-K and earnings release as PDF and HTML, some PDF
    pages as scans; per company management accounts and a covenant schedule (.xlsx), board minutes
    and a credit agreement (.docx), an e-mail with the schedule attached (.eml)), documents.jsonl, facts.jsonl, xbrl/ (company-facts JSON), golden.jsonl and manifest.json.
    The default scale (6 companies x 3 years, ~275 filings, >200 golden entries) is the demo room;
    `--companies 30 --years 5` gives ~2,200 filings for benchmarking.

    Example: assay synth generate --seed 7 --out room/
    """
    from assay.synth.generate import generate_room

    with _progress("rendering filings", show=fmt is Format.table) as tick:
        summary = generate_room(
            out,
            seed=seed,
            companies=companies,
            years=years,
            formats=tuple(x.strip() for x in formats.split(",") if x.strip()),
            progress=tick,
            scans=scans,
        )
    emit(summary, fmt)


@synth_app.command("check")
@handle_errors
def check(
    room: Path = typer.Argument(..., help="A room directory written by `assay synth generate`."),
    fmt: Format = FORMAT_OPTION,
) -> None:
    """Read the room back as text and check its gold (exit 1 when any check fails).

    Checks: every anchor's quote is on its page (PDF via pypdfium2 and HTML); evidence respects
    as_of; no filing answers an unanswerable entry; restatements are not contradicted; numeric
    reference answers agree with the ledger; numeric lookups list every page that states them.

    Example: assay synth check room/ -f json
    """
    from assay.synth.guards import check_room

    with _progress("reading filings", show=fmt is Format.table) as tick:
        result = check_room(room, progress=tick)
    emit(result, fmt)
    if not result.ok:
        raise typer.Exit(EXIT_FAIL)
