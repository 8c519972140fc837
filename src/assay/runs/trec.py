"""TREC run and qrels files, for ranx, ir_measures and trec_eval users.

A TREC run line is `qid Q0 docno rank score tag`. Reading ranks hits by score descending with
ties kept in file order (stable); trec_eval breaks ties by docno instead, so `write_trec_run`
writes scores that follow assay's rank order strictly (see there) and every tool reads the
ranking assay scored. A qrels line is `qid iter docno relevance`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay._io import atomic_writer, not_utf8, sha256_file
from assay.errors import DataError, Problem
from assay.runs._fast import pyarrow_available, read_trec_columns
from assay.runs.model import Run

__all__ = ["read_trec_qrels", "read_trec_run", "write_trec_qrels", "write_trec_run"]


def _trec_columns_pandas(path: Path) -> tuple[Any, list[str], Any, list[str], Any] | None:
    """(query codes, query ids, doc codes, doc ids, scores) via pandas' C parser; None if absent."""
    try:
        import pandas as pd
    except ImportError:
        return None
    try:
        df = pd.read_csv(
            path,
            sep=" ",
            header=None,
            names=["q", "z", "d", "r", "s", "t"],
            dtype={"q": str, "z": str, "d": str, "r": str, "s": np.float64, "t": str},
            engine="c",
            # the default C float parser can be one unit in the last place off; round_trip
            # parses every score exactly as float() does (the exact reader's value)
            float_precision="round_trip",
            skipinitialspace=True,
            keep_default_na=False,
            na_filter=True,
        )
    except (ValueError, pd.errors.ParserError):
        return None  # irregular whitespace or a bad line: the exact reader reports where
    if len(df) == 0 or bool(df.isna().to_numpy().any()):
        return None  # a line short of fields
    for col in ("q", "z", "d", "r", "t"):
        if bool((df[col] == "").any()) or bool(df[col].str.contains(r"\s", regex=True).any()):
            return None  # an empty field or one with other whitespace: not `str.split()`'s tokens
    qc, qu = pd.factorize(df["q"])
    dc, du = pd.factorize(df["d"])
    return (
        qc.astype(np.int64),
        list(qu),
        dc.astype(np.int64),
        list(du),
        df["s"].to_numpy(np.float64),
    )


def _score_problems(path: Path) -> list[Problem]:
    """Every line whose score field is not a finite number, by line number."""
    problems: list[Problem] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            parts = raw.split()
            if len(parts) != 6:
                continue
            tok = parts[4]
            try:
                value = float(tok)
            except ValueError:
                problems.append(Problem(str(path), lineno, "score", f"not a number: {tok!r}"))
                continue
            if not math.isfinite(value):
                problems.append(
                    Problem(str(path), lineno, "score", f"must be a finite number, not {tok!r}")
                )
    return problems


def _trec_columns_python(path: Path) -> tuple[Any, list[str], Any, list[str], Any]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tokens = text.split()
    if len(tokens) != 6 * sum(1 for ln in lines if ln.strip()):
        problems = [
            Problem(str(path), i, None, f"a TREC run line has 6 fields, found {len(ln.split())}")
            for i, ln in enumerate(lines, start=1)
            if ln.strip() and len(ln.split()) != 6
        ]
        raise DataError(problems)
    del lines
    qcol = tokens[0::6]
    dcol = tokens[2::6]
    try:
        scores = np.array(tokens[4::6], dtype=np.float64)
    except ValueError:
        raise DataError(_score_problems(path)) from None
    del tokens
    qindex = {q: i for i, q in enumerate(dict.fromkeys(qcol))}
    vocab_index = {d: i for i, d in enumerate(dict.fromkeys(dcol))}
    qcodes = np.fromiter(map(qindex.__getitem__, qcol), dtype=np.int64, count=len(qcol))
    codes = np.fromiter(map(vocab_index.__getitem__, dcol), dtype=np.int64, count=len(dcol))
    return qcodes, list(qindex), codes, list(vocab_index), scores


def read_trec_run(path: str | Path, *, fast: bool = True) -> Run:
    """TREC run: `qid Q0 docno rank score tag` per line.

    Hits are ranked by score descending; ties keep file order (stable). Note that trec_eval and
    pytrec_eval break ties by docno in reverse lexical order instead, so results on tied scores
    can differ from theirs; without ties they agree exactly. A score that is not a finite number
    (`nan`, `inf`) is refused as FILE:LINE: score.

    Columnar and vectorised. With the `fast` extra (pyarrow) its multi-threaded CSV reader reads
    a regular file (single spaces between fields); else pandas' C parser when installed; and
    otherwise, or when a line is malformed, the pure-Python reader does, and reports every bad
    line by number. All give identical runs (`fast=False` forces the checked reader).
    """
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", file=path)
    digest: str | None = None
    cols: tuple[Any, list[str], Any, list[str], Any] | None
    try:
        arrow = read_trec_columns(path) if fast else None
        if arrow is not None:
            *cols5, digest = arrow
            cols = (cols5[0], cols5[1], cols5[2], cols5[3], cols5[4])
        elif fast and not pyarrow_available():
            cols = _trec_columns_pandas(path)  # no pyarrow: pandas, when installed
        else:
            cols = None
        if cols is None:
            cols = _trec_columns_python(path)
    except UnicodeDecodeError:
        raise DataError(not_utf8(path)) from None
    qcodes, qids, codes, vocab, scores = cols
    if not np.all(np.isfinite(scores)):
        raise DataError(_score_problems(path))
    same_q = qcodes[1:] == qcodes[:-1]
    if np.all(qcodes[1:] >= qcodes[:-1]) and not np.any(same_q & (scores[1:] > scores[:-1])):
        order = np.arange(len(scores))  # already grouped and ranked: nothing to sort
    else:
        order = np.lexsort((np.arange(len(scores)), -scores, qcodes))
    counts = np.bincount(qcodes, minlength=len(qids))
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Run(
        qids,
        offsets,
        codes[order],
        vocab,
        scores[order],
        path=str(path),
        hash=(digest or sha256_file(path))[:16],
    )


def _check_token(value: str, where: str, field: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise DataError(
            f"{value!r} cannot be written to a TREC file (whitespace)", file=where, field=field
        )


def write_trec_run(
    path: str | Path,
    run: Run,
    *,
    tag: str = "assay",
    scores: Literal["rank", "system"] = "rank",
) -> None:
    """Write a run as TREC, one line per hit in assay's rank order.

    trec_eval, pytrec_eval and ranx rank by the score column (trec_eval breaking ties by docno),
    not by the order of lines. So by default (`scores="rank"`) the score column is
    `n_hits - rank + 1`: strictly decreasing in assay's rank, so every tool reads exactly the
    ranking assay scores, ties and unsorted system scores included. `scores="system"` writes
    the system's own scores (1/rank where a hit has none); other tools then re-rank tied or
    unsorted hits their own way.
    """
    if scores not in ("rank", "system"):
        raise ValueError(f"scores must be 'rank' or 'system', not {scores!r}")
    where = run.path or "<run>"
    _check_token(tag, where, "tag")
    with atomic_writer(path) as fh:
        for i, rid in enumerate(run.ids):
            _check_token(rid, where, "id")
            lo, hi = int(run.offsets[i]), int(run.offsets[i + 1])
            n = hi - lo
            for rank, j in enumerate(range(lo, hi), start=1):
                doc = run.vocab[int(run.codes[j])]
                _check_token(doc, where, f"{rid}: chunk_id")
                if scores == "rank":
                    text = str(n - rank + 1)
                else:
                    s = run.scores[j] if run.scores is not None else np.nan
                    text = f"{float(s) if not np.isnan(s) else 1.0 / rank:.10g}"
                fh.write(f"{rid} Q0 {doc} {rank} {text} {tag}\n")


def write_trec_qrels(path: str | Path, qrels: dict[str, dict[str, int]]) -> None:
    """Write qrels (`qid 0 docno relevance` per line)."""
    with atomic_writer(path) as fh:
        for q in qrels:
            for d, rel in qrels[q].items():
                fh.write(f"{q} 0 {d} {rel}\n")


def read_trec_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """TREC qrels: `qid iter docno relevance` per line."""
    path = Path(path)
    out: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(not_utf8(path)) from None
    for lineno, raw in enumerate(text.split("\n"), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 4:
            problems.append(
                Problem(str(path), lineno, None, f"a qrels line has 4 fields, found {len(parts)}")
            )
            continue
        try:
            rel = int(parts[3])
        except ValueError:
            problems.append(
                Problem(str(path), lineno, "relevance", f"not an integer: {parts[3]!r}")
            )
            continue
        out.setdefault(parts[0], {})[parts[2]] = rel
    if problems:
        raise DataError(problems)
    return out
