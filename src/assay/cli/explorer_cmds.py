"""`assay export` (the results bundle) and `assay report` (the offline explorer site).

Each command parses its options, calls one function of `assay.explorer` and prints the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs
from assay.cli._app import app
from assay.cli._common import Format, GoldLevel, emit, gold_level
from assay.cli.options import (
    BaseChunksOpt,
    ChunksOpt,
    ClusterOpt,
    FmtOpt,
    GoldenArg,
    KOpt,
    LevelOpt,
    ResOpt,
    ReuseOpt,
    SeedOpt,
    SkipMissingOpt,
    TiersOpt,
)
from assay.errors import UsageError

__all__ = ["export_cmd", "report_cmd"]

CandChunksOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--cand-chunks",
        help="Each other run's own chunk table, in the order of the runs (repeat once per run).",
    ),
]
CorpusOpt = Annotated[
    Path | None,
    typer.Option("--corpus", help="Corpus folder (parser output), for attribution's parse stage."),
]
LadderOpt = Annotated[
    Path | None,
    typer.Option("--ladder", help="An ablation ladder's JSON (assay bench ladder -f json)."),
]
JudgedOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--judged",
        help="RUN=FILE: a judged-answers file (assay judge run --out) for the run named RUN "
        "(a run's name is its file name without extension); repeat per run.",
    ),
]


def _judged(pairs: list[str] | None) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pair in pairs or []:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--judged {pair!r}: expected RUN=FILE")
        out[name] = Path(path)
    return out


@app.command("export")
def export_cmd(
    dataset: GoldenArg,
    runs: Annotated[
        list[Path], typer.Argument(help="Run files; the first is the baseline of comparisons.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the bundle (JSON).")],
    chunks: ChunksOpt = None,
    base_chunks: BaseChunksOpt = None,
    cand_chunks: CandChunksOpt = None,
    corpus: CorpusOpt = None,
    ladder: LadderOpt = None,
    judged: JudgedOpt = None,
    k: KOpt = 5,
    seed: SeedOpt = 0,
    resamples: ResOpt = 2000,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    allow_reuse: ReuseOpt = False,
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            "--metrics",
            help="Series the comparisons compare (comma-separate or repeat): any registered "
            "metric or answer check, e.g. complete@5,answer_correct. Default: complete and "
            "recall (exec_match and test_suite_match on a dataset of SQL questions).",
        ),
    ] = None,
    fmt: FmtOpt = Format.table,
    tiers: TiersOpt = None,
    cluster: ClusterOpt = "auto",
) -> None:
    """Write one results bundle: scores with intervals, comparisons with flips (the first run is
    the baseline; Holm across every candidate), answer checks, failure attribution, the ablation
    ladder, and per entry its gold, retrieved chunks, answer and check results, with versions and
    hashes. `assay report bundle.json --out site/` renders the explorer from it.

    Example: assay export golden.jsonl base.jsonl cand.jsonl --chunks chunks.jsonl --out bundle.json
    ; SQL questions only: assay export wh/golden.jsonl template.jsonl other.jsonl --out bundle.json
    """
    from assay.explorer import export_bundle

    check_outputs([out], [dataset, *runs, chunks, base_chunks, *(cand_chunks or []), ladder])
    bundle = export_bundle(
        dataset,
        runs,
        chunks=chunks,
        base_chunks=base_chunks,
        cand_chunks=cand_chunks,
        out=out,
        corpus=corpus,
        ladder=ladder,
        judged=_judged(judged),
        k=k,
        seed=seed,
        n_resamples=resamples,
        n_permutations=resamples,
        level=gold_level(level),
        skip_stale=skip_missing,
        metrics=metrics,
        allow_reuse=allow_reuse,
        tiers=tiers,
        cluster=cluster,
    )
    emit(bundle, fmt)


@app.command("report")
def report_cmd(
    source: Annotated[
        Path, typer.Argument(help="A results bundle (assay export), or a golden dataset.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder of the site (replaced if it is one).")
    ],
    runs: Annotated[
        list[Path] | None,
        typer.Argument(help="Run files, when SOURCE is a golden dataset (export in one step)."),
    ] = None,
    chunks: ChunksOpt = None,
    base_chunks: BaseChunksOpt = None,
    cand_chunks: CandChunksOpt = None,
    corpus: CorpusOpt = None,
    ladder: LadderOpt = None,
    judged: JudgedOpt = None,
    k: KOpt = 5,
    seed: SeedOpt = 0,
    resamples: ResOpt = 2000,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    allow_reuse: ReuseOpt = False,
    fmt: FmtOpt = Format.table,
    tiers: TiersOpt = None,
) -> None:
    """Render the offline explorer site: overview with intervals and plots, comparisons with
    flips, leaderboard, ablation ladder, attribution funnel and one page per entry. It opens
    from file:// with no server and no network request; the same bundle gives the same bytes.

    Examples: assay report bundle.json --out site/ ;
    assay report golden.jsonl base.jsonl cand.jsonl --chunks chunks.jsonl --out site/
    """
    from assay.explorer import report_site

    if runs:
        site = report_site(
            source,
            out,
            runs,
            allow_reuse=allow_reuse,
            chunks=chunks,
            base_chunks=base_chunks,
            cand_chunks=cand_chunks,
            corpus=corpus,
            ladder=ladder,
            judged=_judged(judged),
            k=k,
            seed=seed,
            n_resamples=resamples,
            n_permutations=resamples,
            level=gold_level(level),
            skip_stale=skip_missing,
            tiers=tiers,
        )
    else:
        given = [
            n
            for n, v in (
                ("--chunks", chunks),
                ("--base-chunks", base_chunks),
                ("--cand-chunks", cand_chunks),
                ("--corpus", corpus),
                ("--ladder", ladder),
            )
            if v
        ]
        if level is GoldLevel.page or skip_missing:
            given.append("--level/--skip-missing")
        if tiers is not None:
            given.append("--tiers")
        if given or judged:
            raise UsageError(
                f"{', '.join(given or ['--judged'])}: only with a dataset and runs; a bundle "
                "already holds everything"
            )
        site = report_site(source, out, allow_reuse=allow_reuse)
    emit(site, fmt)
