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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from assay._io import sha256_bytes
from assay.errors import MissingExtraError
from assay.systems.filings.dense import Encoder, Vectors

if TYPE_CHECKING:
    from assay.systems.filings.index import FilingsIndex

__all__ = ["DenseSearch", "corpus_vectors", "encoder_identity", "vectors_path"]

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

#: Above this many allowed rows the approximate index is used (when one is available): exact
#: search costs about 2 ms per 10,000 rows, so this keeps it under 20 ms.
EXACT_LIMIT = 100_000


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
) -> Vectors:
    """One L2-normalised row per chunk of `index`, in index order (built once, then loaded).

    `progress(done, total, seconds)` is called after every batch while embedding.
    """
    path = None if cache_dir is None else vectors_path(cache_dir, index.version, encoder)
    n = len(index.chunks)
    if path is not None and path.exists():
        loaded = np.load(path, mmap_mode=None)
        if loaded.shape[0] == n:
            out: Vectors = np.ascontiguousarray(loaded, dtype=np.float32)
            return out
    start = time.perf_counter()
    parts: list[Vectors] = []
    for lo in range(0, n, batch):
        texts = [c.text for c in index.chunks[lo : lo + batch]]
        parts.append(np.asarray(encoder.encode(texts), dtype=np.float32))
        if progress is not None:
            progress(min(lo + batch, n), n, time.perf_counter() - start)
    matrix: Vectors = np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npy")
        try:
            np.save(tmp, matrix)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return matrix


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
