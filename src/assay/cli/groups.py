"""Command groups shared by several command modules (`assay corpus ...`, `assay judge ...`, ...)."""

from __future__ import annotations

import typer

from assay.cli._app import app

corpus_app = typer.Typer(
    help="Build and inspect corpora (documents -> pages -> chunks).", no_args_is_help=True
)
import_app = typer.Typer(
    help="Import golden sets: public benchmarks, and other tools' formats.", no_args_is_help=True
)
judge_app = typer.Typer(
    help="Judge answers (LLM judge on a leash) and calibrate judges.", no_args_is_help=True
)
synth_app = typer.Typer(
    help="The synthetic filings room: a corpus with gold recorded as generated.",
    no_args_is_help=True,
)
fresh_app = typer.Typer(
    help="Sealed fresh samples: label blind, use once, retire into the main set.",
    no_args_is_help=True,
)
workbench_app = typer.Typer(help="The expert labelling workbench (web app).", no_args_is_help=True)
bench_app = typer.Typer(help="Reproducible measurements on public data.", no_args_is_help=True)

app.add_typer(corpus_app, name="corpus")
app.add_typer(import_app, name="import")
app.add_typer(judge_app, name="judge")
app.add_typer(synth_app, name="synth")
app.add_typer(fresh_app, name="fresh")
app.add_typer(workbench_app, name="workbench")
app.add_typer(bench_app, name="bench")
