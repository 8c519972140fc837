"""`assay synth ...`: generate the synthetic filings room and check its gold against its text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay._io import check_outputs, json_loads, write_jsonl_atomic
from assay.cli._common import EXIT_FAIL, Format, emit
from assay.cli.groups import synth_app
from assay.cli.options import FmtOpt
from assay.errors import DataError, UsageError

if TYPE_CHECKING:
    from assay.dataset import Dataset

__all__ = ["check", "generate", "questions"]


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
def generate(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Directory to write the room into (created; a previous room there is replaced).",
        ),
    ],
    seed: Annotated[
        int, typer.Option(help="Random seed: the same seed and scale give the same bytes.")
    ] = 7,
    companies: Annotated[
        int, typer.Option(min=2, help="Number of companies (half technology, half banks).")
    ] = DEFAULT_COMPANIES,
    years: Annotated[
        int, typer.Option(min=1, max=20, help="Fiscal years of filings per company.")
    ] = DEFAULT_YEARS,
    formats: Annotated[
        str, typer.Option(help="Comma-separated renderings to write: html, pdf.")
    ] = "html,pdf",
    scans: Annotated[
        int,
        typer.Option(
            min=0,
            help="Quarterly reports rendered as scans (alternately one page and every page); each "
            "scanned page costs seconds of OCR at corpus build.",
        ),
    ] = 2,
    fmt: FmtOpt = Format.table,
) -> None:
    """Generate a fictional filings room whose every answer is known.

    Writes docs/ (every 10-K, 10-Q, 10-K/A, 8-K and earnings release as PDF and HTML, some PDF
    pages as scans; per company management accounts and a covenant schedule (.xlsx), board minutes
    and a credit agreement (.docx), an e-mail with the schedule attached (.eml)), documents.jsonl, facts.jsonl, xbrl/ (company-facts JSON), golden.jsonl, conversations.jsonl (follow-ups that need an earlier turn) and manifest.json.
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
def check(
    room: Annotated[
        Path, typer.Argument(help="A room directory written by `assay synth generate`.")
    ],
    fmt: FmtOpt = Format.table,
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


def _traffic_shares(
    logs: Path | None, shares: Path | None, golden: Dataset
) -> tuple[dict[str, float] | None, str | None]:
    """(traffic shares, a note on what they leave out). From a log store: the confident
    placements only, the threshold chosen on `golden` (`assay.logs.category_shares`)."""
    if logs is not None and shares is not None:
        raise UsageError("give --logs or --shares, not both")
    if shares is not None:
        data = json_loads(shares.read_text(encoding="utf-8"), shares)
        if not isinstance(data, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()
        ):
            raise DataError('expected {"category": share, ...} with numbers', file=shares)
        return {str(k): float(v) for k, v in data.items()}, None
    if logs is not None:
        from assay.logs import category_shares

        got = category_shares(logs, golden=golden)
        return {str(k): float(v) for k, v in got.shares.items()}, got.note()
    return None, None


@synth_app.command("questions")
def questions(
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus", help="A built corpus folder (its chunks.jsonl) or a chunks.jsonl file."
        ),
    ],
    golden: Annotated[Path, typer.Option("--golden", help="The golden set whose gaps to fill.")],
    logs: Annotated[
        Path | None,
        typer.Option(
            "--logs", help="Production log store (logstore/): category shares of traffic."
        ),
    ] = None,
    shares: Annotated[
        Path | None,
        typer.Option(
            "--shares", help='Traffic shares as JSON {"category": share} (instead of --logs).'
        ),
    ] = None,
    min_size: Annotated[
        int | None,
        typer.Option(
            "--min-size", min=1, help="Entries each category needs (e.g. from `assay plan`)."
        ),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            help="Plan the size with `assay plan`'s McNemar power calculation: the change in "
            "complete@k to detect (with --rate or --discordant).",
        ),
    ] = None,
    rate: Annotated[
        float | None, typer.Option("--rate", help="Baseline complete@k rate (with --delta).")
    ] = None,
    discordant: Annotated[
        float | None,
        typer.Option("--discordant", help="Share of entries expected to flip (with --delta)."),
    ] = None,
    n: Annotated[
        int, typer.Option("--n", min=1, help="Candidates to generate, shared among the gaps.")
    ] = 50,
    generator: Annotated[
        str,
        typer.Option(
            "--generator",
            help="'templates' (deterministic, seeded) or an OpenAI-compatible base URL.",
        ),
    ] = "templates",
    model: Annotated[
        str | None, typer.Option("--model", help="Model; default $ASSAY_LLM_MODEL.")
    ] = None,
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Request cache file.")] = None,
    candidates: Annotated[
        Path | None,
        typer.Option(
            "--candidates",
            help='Filter candidates someone else generated: JSONL {"query", "source_chunk_id"}.',
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the generator (chunks and wordings drawn).")
    ] = 7,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write the surviving candidates as draft entries (JSONL)."
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Synthetic questions only for named gaps; drop those that borrow their source's words.

    Names the gaps first (categories whose share of the set is below their share of traffic,
    or below the size asked), generates candidates only for them, and drops each candidate
    that shares a 4-word run with its source chunk (entity names aside) or has 90%+ of its
    content words in it, reporting how many survived of how many.

    Example: assay synth questions --corpus corpus/ --golden golden.jsonl --logs logstore --n 50 --out synth.jsonl
    """
    from assay.corpus import load_chunks
    from assay.dataset import load_dataset
    from assay.synth.gaps import read_candidates, synth_questions

    check_outputs([out], [golden, corpus, logs, shares, candidates, cache_path])
    ds = load_dataset(golden)
    traffic, traffic_note = _traffic_shares(logs, shares, ds)
    if delta is not None:
        if min_size is not None:
            raise UsageError("give --min-size or --delta, not both")
        from assay.stats.plan import plan_mcnemar

        min_size = plan_mcnemar(
            delta=delta, discordant=discordant, rate=rate, categories=max(1, len(ds.categories()))
        ).n
    elif rate is not None or discordant is not None:
        raise UsageError("--rate and --discordant plan a size only with --delta")
    chunk_path = corpus / "chunks.jsonl" if corpus.is_dir() else corpus
    table = load_chunks(chunk_path)
    cands = read_candidates(candidates) if candidates is not None else None
    client = None
    if cands is None and generator != "templates":
        if not generator.startswith(("http://", "https://")):
            raise UsageError(f"--generator is 'templates' or an http(s) URL, not {generator!r}")
        from assay.cache import RequestCache
        from assay.chat import ChatClient

        client = ChatClient.from_env(
            base_url=generator, model=model, cache=RequestCache(cache_path, namespace="synth")
        )
    report = synth_questions(
        ds.entries,
        table,
        traffic_shares=traffic,
        min_size=min_size,
        n=n,
        generator=generator,
        seed=seed,
        client=client,
        candidates=cands,
    )
    report.golden, report.golden_version = str(golden), ds.version
    if traffic_note is not None:
        report.notes.insert(0, traffic_note)
    if out is not None:
        write_jsonl_atomic(out, (e.to_json_dict() for e in report.entries))
        report.out = str(out)
    emit(report, fmt)
