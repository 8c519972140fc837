"""`assay diff OLD NEW`: what changed between two versions of a dataset.

Parses its arguments, calls `assay.dataset.diff_datasets` and prints the `DatasetDiff`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli._app import app
from assay.cli._common import Format, emit
from assay.cli.options import FmtOpt

__all__ = ["diff_cmd", "keyfacts_cmd"]


@app.command("diff")
def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The dataset before (JSONL).")],
    new: Annotated[Path, typer.Argument(help="The dataset after (JSONL).")],
    fmt: FmtOpt = Format.table,
) -> None:
    """Entries added, removed and changed field by field between two versions of a dataset.

    Entries are matched by id. A change is named for what it means: query reworded, gold moved
    (evidence pieces added, removed or given other alternatives, paths regrouped), tier changed
    (label_tier), behaviour changed (answerable, expected_behavior), ambiguity changed; any
    other field, and each metadata key, by its name. The summary gives both versions and says
    when the content changed and the version did not.

    -f markdown is for a pull request; -f json is {old, new, content_changed, version_bumped,
    counts, added, removed, changed: [{id, changes: [{field, kind, before, after, gold}]}]}.
    A file that does not load exits 2 with every problem as FILE:LINE: field: message.

    Example: assay diff golden-1.3.jsonl golden.jsonl -f markdown > dataset-diff.md
    """
    from assay.dataset import diff_datasets

    emit(diff_datasets(old, new), fmt)


@app.command("keyfacts")
def keyfacts_cmd(
    dataset: Annotated[Path, typer.Argument(help="The dataset (JSONL) to draft key facts for.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the dataset here (default: DATASET, in place)."),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Draft again where an entry has drafts already.")
    ] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Draft key facts from each reference answer, for an expert to confirm.

    For every entry with a reference answer and no key facts: each figure with its unit, scale
    and period, the Yes or No of a yes/no answer, the named entities and the direction words,
    stored in metadata.draft_key_facts and marked drafted. No check decides on a draft and no
    tier counts it; the workbench's reference task shows them for an expert to confirm or edit.

    Example: assay keyfacts fb.jsonl --out fb-drafted.jsonl
    """
    from assay.judge.keyfacts import keyfacts_file

    emit(keyfacts_file(dataset, out=out, replace=replace), fmt)
