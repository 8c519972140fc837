"""`assay logs ingest|report|sample|failures`: parse, one call into assay.logs, emit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs
from assay.cli._app import app
from assay.cli._common import (
    Format,
    GoldLevel,
    emit,
    err_console,
    gold_level,
)
from assay.cli.options import FmtOpt, KOpt, LevelOpt, SkipMissingOpt
from assay.errors import UsageError

logs_app = typer.Typer(
    help="Production logs: ingest, traffic report, the monthly fresh sample, failures.",
    no_args_is_help=True,
)
app.add_typer(logs_app, name="logs")

DbArg = Annotated[
    Path,
    typer.Argument(
        help="The log store (a folder of Parquet files by month, written by `assay logs ingest`)."
    ),
]
GOLDEN_HELP = "The main golden set: its near-duplicates are left out."
WB_HELP = (
    "Queue the drafts in the workbench at this store URL (e.g. sqlite:///wb.db) for blind "
    "double labelling (evidence and reference tasks); needs --out."
)


@logs_app.command("ingest")
def ingest_cmd(
    logs: Annotated[
        list[Path],
        typer.Argument(help="Log files: assay JSONL, or Phoenix/OpenInference spans (JSON/JSONL)."),
    ],
    db: Annotated[
        Path,
        typer.Option(
            "--db", help="The log store to create or add to (a folder: Parquet files by month)."
        ),
    ] = Path("logstore"),
    golden: Annotated[
        Path | None,
        typer.Option(
            "--golden", help="Golden set whose labelled queries guide the traffic classifier."
        ),
    ] = None,
    rules: Annotated[
        bool | None,
        typer.Option(
            "--rules/--no-rules",
            help="Use all the built-in wording rules, or none. Default: the rules of the "
            "categories the golden set has (none for a set with a taxonomy of its own, such as "
            "a FinanceBench import; all without a golden set).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="local; ray (a local Ray on this machine); ray:ADDRESS (ray:auto, "
            "ray:ray://HOST:10001): parse, classify and write blocks of each file as Parquet "
            "on Ray workers, in parallel (the store must be on a filesystem they share); this "
            "machine commits them. Needs the ray extra.",
        ),
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Blocks staged side by side: threads of this process with --executor local "
            "(default: one per CPU, at most 4; each adds about 150 MB of memory, so --workers 1 "
            "uses the least), Ray workers with --executor ray (default: the cluster's CPUs).",
        ),
    ] = None,
    max_line_bytes: Annotated[
        int,
        typer.Option(
            "--max-line-bytes",
            min=1,
            help="A longer line is a bad line: named, counted and skipped unread (default "
            "1 MiB; a logged query with its hits and answer is a few kilobytes).",
        ),
    ] = 1 << 20,  # assay.logs.ingest.MAX_LINE_BYTES
    fmt: FmtOpt = Format.table,
) -> None:
    """Ingest logs into the store: each line stored once, bad lines reported as FILE:LINE and
    skipped (counted), a category (and how it was found) and an abstention flag for every query.

    Example: assay logs ingest 2026-10/*.jsonl --db logstore --golden golden.jsonl --workers 2
    """
    from assay.executors import parse_executor
    from assay.logs import ingest_logs

    ex = parse_executor(executor, workers=workers)
    check_outputs([db / "store.json"], [*logs, golden])
    rep = ingest_logs(
        logs,
        db,
        golden=golden,
        progress=fmt is Format.table,
        executor=ex,
        rules=rules,
        max_line_bytes=max_line_bytes,
    )
    emit(rep, fmt)


@logs_app.command("report")
def report_cmd(
    db: DbArg,
    by: Annotated[str, typer.Option("--by", help="Period: month or week.")] = "month",
    golden: Annotated[
        Path | None,
        typer.Option(
            "--golden",
            help="Golden set: its category shares, and retrieval metrics on the traffic that "
            "matches its entries (normalised query + as_of).",
        ),
    ] = None,
    chunks: Annotated[
        Path | None,
        typer.Option("--chunks", help="Chunk table (resolves anchor gold onto chunk ids)."),
    ] = None,
    k: KOpt = 5,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="A query placed by its neighbours or a rule with a lower confidence is "
            "'uncertain': its own bucket in every table, left out of the gap vs the golden set. "
            "Default: chosen on --golden by held-out accuracy (--target-accuracy); 0.3 without it.",
        ),
    ] = None,
    target_accuracy: Annotated[
        float,
        typer.Option(
            "--target-accuracy",
            min=0.01,
            max=1.0,
            help="Held-out accuracy on the golden set the confident placements must reach.",
        ),
    ] = 0.8,
    fmt: FmtOpt = Format.table,
) -> None:
    """Per period and category: volume, no-hits, abstention, feedback-down, latency p50/p95,
    score drift vs the previous period (KS), retrieval metrics on traffic matching golden entries.
    --level and --skip-missing read the golden set's gold as `assay score` does.

    Example: assay logs report logstore --by month --golden golden.jsonl --chunks chunks.jsonl
    """
    from assay.logs import traffic_report

    if by not in ("month", "week"):
        raise UsageError(f"--by is month or week, not {by!r}")
    rep = traffic_report(
        db,
        by="week" if by == "week" else "month",
        golden=golden,
        chunks=chunks,
        k=k,
        level=gold_level(level),
        skip_stale=skip_missing,
        min_confidence=min_confidence,
        target_accuracy=target_accuracy,
    )
    emit(rep, fmt)


@logs_app.command("sample")
def sample_cmd(
    db: DbArg,
    month: Annotated[str, typer.Option("--month", help="The month to draw from (YYYY-MM).")],
    n: Annotated[int, typer.Option("--n", help="How many queries to draw.")] = 60,
    stratify: Annotated[
        str, typer.Option("--stratify", help="category (proportional strata) or none.")
    ] = "category",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 7,
    golden: Annotated[Path | None, typer.Option("--golden", help=GOLDEN_HELP)] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Draft entries (JSONL) to write.")
    ] = None,
    to_workbench: Annotated[str | None, typer.Option("--to-workbench", help=WB_HELP)] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Draw the month's fresh sample: stratified, seeded, near-duplicates and main-set entries
    left out; draft entries (source log, split fresh, as_of from the log) without the logged hits.

    Example: assay logs sample logstore --month 2026-10 --n 60 --seed 7 --out fresh.jsonl
    """
    from assay.logs import queue_in_workbench, sample_month

    if to_workbench and out is None:
        raise UsageError("--to-workbench needs --out (the drafts the workbench imports)")
    check_outputs([out], [db, golden])
    rep = sample_month(db, month, n=n, stratify=stratify, seed=seed, golden=golden, out=out)
    if to_workbench and out is not None:
        rep.workbench = queue_in_workbench(out, to_workbench)
    emit(rep, fmt)


@logs_app.command("failures")
def failures_cmd(
    db: DbArg,
    rules: Annotated[
        str,
        typer.Option("--rules", help="Comma-separated: down, abstained, no_hits, low_score."),
    ] = "down,abstained,no_hits,low_score",
    month: Annotated[str | None, typer.Option("--month", help="Only this month (YYYY-MM).")] = None,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score",
            help="low_score threshold on the top-1 score (default: the 5th percentile).",
        ),
    ] = None,
    golden: Annotated[Path | None, typer.Option("--golden", help=GOLDEN_HELP)] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Draft entries (JSONL) to write.")
    ] = None,
    to_workbench: Annotated[str | None, typer.Option("--to-workbench", help=WB_HELP)] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """One draft entry per failing query (deduplicated, with the rules that caught it).

    Example: assay logs failures logstore --rules down,abstained,no_hits --out candidates.jsonl
    """
    from assay.logs import find_failures, queue_in_workbench

    if to_workbench and out is None:
        raise UsageError("--to-workbench needs --out (the drafts the workbench imports)")
    check_outputs([out], [db, golden])
    rep = find_failures(
        db,
        rules=[r.strip() for r in rules.split(",") if r.strip()],
        month=month,
        min_score=min_score,
        golden=golden,
        out=out,
    )
    if to_workbench and out is not None:
        rep.workbench = queue_in_workbench(out, to_workbench)
    if not rep.entries:
        err_console().print("no failing queries", markup=False)
    emit(rep, fmt)


@logs_app.command("to-run")
def to_run_cmd(
    spans: Annotated[
        Path, typer.Argument(help="OpenInference spans (Phoenix export: JSON or JSONL).")
    ],
    dataset: Annotated[Path, typer.Option("--dataset", help="The golden set the traces ran.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The run JSONL to write.")],
) -> None:
    """A run from an agent's traces: one row per trace that matches an entry (by the root span's
    metadata.entry_id, else its query), with the retriever's hits, the root's answer and the
    TOOL spans as tool_calls, for `assay check`, `compare` and `gate` (the tool-call checks
    included). Traces that match nothing are counted, not guessed.

    Example: assay logs to-run traces.jsonl --dataset agent.jsonl --out runs/agent.jsonl
    """
    from assay.dataset import load_dataset
    from assay.logs.traces import run_from_traces
    from assay.runs import write_run

    check_outputs([out], [spans, dataset])
    got = run_from_traces(spans, load_dataset(dataset).entries)
    h = write_run(out, got.rows, meta={"converted_from": str(spans), "format": "openinference"})
    for note in got.notes:
        err_console().print(note, markup=False)
    err_console().print(
        f"wrote {out} ({len(got.rows)} rows from {got.traces} traces; run {h[:16]})", markup=False
    )
