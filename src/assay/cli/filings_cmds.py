"""`assay bench financebench-retrieval`: the filings pipeline's retrieval ablation ladder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from assay.cli._common import FORMAT_OPTION, Format, handle_errors, out_console
from assay.cli.groups import bench_app
from assay.errors import UsageError

__all__ = ["financebench_retrieval", "load_questions"]


def load_questions(path: Path, corpus: Path) -> Any:
    """An assay dataset, or FinanceBench questions (converted with the corpus' documents)."""
    from assay.dataset.io import Dataset, load_dataset

    first = ""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                first = line
                break
    if first and "financebench_id" in json.loads(first):
        try:
            from assay.corpus.financebench import (  # type: ignore[import-not-found,unused-ignore]
                import_financebench,
            )
        except ImportError as exc:
            raise UsageError(
                f"{path} holds FinanceBench questions; convert them first with "
                "`assay import financebench` (the importer is not installed here)"
            ) from exc
        docs = corpus / "documents.jsonl"
        entries = import_financebench(path, documents=docs if docs.exists() else None)
        return Dataset(entries=list(entries), path=str(path))
    return load_dataset(path)


@bench_app.command("financebench-retrieval")
@handle_errors
def financebench_retrieval(
    corpus: Path = typer.Option(
        ...,
        "--corpus",
        help="Corpus directory from `assay corpus build` (chunks.jsonl, documents.jsonl).",
    ),
    questions: Path = typer.Option(
        ...,
        "--questions",
        help="An assay dataset JSONL, or FinanceBench questions JSONL (converted on the fly).",
    ),
    k: int = typer.Option(5, "--k", min=1, help="Cut-off for recall@k and complete@k."),
    level: list[str] = typer.Option(
        ["page", "chunk"],
        "--level",
        help="Scoring level(s): page (any chunk of the gold page counts) and/or chunk.",
    ),
    rung: list[str] = typer.Option(
        [], "--rung", help="Only these rungs (repeatable); default: the whole ladder."
    ),
    pool: int = typer.Option(
        20,
        "--pool",
        min=1,
        help="BM25 candidates re-scored by the dense model (embedded lazily, cached).",
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        help="Embedding cache directory (default $ASSAY_CACHE_DIR or .assay-cache/).",
    ),
    encoder_name: str = typer.Option(
        "minilm",
        "--encoder",
        help="minilm (all-MiniLM-L6-v2, the dense extra) or hashing (dependency-free bag of words, for smoke tests).",
    ),
    seed: int = typer.Option(
        20260801, "--seed", help="Seed of the bootstrap confidence intervals."
    ),
    categories: bool = typer.Option(
        True, "--categories/--overall-only", help="Show a row per question type."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Also write the full result (JSON, with per-entry outcomes) here."
    ),
    fmt: Format = FORMAT_OPTION,
) -> None:
    """Retrieval ablation on FinanceBench: BM25, dense, hybrid, + filters, + query understanding,
    + reranker; recall@k, complete@k (bootstrap CI) and MRR per question type at page and chunk
    level, with flips and an exact McNemar test against the BM25 rung.

    Example: assay bench financebench-retrieval --corpus fbcorpus --questions fb.jsonl -f markdown
    """
    from rich.progress import Progress
    from rich.table import Table

    from assay._io import write_text_atomic
    from assay.cache import default_cache_dir
    from assay.systems.filings.ablation import default_rungs, run_ablation
    from assay.systems.filings.dense import DenseEncoder, HashingEncoder

    for lv in level:
        if lv not in ("page", "chunk"):
            raise UsageError(f"--level must be page or chunk, not {lv!r}")
    ladder = default_rungs(pool)
    if rung:
        known = {name for name, _ in ladder}
        unknown = [r for r in rung if r not in known]
        if unknown:
            raise UsageError(f"unknown rung(s) {unknown}; choose from {sorted(known)}")
        ladder = [(n, c) for n, c in ladder if n in rung or n == "bm25"]
    dataset = load_questions(questions, corpus)
    encoder: Any
    if encoder_name == "minilm":
        encoder = DenseEncoder(
            cache_dir=cache_dir if cache_dir is not None else default_cache_dir()
        )
    elif encoder_name == "hashing":
        encoder = HashingEncoder()
    else:
        raise UsageError(f"--encoder must be minilm or hashing, not {encoder_name!r}")
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
        )
    if out is not None:
        write_text_atomic(
            out, json.dumps(result.to_dict() | {"per_entry": result.per_entry}, indent=2) + "\n"
        )
    console = out_console()
    if fmt == Format.json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    elif fmt == Format.markdown:
        typer.echo(result.to_markdown(categories=categories))
    else:
        table = Table(title=f"retrieval ablation @ {k}")
        for col in (
            "level",
            "rung",
            "category",
            "n",
            f"recall@{k}",
            f"complete@{k} (95% CI)",
            "MRR",
            "fixed/broken",
            "p",
        ):
            table.add_column(col, justify="right" if col in ("n", "MRR", "p") else "left")
        for r in result.rows:
            if not categories and r.category != "overall":
                continue
            table.add_row(
                r.level, r.rung, r.category, str(r.n), f"{r.recall:.3f}",
                f"{r.complete:.3f} ({r.complete_low:.2f}-{r.complete_high:.2f})", f"{r.mrr:.3f}",
                f"{r.fixed}/{r.broken}", "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}",
            )  # fmt: skip
        table.caption = (
            f"dataset {result.dataset_version} · corpus {result.corpus_version[:16]} · seed {seed}"
        )
        console.print(table)
