"""`assay sweep`: one run per configuration of a grid, scored, and a leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs
from assay.cli._app import app
from assay.cli._common import Format, GoldLevel, emit, gold_level
from assay.cli.options import (
    ClusterOpt,
    FmtOpt,
    GoldenArg,
    LevelOpt,
    SkipMissingOpt,
    TiersOpt,
)
from assay.errors import UsageError

__all__ = ["sweep_cmd"]


def sweep_cmd(
    dataset: GoldenArg,
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Corpus folder built by `assay corpus build`.")
    ],
    grid: Annotated[
        Path,
        typer.Option(
            "--grid", help="Grid file (JSON, or YAML with the yaml extra): docs/scale.md."
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for runs/, comparisons/, leaderboard.json.")
    ],
    system: Annotated[
        str, typer.Option("--system", "-s", help="The system swept (only filings for now).")
    ] = "filings",
    executor: Annotated[
        str,
        typer.Option("--executor", help="local, ray, or ray:ADDRESS: one task per configuration."),
    ] = "local",
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Ray workers at most.")
    ] = None,
    score_k: Annotated[int, typer.Option("--score-k", min=1, help="k of the metrics.")] = 5,
    metrics: Annotated[
        list[str] | None,
        typer.Option("--metrics", "-m", help="Metrics (repeat); default complete and recall."),
    ] = None,
    skip_stale: SkipMissingOpt = False,
    fmt: FmtOpt = Format.table,
    cluster: ClusterOpt = "auto",
    level: LevelOpt = GoldLevel.auto,
    tiers: TiersOpt = None,
) -> None:
    """Run the filings pipeline once per configuration of a grid (modes, k, pool, reranker),
    score each, and compare each with the baseline configuration (Holm across the candidates).

    Example: assay sweep golden.jsonl --system filings --corpus corpus/ --grid grid.yaml
    --executor ray --out sweep/
    """
    from assay.executors import parse_executor
    from assay.sweep import load_grid, run_sweep

    if system != "filings":
        raise UsageError(f"--system {system}: assay sweep runs the filings pipeline only")
    check_outputs([out / "leaderboard.json"], [dataset, grid])
    ex = parse_executor(executor, workers=workers)
    configs, base = load_grid(grid)
    report = run_sweep(
        dataset,
        corpus=corpus,
        grid=configs,
        baseline=base,
        out=out,
        executor=ex,
        metrics=metrics,
        score_k=score_k,
        skip_stale=skip_stale,
        cluster=cluster,
        level=gold_level(level),
        tiers=tiers,
    )
    emit(report, fmt)


app.command("sweep")(sweep_cmd)
