"""Run files in assay's own format: JSONL, one line per entry::

    {"id": "fd-0183", "retrieved": [{"chunk_id": "...", "score": 12.7}, ...], "answer": "...",
     "citations": ["..."], "as_of": "2024-03-31", "latency_ms": 41.0}

`retrieved` may also be a plain list of chunk ids in rank order. Only `id` is required: a
text-to-SQL run is `{"id", "sql"}` rows (with `answer`, `latency_ms`, `error` as it likes). A row
without `retrieved` (absent or null) has no hits and is listed in `Run.unretrieved`; retrieval
scoring refuses it, naming FILE:LINE: retrieved, for an entry with retrieval gold (as it refuses
an entry with no row), and `[]` says a system retrieved nothing. Rank order: the order of `retrieved` in the file is the ranking (a system's own order
is trusted; scores are kept but never re-sorted). A score must be a finite number: `NaN` and
`Infinity` (which Python's json would accept) are refused as FILE:LINE: retrieved.j.score.

A sidecar `<run>.meta.json` records the system identity, dataset version, k and config. Rows
written by `assay run` also carry ``entry_fp`` and ``dataset_version``: what binds each row to
the entry it answered (`assay.runs.binding`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import atomic_writer, iter_jsonl_lenient, sha256_file, write_text_atomic
from assay.errors import DataError, Problem
from assay.runs._fast import read_jsonl_run
from assay.runs._meta import _read_meta, run_meta_path
from assay.runs.model import Run, RunRow, _row_from_obj, parse_hit
from assay.runs.trec import read_trec_run

__all__ = ["load_run", "run_meta_path", "write_run"]


class _NonFinite(float):
    """What a NaN/Infinity token parses to: a float of its own type, so the fast path (which
    accepts exact floats only) hands the row to `parse_hit`, which names the field."""


def _non_finite(token: str) -> float:
    return _NonFinite(token)


_NUMBER_TYPES = frozenset({int, float, type(None)})


def _fast_hits(ret: list[Any]) -> tuple[list[str], list[float | None]] | None:
    """Chunk ids and scores of a well-formed `retrieved` list, or None (then the exact path
    checks every hit and names the bad one). Type checks run over whole lists at C speed."""
    if not ret:
        return [], []
    first = type(ret[0])
    try:
        if first is dict:
            cids = [h["chunk_id"] for h in ret]
            scs = [h.get("score") for h in ret]
        elif first is str:
            cids = ret
            scs = [None] * len(ret)
        else:
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    # exact types: a bool (an int subclass) or a numeric string is not a score
    if set(map(type, cids)) != {str} or not set(map(type, scs)) <= _NUMBER_TYPES:
        return None
    return cids, scs


def _tool_calls_problem(obj: dict[str, Any], file: str, line: int) -> Problem | None:
    """What is wrong with a row's ``tool_calls`` (`assay.dataset.toolgold.parse_calls`), if
    anything."""
    if obj.get("tool_calls") is None:
        return None
    from assay.dataset import parse_calls

    try:
        parse_calls(obj["tool_calls"])
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        return Problem(file, line, field, message)
    return None


def load_run(path: str | Path, *, format: str = "auto", fast: bool = True) -> Run:
    """Load a JSONL run (or a TREC run when `format="trec"` or the file looks like one, or a
    Parquet run when `format="parquet"` or the name ends in `.parquet`).

    Every bad line is reported (file:line: field: message). Duplicate ids are an error.

    With the `fast` extra (pyarrow), a JSONL run is parsed by pyarrow's JSON reader; when that
    fails or meets anything unusual, the checked line-by-line reader reads the file instead and
    names every bad line. Both give identical runs; `fast=False` forces the checked reader.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", file=path)
    if format == "auto" and path.suffix == ".parquet":
        format = "parquet"
    if format == "auto":
        with open(path, "rb") as fh:
            first = fh.readline().lstrip()
        format = "jsonl" if first.startswith(b"{") or not first else "trec"
    if format == "trec":
        return read_trec_run(path, fast=fast)
    if format == "parquet":
        from assay.runs.parquet import read_parquet_run

        return read_parquet_run(path)
    if format != "jsonl":
        raise ValueError(f"format must be auto, jsonl, trec or parquet, not {format!r}")
    if fast:
        cols = read_jsonl_run(path)
        if cols is not None:
            return Run(
                cols["ids"],
                cols["offsets"],
                cols["codes"],
                cols["vocab"],
                cols["scores"],
                cols["details"],
                path=str(path),
                hash=cols["sha256"][:16],
                meta=_read_meta(path),
                unretrieved=cols["unretrieved"],
                hit_content=cols["hit_content"],
                index=cols["index"],
            )
    problems: list[Problem] = []
    ids: list[str] = []
    offsets = [0]
    all_cids: list[str] = []
    scores: list[float | None] = []
    details: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    unretrieved: dict[str, int | None] = {}
    nan = float("nan")
    hasher = hashlib.sha256()
    for lineno, obj in iter_jsonl_lenient(
        path, problems, hasher=hasher, parse_constant=_non_finite
    ):
        rid = obj.get("id") if isinstance(obj, dict) else None
        ret = obj.get("retrieved") if isinstance(obj, dict) else None
        # fast path: well-formed rows (a row without `retrieved` has no hits)
        if isinstance(rid, str) and rid and (isinstance(ret, list) or ret is None):
            if rid in seen:
                problems.append(
                    Problem(
                        str(path),
                        lineno,
                        "id",
                        f"duplicate id {rid!r} (first on line {seen[rid]})",
                    )
                )
                continue
            if ret is None:
                unretrieved[rid] = lineno
                ret = []
            quick = _fast_hits(ret)
            if quick is not None:
                all_cids.extend(quick[0])
                scores.extend(quick[1])
            else:
                try:
                    for j, h in enumerate(ret):
                        hit = parse_hit(h, str(path), lineno, j)
                        all_cids.append(hit.chunk_id)
                        scores.append(nan if hit.score is None else hit.score)
                except DataError as exc:
                    problems.extend(exc.problems)
                    del all_cids[offsets[-1] :]
                    del scores[offsets[-1] :]
                    continue
            bad = _tool_calls_problem(obj, str(path), lineno)
            if bad is not None:
                problems.append(bad)
                del all_cids[offsets[-1] :]
                del scores[offsets[-1] :]
                continue
            seen[rid] = lineno
            ids.append(rid)
            offsets.append(len(all_cids))
            details.append({k: v for k, v in obj.items() if k != "id" and k != "retrieved"})
        else:
            try:
                _row_from_obj(obj, file=str(path), line=lineno)
            except DataError as exc:
                problems.extend(exc.problems)
    if problems:
        raise DataError(problems)
    meta = _read_meta(path)
    vocab = {c: i for i, c in enumerate(dict.fromkeys(all_cids))}
    codes = np.fromiter(map(vocab.__getitem__, all_cids), dtype=np.int64, count=len(all_cids))
    return Run(
        ids,
        np.asarray(offsets, dtype=np.int64),
        codes,
        list(vocab),
        np.asarray(scores, dtype=np.float64),
        details,
        path=str(path),
        hash=hasher.hexdigest()[:16],
        meta=meta,
        unretrieved=unretrieved,
    )


def write_run(
    path: str | Path,
    rows: Run | Iterable[RunRow | dict[str, Any]],
    meta: dict[str, Any] | None = None,
) -> str:
    """Write a run atomically (plus its `.meta.json` sidecar). Returns the run hash.

    JSONL, or Parquet when the name ends in `.parquet` (the `fast` extra; `assay.runs.parquet`
    documents its schema)."""
    path = Path(path)
    if path.suffix == ".parquet":
        from assay.runs.parquet import write_parquet_run

        h = write_parquet_run(path, rows if isinstance(rows, Run) else Run.from_rows(rows))
    else:
        with atomic_writer(path) as fh:
            for r in rows.rows if isinstance(rows, Run) else rows:
                d = r.to_dict() if isinstance(r, RunRow) else r
                fh.write(json.dumps(d, ensure_ascii=False) + "\n")
        h = sha256_file(path)[:16]
    if meta is not None:
        m = dict(meta)
        m["run_hash"] = h
        m.setdefault("written_at", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        write_text_atomic(
            run_meta_path(path), json.dumps(m, indent=2, sort_keys=True, default=str) + "\n"
        )
    return h
