"""`assay audit ...`: audits that keep a golden set true (seasonal, labels, leakage, correct)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import EXIT_FAIL, Format, emit
from assay.cli.options import FmtOpt, GoldenArg, KOpt
from assay.errors import UsageError

__all__ = ["audit_app", "correct", "labels", "leakage", "seasonal"]

audit_app = typer.Typer(
    help="Audits that keep a golden set true: stale entries, label errors, leakage.",
    no_args_is_help=True,
)
app.add_typer(audit_app, name="audit")

WorkbenchOpt = Annotated[
    str | None,
    typer.Option(
        "--to-workbench",
        help="Queue the flagged rows for review in the workbench at this database URL "
        "(e.g. sqlite:///wb.db); labels are never changed here.",
    ),
]


def _date(value: str | None, option: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not an ISO date (YYYY-MM-DD)") from None


@audit_app.command("seasonal")
def seasonal(
    golden: GoldenArg,
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus",
            help="A built corpus folder (documents.jsonl, chunks.jsonl) or a documents.jsonl file.",
        ),
    ],
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only filings accepted on or after this date (YYYY-MM-DD)."),
    ] = None,
    to_workbench: WorkbenchOpt = None,
    queue: Annotated[
        str | None,
        typer.Option(
            "--queue",
            help="Queue the unanswerable / partial entries to re-check (the 'recheck' list) in the "
            "workbench at this database URL (e.g. sqlite:///wb.db) as review tasks.",
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Entries a filing season may have made stale, with the filings that arrived.

    Flags entries whose query says latest / most recent / current / this year / last quarter
    (and the like), and entries whose evidence documents have a newer filing (same company, same
    form type, later period, or an amendment) accepted after the entry's added / as_of date.
    Lists for re-check the unanswerable and partial entries whose company has a filing covering
    their fiscal period (same period, the annual report or Q4 release completing it, or an
    amendment) accepted after their added / as_of date (undated: on or after --since).

    Example: assay audit seasonal golden.jsonl --corpus corpus/ --since 2026-10-01
    """
    from assay.audit import audit_seasonal, load_corpus_documents, queue_for_review
    from assay.dataset import load_dataset

    when = _date(since, "--since")
    ds = load_dataset(golden)
    docs, chunk_docs = load_corpus_documents(corpus)
    report = audit_seasonal(ds, docs, since=when, chunk_docs=chunk_docs)
    if to_workbench and report.flagged:
        report.queued = queue_for_review(
            to_workbench,
            [ds.by_id[f.id] for f in report.flagged],
            {f.id: f.reasons for f in report.flagged},
            audit="seasonal",
        )
    if queue and report.recheck:
        report.queued_recheck = queue_for_review(
            queue,
            [ds.by_id[r.id] for r in report.recheck],
            {r.id: r.reasons for r in report.recheck},
            audit="recheck",
        )
    emit(report, fmt)


@audit_app.command("labels")
def labels(
    golden: GoldenArg,
    runs: Annotated[
        list[Path],
        typer.Option(
            "--runs",
            help="Run files (repeat --runs); default: every run the dataset's comparison ledger has "
            "seen, found by hash under --runs-dir.",
        ),
    ] = [],  # noqa: B006 (typer copies it)
    runs_dir: Annotated[
        Path | None,
        typer.Option(
            "--runs-dir",
            help="Where to look for the ledger's runs (default: the dataset's folder).",
        ),
    ] = None,
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks", help="Chunk table: gold chunk texts, and evidence text for key facts."
        ),
    ] = None,
    judged: Annotated[
        Path | None,
        typer.Option(
            "--judged",
            help="A calibrated judge's verdicts on the system's answers (JSONL: id + pass/verdict, "
            "as `assay judge run --out` writes).",
        ),
    ] = None,
    judged_field: Annotated[
        str | None, typer.Option("--judged-field", help="Verdict field name.")
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration",
            help="The judge's calibration (`assay judge calibrate --out`): must be the judged "
            "file's judge.",
        ),
    ] = None,
    k: KOpt = 5,
    fail_share: Annotated[
        float,
        typer.Option("--fail-share", help="Share of runs that must miss a row's gold to flag it."),
    ] = 0.75,
    no_cleanlab: Annotated[
        bool, typer.Option("--no-cleanlab", help="Skip confident learning on categories.")
    ] = False,
    seed: Annotated[
        int, typer.Option(help="Seed of the cross-validation folds (confident learning).")
    ] = 0,
    top: Annotated[
        int | None, typer.Option("--top", min=1, help="Queue only the top N rows.")
    ] = None,
    to_workbench: WorkbenchOpt = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """A ranked review list of likely label errors (never flipped automatically).

    Signals: a calibrated judge finds the system's answer supported but not the gold's, or
    passes an answer found away from the gold; the row fails across
    many runs; a gold chunk's text changed since labelling; a key fact is in no evidence text; it
    was reviewed by fewer than two experts; cleanlab's confident learning doubts its category.

    Example: assay audit labels golden.jsonl --runs a.jsonl --runs b.jsonl --chunks chunks.jsonl
    """
    from assay.audit import audit_labels_files, queue_for_review
    from assay.dataset import load_dataset

    report = audit_labels_files(
        golden,
        runs=runs or None,
        runs_dir=runs_dir,
        chunks=chunks,
        judged=judged,
        judged_field=judged_field,
        calibration=calibration,
        k=k,
        fail_share=fail_share,
        confident_learning=not no_cleanlab,
        seed=seed,
    )
    if to_workbench and report.rows:
        ds = load_dataset(golden)
        chosen = report.rows[:top] if top else report.rows
        report.queued = queue_for_review(
            to_workbench,
            [ds.by_id[r.id] for r in chosen],
            {r.id: [f"{s.name}: {s.detail}" for s in r.signals] for r in chosen},
            audit="labels",
        )
    emit(report, fmt)


@audit_app.command("leakage")
def leakage(
    golden: GoldenArg,
    files: Annotated[
        list[Path], typer.Argument(help="Prompt, few-shot or training files: JSONL, JSON or text.")
    ],
    splits: Annotated[
        str,
        typer.Option(
            "--splits", help="Held-out splits to check, comma-separated; 'all' for every row."
        ),
    ] = "test,fresh",
    n: Annotated[int, typer.Option("-n", min=2, help="Word n-gram length.")] = 5,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Share of a text's n-grams found in a file that counts as leaked."
        ),
    ] = 0.5,
    fmt: FmtOpt = Format.table,
) -> None:
    """Held-out rows whose question or reference answer appears in prompts or training data.

    Exit 1 when any row leaked. The rule: at least --threshold of the text's word n-grams occur in
    the file, after normalisation (texts of 3 to n-1 words: the whole text; shorter: not checked).

    Example: assay audit leakage golden.jsonl prompts/fewshot.jsonl finetune.jsonl
    """
    from assay.audit import audit_leakage
    from assay.dataset import load_dataset

    ds = load_dataset(golden)
    wanted = (
        None if splits.strip() == "all" else [s.strip() for s in splits.split(",") if s.strip()]
    )
    if wanted is not None and not wanted:
        raise UsageError("--splits: name at least one split, or 'all'")
    report = audit_leakage(ds, files, splits=wanted, n=n, threshold=threshold)
    emit(report, fmt)
    if not report.ok:
        raise typer.Exit(EXIT_FAIL)


@audit_app.command("correct")
def correct(
    golden: Annotated[
        Path, typer.Argument(help="Golden dataset to correct (rewritten atomically).")
    ],
    corrections: Annotated[
        Path,
        typer.Argument(
            help='JSONL of adjudicated corrections: {"reason": str, "entry": {...}} per line.'
        ),
    ],
    version: Annotated[
        str | None,
        typer.Option(
            "--version", help="The new version (default: the last number of the old one + 1)."
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Record adjudicated label corrections: replace the entries, bump the version, and log each
    correction with its reason in the manifest's changelog.

    Example: assay audit correct golden.jsonl adjudicated.jsonl
    """
    from assay.audit import apply_corrections

    emit(apply_corrections(golden, corrections, version=version), fmt)
