"""`assay import FORMAT SRC` and `assay export-as FORMAT DATASET`: golden sets in and out of the
formats teams already keep them in (`assay.formats`). One subcommand per format, listed here
without importing the formats (a test pins this list to `assay.formats.FORMATS`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs, write_jsonl_atomic
from assay.cli._app import app
from assay.cli._common import Format, emit, err_console
from assay.cli.groups import import_app
from assay.cli.options import FmtOpt

__all__ = ["FORMAT_SUMMARIES", "export_app"]

FORMAT_SUMMARIES = {
    "argilla": "Argilla records with each annotator's responses (JSON)",
    "csv": "plain CSV, a row an entry (opens in a spreadsheet; edits come back)",
    "deepeval": "deepeval goldens (JSON or JSONL)",
    "hf": "a Hugging Face datasets folder (JSONL or Parquet with a dataset card)",
    "label-studio": "Label Studio tasks with each annotator's annotations (JSON)",
    "promptfoo": "promptfoo test cases (YAML)",
    "ragas": "a ragas test set or evaluation dataset (CSV, JSON or JSONL)",
}
# what an import reads beyond what an export writes
_IMPORT_ALSO = {"hf": ", or one data file of any Hub dataset"}
CHUNKS_HELP = (
    "Chunk table: on export, gold contexts are written as the chunks' text (ragas, deepeval); "
    "on import, gold given as text is matched onto chunk ids."
)
export_app = typer.Typer(
    help="Write a dataset (and each annotator's labels) in another tool's format.",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export-as")


def _import_command(name: str) -> Callable[..., None]:
    def import_cmd(
        source: Annotated[Path, typer.Argument(help="The file (or Hugging Face folder) to read.")],
        out: Annotated[Path, typer.Option("--out", "-o", help="The dataset JSONL to write.")],
        labels_out: Annotated[
            Path | None,
            typer.Option(
                "--labels-out",
                help="Write each annotator's labels here (long format: item, rater, label, "
                "criterion; what `assay agreement` reads). Label Studio and Argilla carry labels.",
            ),
        ] = None,
        chunks: Annotated[Path | None, typer.Option("--chunks", help=CHUNKS_HELP)] = None,
        fmt: FmtOpt = Format.table,
    ) -> None:
        from assay.corpus import load_chunks
        from assay.dataset import write_dataset
        from assay.formats import import_file

        check_outputs([out, labels_out], [source, chunks])
        table = load_chunks(chunks) if chunks is not None else None
        got = import_file(name, source, table=table)
        if got.labels and labels_out is None:
            err_console().print(
                f"{len(got.labels)} labels in the file are not written: give --labels-out",
                markup=False,
            )
        if labels_out is not None:
            write_jsonl_atomic(labels_out, got.labels)
        write_dataset(out, got.entries, changelog=f"imported from {source} ({got.format})")
        emit(got, fmt)

    what = FORMAT_SUMMARIES[name] + _IMPORT_ALSO.get(name, "")
    import_cmd.__doc__ = f"""Read {what} into an assay dataset.

    Fields assay knows are read under their usual names (query/question/user_input/input,
    answer/reference/expected_output, contexts/reference_contexts/context); every other field
    is kept under the entry's metadata. A file written by `assay export-as {name}` gives back
    exactly the entries exported, with edits made in the file taken and counted. The report
    says what was edited, guessed (ids, categories), kept under metadata or left out. A bad
    file exits 2 with every problem as FILE:LINE: field: message, and nothing is written.

    Example: assay import {name} FILE --out golden.jsonl
    """
    return import_cmd


def _export_command(name: str) -> Callable[..., None]:
    def export_cmd(
        dataset: Annotated[Path, typer.Argument(help="The dataset JSONL to export.")],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="The file to write (a folder for hf).")
        ],
        labels: Annotated[
            Path | None,
            typer.Option(
                "--labels",
                help="Long-format labels (item, rater, label, criterion) to export with the "
                "entries: each annotator's labels, not only the adjudicated ones "
                "(label-studio, argilla).",
            ),
        ] = None,
        chunks: Annotated[Path | None, typer.Option("--chunks", help=CHUNKS_HELP)] = None,
        plain: Annotated[
            bool,
            typer.Option(
                "--plain",
                help="The format alone: leave out assay's whole-entry column (assay_entry). "
                "The report names what the format then cannot hold.",
            ),
        ] = False,
        variant: Annotated[
            str | None, typer.Option("--as", help="hf: jsonl (default) or parquet.")
        ] = None,
        fmt: FmtOpt = Format.table,
    ) -> None:
        from assay.corpus import load_chunks
        from assay.formats import ExportOptions, export_file, get_format

        if not get_format(name).directory:
            check_outputs([out], [dataset, labels, chunks])
        table = load_chunks(chunks) if chunks is not None else None
        options = ExportOptions(table=table, plain=plain, variant=variant)
        emit(export_file(name, dataset, out, labels=labels, options=options), fmt)

    export_cmd.__doc__ = f"""Write an assay dataset as {FORMAT_SUMMARIES[name]}.

    The whole entry rides in the format's free-form slot unless --plain, so `assay import
    {name}` of the file gives back the same entries and `assay score` the same scores.

    Example: assay export-as {name} golden.jsonl --out FILE
    """
    return export_cmd


for _name in FORMAT_SUMMARIES:
    import_app.command(_name)(_import_command(_name))
    export_app.command(_name)(_export_command(_name))
