"""`assay demo`: the whole loop on the synthetic filings room."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import err_console, out_console
from assay.cli.options import KOpt
from assay.errors import UsageError


@app.command("demo")
def demo_cmd(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for the room, corpus, runs, scores and comparison."
        ),
    ] = Path("out/demo"),
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the synthetic room and of every bootstrap.")
    ] = 7,
    companies: Annotated[
        int | None,
        typer.Option(
            "--companies",
            help="Companies in the room (default: small; 30 with --years 5 is deployment scale).",
        ),
    ] = None,
    years: Annotated[
        int | None, typer.Option("--years", help="Fiscal years of filings per company.")
    ] = None,
    k: KOpt = 5,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="Filings pipeline mode: lexical (default; BM25 + query understanding + filters) or bm25|dense|hybrid|full (dense ones need the dense extra).",
        ),
    ] = None,
    logs: Annotated[
        bool,
        typer.Option(
            "--logs",
            help="Run the production loop instead, into OUT/logs: two months of synthetic traffic "
            "over the room, then logs ingest -> report -> sample -> failures.",
        ),
    ] = False,
    sql: Annotated[
        bool,
        typer.Option(
            "--sql",
            help="Run the gold SQL step instead, into OUT/sql: the warehouse, the template "
            "baseline checked per category, the planted near misses (skipped, with a note, "
            "without the sql extra).",
        ),
    ] = False,
) -> None:
    """Generate the synthetic filings room, build and index its corpus, run a BM25 baseline and the
    reference filings pipeline, score both per category with 95% CIs, compare them, print the tables.
    With --logs: the production loop on synthetic traffic (assay logs ingest, report, sample,
    failures), each step's figure printed. With --sql: the gold SQL step (assay synth warehouse,
    sql run, sql check, sql near-miss).
    """
    from assay.demo import run_demo

    con = err_console()
    if sql:
        from assay.demo import run_sql_demo

        sres = run_sql_demo(
            out / "sql", seed=seed, log=lambda s: con.print(s, markup=False, highlight=False)
        )
        if sres.report is not None:
            out_console().print(sres.report.to_table())
            con.print(f"results in {out / 'sql'}/ (golden.jsonl, template.jsonl, check.md)")
        return
    if logs:
        from assay.logs.traffic_demo import run_logs_demo

        if k < 1:
            raise UsageError(f"--k must be at least 1, not {k}")
        lres = run_logs_demo(
            out / "logs", seed=seed, k=k, log=lambda s: con.print(s, markup=False, highlight=False)
        )
        out_console().print(lres.report.to_table())
        con.print(
            f"results in {out / 'logs'}/ (logstore/, report.md, fresh.jsonl, candidates.jsonl); "
            f"total {lres.timings['total']:.1f}s",
            markup=False,
        )
        return
    res = run_demo(
        out,
        seed=seed,
        companies=companies,
        years=years,
        k=k,
        mode=mode,
        log=lambda s: con.print(s, markup=False, highlight=False),
    )
    o = out_console()
    for name, s in res.scores.items():
        table = s.to_table()
        table.title = f"{'Plain BM25 baseline' if name == 'bm25' else 'Reference filings pipeline (' + res.pipeline_mode + ')'}: retrieval @{k} per category, 95% CI"
        o.print(table)
    if res.comparison is not None:
        o.print(res.comparison.to_table())
    for note in res.notes:
        con.print(f"note: {note}", style="yellow", markup=False)
    con.print(
        f"results in {out}/ (scores/*.json|md, compare.md, runs/, corpus/, room/, bundle.json); total {res.timings['total']:.1f}s",
        markup=False,
    )
    if "site" in res.files:
        con.print(f"explorer: open {res.files['site']} in a browser (no server)", markup=False)
