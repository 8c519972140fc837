"""`assay validate`: every problem in a dataset file, and in its gold against a chunk table."""

from __future__ import annotations

from pathlib import Path

from assay._io import iter_jsonl_lenient
from assay.corpus.chunks import load_chunks
from assay.dataset.io import Dataset, parse_entries
from assay.errors import DataError, Problem
from assay.gold.resolve import check_gold

__all__ = ["validate_file"]


def validate_file(path: str | Path, chunks_path: str | Path | None = None) -> list[Problem]:
    """Every problem in a dataset file (and its gold against a chunk table); [] when clean.

    Without a chunk table: JSON, schema and duplicate ids. With one, also every alternative of
    every entry's evidence and key facts (`assay.gold.check_gold`): chunk ids the table lacks,
    documents it lacks, anchors no chunk holds, chunks whose text changed since they were
    labelled, and evidence accepted after the entry's `as_of`.
    """
    path = Path(path)
    problems: list[Problem] = []
    rows = list(iter_jsonl_lenient(path, problems))
    entries, lines, more = parse_entries(rows, file=str(path))
    problems.extend(more)
    if chunks_path is not None:
        try:
            table = load_chunks(chunks_path)
        except DataError as exc:
            return problems + exc.problems
        ds = Dataset(entries, path=str(path), lines=lines)
        problems.extend(check_gold(ds, table, file=str(path)))
    problems.sort(key=lambda p: (p.file, p.line or 0))
    return problems
