"""`assay corpus build`: a thin wrapper over assay.corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from assay.cli._common import Format, emit
from assay.cli.groups import corpus_app
from assay.cli.options import FmtOpt

_err = Console(stderr=True, soft_wrap=True)
_out = Console()


@corpus_app.command("build")
def build_cmd(
    *,
    src_dir: Annotated[
        Path,
        typer.Argument(
            help="Folder of files: .pdf, .html/.htm, .txt, .xlsx, .docx, .eml (one per document)."
        ),
    ],
    meta: Annotated[
        Path | None,
        typer.Option(
            "--meta",
            help="documents.jsonl with one filing per line (assay's format, or FinanceBench's documents.jsonl, "
            "detected by its fields). Without it every file becomes a document named by its file stem.",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Output folder: chunks.jsonl, documents.jsonl, pages.jsonl, manifest.json.",
        ),
    ],
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Parser processes (default: CPU count).")
    ] = None,
    target_tokens: Annotated[
        int, typer.Option(help="Prose chunk target size in whitespace tokens.")
    ] = 260,
    max_tokens: Annotated[int, typer.Option(help="Prose chunk hard maximum (tokens).")] = 350,
    overlap_tokens: Annotated[
        int, typer.Option(help="Overlap between consecutive prose chunks (tokens).")
    ] = 40,
    table_max_tokens: Annotated[
        int, typer.Option(help="Table chunk maximum incl. carried header and unit lines.")
    ] = 450,
    enrich: Annotated[
        bool,
        typer.Option(
            help="Read period end and acceptance date from the filing text when estimated; recognise amendments."
        ),
    ] = True,
    ocr: Annotated[
        str,
        typer.Option(
            "--ocr",
            help="OCR engine for image-only PDF pages (scans): auto, tesseract, rapidocr or none.",
        ),
    ] = "auto",
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks",
            help="Read files that symbolic links in SRC_DIR lead to outside it (refused by default; "
            "a --meta `file` that is absolute or climbs out with ../ is refused always).",
        ),
    ] = False,
    fmt: FmtOpt = Format.table,
    progress: Annotated[bool, typer.Option(help="Show a progress bar while parsing.")] = True,
) -> None:
    """Parse filings into pages, chunk them (tables kept as tables) and write a corpus.

    Only files whose content changed since the last build into OUT are re-parsed. A file that
    cannot be parsed is named on stderr and left out; the rest is still built and the command
    exits with status 1. Bad metadata (file:line: field: message) exits with status 2 before
    anything is written. Example:

        assay corpus build filings/ --meta documents.jsonl --out corpus/ --workers 2
    """
    from assay.corpus import ChunkSettings, build_corpus

    try:
        settings = ChunkSettings(
            target_tokens=target_tokens,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
            table_max_tokens=table_max_tokens,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if ocr not in ("auto", "none", "tesseract", "rapidocr"):
        raise typer.BadParameter("--ocr must be auto, tesseract, rapidocr or none")
    manifest = build_corpus(
        src_dir,
        meta=meta,
        out_dir=out,
        workers=workers,
        settings=settings,
        progress=progress,
        enrich=enrich,
        ocr=ocr,
        follow_symlinks=follow_symlinks,
    )
    summary: dict[str, Any] = {
        "out": str(out),
        "corpus_hash": manifest.corpus_hash,
        "documents": manifest.n_documents,
        "pages": manifest.n_pages,
        "chunks": manifest.n_chunks,
        "parsed": len(manifest.parsed),
        "reused": len(manifest.reused),
        "skipped": len(manifest.skipped),
        "failures": len(manifest.failures),
    }
    if fmt == "json":
        _out.print_json(json.dumps(summary | {"failed_files": [p.file for p in manifest.failures]}))
    elif fmt == "markdown":
        _out.print("| field | value |\n| --- | --- |", markup=False)
        for k, v in summary.items():
            _out.print(f"| {k} | {v} |", markup=False, highlight=False)
    else:
        t = Table(title="corpus built", show_header=True)
        t.add_column("field")
        t.add_column("value", overflow="fold")
        for k, v in summary.items():
            t.add_row(k, str(v))
        _out.print(t)
    for p in manifest.failures:
        _err.print(f"[red]failed[/red] {p}", highlight=False)
    if manifest.failures:
        raise typer.Exit(1)


@corpus_app.command("embed")
def embed_cmd(
    corpus: Annotated[
        Path,
        typer.Argument(
            help="Corpus folder from `assay corpus build` (chunks.jsonl, documents.jsonl)."
        ),
    ],
    encoder: Annotated[
        str,
        typer.Option(
            "--encoder",
            help="minilm (all-MiniLM-L6-v2, the dense extra), onnx-int8 / onnx-fp32 (the onnx "
            "extra) or hashing (dependency-free, for smoke tests).",
        ),
    ] = "minilm",
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Embedding cache directory (default $ASSAY_CACHE_DIR or .assay-cache/); give the "
            "same one to `assay run` / `assay bench`.",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="local, ray (a local Ray on this machine) or ray:ADDRESS (ray:auto, "
            "ray:ray://HOST:10001): where the chunks are embedded, one encoder per Ray worker. "
            "Needs the ray extra.",
        ),
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Ray workers (default: the cluster's CPUs)."),
    ] = None,
    batch: Annotated[
        int, typer.Option("--batch", min=1, help="Chunks per batch (one Ray call each).")
    ] = 1024,
    fmt: FmtOpt = Format.table,
) -> None:
    """Embed every chunk of a corpus once, ahead of the runs that need it: the content-hash
    embedding cache and the whole-corpus vectors file under --cache-dir, which the dense and
    hybrid modes of the filings system then load instead of embedding at query time.

    With --executor ray the batches are embedded by Ray workers (the model loaded once per
    worker) and this machine keeps the cache. Example:

        assay corpus embed corpus/ --encoder minilm --executor ray:auto
    """
    from assay.executors import parse_executor
    from assay.systems.filings import embed_corpus
    from assay.systems.filings.vectors import ENCODERS

    if encoder not in ENCODERS:
        raise typer.BadParameter(f"--encoder must be one of {', '.join(ENCODERS)}")
    ex = parse_executor(executor, workers=workers)
    if not (corpus / "chunks.jsonl").is_file():
        raise typer.BadParameter(f"{corpus}: no chunks.jsonl (build it with `assay corpus build`)")
    report = embed_corpus(corpus, encoder, cache_dir=cache_dir, executor=ex, batch=batch)
    emit(report, fmt)
