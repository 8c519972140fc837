"""Run files: what a system returned for every entry.

JSONL, one line per entry::

    {"id": "fd-0183", "retrieved": [{"chunk_id": "...", "score": 12.7}, ...], "answer": "...",
     "citations": ["..."], "as_of": "2024-03-31", "latency_ms": 41.0}

`retrieved` may also be a plain list of chunk ids in rank order. Only `id` and `retrieved` are
required. Rank order: the order of `retrieved` in the file is the ranking (a system's own order
is trusted; scores are kept but never re-sorted). TREC run files are sorted by score descending,
ties broken by the order of lines in the file (stable sort); see `read_trec_run`.

Runs are held columnar (ids, offsets, interned chunk codes, scores) so that loading and scoring
millions of hits stays fast; `Run.rows` gives the row-object view.

A sidecar `<run>.meta.json` records the system identity, dataset version, k and config.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import numbers
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assay._io import atomic_writer, iter_jsonl_lenient, sha256_file, write_text_atomic
from assay.errors import DataError, Problem

__all__ = [
    "Hit",
    "Run",
    "RunRow",
    "load_run",
    "parse_hit",
    "read_trec_qrels",
    "read_trec_run",
    "run_meta_path",
    "write_run",
    "write_trec_qrels",
    "write_trec_run",
]


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: str
    score: float | None = None


@dataclass(slots=True)
class RunRow:
    id: str
    retrieved: list[Hit]
    answer: str | None = None
    citations: list[str] | None = None
    as_of: str | None = None
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "retrieved": [
                {"chunk_id": h.chunk_id, "score": h.score}
                if h.score is not None
                else {"chunk_id": h.chunk_id}
                for h in self.retrieved
            ],
        }
        if self.answer is not None:
            out["answer"] = self.answer
        if self.citations is not None:
            out["citations"] = self.citations
        if self.as_of is not None:
            out["as_of"] = self.as_of
        if self.latency_ms is not None:
            out["latency_ms"] = self.latency_ms
        out.update(self.extra)
        return out


_KNOWN = {"id", "retrieved", "answer", "citations", "as_of", "latency_ms"}


class Run:
    """A run, columnar. `codes[offsets[i]:offsets[i+1]]` are row i's hits in rank order."""

    def __init__(
        self,
        ids: list[str],
        offsets: npt.NDArray[np.int64],
        codes: npt.NDArray[np.int64],
        vocab: list[str],
        scores: npt.NDArray[np.float64] | None = None,
        details: list[dict[str, Any]] | None = None,
        *,
        path: str | None = None,
        hash: str | None = None,
        meta: dict[str, Any] | None = None,
    ):
        self.ids = ids
        self.offsets = offsets
        self.codes = codes
        self.vocab = vocab
        self.scores = scores
        self.details = details if details is not None else [{} for _ in ids]
        self.path = path
        self.hash = hash or ""
        self.meta = meta or {}
        self.index: dict[str, int] = {rid: i for i, rid in enumerate(ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, rid: object) -> bool:
        return rid in self.index

    def hits(self, rid: str) -> list[str]:
        i = self.index[rid]
        return [self.vocab[c] for c in self.codes[self.offsets[i] : self.offsets[i + 1]]]

    def row(self, rid: str) -> RunRow:
        i = self.index[rid]
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        sc = self.scores
        hits = [
            Hit(self.vocab[int(c)], None if sc is None or np.isnan(sc[j]) else float(sc[j]))
            for j, c in zip(range(lo, hi), self.codes[lo:hi], strict=True)
        ]
        d = dict(self.details[i])
        return RunRow(
            rid,
            hits,
            answer=d.pop("answer", None),
            citations=d.pop("citations", None),
            as_of=d.pop("as_of", None),
            latency_ms=d.pop("latency_ms", None),
            extra=d,
        )

    @property
    def rows(self) -> Iterator[RunRow]:
        return (self.row(r) for r in self.ids)

    @property
    def by_id(self) -> dict[str, RunRow]:
        return {r: self.row(r) for r in self.ids}

    @classmethod
    def from_rows(cls, rows: Iterable[RunRow | dict[str, Any]], **kw: Any) -> Run:
        ids: list[str] = []
        offsets = [0]
        vocab: dict[str, int] = {}
        codes: list[int] = []
        scores: list[float] = []
        details: list[dict[str, Any]] = []
        for r in rows:
            if isinstance(r, dict):
                r = _row_from_obj(r, file="<rows>", line=None)
            ids.append(r.id)
            for h in r.retrieved:
                codes.append(vocab.setdefault(h.chunk_id, len(vocab)))
                scores.append(np.nan if h.score is None else h.score)
            offsets.append(len(codes))
            d = dict(r.extra)
            for k in ("answer", "citations", "as_of", "latency_ms"):
                v = getattr(r, k)
                if v is not None:
                    d[k] = v
            details.append(d)
        return cls(
            ids,
            np.asarray(offsets, dtype=np.int64),
            np.asarray(codes, dtype=np.int64),
            list(vocab),
            np.asarray(scores, dtype=np.float64),
            details,
            **kw,
        )


def parse_hit(obj: Any, file: str, line: int | None, j: int) -> Hit:
    """One hit from a chunk id string, a {"chunk_id", "score"} dict or an object with those
    attributes; a bad one raises DataError naming `file`, `line` and `retrieved.j`."""
    if isinstance(obj, str):
        return Hit(obj)
    if isinstance(obj, dict) and isinstance(obj.get("chunk_id"), str):
        s = obj.get("score")
        if s is not None and (not isinstance(s, numbers.Real) or isinstance(s, bool)):
            raise DataError(Problem(file, line, f"retrieved.{j}.score", "must be a number"))
        return Hit(obj["chunk_id"], None if s is None else float(s))
    cid = getattr(obj, "chunk_id", None)
    if isinstance(cid, str):
        s = getattr(obj, "score", None)
        return Hit(cid, None if s is None else float(s))
    raise DataError(
        Problem(file, line, f"retrieved.{j}", "a hit is a chunk id string or {'chunk_id', 'score'}")
    )


def _row_from_obj(obj: Any, *, file: str, line: int | None) -> RunRow:
    if not isinstance(obj, dict):
        raise DataError(Problem(file, line, None, "a run row must be a JSON object"))
    rid = obj.get("id")
    if not isinstance(rid, str) or not rid:
        raise DataError(Problem(file, line, "id", "required, a non-empty string"))
    ret = obj.get("retrieved")
    if not isinstance(ret, list):
        raise DataError(Problem(file, line, "retrieved", "required, a list of hits"))
    hits = [parse_hit(h, file, line, j) for j, h in enumerate(ret)]
    extra = {k: v for k, v in obj.items() if k not in _KNOWN}
    lat = obj.get("latency_ms")
    return RunRow(
        rid,
        hits,
        answer=obj.get("answer"),
        citations=obj.get("citations"),
        as_of=obj.get("as_of"),
        latency_ms=None if lat is None else float(lat),
        extra=extra,
    )


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


def run_meta_path(path: str | Path) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".meta.json")


def load_run(path: str | Path, *, format: str = "auto") -> Run:
    """Load a JSONL run (or a TREC run when `format="trec"` or the file looks like one).

    Every bad line is reported (file:line: field: message). Duplicate ids are an error.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(Problem(str(path), None, None, "file not found"))
    if format == "auto":
        with open(path, encoding="utf-8") as fh:
            first = fh.readline().lstrip()
        format = "jsonl" if first.startswith("{") or not first else "trec"
    if format == "trec":
        return read_trec_run(path)
    problems: list[Problem] = []
    ids: list[str] = []
    offsets = [0]
    all_cids: list[str] = []
    scores: list[float | None] = []
    details: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    nan = float("nan")
    hasher = hashlib.sha256()
    for lineno, obj in iter_jsonl_lenient(path, problems, hasher=hasher):
        rid = obj.get("id") if isinstance(obj, dict) else None
        ret = obj.get("retrieved") if isinstance(obj, dict) else None
        # fast path: well-formed rows
        if isinstance(rid, str) and rid and isinstance(ret, list):
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
            fast = _fast_hits(ret)
            if fast is not None:
                all_cids.extend(fast[0])
                scores.extend(fast[1])
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
    meta: dict[str, Any] = {}
    mp = run_meta_path(path)
    if mp.exists():
        try:
            meta = json.loads(mp.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            meta = {}
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
    )


def write_run(
    path: str | Path, rows: Iterable[RunRow | dict[str, Any]], meta: dict[str, Any] | None = None
) -> str:
    """Write a JSONL run atomically (plus its `.meta.json` sidecar). Returns the run hash."""
    path = Path(path)
    with atomic_writer(path) as fh:
        for r in rows:
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


# ---------------------------------------------------------------- TREC interop


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
            usecols=[0, 2, 4],
            dtype={"q": str, "d": str, "s": np.float64},
            engine="c",
            skipinitialspace=True,
            keep_default_na=False,
        )
    except (ValueError, pd.errors.ParserError):
        return None  # irregular whitespace or a bad line: the exact reader reports where
    qc, qu = pd.factorize(df["q"])
    dc, du = pd.factorize(df["d"])
    return (
        qc.astype(np.int64),
        list(qu),
        dc.astype(np.int64),
        list(du),
        df["s"].to_numpy(np.float64),
    )


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
        bad = [
            Problem(str(path), i, "score", f"not a number: {tok!r}")
            for i, tok in enumerate(tokens[4::6], start=1)
            if not _is_float(tok)
        ]
        raise DataError(bad) from None
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
    can differ from theirs; without ties they agree exactly.

    Columnar and vectorised. When pandas is installed its C parser reads the columns (about 5x
    faster); otherwise, or when a line is malformed, the pure-Python reader does, and reports
    every bad line by number. Both give identical runs.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(Problem(str(path), None, None, "file not found"))
    cols = _trec_columns_pandas(path) if fast else None
    if cols is None:
        cols = _trec_columns_python(path)
    qcodes, qids, codes, vocab, scores = cols
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
        hash=sha256_file(path)[:16],
    )


def _is_float(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def write_trec_run(path: str | Path, run: Run, *, tag: str = "assay") -> None:
    """Write a run as TREC (score = the file's score, or 1/rank when the run has none)."""
    with atomic_writer(path) as fh:
        for i, rid in enumerate(run.ids):
            lo, hi = int(run.offsets[i]), int(run.offsets[i + 1])
            for rank, j in enumerate(range(lo, hi), start=1):
                s = run.scores[j] if run.scores is not None else np.nan
                score = float(s) if not np.isnan(s) else 1.0 / rank
                fh.write(f"{rid} Q0 {run.vocab[int(run.codes[j])]} {rank} {score:.10g} {tag}\n")


def write_trec_qrels(path: str | Path, qrels: dict[str, dict[str, int]]) -> None:
    with atomic_writer(path) as fh:
        for q in qrels:
            for d, rel in qrels[q].items():
                fh.write(f"{q} 0 {d} {rel}\n")


def read_trec_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """TREC qrels: `qid iter docno relevance` per line."""
    path = Path(path)
    out: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            parts = raw.split()
            if not parts:
                continue
            if len(parts) != 4:
                problems.append(
                    Problem(
                        str(path), lineno, None, f"a qrels line has 4 fields, found {len(parts)}"
                    )
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
