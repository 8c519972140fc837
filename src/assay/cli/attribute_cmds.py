"""`assay attribute`: where entries were lost (parse, chunk, recall, rerank, generation,
grounding), a thin wrapper over `assay.attribution.attribute_files`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import (
    Format,
    GoldLevel,
    emit,
    gold_level,
)
from assay.cli.options import (
    CorpusChangeOpt,
    FmtOpt,
    GoldenArg,
    KOpt,
    LevelOpt,
    ReuseOpt,
    SkipMissingOpt,
)

__all__ = ["attribute_cmd"]


@app.command("attribute")
def attribute_cmd(
    dataset: GoldenArg,
    run: Annotated[
        Path, typer.Argument(help="Run JSONL (with traces and answers when it has them).")
    ],
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="Built corpus folder (assay corpus build): its chunk table, the parser's page "
            "text (pages.jsonl, for the parse stage) and the files that failed to parse.",
        ),
    ] = None,
    chunks: Annotated[
        Path | None,
        typer.Option("--chunks", help="Chunk table JSONL (instead of the corpus's chunks.jsonl)."),
    ] = None,
    k: KOpt = 5,
    skip_missing: SkipMissingOpt = False,
    level: LevelOpt = GoldLevel.auto,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Entries missing from the run, or whose rows carry no retrieved, count as "
            "retrieving nothing.",
        ),
    ] = False,
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="Group the funnel by category (default), or by an entry metadata key: format, "
            "messiness (the synthetic room records both).",
        ),
    ] = "category",
    allow_reuse: ReuseOpt = False,
    fmt: FmtOpt = Format.table,
    allow_corpus_change: CorpusChangeOpt = False,
) -> None:
    """Per category, how many failing entries each stage lost (a funnel); per entry, the stage
    and the evidence group (piece of its best path) it lost.

    Stages, in order: parse (the gold quote is not in the parser's page text), chunk (no chunk
    holds it intact), recall (not in the candidate pool; without a trace or a reranker, not in
    the top k), rerank (in the pool, dropped from the top k), generation (evidence retrieved,
    answer wrong), grounding (answer right, figures not in its cited spans). Stages the inputs
    cannot show (no page text, no trace, no answers) are named, never blamed. Exit 0, 2 on bad
    input.

    Example: assay attribute golden.jsonl run.jsonl --corpus corpus/ -k 5 -f markdown
    """
    from assay.attribution import attribute_files

    if corpus is None and chunks is None:
        raise typer.BadParameter(
            "give the corpus (--corpus) or at least the chunk table (--chunks)"
        )
    result = attribute_files(
        dataset,
        run,
        corpus=corpus,
        chunks=chunks,
        k=k,
        skip_stale=skip_missing,
        allow_missing=allow_missing,
        by=by,
        level=gold_level(level),
        allow_reuse=allow_reuse,
        allow_corpus_change=allow_corpus_change,
    )
    emit(result, fmt)
