"""`assay import financebench`, `assay bench financebench-retrieval`, `assay bench financebench-judge`:
thin wrappers over `assay.benchmarks.financebench`.

Start-up stays light: the benchmark package (numpy, pydantic, the filings pipeline) is imported
inside the commands, not when the CLI loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._io import write_jsonl_atomic, write_text_atomic
from assay.cli._common import Format, emit, out_console
from assay.cli.groups import bench_app, import_app
from assay.cli.options import FmtOpt, KOpt
from assay.errors import UsageError
from assay.report import json_ready

__all__ = ["bench_financebench_judge", "financebench_retrieval", "import_financebench_cmd"]


@import_app.command("financebench")
def import_financebench_cmd(
    questions: Annotated[
        Path, typer.Argument(help="FinanceBench questions JSONL (e.g. questions_dev.jsonl).")
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Golden dataset to write (JSONL; a manifest is written beside it)."
        ),
    ],
    documents: Annotated[
        Path | None,
        typer.Option(
            "--documents",
            help="Filing metadata for as_of dates: a built corpus's documents.jsonl (dates read from the "
            "filings) or FinanceBench's documents.jsonl. Default: documents.jsonl beside QUESTIONS.",
        ),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="A built corpus folder: binds the dataset to its hash and uses its documents.jsonl.",
        ),
    ] = None,
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Your own chunk table (chunks.jsonl): a filing counts as present when one of its "
            "chunks is in it, and the dataset is bound to the table's version.",
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Split name stamped on every entry (e.g. dev).")
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Convert FinanceBench questions into an assay dataset with page anchors.

    Each evidence item becomes a required anchor {doc, page (1-based), quote}; the category is the
    question type; the reference answer, justification and reasoning are kept. The summary lists
    the questions that cite filings the corpus lacks (your chunk table with --chunks, else the
    built corpus with --corpus, else the filings the documents.jsonl marks present). A question with a missing or null field is
    refused (file:line: field, exit 2) and nothing is written. Example:

        assay import financebench questions_dev.jsonl --corpus corpus/ --split dev --out fb.jsonl
    """
    from assay.benchmarks.financebench import import_dataset

    report = import_dataset(
        questions, out=out, documents=documents, corpus=corpus, chunks=chunks, split=split
    )
    emit(report, fmt)


@bench_app.command("financebench-retrieval")
def financebench_retrieval(
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus",
            help="Corpus directory from `assay corpus build` (chunks.jsonl, documents.jsonl).",
        ),
    ],
    questions: Annotated[
        Path,
        typer.Option(
            "--questions",
            help="An assay dataset JSONL, or FinanceBench questions JSONL (converted on the fly).",
        ),
    ],
    k: KOpt = 5,
    level: Annotated[
        list[str],
        typer.Option(
            "--level",
            help="Scoring level(s): page (any chunk of the gold page counts) and/or chunk.",
        ),
    ] = ["page", "chunk"],  # noqa: B006 (typer copies it)
    rung: Annotated[
        list[str],
        typer.Option("--rung", help="Only these rungs (repeatable); default: the whole ladder."),
    ] = [],  # noqa: B006 (typer copies it)
    pool: Annotated[
        int,
        typer.Option(
            "--pool",
            min=1,
            help="BM25 candidates re-scored by the dense model (embedded lazily, cached).",
        ),
    ] = 20,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Embedding cache directory (default $ASSAY_CACHE_DIR or .assay-cache/).",
        ),
    ] = None,
    encoder_name: Annotated[
        str,
        typer.Option(
            "--encoder",
            help="minilm (all-MiniLM-L6-v2 on torch, the dense extra), onnx-int8 / onnx-fp32 (the same "
            "model exported to ONNX, the onnx extra) or hashing (dependency-free bag of words, for "
            "smoke tests).",
        ),
    ] = "minilm",
    halves: Annotated[
        bool,
        typer.Option(
            "--halves/--no-halves",
            help="Score halves A (decisions made on it) and B (unseen) separately, split as the "
            "judge bench splits the questions.",
        ),
    ] = True,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the bootstrap confidence intervals.")
    ] = 20260801,
    categories: Annotated[
        bool, typer.Option("--categories/--overall-only", help="Show a row per question type.")
    ] = True,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Also write the full result (JSON, with per-entry outcomes) here."
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Retrieval ablation on FinanceBench: BM25, dense, hybrid, + filters, + query understanding,
    + reranker, the true hybrid (dense search over every chunk the filters allow) and the facts
    route; recall@k, complete@k (bootstrap CI) and MRR per question type at page and chunk
    level, on halves A and B (unseen) of the questions, with flips and an exact McNemar test
    against the BM25 rung and against the previous full mode (from `assay compare`).

    Example: assay bench financebench-retrieval --corpus fbcorpus --questions fb.jsonl -f markdown
    """
    from rich.progress import Progress

    from assay.benchmarks.financebench import (
        default_rungs,
        new_rungs,
        questions_dataset,
        run_ablation,
        split_halves,
    )
    from assay.cache import default_cache_dir
    from assay.systems.filings.dense import DenseEncoder, HashingEncoder

    for lv in level:
        if lv not in ("page", "chunk"):
            raise UsageError(f"--level must be page or chunk, not {lv!r}")
    ladder = default_rungs(pool)
    if rung:
        ladder += [r for r in new_rungs(pool) if r[0] not in {n for n, _ in ladder}]
        known = {name for name, _ in ladder}
        unknown = [r for r in rung if r not in known]
        if unknown:
            raise UsageError(f"unknown rung(s) {unknown}; choose from {sorted(known)}")
        ladder = [(n, c) for n, c in ladder if n in rung or n == "bm25"]
    encoder: Any
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    if encoder_name == "minilm":
        encoder = DenseEncoder(cache_dir=cache)
    elif encoder_name in ("onnx-int8", "onnx-fp32"):
        from assay.systems.filings.onnx_encoder import OnnxEncoder

        encoder = OnnxEncoder(cache_dir=cache, variant=encoder_name.removeprefix("onnx-"))
    elif encoder_name == "hashing":
        encoder = HashingEncoder()
    else:
        raise UsageError(
            f"--encoder must be minilm, onnx-int8, onnx-fp32 or hashing, not {encoder_name!r}"
        )
    dataset = questions_dataset(questions, corpus)
    split = (
        split_halves({e.id: {"question_type": e.category} for e in dataset.entries})
        if halves
        else None
    )
    with Progress(transient=True, console=out_console()) as progress:
        task = progress.add_task("ablation", total=len(ladder))

        def step(name: str) -> None:
            progress.update(
                task, description=f"rung: {name}", advance=0 if name == ladder[0][0] else 1
            )

        result = run_ablation(
            dataset,
            corpus,
            k=k,
            levels=tuple(level),
            rungs=ladder,
            encoder=encoder,
            seed=seed,
            on_rung=step,
            halves=split,
            cache_dir=cache,
        )
    if out is not None:
        write_text_atomic(
            out, json.dumps(json_ready(result.to_dict(per_entry=True)), indent=2) + "\n"
        )
    emit(result if categories else result.overall_only(), fmt)


@bench_app.command("financebench-judge")
def bench_financebench_judge(
    graded: Annotated[Path, typer.Argument(help="FinanceBench graded answers (JSONL).")],
    questions: Annotated[Path, typer.Option("--questions", help="FinanceBench questions (JSONL).")],
    fmt: FmtOpt = Format.table,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap generator (CIs).")] = 0,
    n_boot: Annotated[
        int, typer.Option("--n-boot", min=1, help="Bootstrap replicates per CI.")
    ] = 2000,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write each answer's verdicts (JSONL).")
    ] = None,
    save: Annotated[
        Path | None, typer.Option("--save", help="Also write the report (JSON) here.")
    ] = None,
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

    from assay.benchmarks.financebench import financebench_judge

    report = financebench_judge(graded, questions, rng=np.random.default_rng(seed), n_boot=n_boot)
    if out is not None:
        write_jsonl_atomic(out, ({**j.to_dict(), "_meta": report.meta} for j in report.judged))
    if save is not None:
        write_text_atomic(save, report.to_json() + "\n")
    emit(report, fmt)
