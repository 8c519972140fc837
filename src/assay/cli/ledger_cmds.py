"""`assay ledger show` and `assay ledger void`: a dataset's comparison ledger, append-only.

Each command parses its options, calls one function of `assay.compare.ledger` and prints the
result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import Format, emit, err_console
from assay.cli.options import FmtOpt

__all__ = ["ledger_show_cmd", "ledger_void_cmd"]

ledger_app = typer.Typer(
    help="The comparison ledger beside a dataset: every comparison it has seen, append-only.",
    no_args_is_help=True,
)
app.add_typer(ledger_app, name="ledger")

DatasetArg = Annotated[
    Path, typer.Argument(help="Golden dataset; its ledger is <name>.ledger.jsonl beside it.")
]


@ledger_app.command("show")
def ledger_show_cmd(dataset: DatasetArg, fmt: FmtOpt = Format.table) -> None:
    """Every comparison recorded against the dataset, numbered: when, which command, the runs,
    the metrics, the smallest Holm p and its ledger-corrected p, and which were voided and why.

    Example: assay ledger show golden.jsonl -f markdown
    """
    from assay.compare.ledger import ledger_history

    emit(ledger_history(dataset), fmt)


@ledger_app.command("void")
def ledger_void_cmd(
    dataset: DatasetArg,
    number: Annotated[int, typer.Argument(help="The comparison's number (# in ledger show).")],
    reason: Annotated[
        str, typer.Option("--reason", help="Why its result is not to be relied on (required).")
    ],
    fmt: FmtOpt = Format.table,
) -> None:
    """Void comparison NUMBER: append a line saying so, with the reason. Nothing is deleted.

    A voided comparison keeps its number and still counts toward later corrections (its look
    was taken and its share of alpha spent); `ledger show` marks it, and the same comparison
    run again says it was voided. Exit 2 for a number the ledger lacks or one already voided.

    Example: assay ledger void golden.jsonl 7 --reason "candidate run made on the old index"
    """
    from assay.compare.ledger import ledger_history, void_comparison

    void_comparison(dataset, number, reason=reason)
    err_console().print(f"voided comparison #{number}: {reason}", markup=False, highlight=False)
    if fmt is not Format.table:
        emit(ledger_history(dataset), fmt)
