"""`assay check`, `assay judge run`, `assay bench financebench-judge`: thin wrappers over assay.judge.

Start-up stays light: numpy, the statistics stack, httpx and the judge modules are imported inside
the commands, not when the CLI loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from assay.cli import app
from assay.cli._common import Format
from assay.cli.groups import bench_app, judge_app
from assay.errors import AssayError, DataError

if TYPE_CHECKING:
    from assay.judge.report import CheckReport

__all__ = ["bench_financebench_judge", "check_cmd", "judge_run_cmd"]

_out = Console(soft_wrap=True)
_err = Console(stderr=True, soft_wrap=True)


def _fail(exc: AssayError) -> typer.Exit:
    if isinstance(exc, DataError):
        for p in exc.problems:
            _err.print(f"[red]error[/red] {p}", markup=True, highlight=False)
    else:
        _err.print(f"[red]error[/red] {exc}", markup=True, highlight=False)
    return typer.Exit(2)


def _print_report(report: CheckReport, fmt: Format, title: str) -> None:
    if fmt is Format.json:
        _out.print_json(report.to_json())
        return
    if fmt is Format.markdown:
        _out.print(report.to_markdown(), markup=False, highlight=False)
        return
    for w in report.warnings:
        _err.print(f"[yellow]{w}[/yellow]", markup=True, highlight=False)
    from rich.table import Table

    t = Table(title=title)
    t.add_column("category")
    for c in report.checks:
        t.add_column(c.replace("_", " "), overflow="fold")
    for cat, cells in report.rates.items():
        t.add_row(cat, *(cells[c].fmt() for c in report.checks))
    _out.print(t)
    if report.disagreements:
        _out.print("Entries where faithfulness and correctness disagree:")
        for d in report.disagreements:
            _out.print(f"  {d['id']} ({d['category']}): {d['kind']}. {d.get('why', '')}")


@app.command("check")
def check_cmd(
    dataset: Path = typer.Argument(..., help="Golden dataset (JSONL of entries)."),
    run: Path = typer.Argument(..., help="Run file with an `answer` (and `citations`) per entry."),
    chunks: Path | None = typer.Option(
        None, "--chunks", help="Chunk table: lets figures be verified against cited spans."
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table, json or markdown."),
    out: Path | None = typer.Option(None, "--out", help="Write per-entry check values (JSONL)."),
    seed: int = typer.Option(0, help="Seed of the bootstrap generator (CIs)."),
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap replicates per CI."),
) -> None:
    """Deterministic answer checks, binary per entry, rated per category with 95% CIs.

    Columns: numeric correctness (figures with units, scale, percent and bp compared within the
    rounding tolerance; 1000x errors and prior-period figures named), key-fact recall,
    contradiction-free, answer correct, refusal correctness (answered when it should have
    abstained / abstained when it should have answered, scored separately), unsupported "not
    disclosed" claims, numbers verified against cited spans (faithfulness, needs --chunks), and
    fiscal year. Faithfulness and correctness are separate columns; entries where they disagree
    are listed.

    Example: assay check golden.jsonl run.jsonl --chunks chunks.jsonl --format markdown
    """
    import numpy as np

    from assay._io import write_jsonl_atomic
    from assay.corpus.chunks import load_chunks
    from assay.dataset.io import load_dataset
    from assay.judge.checks import check_run
    from assay.runs import load_run

    try:
        ds = load_dataset(dataset)
        rn = load_run(run)
        table = load_chunks(chunks) if chunks is not None else None
        report = check_run(ds, rn, chunks=table, rng=np.random.default_rng(seed), n_boot=n_boot)
    except AssayError as exc:
        raise _fail(exc) from None
    if out is not None:
        stamp = {"dataset_version": ds.version, "run_hash": rn.hash, **report.meta}
        write_jsonl_atomic(out, ({**r, "_meta": stamp} for r in report.rows))
    _print_report(report, fmt, "Answer checks (pass rate [95% CI])")


@judge_app.command("run")
def judge_run_cmd(
    dataset: Path = typer.Argument(..., help="Golden dataset (JSONL of entries)."),
    run: Path = typer.Argument(..., help="Run file with answers."),
    chunks: Path | None = typer.Option(
        None,
        "--chunks",
        help="Chunk table: the cited (else top-k retrieved) chunks are the context.",
    ),
    against: Path | None = typer.Option(
        None, "--against", help="A second run: pairwise mode (both orders, position disagreement)."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint; default $ASSAY_LLM_BASE_URL."
    ),
    model: str | None = typer.Option(None, "--model", help="Model; default $ASSAY_LLM_MODEL."),
    k: int = typer.Option(5, "-k", help="Retrieved chunks shown when the answer cites none."),
    out: Path | None = typer.Option(None, "--out", help="Write judged rows (JSONL) here."),
    cache_path: Path | None = typer.Option(None, "--cache", help="Request cache file."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the model even when cached."),
    calibrations: Path | None = typer.Option(
        None,
        "--calibrations",
        help="Directory of judge calibrations (default $ASSAY_JUDGE_CALIBRATIONS).",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table, json or markdown."),
    seed: int = typer.Option(0, help="Seed of the bootstrap generator (CIs)."),
) -> None:
    """Ask an LLM judge separate yes/no questions about each answer, with a one-sentence critique.

    Questions: is every claim supported by the retrieved context? does the answer match the
    reference? The judge sees the reference answer, the answerable flag and as_of. Every call is
    cached. The judge's identity hash (model + prompts + settings) is printed; when no
    calibration exists for it, every report carries a warning.

    Example: ASSAY_LLM_BASE_URL=http://localhost:8000/v1 ASSAY_LLM_MODEL=m \\
      assay judge run golden.jsonl run.jsonl --chunks chunks.jsonl
    """
    import numpy as np
    from rich.progress import Progress

    from assay._io import write_jsonl_atomic
    from assay.cache import RequestCache
    from assay.chat import ChatClient
    from assay.corpus.chunks import load_chunks
    from assay.dataset.io import load_dataset
    from assay.judge.llm import LLMJudge, judge_pairwise, judge_run
    from assay.runs import load_run

    try:
        ds = load_dataset(dataset)
        rn = load_run(run)
        other = load_run(against) if against is not None else None
        table = load_chunks(chunks) if chunks is not None else None
        cache = RequestCache(cache_path, namespace="llm-judge", enabled=not no_cache)
        client = ChatClient.from_env(base_url=base_url, model=model, cache=cache)
        judge = LLMJudge(client)
        with Progress(console=_err, transient=True) as progress:
            task = progress.add_task("judging", total=len(ds.entries))

            def tick() -> None:
                progress.advance(task)

            if other is not None:
                result: dict[str, Any] = judge_pairwise(
                    ds,
                    rn,
                    other,
                    judge,
                    chunks=table,
                    k=k,
                    calibrations=calibrations,
                    on_item=tick,
                )
            else:
                report = judge_run(
                    ds,
                    rn,
                    judge,
                    chunks=table,
                    k=k,
                    rng=np.random.default_rng(seed),
                    calibrations=calibrations,
                    on_item=tick,
                )
    except AssayError as exc:
        raise _fail(exc) from None
    if other is not None:
        for w in result["warnings"]:
            _err.print(f"[yellow]{w}[/yellow]", markup=True, highlight=False)
        if out is not None:
            stamp = {"dataset_version": ds.version, "run_a": rn.hash, "run_b": other.hash}
            write_jsonl_atomic(
                out,
                ({**i, "judge_hash": judge.identity_hash, "_meta": stamp} for i in result["items"]),
            )
        summary = {k2: v for k2, v in result.items() if k2 != "items"}
        if fmt is Format.json:
            _out.print_json(json.dumps(result))
        else:
            for key, val in summary.items():
                _out.print(f"{key}: {val}", markup=False, highlight=False)
        return
    _err.print(f"judge {judge.identity_hash[:12]} ({client.calls} model calls, rest cached)")
    if out is not None:
        stamp = {"dataset_version": ds.version, "run_hash": rn.hash, "judge": report.meta["judge"]}
        write_jsonl_atomic(out, ({**r, "_meta": stamp} for r in report.rows))
    _print_report(report, fmt, f"LLM judge {judge.identity_hash[:12]} (pass rate [95% CI])")


@bench_app.command("financebench-judge")
def bench_financebench_judge(
    graded: Path = typer.Argument(..., help="FinanceBench graded answers (JSONL)."),
    questions: Path = typer.Option(..., "--questions", help="FinanceBench questions (JSONL)."),
    fmt: Format = typer.Option(Format.table, "--format", help="table, json or markdown."),
    seed: int = typer.Option(0, help="Seed of the bootstrap generator (CIs)."),
    n_boot: int = typer.Option(2000, "--n-boot", help="Bootstrap replicates per CI."),
    out: Path | None = typer.Option(None, "--out", help="Write each answer's verdicts (JSONL)."),
    save: Path | None = typer.Option(None, "--save", help="Also write the report (JSON) here."),
) -> None:
    """Calibrate the deterministic checks against FinanceBench's human grades.

    Numeric correctness (human positive: "Correct Answer") and refusal detection (human positive:
    "Refusal"), per question type and overall: n, abstained, TPR, TNR and Cohen's kappa with 95%
    bootstrap CIs, for half A of the questions (rules developed on it), half B (unseen while
    developing) and all.

    Example: assay bench financebench-judge graded_answers_dev.jsonl
      --questions questions_dev.jsonl --format json
    """
    import numpy as np

    from assay._io import write_jsonl_atomic, write_text_atomic
    from assay.judge.financebench import financebench_judge

    try:
        report = financebench_judge(
            graded, questions, rng=np.random.default_rng(seed), n_boot=n_boot
        )
    except AssayError as exc:
        raise _fail(exc) from None
    if out is not None:
        write_jsonl_atomic(out, ({**j.to_dict(), "_meta": report.meta} for j in report.judged))
    if save is not None:
        write_text_atomic(save, report.to_json() + "\n")
    if fmt is Format.json:
        _out.print_json(report.to_json())
        return
    if fmt is Format.markdown:
        _out.print(report.to_markdown(), markup=False, highlight=False)
        return
    from rich.table import Table

    t = Table(title="FinanceBench: deterministic checks vs human grades (95% bootstrap CI)")
    for h in report.HEADERS:
        t.add_column(h)
    for r in report.rows:
        t.add_row(*report.cells(r))
    _out.print(t)
    _out.print(str(report.meta["split"]["note"]), markup=False)
