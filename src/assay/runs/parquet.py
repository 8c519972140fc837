"""Parquet runs: the same rows as a JSONL run, columnar on disk (the `fast` extra, pyarrow).

For runs where JSONL is the bottleneck (millions of hits), `write_run("run.parquet", ...)` and
`load_run("run.parquet")` pick this format by the file name. The schema (docs/scale.md):

=============  ==============================================  ===================================
column         type                                            holds
=============  ==============================================  ===================================
``id``         ``string`` (not null)                           the entry id, one row per entry
``retrieved``  ``list<struct<chunk_id: string, score: double>>``  the hits in rank order; a null
                                                               score is a hit without one, a
                                                               null list a row without
                                                               ``retrieved`` (text-to-SQL)
``details``    ``string`` (null when empty)                    every other field of the row
                                                               (answer, citations, as_of,
                                                               latency_ms, trace, ...) as a JSON
                                                               object, kept exactly
=============  ==============================================  ===================================

The file's key-value metadata holds ``assay.format`` (``assay-run/1``) and ``assay.version``
(the assay that wrote it). The `.meta.json` sidecar is written and read as for JSONL runs, and
the run hash is the file's SHA-256 (first 16 hex digits), as for every run file. A file is
written through `assay._io.atomic_writer`: a failed write leaves no partial file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import atomic_writer, json_loads, sha256_file
from assay.errors import DataError, Problem, UsageError
from assay.runs._meta import _read_meta
from assay.runs.model import Run

__all__ = ["FORMAT", "read_parquet_run", "write_parquet_run"]

FORMAT = "assay-run/1"


def _pyarrow(doing: str) -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise UsageError(
            f"{doing} needs pyarrow: pip install 'assay[fast]' (or write .jsonl runs)"
        ) from None
    return pyarrow


def write_parquet_run(path: str | Path, run: Run) -> str:
    """Write `run` as a Parquet run file atomically; returns its hash (16 hex digits)."""
    pa = _pyarrow(f"writing {path}")
    import pyarrow.parquet as pq

    from assay._version import __version__

    n_hits = len(run.codes)
    vocab = pa.array(run.vocab, type=pa.string())
    chunk = (
        vocab.take(pa.array(run.codes, type=pa.int64())) if n_hits else pa.array([], pa.string())
    )
    raw = run.scores if run.scores is not None else np.full(n_hits, np.nan)
    score = pa.array(raw, type=pa.float64(), mask=np.isnan(raw))
    hits = pa.StructArray.from_arrays([chunk, score], names=["chunk_id", "score"])
    unretrieved = run.unretrieved
    mask = pa.array([rid in unretrieved for rid in run.ids]) if unretrieved else None
    retrieved = pa.ListArray.from_arrays(pa.array(run.offsets, type=pa.int32()), hits, mask=mask)
    details = pa.array(
        [json.dumps(d, ensure_ascii=False) if d else None for d in run.details], type=pa.string()
    )
    table = pa.table(
        {"id": pa.array(run.ids, type=pa.string()), "retrieved": retrieved, "details": details}
    ).replace_schema_metadata({"assay.format": FORMAT, "assay.version": __version__})
    with atomic_writer(path, "wb") as fh:
        pq.write_table(table, fh, compression="zstd")
    return sha256_file(path)[:16]


def read_parquet_run(path: str | Path) -> Run:
    """Read a Parquet run written by `write_parquet_run` (or any file with its columns)."""
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", file=path)
    pa = _pyarrow(f"reading {path}")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"not a Parquet run: {exc}", file=path) from None
    where = str(path)
    for name in ("id", "retrieved"):
        if name not in table.column_names:
            raise DataError("a Parquet run needs this column", file=where, field=name)
    ids_col = table.column("id").combine_chunks()
    ret = table.column("retrieved").combine_chunks()
    if not pa.types.is_string(ids_col.type) and not pa.types.is_large_string(ids_col.type):
        raise DataError(f"must be strings, not {ids_col.type}", file=where, field="id")
    try:
        hits = ret.flatten()
        chunk = hits.field("chunk_id").cast(pa.string())
        score = (
            hits.field("score").cast(pa.float64()) if ret.type.value_type.num_fields > 1 else None
        )
    except (pa.ArrowException, AttributeError, KeyError, TypeError) as exc:
        raise DataError(
            f"must be list<struct<chunk_id: string, score: double>> ({exc})",
            file=where,
            field="retrieved",
        ) from None
    ids: list[str] = ids_col.to_pylist()
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    ret_null = ret.is_null().to_pylist() if ret.null_count else [False] * len(ids)
    unretrieved: dict[str, int | None] = {}
    for row, rid in enumerate(ids, start=1):
        if not rid:
            problems.append(Problem(where, row, "id", "required, a non-empty string"))
        elif rid in seen:
            problems.append(
                Problem(where, row, "id", f"duplicate id {rid!r} (first in row {seen[rid]})")
            )
        else:
            seen[rid] = row
        if ret_null[row - 1]:
            unretrieved[rid] = row  # a row without `retrieved`: no hits
    if chunk.null_count:
        problems.append(Problem(where, None, "retrieved.chunk_id", "a hit has no chunk_id"))
    if ret.null_count:  # what flatten() keeps: a null list holds no hits, whatever lies under it
        lengths = pc.fill_null(pc.list_value_length(ret), 0).to_numpy(zero_copy_only=False)
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    else:
        offsets = np.asarray(ret.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
        offsets = offsets - offsets[0]
    if score is not None:
        values = np.array(score.to_numpy(zero_copy_only=False), dtype=np.float64)
        mask = (
            np.asarray(score.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if score.null_count
            else np.zeros(len(values), dtype=bool)
        )
        bad = ~np.isfinite(values) & ~mask
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            row = int(np.searchsorted(offsets, j, side="right"))
            problems.append(
                Problem(
                    where,
                    row,
                    f"retrieved.{j - int(offsets[row - 1])}.score",
                    f"must be a finite number, not {values[j]}",
                )
            )
        values[mask] = np.nan
    else:
        values = np.full(len(chunk), np.nan)
    details: list[dict[str, Any]] = []
    if "details" in table.column_names:
        for row, text in enumerate(table.column("details").to_pylist(), start=1):
            if text is None:
                details.append({})
                continue
            try:
                d = json_loads(text)
            except (json.JSONDecodeError, TypeError):
                d = None
            if not isinstance(d, dict):
                problems.append(Problem(where, row, "details", "must be a JSON object"))
                d = {}
            details.append(d)
    else:
        details = [{} for _ in ids]
    if problems:
        raise DataError(problems)
    enc = pc.dictionary_encode(chunk)
    return Run(
        ids,
        offsets,
        np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
        enc.dictionary.to_pylist(),
        values,
        details,
        path=str(path),
        hash=sha256_file(path)[:16],
        meta=_read_meta(path),
        unretrieved=unretrieved,
    )
