"""Core commands: schema, validate, run, score, trec."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from assay.cli import app
from assay.cli._common import (
    EXIT_FAIL,
    FORMAT_OPTION,
    Format,
    emit,
    err_console,
    handle_errors,
    report_problems,
)
from assay.errors import DataError

trec_app = typer.Typer(
    help="Read and write TREC run and qrels files (for ranx, ir_measures, trec_eval users).",
    no_args_is_help=True,
)
app.add_typer(trec_app, name="trec")


@app.command("schema")
@handle_errors
def schema_cmd(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of a golden entry (one line of a dataset JSONL)."""
    from assay._io import write_text_atomic
    from assay.dataset.schema import Entry

    text = json.dumps(Entry.model_json_schema(), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(out, text)


@app.command("validate")
@handle_errors
def validate_cmd(
    dataset: Annotated[Path, typer.Argument(help="Golden dataset JSONL.")],
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table JSONL: also check the gold against it (chunk ids and documents exist, "
            "anchors match a chunk, chunks unchanged since labelled, evidence public by as_of).",
        ),
    ] = None,
) -> None:
    """Check a dataset and report EVERY problem as FILE:LINE: field: message.

    Exits 0 when clean, 1 when there are problems. Writes nothing.

    Example: assay validate golden.jsonl --chunks corpus/chunks.jsonl
    """
    from assay.gold import validate_file

    problems = validate_file(dataset, chunks)
    if problems:
        report_problems(DataError(problems))
        raise typer.Exit(EXIT_FAIL)
    from assay.dataset.io import load_dataset

    ds = load_dataset(dataset)
    n_ans = sum(e.is_answerable for e in ds.entries)
    err_console().print(
        f"ok: {len(ds)} entries ({n_ans} with evidence, {len(ds) - n_ans} unanswerable) in "
        f"{len(ds.categories())} categories; dataset {ds.version}"
        + (" ; gold checked against the chunk table" if chunks else ""),
        markup=False,
    )


@app.command("run")
@handle_errors
def run_cmd(
    dataset: Annotated[Path, typer.Argument(help="Golden dataset JSONL.")],
    system: Annotated[
        str,
        typer.Option(
            "--system",
            "-s",
            help="'pkg.mod:factory', an http(s) URL, 'bm25' (needs --chunks) or 'filings' (needs --corpus).",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run JSONL to write (plus OUT.meta.json).")
    ],
    k: Annotated[int, typer.Option("--k", help="Hits to ask for per query.")] = 10,
    chunks: Annotated[
        Path | None, typer.Option("--chunks", help="Chunk table (for --system bm25).")
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus dir (for --system filings).")
    ] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="Filings pipeline mode: bm25|dense|hybrid|full.")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Parallel calls (default 8 for HTTP systems, 1 otherwise)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the request cache (still records results).")
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", help="Request cache location (default .assay-cache or $ASSAY_CACHE_DIR)."
        ),
    ] = None,
    no_answers: Annotated[
        bool, typer.Option("--no-answers", help="Only retrieve; do not call the system's answer().")
    ] = False,
) -> None:
    """Drive a system over a dataset; every entry's as_of reaches the system; every call is cached.

    A rerun reproduces the run from the cache without calling the system; an interrupted run
    resumes from OUT.partial.

    Example: assay run golden.jsonl --system mypkg.pipeline:build --out run.jsonl --k 10
    """
    from assay.cache import RequestCache
    from assay.dataset.io import load_dataset
    from assay.run import load_system, run_system

    ds = load_dataset(dataset)
    options: dict[str, object] = {}
    if chunks is not None:
        options["chunks"] = chunks
    if corpus is not None:
        options["corpus"] = corpus
    if mode is not None:
        options["mode"] = mode
    sys_obj = load_system(system, **options)
    cache = RequestCache(
        None if cache_dir is None else cache_dir / "requests.sqlite", enabled=not no_cache
    )
    spec = (
        system
        if not options
        else f"{system} "
        + json.dumps({kk: str(v) for kk, v in sorted(options.items())}, sort_keys=True)
    )
    run = run_system(
        ds, sys_obj, k=k, spec=spec, cache=cache, out=out, workers=workers, answers=not no_answers
    )
    hits = run.meta.get("cache_hits", 0)
    err_console().print(
        f"wrote {out} ({len(run)} rows; {hits} from cache, {len(run) - hits} called; run {run.hash})",
        markup=False,
    )


@app.command("score")
@handle_errors
def score_cmd(
    dataset: Annotated[Path, typer.Argument(help="Golden dataset JSONL.")],
    run: Annotated[Path, typer.Argument(help="Run JSONL (or TREC run).")],
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table: gold is checked against it before scoring; needed for anchors and --level page.",
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Cutoff for recall, complete and nDCG.")] = 5,
    level: Annotated[
        str,
        typer.Option(
            "--level",
            help="chunk: gold chunks must be retrieved; page: any chunk of a gold page counts.",
        ),
    ] = "chunk",
    ci: Annotated[
        bool,
        typer.Option("--ci", help="Add a 95% bootstrap CI (resampling entries) to every cell."),
    ] = False,
    ci_method: Annotated[
        str, typer.Option("--ci-method", help="percentile or bca.")
    ] = "percentile",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    per_entry: Annotated[
        Path | None, typer.Option("--per-entry", help="Also write per-entry scores as JSONL.")
    ] = None,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing", help="Score entries missing from the run as retrieving nothing."
        ),
    ] = False,
    skip_missing: Annotated[
        bool,
        typer.Option(
            "--skip-missing",
            "--skip-stale",
            help="Leave out entries whose gold is stale (names documents or chunks the chunk "
            "table lacks, anchors no chunk holds, chunks changed since labelled) and report how "
            "many; without it scoring stops and lists them.",
        ),
    ] = False,
    reuse: Annotated[
        bool,
        typer.Option("--reuse", help="Acknowledge that a sealed fresh sample is being used again."),
    ] = False,
    fmt: Format = FORMAT_OPTION,
) -> None:
    """Score retrieval per category (recall@k, complete@k, MRR, nDCG@k) with the overall row.

    Refuses to start when gold is stale (names chunks or documents the chunk table lacks), and
    lists it by entry; --skip-missing scores the rest and reports how many were left out.
    Retrieved ids the chunk table does not know are counted. Unanswerable entries are counted,
    never scored. Exit 0 scored, 2 bad input.

    Example: assay score golden.jsonl run.jsonl --chunks chunks.jsonl --k 5 --ci -f markdown
    """
    from assay._io import write_jsonl_atomic
    from assay.corpus.chunks import load_chunks
    from assay.dataset.io import load_dataset
    from assay.runs import load_run
    from assay.score.retrieval import score_retrieval

    if level not in ("chunk", "page"):
        raise typer.BadParameter("--level must be chunk or page")
    ds = load_dataset(dataset)
    table = load_chunks(chunks) if chunks is not None else None
    r = load_run(run)
    scores = score_retrieval(
        ds,
        r,
        k=k,
        chunks=table,
        level=level,  # type: ignore[arg-type]
        allow_missing=allow_missing,
        skip_stale=skip_missing,
    )
    if ci:
        if ci_method not in ("percentile", "bca"):
            raise typer.BadParameter("--ci-method must be percentile or bca")
        scores.add_ci(seed=seed, method=ci_method)  # type: ignore[arg-type]
    if per_entry is not None:
        write_jsonl_atomic(per_entry, scores.rows)
    _fresh_notice(dataset, reuse=reuse, runs=[r.hash])
    emit(scores, fmt)


def _fresh_notice(dataset: Path, *, reuse: bool, runs: list[str]) -> None:
    """Record this use when the dataset is a sealed fresh sample; warn loudly on reuse."""
    from assay.dataset.fresh import record_use

    use = record_use(dataset, command="score", reuse=reuse, runs=runs)
    if use is not None:
        style = "bold red" if use.uses > 1 and not use.reused else "bold yellow"
        err_console().print(use.message, style=style, markup=False)


@trec_app.command("export")
@handle_errors
def trec_export(
    dataset: Annotated[Path, typer.Argument(help="Golden dataset JSONL.")],
    run: Annotated[
        Path | None, typer.Option("--run", help="Run JSONL to convert to a TREC run file.")
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Write the dataset's gold as TREC qrels here.")
    ] = None,
    run_out: Annotated[
        Path | None, typer.Option("--run-out", help="Where to write the TREC run.")
    ] = None,
) -> None:
    """Write gold as TREC qrels and/or a run as a TREC run file.

    Qrels are lossy for multi-path entries and for pieces with several alternatives (every
    alternative becomes a separately relevant document); the command says how many entries lost
    structure.
    """
    from assay.dataset.io import load_dataset
    from assay.runs import load_run, write_trec_qrels, write_trec_run

    ds = load_dataset(dataset)
    if qrels is not None:
        q: dict[str, dict[str, int]] = {}
        lossy = 0
        for e in ds.entries:
            if not e.is_answerable:
                continue
            if len(e.evidence_paths) > 1 or any(
                len(p) > 1 for path in e.evidence_paths for p in path
            ):
                lossy += 1
            rel_map = (
                e.metadata.get("relevance", {})
                if isinstance(e.metadata.get("relevance"), dict)
                else {}
            )
            for path in e.evidence_paths:
                for piece in path:
                    for alt in piece:
                        if isinstance(alt, str):
                            q.setdefault(e.id, {})[alt] = int(rel_map.get(alt, 1))
        write_trec_qrels(qrels, q)
        err_console().print(
            f"wrote {qrels} ({len(q)} queries; {lossy} entries flattened: paths/alternatives are not expressible in qrels)",
            markup=False,
        )
    if run is not None:
        if run_out is None:
            raise typer.BadParameter("--run needs --run-out")
        write_trec_run(run_out, load_run(run))
        err_console().print(f"wrote {run_out}", markup=False)


@trec_app.command("import")
@handle_errors
def trec_import(
    trec_run: Annotated[Path, typer.Argument(help="TREC run file (qid Q0 docno rank score tag).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run JSONL to write.")],
) -> None:
    """Convert a TREC run into an assay run JSONL (ranked by score, ties in file order)."""
    from assay.runs import read_trec_run, write_run

    r = read_trec_run(trec_run)
    write_run(out, r.rows, meta={"converted_from": str(trec_run), "format": "trec"})
    err_console().print(f"wrote {out} ({len(r)} rows)", markup=False)
