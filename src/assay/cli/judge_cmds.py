"""`assay check`, `assay judge run`: thin wrappers over assay.judge.

Start-up stays light: numpy, the statistics stack, httpx and the judge modules are imported inside
the commands, not when the CLI loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from assay._io import check_outputs
from assay.cli._app import app
from assay.cli._common import (
    Format,
    GoldLevel,
    RegistryHelp,
    emit,
)
from assay.cli.groups import judge_app
from assay.cli.options import (
    MIN_RESAMPLES,
    ChangedOpt,
    ClusterOpt,
    CorpusChangeOpt,
    FmtOpt,
    GoldenArg,
    LevelOpt,
    ResOpt,
    ReuseOpt,
    SkipMissingOpt,
    TiersOpt,
)

__all__ = ["check_cmd", "judge_run_cmd"]

_err = Console(stderr=True, soft_wrap=True)


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        _err.print(f"[yellow]{w}[/yellow]", markup=True, highlight=False)


@app.command("check", cls=RegistryHelp)
def check_cmd(
    dataset: GoldenArg,
    run: Annotated[
        Path, typer.Argument(help="Run file with an `answer` (and `citations`) per entry.")
    ],
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table (lets figures be verified against cited spans), for runs that "
            "recorded none: a run is read against the table it recorded.",
        ),
    ] = None,
    checks: Annotated[
        str | None,
        typer.Option(
            "--checks",
            help="Comma-separated checks to run (default: every default check); the registered "
            "ones are listed below.",
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write per-entry check values (JSONL).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap generator (CIs).")] = 0,
    resamples: ResOpt = 1000,
    n_boot: Annotated[
        int | None,
        typer.Option("--n-boot", min=MIN_RESAMPLES, hidden=True, help="Deprecated: --resamples."),
    ] = None,
    allow_reuse: ReuseOpt = False,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="How the rate rows are grouped, one table each, headed by the grouping: category; "
            "principal.role (per role of the asking principal: insider, outsider, ...); "
            "principal.clearance; any other entry field; metadata.FIELD. Comma-separated for "
            "several tables (--by category,principal.role). Default: category, and "
            "principal.role too when entries name a principal.",
        ),
    ] = None,
    allow_corpus_change: CorpusChangeOpt = False,
    tiers: TiersOpt = None,
    allow_changed_entries: ChangedOpt = False,
    cluster: ClusterOpt = "auto",
) -> None:
    """Deterministic answer checks, binary per entry, rated per category (and per role of the
    asking principal) with 95% CIs.

    With --chunks the gold is read as `assay score` reads it (--level, --skip-missing): gold
    that does not resolve on the chunk table stops the check with the list, or with
    --skip-missing those entries are left out and counted. Answer checks need no chunk-level
    gold: by default (--level auto) anchors that resolve onto their pages but onto no one chunk
    (whole-page quotes) are read at page level, and the output says so.

    Columns: numeric correctness (figures with units, scale, percent and bp compared within the
    rounding tolerance; 1000x errors and prior-period figures named), key-fact recall,
    contradiction-free, answer correct, refusal correctness (answered when it should have
    abstained / abstained when it should have answered, scored separately), unsupported "not
    disclosed" claims, numbers verified against cited spans (faithfulness, needs --chunks), and
    fiscal year. Faithfulness and correctness are separate columns; entries where they disagree
    are listed. Exit 0 checked, 2 bad input or an unknown check.

    With no --checks, the checks are those of every check group that applies to the dataset:
    the answer checks above; the gold SQL checks on SQL questions; and the policy checks --
    leak (retrieved or cited chunks, and answer figures, the asking principal may not see;
    needs --chunks), policy_ok (refused / escalated / answered as expected) and overall_pass
    (every critical criterion) -- when entries name a principal or expect a refusal or an
    escalation. Such a dataset is rated per category and per role (--by picks the groupings).

    Example: assay check golden.jsonl run.jsonl --chunks chunks.jsonl --checks
    answer_correct,numbers_verified -f markdown

    Example (policy, per role): assay check room/golden.jsonl run.jsonl --chunks
    corpus/chunks.jsonl --checks leak,policy_ok,overall_pass --by principal.role
    """
    from assay.judge.checking import check_files

    check_outputs([out], [dataset, run, chunks])
    if n_boot is not None:
        _err.print("note: --n-boot is deprecated; use --resamples", markup=False, highlight=False)
        resamples = n_boot

    report = check_files(
        dataset,
        run,
        chunks=chunks,
        checks=checks,
        seed=seed,
        n_boot=resamples,
        allow_reuse=allow_reuse,
        level=level.value,
        skip_stale=skip_missing,
        by=by,
        allow_corpus_change=allow_corpus_change,
        tiers=tiers,
        allow_changed_entries=allow_changed_entries,
        cluster=cluster,
    )
    if out is not None:
        report.write_rows(out)
    if fmt is Format.table:
        _warn(report.warnings)
    emit(report, fmt)


@judge_app.command("run")
def judge_run_cmd(
    dataset: GoldenArg,
    run: Annotated[Path, typer.Argument(help="Run file with answers.")],
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks", help="Chunk table: the cited (else top-k retrieved) chunks are the context."
        ),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against", help="A second run: pairwise mode (both orders, position disagreement)."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible endpoint; default $ASSAY_LLM_BASE_URL."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model; default $ASSAY_LLM_MODEL.")
    ] = None,
    k: Annotated[
        int, typer.Option("-k", min=1, help="Retrieved chunks shown when the answer cites none.")
    ] = 5,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write judged rows (JSONL) here.")
    ] = None,
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Request cache file.")] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Call the model even when cached.")
    ] = False,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration",
            help="The judge's calibration (from `assay judge calibrate --out`): report the raw pass "
            "rate beside the Rogan-Gladen and PPI corrected ones.",
        ),
    ] = None,
    calibrations: Annotated[
        Path | None,
        typer.Option(
            "--calibrations",
            help="Directory of judge calibrations, by judge hash (default $ASSAY_JUDGE_CALIBRATIONS).",
        ),
    ] = None,
    accept_weak: Annotated[
        bool,
        typer.Option(
            "--accept-weak-calibration",
            help="Grade with a calibration below the bar (>= 100 labelled items, >= 30 human "
            "FAILs, TPR and TNR >= 0.85, kappa >= 0.60, overall and per category; 0.90 in "
            "categories the dataset manifest declares high-risk); the output records it.",
        ),
    ] = False,
    uncalibrated: Annotated[
        bool,
        typer.Option(
            "--uncalibrated",
            help="Report with a judge that has no calibration (rates uncorrected, marked as such).",
        ),
    ] = False,
    fewshot: Annotated[
        Path | None,
        typer.Option(
            "--fewshot",
            help="Adjudicated few-shot examples (`assay workbench export --fewshot`): shown to the "
            "judge before each question they decide; part of the judge's identity (calibrate it "
            "with them).",
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap generator (CIs).")] = 0,
) -> None:
    """Ask an LLM judge separate yes/no questions about each answer, with a one-sentence critique.

    Questions: is every claim supported by the retrieved context? does the answer match the
    reference? The judge sees the reference answer, the answerable flag and as_of, and, with
    --fewshot, the experts' adjudicated examples first. Every call is cached. The report flags
    length bias (pass rate by answer length) and same-family judging (judge and answerer of
    one model family, from the run's recorded answer cost). The judge's identity hash (model + prompts + settings) is printed. A judge without a
    calibration (--calibration FILE, or one for its hash in --calibrations) does not grade: the
    command refuses (exit 2) unless --uncalibrated, and then says so in its output. With a
    calibration, the calibrated question's raw pass rate is shown beside its corrected rates.

    Example: ASSAY_LLM_BASE_URL=http://localhost:8000/v1 ASSAY_LLM_MODEL=m \\
      assay judge run golden.jsonl run.jsonl --chunks chunks.jsonl --calibration calib.json
    """
    import numpy as np
    from rich.progress import Progress

    from assay.cache import RequestCache
    from assay.chat import ChatClient
    from assay.corpus import load_chunks
    from assay.dataset import load_dataset
    from assay.judge.calibrated import JudgeReport
    from assay.judge.llm import LLMJudge, PairwiseReport, judge_pairwise, judge_run, load_fewshot
    from assay.runs import load_run

    check_outputs([out], [dataset, run, chunks, against, calibration, cache_path, fewshot])
    ds = load_dataset(dataset)
    rn = load_run(run)
    other = load_run(against) if against is not None else None
    table = load_chunks(chunks) if chunks is not None else None
    cache = RequestCache(cache_path, namespace="llm-judge", enabled=not no_cache)
    client = ChatClient.from_env(base_url=base_url, model=model, cache=cache)
    judge = LLMJudge(client, fewshot=load_fewshot(fewshot) if fewshot is not None else ())
    report: JudgeReport | PairwiseReport
    with Progress(console=_err, transient=True) as progress:
        task = progress.add_task("judging", total=len(ds.entries))

        def tick() -> None:
            progress.advance(task)

        shared: dict[str, Any] = {
            "chunks": table,
            "k": k,
            "calibration": calibration,
            "calibrations": calibrations,
            "uncalibrated": uncalibrated,
            "accept_weak_calibration": accept_weak,
            "on_item": tick,
        }
        if other is not None:
            report = judge_pairwise(ds, rn, other, judge, **shared)
        else:
            report = judge_run(ds, rn, judge, rng=np.random.default_rng(seed), **shared)
    _err.print(f"judge {judge.identity_hash[:12]} ({client.calls} model calls, rest cached)")
    if out is not None:
        report.write_rows(out)
    if fmt is Format.table:
        _warn(report.warnings)
    emit(report, fmt)
