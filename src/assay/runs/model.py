"""The run model: `Hit`, `RunRow` and the columnar `Run`, plus the one parser of a hit.

A run is what a system returned for every entry. It is held columnar (ids, offsets, interned
chunk codes, scores) so that loading and scoring millions of hits stays fast; `Run.rows` gives
the row-object view. The file formats live beside this module: `jsonl` (assay's own) and `trec`.

A row need not carry `retrieved` (absent or null): a text-to-SQL system writes `{"id", "sql"}`
rows. Such a row has no hits and is listed in `Run.unretrieved` (with its line), so retrieval
scoring can tell it from a row that retrieved nothing (`[]`) and refuse it for an entry that has
retrieval gold (`Run.retrieval_problems`), as it refuses an entry with no row at all.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from assay.errors import DataError, Problem

__all__ = ["NO_DETAILS", "Hit", "Run", "RunRow", "parse_hit"]


class _NoDetails(dict[str, Any]):
    """An empty dict that refuses to be written to; copied or pickled, it stays `NO_DETAILS`."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("NO_DETAILS is shared by every row without details: it is read-only")

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self) -> str:
        return "NO_DETAILS"


NO_DETAILS: dict[str, Any] = _NoDetails()
"""The details of a row that has nothing but its id and hits: one read-only empty dict shared by
every such row (a run of bare rows holds no empty dict of its own per row)."""


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: str
    score: float | None = None


@dataclass(slots=True)
class RunRow:
    """One row of a run. ``retrieved`` is None when the row carries no retrieval (a text-to-SQL
    row); ``[]`` when the system retrieved nothing."""

    id: str
    retrieved: list[Hit] | None
    answer: str | None = None
    citations: list[str] | None = None
    as_of: str | None = None
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.retrieved is not None:
            out["retrieved"] = [
                {"chunk_id": h.chunk_id, "score": h.score}
                if h.score is not None
                else {"chunk_id": h.chunk_id}
                for h in self.retrieved
            ]
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


NOT_HITS = "must be a list of hits ([] for none), or absent when the system does no retrieval"
_KNOWN = {"id", "retrieved", "answer", "citations", "as_of", "latency_ms"}
_WALL_TIME = frozenset({"latency_ms"})  # measured, not returned: outside a run's identity


class Run:
    """A run, columnar. `codes[offsets[i]:offsets[i+1]]` are row i's hits in rank order.

    ``unretrieved`` maps the id of every row that carried no `retrieved` to its line in the file
    (its row in a Parquet file; None for rows not read from a file): such a row has no hits.
    ``hit_content`` False says the file read carries no chunk text or content hash in its hits
    (known from the bytes parsed: `assay.runs.corpus.hit_content` then reads nothing again);
    None when not known."""

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
        unretrieved: dict[str, int | None] | None = None,
        hit_content: bool | None = None,
        index: dict[str, int] | None = None,
    ):
        self.ids = ids
        self.offsets = offsets
        self.codes = codes
        self.vocab = vocab
        self.scores = scores
        self.details = details if details is not None else [NO_DETAILS] * len(ids)
        self.path = path
        self.hash = hash or ""
        self.meta = meta or {}
        self.unretrieved = unretrieved or {}
        self.hit_content = hit_content
        # id -> row; a reader that has built it (checking the ids unique) passes it
        self.index: dict[str, int] = (
            {rid: i for i, rid in enumerate(ids)} if index is None else index
        )

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
            None if rid in self.unretrieved else hits,
            answer=d.pop("answer", None),
            citations=d.pop("citations", None),
            as_of=d.pop("as_of", None),
            latency_ms=d.pop("latency_ms", None),
            extra=d,
        )

    def retrieval_problems(self, ids: Iterable[str]) -> list[Problem]:
        """One problem (file, line, `retrieved`) for each of `ids` whose row carries no
        `retrieved`: ids of entries with retrieval gold, whose rows must say what they retrieved
        (``[]`` for nothing). Rows absent from the run are the caller's to count."""
        if not self.unretrieved:
            return []
        where = self.path or "<run>"
        found = sorted(
            {rid: self.unretrieved[rid] for rid in ids if rid in self.unretrieved}.items(),
            key=lambda item: (item[1] or 0, self.index.get(item[0], 0)),
        )  # in file order
        return [
            Problem(
                where,
                line,
                "retrieved",
                f"entry {rid!r} has retrieval gold: its row needs a list of hits "
                "([] when nothing was retrieved)",
            )
            for rid, line in found
        ]

    @property
    def identity(self) -> str:
        """What the run returned, hashed without measured wall time: the ids, hits and scores,
        answers, citations, dates and traces of every row in file order, less each row's
        ``latency_ms`` (a row without `retrieved` hashes as hits null, not as ``[]``). Two runs of one system that differ only in how long the calls took (a
        re-run without the cache) have one identity; the file hash (`hash`) differs. The
        comparison ledger keys runs by this, so such a re-run is not a new comparison."""
        cached = self.__dict__.get("_identity")
        if cached is not None:
            return str(cached)
        import hashlib

        import orjson

        h = hashlib.sha256()
        sc = self.scores
        for i, rid in enumerate(self.ids):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            hits: list[str] | None = [self.vocab[int(c)] for c in self.codes[lo:hi]]
            scores = None if sc is None else [None if np.isnan(v) else float(v) for v in sc[lo:hi]]
            if rid in self.unretrieved:
                hits = scores = None
            details = {k: v for k, v in self.details[i].items() if k not in _WALL_TIME}
            h.update(
                orjson.dumps(
                    [rid, hits, scores, details],
                    option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY,
                    default=str,
                )
            )
            h.update(b"\n")
        self.__dict__["_identity"] = value = h.hexdigest()[:16]
        return value

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
        unretrieved: dict[str, int | None] = {}
        for r in rows:
            if isinstance(r, dict):
                r = _row_from_obj(r, file="<rows>", line=None)
            ids.append(r.id)
            if r.retrieved is None:
                unretrieved.setdefault(r.id, None)
            for h in r.retrieved or ():
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
            unretrieved=unretrieved,
            **kw,
        )


def _score(s: Any, file: str, line: int | None, j: int) -> float | None:
    if s is None:
        return None
    if not isinstance(s, numbers.Real) or isinstance(s, bool):
        raise DataError("must be a number", file=file, line=line, field=f"retrieved.{j}.score")
    f = float(s)
    if not math.isfinite(f):
        raise DataError(
            f"must be a finite number, not {f}", file=file, line=line, field=f"retrieved.{j}.score"
        )
    return f


def parse_hit(obj: Any, file: str, line: int | None, j: int) -> Hit:
    """One hit from a chunk id string, a {"chunk_id", "score"} dict or an object with those
    attributes; a bad one raises DataError naming `file`, `line` and `retrieved.j`.

    A score must be a finite number (NaN and infinities are refused: they have no rank)."""
    if isinstance(obj, str):
        return Hit(obj)
    if isinstance(obj, dict) and isinstance(obj.get("chunk_id"), str):
        return Hit(obj["chunk_id"], _score(obj.get("score"), file, line, j))
    cid = getattr(obj, "chunk_id", None)
    if isinstance(cid, str):
        return Hit(cid, _score(getattr(obj, "score", None), file, line, j))
    raise DataError(
        "a hit is a chunk id string or {'chunk_id', 'score'}",
        file=file,
        line=line,
        field=f"retrieved.{j}",
    )


def _row_from_obj(obj: Any, *, file: str, line: int | None) -> RunRow:
    if not isinstance(obj, dict):
        raise DataError("a run row must be a JSON object", file=file, line=line)
    rid = obj.get("id")
    if not isinstance(rid, str) or not rid:
        raise DataError("required, a non-empty string", file=file, line=line, field="id")
    ret = obj.get("retrieved")
    if ret is not None and not isinstance(ret, list):
        raise DataError(NOT_HITS, file=file, line=line, field="retrieved")
    hits = None if ret is None else [parse_hit(h, file, line, j) for j, h in enumerate(ret)]
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
