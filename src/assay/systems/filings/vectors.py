"""Dense vectors of every chunk of a corpus, and nearest-neighbour search over them.

`corpus_vectors(index, encoder, cache_dir=...)` embeds every chunk once (through the encoder's
content-hash cache, so an interrupted build resumes where it stopped) and keeps the matrix as
one ``.npy`` file under ``<cache_dir>/vectors/`` named by the corpus version and the encoder's
identity; later loads read that file.

`DenseSearch` answers "the n chunks most similar to this query among those the mask allows":

- exact: the dot product of the (L2-normalised) query with the allowed rows, then a partial
  sort. It costs about 2 ms of CPU per 10,000 rows of 384 dimensions (one BLAS thread; see
  `bench/bench_dense_search.py`), so it stays under the pipeline's 20 ms query budget up to
  about 100,000 rows and is used whenever the allowed rows number at most `exact_limit`;
- approximate: a usearch HNSW index (cosine, f32) over every row, built on first use; it is
  asked for more neighbours than needed (`oversample`, doubled until enough pass the mask or
  every row was visited) and the mask is applied to what it returns.

Filtered questions (one company, one or two filings: a few thousand rows) always take the exact
path; the index serves unfiltered questions over corpora too large to scan.

`DenseSearch.lazy(n, embed_rows)` starts with no vectors and embeds the rows a search may
return the first time they are needed (through the encoder's cache): a filtered question then
costs the embedding of its filings once, not of the whole corpus. The approximate index is only
built over a complete matrix.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from assay._io import sha256_bytes
from assay._version import __version__
from assay.cache import default_cache_dir
from assay.errors import MissingExtraError, UsageError
from assay.executors import Executor, imap, parse_executor
from assay.report import ReportMixin, Tabular
from assay.systems.filings.dense import (
    DenseEncoder,
    Encoder,
    HashingEncoder,
    Vectors,
    stack_vectors,
)
from assay.systems.filings.index import FilingsIndex

if TYPE_CHECKING:
    from assay.systems.filings.index import FilingsIndex

__all__ = [
    "ENCODERS",
    "CorpusEmbedding",
    "DenseSearch",
    "corpus_vectors",
    "embed_corpus",
    "encoder_identity",
    "make_encoder",
    "vectors_path",
]

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

#: Above this many allowed rows the approximate index is used (when one is available): exact
#: search costs about 2 ms per 10,000 rows, so this keeps it under 20 ms.
EXACT_LIMIT = 100_000


#: Encoders by the name the command line uses (`--encoder`).
ENCODERS: tuple[str, ...] = ("minilm", "onnx-int8", "onnx-fp32", "hashing")


def make_encoder(name: str, *, cache_dir: str | Path | None = None) -> Encoder:
    """`minilm` (all-MiniLM-L6-v2 on sentence-transformers, the dense extra), `onnx-int8` /
    `onnx-fp32` (the same model on onnxruntime, the onnx extra) or `hashing` (dependency-free
    bag of words, for smoke tests), caching its vectors under `cache_dir`."""
    if name == "minilm":
        return DenseEncoder(cache_dir=cache_dir)
    if name in ("onnx-int8", "onnx-fp32"):
        from assay.systems.filings.onnx_encoder import OnnxEncoder

        return OnnxEncoder(cache_dir=cache_dir, variant=name.removeprefix("onnx-"))
    if name == "hashing":
        return HashingEncoder()
    raise UsageError(f"unknown encoder {name!r}; choose one of {', '.join(ENCODERS)}")


def encoder_identity(encoder: Encoder) -> str:
    """What a vector depends on besides the text: model id, sequence length, character cap."""
    parts = [
        str(getattr(encoder, "model_id", type(encoder).__name__)),
        str(getattr(encoder, "max_seq_length", "")),
        str(getattr(encoder, "max_chars", "")),
        str(getattr(encoder, "dim", "")),
    ]
    return "/".join(parts)


def vectors_path(cache_dir: str | Path, corpus_version: str, encoder: Encoder) -> Path:
    ident = sha256_bytes(encoder_identity(encoder).encode())[:12]
    return Path(cache_dir) / "vectors" / f"{str(corpus_version)[:16]}-{ident}.npy"


def corpus_vectors(
    index: FilingsIndex,
    encoder: Encoder,
    *,
    cache_dir: str | Path | None = None,
    batch: int = 1024,
    progress: Callable[[int, int, float], None] | None = None,
    executor: Executor | str = "local",
) -> Vectors:
    """One L2-normalised row per chunk of `index`, in index order (built once, then loaded).

    `progress(done, total, seconds)` is called after every batch while embedding. With
    `executor="ray"` (or `ray:ADDRESS`) the batches are embedded by Ray workers, one encoder per
    worker (`encoder.for_worker()`: the settings, not the model or the cache), while this
    process keeps the embedding cache: it looks each batch up, ships only the texts the cache
    lacks (each distinct text once, in the lists the local build would embed), and writes the
    vectors that come back. The matrix is the one the local build gives.
    """
    path = None if cache_dir is None else vectors_path(cache_dir, index.version, encoder)
    n = len(index.chunks)
    if path is not None and path.exists():
        loaded = np.load(path, mmap_mode=None)
        if loaded.shape[0] == n:
            out: Vectors = np.ascontiguousarray(loaded, dtype=np.float32)
            return out
    start = time.perf_counter()
    batches = [[c.text for c in index.chunks[lo : lo + batch]] for lo in range(0, n, batch)]
    parts: list[Vectors] = []
    if parse_executor(executor).is_local:
        for texts in batches:
            parts.append(np.asarray(encoder.encode(texts), dtype=np.float32))
            if progress is not None:
                progress(min(len(parts) * batch, n), n, time.perf_counter() - start)
    else:
        parts = _embed_elsewhere(parse_executor(executor), encoder, batches, start, n, progress)
    matrix: Vectors = (
        np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
        if parts
        else np.zeros((0, 0), dtype=np.float32)
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npy")
        try:
            np.save(tmp, matrix)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return matrix


def _worker_encoder(encoder: Encoder) -> Encoder:
    """Per-worker setup: the shipped encoder itself (its model loads on the first batch)."""
    return encoder


def _embed_batch(encoder: Encoder, texts: list[str]) -> Vectors:
    """One batch on a worker: through the model only (the driver owns the cache)."""
    raw = getattr(encoder, "embed_uncached", None)
    return np.asarray(raw(texts) if callable(raw) else encoder.encode(texts), dtype=np.float32)


def _embed_elsewhere(
    executor: Executor,
    encoder: Encoder,
    batches: list[list[str]],
    start: float,
    n: int,
    progress: Callable[[int, int, float], None] | None,
) -> list[Vectors]:
    """`corpus_vectors` on an executor: the driver plans each batch against the cache, the
    workers embed what it lacks, the driver stores what returns and stacks the rows."""
    if not isinstance(encoder, DenseEncoder):  # no cache: each batch is one job
        out = [np.zeros((0, 0), dtype=np.float32)] * len(batches)
        done = 0
        for b, vecs in imap(
            executor, _embed_batch, batches, setup=partial(_worker_encoder, encoder)
        ):
            out[b] = vecs
            done += len(batches[b])
            if progress is not None:
                progress(done, n, time.perf_counter() - start)
        return out
    plans: list[tuple[list[str], dict[str, bytes]]] = []
    jobs: list[tuple[int, list[str], list[str]]] = []  # (batch, keys, texts) to embed
    shipped: set[str] = set()
    for b, texts in enumerate(batches):
        keys, found, todo = encoder.plan(texts)
        # a text shipped with an earlier batch is in the cache by the time the local build
        # reaches this one: it is taken from there, as the local build does
        fresh = [k for k in todo if k not in shipped]
        shipped.update(fresh)
        plans.append((keys, found))
        if fresh:
            jobs.append((b, fresh, [todo[k] for k in fresh]))
    vectors: dict[str, bytes] = {}
    done = n - sum(len(batches[b]) for b, _, _ in jobs)  # batches the cache holds entirely
    for j, vecs in imap(
        executor,
        _embed_batch,
        [texts for _, _, texts in jobs],
        setup=partial(_worker_encoder, encoder.for_worker()),
    ):
        b, keys, _ = jobs[j]
        vectors.update(encoder.store(keys, vecs))
        done += len(batches[b])
        if progress is not None:
            progress(done, n, time.perf_counter() - start)
    parts: list[Vectors] = []
    for keys, found in plans:
        vectors.update(found)
        parts.append(stack_vectors(keys, vectors))
    return parts


@dataclass
class CorpusEmbedding(ReportMixin):
    """What `embed_corpus` did: the vectors file of one corpus version and one encoder."""

    corpus: str  # the corpus version (first 16 hex digits of its hash)
    encoder: str  # the encoder's identity (`encoder_identity`)
    chunks: int
    dim: int
    embedded: int  # distinct texts run through the model by this call (the rest were cached)
    reused: bool  # the vectors file already existed: nothing was embedded
    path: str | None
    executor: str
    seconds: float
    code_version: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "encoder": self.encoder,
            "chunks": self.chunks,
            "dim": self.dim,
            "embedded": self.embedded,
            "reused_vectors_file": self.reused,
            "path": self.path,
            "executor": self.executor,
            "seconds": self.seconds,
            "assay_version": self.code_version,
        }

    def tabular(self) -> Tabular:
        d = self.to_dict()
        rows = [[k, f"{v:.1f}" if isinstance(v, float) else str(v)] for k, v in d.items()]
        return Tabular(title="corpus embedded", header=["field", "value"], rows=rows)


def embed_corpus(
    corpus_dir: str | Path,
    encoder: Encoder | str = "minilm",
    *,
    cache_dir: str | Path | None = None,
    executor: Executor | str = "local",
    batch: int = 1024,
    progress: Callable[[int, int, float], None] | None = None,
) -> CorpusEmbedding:
    """Embed every chunk of the corpus in `corpus_dir` into `cache_dir` (default
    `$ASSAY_CACHE_DIR` or `.assay-cache/`): the content-hash embedding cache and the whole-corpus
    vectors file that `FilingsSystem` (dense search over the corpus) then loads instead of
    embedding at query time. `executor` as in `corpus_vectors` (`local`, `ray`, `ray:ADDRESS`).
    """
    if batch < 1:
        raise UsageError(f"batch must be at least 1, not {batch}")
    ex = parse_executor(executor)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    index = FilingsIndex.load(corpus_dir)  # bad chunks: nothing written, not even a cache
    enc = make_encoder(encoder, cache_dir=cache) if isinstance(encoder, str) else encoder
    path = vectors_path(cache, index.version, enc)
    reused = path.exists()
    before = int(getattr(enc, "encoded", 0))
    start = time.perf_counter()
    matrix = corpus_vectors(
        index, enc, cache_dir=cache, batch=batch, progress=progress, executor=ex
    )
    embedded = int(getattr(enc, "encoded", 0)) - before
    if not isinstance(enc, DenseEncoder) and not reused:
        embedded = len(index.chunks)  # no cache: every chunk went through the encoder
    return CorpusEmbedding(
        corpus=str(index.version),
        encoder=encoder_identity(enc),
        chunks=len(index.chunks),
        dim=int(matrix.shape[1]) if matrix.ndim == 2 else 0,
        embedded=embedded,
        reused=reused and int(matrix.shape[0]) == len(index.chunks),
        path=str(path),
        executor=str(ex if ex.workers is None else f"{ex} x{ex.workers}"),
        seconds=time.perf_counter() - start,
        code_version=__version__,
    )


class DenseSearch:
    """Top-n cosine search over a row-normalised matrix, under a boolean mask."""

    def __init__(
        self,
        matrix: Vectors,
        *,
        exact_limit: int = EXACT_LIMIT,
        oversample: int = 4,
        ann: bool | None = None,
    ) -> None:
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.present: BoolArray = np.ones(self.matrix.shape[0], dtype=np.bool_)
        self._embed_rows: Callable[[IntArray], Vectors] | None = None
        self.exact_limit = exact_limit
        self.oversample = oversample
        # None: use the index when the corpus is larger than the exact limit
        self.ann = ann if ann is not None else self.matrix.shape[0] > exact_limit
        self._index: Any = None
        self.last_path = ""  # "exact" | "ann" (for logs and tests)

    @classmethod
    def lazy(cls, n: int, embed_rows: Callable[[IntArray], Vectors], **kwargs: Any) -> DenseSearch:
        """A search over `n` rows whose vectors `embed_rows(rows)` gives on first need."""
        out = cls(np.zeros((n, 0), dtype=np.float32), ann=False, **kwargs)
        out.present = np.zeros(n, dtype=np.bool_)
        out._embed_rows = embed_rows
        return out

    def _ensure(self, rows: IntArray) -> None:
        missing = rows[~self.present[rows]]
        if missing.size == 0:
            return
        assert self._embed_rows is not None
        vecs = np.asarray(self._embed_rows(missing), dtype=np.float32)
        if self.matrix.shape[1] != vecs.shape[1]:
            self.matrix = np.zeros((len(self.present), vecs.shape[1]), dtype=np.float32)
        self.matrix[missing] = vecs
        self.present[missing] = True

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def index(self) -> Any:
        if self._index is None:
            try:
                from usearch.index import Index
            except ImportError as exc:
                raise MissingExtraError("ann", "Approximate dense search", "usearch") from exc
            idx = Index(ndim=self.matrix.shape[1], metric="cos", dtype="f32")
            idx.add(np.arange(len(self), dtype=np.int64), self.matrix)
            self._index = idx
        return self._index

    def search(
        self, query: FloatArray, n: int, mask: BoolArray | None = None
    ) -> tuple[IntArray, FloatArray]:
        """(row indices, cosine similarities) of the best `n` allowed rows, best first; ties
        break by row position."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        allowed = len(self) if mask is None else int(mask.sum())
        if allowed == 0 or n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if not self.ann or allowed <= self.exact_limit or not self.present.all():
            self.last_path = "exact"
            return self._exact(q, n, mask)
        self.last_path = "ann"
        return self._approximate(q, n, mask)

    def _exact(self, q: FloatArray, n: int, mask: BoolArray | None) -> tuple[IntArray, FloatArray]:
        rows = np.arange(len(self), dtype=np.int64) if mask is None else np.flatnonzero(mask)
        self._ensure(rows)
        sims = (self.matrix if mask is None else self.matrix[rows]) @ q
        part = np.argpartition(-sims, n - 1)[:n] if n < sims.size else np.arange(sims.size)
        order = part[np.lexsort((rows[part], -sims[part]))]
        return rows[order].astype(np.int64), sims[order].astype(np.float32)

    def _approximate(
        self, q: FloatArray, n: int, mask: BoolArray | None
    ) -> tuple[IntArray, FloatArray]:
        want = max(n * self.oversample, n)
        while True:
            found = self.index.search(q, min(want, len(self)))
            keys = np.asarray(found.keys, dtype=np.int64)
            if mask is not None:
                keys = keys[mask[keys]]
            if keys.size >= n or want >= len(self):
                break
            want *= 2
        sims = self.matrix[keys] @ q
        order = np.lexsort((keys, -sims))[:n]
        return keys[order], sims[order].astype(np.float32)
