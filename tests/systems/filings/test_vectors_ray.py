"""`corpus_vectors` / `embed_corpus` on a local Ray started here (2 CPUs): the matrix, the
vectors file and the embedding cache are those of the local build; the driver keeps the cache
and ships only what it lacks; each worker loads its model once.

Skipped, with the reason, only where the `ray` extra is not installed."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.rayutil import local_ray as start_local_ray

from assay.systems.filings import embed_corpus
from assay.systems.filings.dense import HashingEncoder
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.vectors import corpus_vectors, vectors_path

from .conftest import DOCS, write_corpus
from .fake_encoders import FakeModelEncoder

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'assay[ray]')")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs for this module; its workers import assay and the fake encoder."""
    with start_local_ray(ray):
        yield


def _chunks() -> list[dict[str, Any]]:
    """23 chunks over the handmade filings; some texts repeat, within a batch and across
    batches, and two differ only after the encoder's character cap."""
    words = [
        "revenue",
        "income",
        "cloud",
        "segment",
        "margin",
        "cash",
        "debt",
        "lease",
        "tax",
        "dividend",
    ]
    out: list[dict[str, Any]] = []
    for i in range(20):
        doc = DOCS[i % 3]["doc_id"]
        text = " ".join(words[j % len(words)] for j in range(i, i + 3 + i % 4))
        if i in (3, 7, 15):  # the text of chunk 2 again: in its batch and in later ones
            text = out[2]["text"]
        out.append({"chunk_id": f"{doc}/{i + 1}/0", "doc_id": doc, "page": i + 1, "text": text})
    long = "net sales " * 20
    out += [
        {"chunk_id": "acme-2023-10k/90/0", "doc_id": "acme-2023-10k", "page": 90, "text": long + "A"},
        {"chunk_id": "acme-2023-10k/91/0", "doc_id": "acme-2023-10k", "page": 91, "text": long + "B"},
        {"chunk_id": "acme-2023-10k/92/0", "doc_id": "acme-2023-10k", "page": 92, "text": "cash"},
    ]  # fmt: skip
    return out


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus", DOCS, _chunks())


def _cache_rows(cache_dir: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as con:
        return sorted(con.execute("SELECT key, vec FROM emb"))


def _warm(cache_dir: Path, loads: Path, texts: list[str]) -> None:
    """Put a few texts in the cache beforehand (a build interrupted, or another corpus)."""
    FakeModelEncoder(cache_dir=cache_dir, loads_file=loads, max_chars=200).encode(texts)


def test_ray_builds_the_local_matrix_cache_and_file(
    local_ray: None, corpus: Path, tmp_path: Path
) -> None:
    index = FilingsIndex.load(corpus)
    warm = [index.chunks[4].text, index.chunks[11].text]
    out: dict[str, tuple[np.ndarray, FakeModelEncoder, Path]] = {}
    for name in ("local", "ray"):
        cache = tmp_path / f"cache-{name}"
        loads = tmp_path / f"loads-{name}.txt"
        _warm(cache, loads, warm)
        loads.unlink()
        enc = FakeModelEncoder(cache_dir=cache, loads_file=loads, max_chars=200)
        m = corpus_vectors(index, enc, cache_dir=cache, batch=4, executor=name)
        out[name] = (m, enc, cache)
    (m_local, e_local, c_local), (m_ray, e_ray, c_ray) = out["local"], out["ray"]
    np.testing.assert_array_equal(m_ray, m_local)
    assert m_local.shape == (len(index.chunks), 32) and m_local.dtype == np.float32
    # the local build's rows are its encoder's vectors, repeated texts alike
    np.testing.assert_array_equal(m_local[7], m_local[2])
    np.testing.assert_array_equal(m_local[21], m_local[20])  # equal up to max_chars
    ref = HashingEncoder(dim=32).encode([c.text[:200] for c in index.chunks])
    np.testing.assert_array_equal(m_local, ref)
    # the same vectors file and the same cache, written by the driver
    f_local = vectors_path(c_local, index.version, e_local)
    f_ray = vectors_path(c_ray, index.version, e_ray)
    assert f_local.name == f_ray.name and f_local.read_bytes() == f_ray.read_bytes()
    assert _cache_rows(c_ray) == _cache_rows(c_local)
    # only what the cache lacked was embedded, each distinct text once, on either side
    distinct = len({c.text[:200] for c in index.chunks})
    assert e_local.encoded == e_ray.encoded == distinct - len(warm)
    assert sum(len(c) for c in e_local.calls) == distinct - len(warm)
    assert e_ray.calls == []  # the driver loaded no model: the workers did, once each
    pids = (tmp_path / "loads-ray.txt").read_text().split()
    assert 1 <= len(pids) <= 2 and len(set(pids)) == len(pids)
    assert str(os.getpid()) not in pids


def test_a_cached_corpus_starts_no_worker(local_ray: None, corpus: Path, tmp_path: Path) -> None:
    index = FilingsIndex.load(corpus)
    cache = tmp_path / "cache"
    loads = tmp_path / "loads.txt"
    _warm(cache, loads, [c.text for c in index.chunks])
    loads.unlink()
    enc = FakeModelEncoder(cache_dir=cache, loads_file=loads, max_chars=200)
    m = corpus_vectors(index, enc, cache_dir=cache, batch=5, executor="ray")
    assert enc.encoded == 0 and not loads.exists()
    np.testing.assert_array_equal(
        m, HashingEncoder(dim=32).encode([c.text[:200] for c in index.chunks])
    )


def test_embed_corpus_on_ray_with_an_uncached_encoder(
    local_ray: None, corpus: Path, tmp_path: Path
) -> None:
    seen: list[tuple[int, int]] = []
    report = embed_corpus(
        corpus,
        HashingEncoder(dim=16),
        cache_dir=tmp_path / "c",
        executor="ray",
        batch=6,
        progress=lambda done, total, _s: seen.append((done, total)),
    )
    index = FilingsIndex.load(corpus)
    assert report.chunks == len(index.chunks) == 23 and report.dim == 16
    assert report.embedded == 23 and not report.reused and report.executor == "ray"
    done = [d for d, _ in seen]  # as batches come back, in any order
    assert done == sorted(done) and done[-1] == 23 and {t for _, t in seen} == {23}
    assert sorted(np.diff([0, *done]).tolist()) == [5, 6, 6, 6]
    m = np.load(report.path or "")
    np.testing.assert_array_equal(m, HashingEncoder(dim=16).encode([c.text for c in index.chunks]))
    again = embed_corpus(corpus, HashingEncoder(dim=16), cache_dir=tmp_path / "c", executor="ray")
    assert again.reused and again.embedded == 0
    assert again.to_dict()["path"] == report.path
