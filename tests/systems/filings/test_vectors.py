"""Whole-corpus dense search (exact, approximate, lazy) and the true hybrid built on it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from assay.systems.filings.dense import HashingEncoder, Vectors
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.system import FilingsSystem, RetrievalConfig
from assay.systems.filings.vectors import DenseSearch, corpus_vectors, vectors_path

from .conftest import CHUNKS, DOCS, write_corpus

CAR = {"chunk_id": "msft-2024-10k/3/0", "doc_id": "msft-2024-10k", "page": 3,
       "text": "Surface devices ship with a car adapter and a dock."}  # fmt: skip


@pytest.fixture
def index(tmp_path: Path) -> FilingsIndex:
    return FilingsIndex.load(write_corpus(tmp_path / "corpus", DOCS, [*CHUNKS, CAR]))


def _unit_rows(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_search_matches_a_full_sort_under_a_mask() -> None:
    m = _unit_rows(500, 16, 1)
    q = _unit_rows(1, 16, 2)[0]
    mask = np.random.default_rng(3).random(500) < 0.3
    rows, sims = DenseSearch(m).search(q, 7, mask)
    allowed = np.flatnonzero(mask)
    ref = allowed[np.argsort(-(m[allowed] @ q), kind="stable")[:7]]
    assert rows.tolist() == ref.tolist()
    np.testing.assert_allclose(sims, m[ref] @ q, rtol=1e-6)
    assert mask[rows].all()


def test_approximate_search_finds_the_exact_neighbours_and_honours_the_mask() -> None:
    m = _unit_rows(3000, 24, 4)
    q = _unit_rows(1, 24, 5)[0]
    mask = np.zeros(3000, dtype=np.bool_)
    mask[::3] = True
    ann = DenseSearch(m, exact_limit=10, ann=True)
    rows, _ = ann.search(q, 10, mask)
    assert ann.last_path == "ann"
    exact_rows, _ = DenseSearch(m).search(q, 10, mask)
    assert mask[rows].all() and len(rows) == 10
    # HNSW recall on 3,000 points is near perfect; require 9 of the 10 true neighbours
    assert len(set(rows.tolist()) & set(exact_rows.tolist())) >= 9


def test_lazy_search_embeds_only_the_allowed_rows_once() -> None:
    m = _unit_rows(50, 8, 6)
    asked: list[list[int]] = []

    def embed(rows: np.ndarray) -> Vectors:
        asked.append(rows.tolist())
        return m[rows]

    lazy = DenseSearch.lazy(50, embed)
    mask = np.zeros(50, dtype=np.bool_)
    mask[10:20] = True
    q = m[15]
    rows, sims = lazy.search(q, 3, mask)
    assert rows[0] == 15 and sims[0] == pytest.approx(1.0)
    assert asked == [list(range(10, 20))]
    lazy.search(q, 3, mask)
    assert len(asked) == 1  # already embedded
    assert rows.tolist() == DenseSearch(m).search(q, 3, mask)[0].tolist()


class SynonymEncoder:
    """A toy semantic model: synonyms share a feature, so texts match without sharing a word."""

    model_id = "synonyms-test"
    SYN: ClassVar[dict[str, str]] = {
        "automobile": "car",
        "vehicle": "car",
        "cars": "car",
        "earnings": "profit",
    }

    def __init__(self) -> None:
        self.inner = HashingEncoder(dim=4096)

    def encode(self, texts: Sequence[str]) -> Vectors:
        canon = [" ".join(self.SYN.get(w, w) for w in t.lower().split()) for t in texts]
        return self.inner.encode(canon)


def test_true_hybrid_finds_a_chunk_with_no_lexical_match(index: FilingsIndex) -> None:
    query = "automobile"  # no chunk contains the word
    bm25 = FilingsSystem(index, RetrievalConfig(ranker="bm25"))
    assert bm25.retrieve(query, k=3) == []
    pooled = FilingsSystem(index, RetrievalConfig(ranker="hybrid"), encoder=SynonymEncoder())
    assert pooled.retrieve(query, k=3) == []  # re-scoring BM25's pool finds nothing either
    true = FilingsSystem(
        index, RetrievalConfig(ranker="hybrid", dense_scope="corpus"), encoder=SynonymEncoder()
    )
    hits = true.retrieve(query, k=3)
    assert hits[0]["chunk_id"] == "msft-2024-10k/3/0"


def test_true_hybrid_applies_the_filters_to_the_dense_side(index: FilingsIndex) -> None:
    cfg = RetrievalConfig(ranker="hybrid", dense_scope="corpus", filters=True)
    system = FilingsSystem(index, cfg, encoder=SynonymEncoder())
    hits = system.retrieve("Microsoft automobile fiscal 2024", k=10)
    assert hits and {index.doc(h["chunk_id"]).doc_id for h in hits} == {"msft-2024-10k"}
    # as_of hides filings accepted later, on both sides
    early = system.retrieve("Microsoft automobile", as_of=dt.date(2024, 1, 1), k=10)
    assert early and {index.doc(h["chunk_id"]).doc_id for h in early} == {"msft-2023-10k"}


def test_fusion_is_reciprocal_rank_over_the_union(index: FilingsIndex) -> None:
    system = FilingsSystem(
        index, RetrievalConfig(ranker="hybrid", dense_scope="corpus", pool=50),
        encoder=SynonymEncoder(),
    )  # fmt: skip
    hits = system.retrieve("Microsoft cars revenue", k=20)
    lexical = FilingsSystem(index, RetrievalConfig(ranker="bm25", pool=50)).retrieve(
        "Microsoft cars revenue", k=50
    )
    dense_system = FilingsSystem(
        index, RetrievalConfig(ranker="dense", dense_scope="corpus", pool=50),
        encoder=SynonymEncoder(),
    )  # fmt: skip
    dense = dense_system.retrieve("Microsoft cars revenue", k=50)
    expected: dict[str, float] = {}
    for ranked in (lexical, dense):
        for r, h in enumerate(ranked):
            expected[h["chunk_id"]] = expected.get(h["chunk_id"], 0.0) + 1 / (60 + r + 1)
    for h in hits:
        assert h["score"] == pytest.approx(expected[h["chunk_id"]], abs=1e-6)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_corpus_vectors_are_built_once_and_reloaded(index: FilingsIndex, tmp_path: Path) -> None:
    enc = HashingEncoder(dim=32)
    seen: list[tuple[int, int]] = []
    m = corpus_vectors(
        index, enc, cache_dir=tmp_path, batch=4, progress=lambda d, n, s: seen.append((d, n))
    )
    assert m.shape == (len(index.chunks), 32)
    assert seen[-1] == (len(index.chunks), len(index.chunks))
    path = vectors_path(tmp_path, index.version, enc)
    assert path.exists()
    np.testing.assert_array_equal(np.load(path), m)
    seen.clear()
    np.testing.assert_array_equal(corpus_vectors(index, enc, cache_dir=tmp_path), m)
    assert seen == []
    # another encoder identity, another file
    assert vectors_path(tmp_path, index.version, HashingEncoder(dim=16)) != path
