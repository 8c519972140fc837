"""`assay routing DATASET RUN`: a router's or guardrail's labels per class, and the audit of the
gold labels; `assay synth routing`: the room's routing set with planted label errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs
from assay.cli._app import app
from assay.cli._common import Format, emit, err_console
from assay.cli.groups import synth_app
from assay.cli.options import FmtOpt

__all__ = ["routing_cmd", "synth_routing_cmd"]


@app.command("routing")
def routing_cmd(
    dataset: Annotated[Path, typer.Argument(help="Dataset JSONL with expected_label entries.")],
    run: Annotated[
        Path, typer.Argument(help="Run JSONL whose rows carry label (and label_scores).")
    ],
    audit: Annotated[
        bool,
        typer.Option(
            "--audit",
            help="Also rank the gold labels most likely wrong (confident learning; the audit "
            "extra): a review list, nothing is changed.",
        ),
    ] = False,
    top: Annotated[
        int | None,
        typer.Option("--top", min=1, help="Audit rows to show (default 10% of entries, >= 10)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the audit's out-of-fold folds.")] = 0,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the confusion matrix as a PNG here.")
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Per label set: accuracy, each class's precision and recall with 95% Wilson intervals,
    and the confusion matrix (rows gold, columns the label given, and "(none)" for rows with no
    label). `label_correct` is the same decision per entry, for `assay check`, `compare` and
    `gate`.

    --audit ranks every gold label by cleanlab's label quality, from the run's label_scores
    averaged with out-of-fold probabilities of a model of the queries, and flags the likely
    errors for an expert to adjudicate.

    Example: assay routing routing.jsonl runs/router.jsonl --audit --plot confusion.png
    """
    from assay.checks.routing import label_audit, label_report, plot_confusion
    from assay.dataset import load_dataset
    from assay.runs import load_run

    check_outputs([plot], [dataset, run])
    ds = load_dataset(dataset)
    rows = {r.id: r.to_dict() for r in load_run(run).rows}
    report = label_report(ds.entries, rows, file=str(run))
    emit(report, fmt)
    if audit:
        if fmt is Format.markdown:
            print()
        emit(label_audit(ds.entries, rows, seed=seed, top=top, file=str(run)), fmt)
    if plot is not None:
        plot_confusion(report, plot)
        err_console().print(f"wrote {plot}", markup=False)


@synth_app.command("routing")
def synth_routing_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder to write routing.jsonl into.")],
    n: Annotated[int, typer.Option("--n", min=8, help="Entries.")] = 120,
    errors: Annotated[int, typer.Option("--errors", min=0, help="Label errors to plant.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the questions and errors.")] = 7,
) -> None:
    """The room's routing set: which filing answers each question (10-K, 10-Q, 8-K, DEF 14A),
    with label errors planted on purpose (their ids and true labels in routing.planted.json,
    apart from the entries), to measure the label audit.

    Example: assay synth routing --out room/ && assay run room/routing.jsonl --system assay.systems.router:KeywordRouter --out runs/router.jsonl
    """
    from assay.synth.routing import generate_routing

    rec = generate_routing(out, n=n, errors=errors, seed=seed)
    err_console().print(
        f"wrote {out / 'routing.jsonl'} ({n} entries, {len(rec['planted'])} labels planted wrong: "
        f"{out / 'routing.planted.json'})",
        markup=False,
    )
