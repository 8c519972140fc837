"""A plain BM25 baseline over a chunk table (bm25s + PyStemmer), honouring `as_of`.

`as_of` filtering uses each chunk's `accepted_at` (or `version_date`) field when the chunk
table has one: chunks of documents accepted after `as_of` are invisible. Chunks without a date
are always visible. Access labels (`assay.corpus.access`) filter the same way: a chunk the
entry's principal may not see is never returned. Chunks and queries are read through
`assay._text.fold_text` (NFKC, ASCII quotes and dashes, case folded) before bm25s tokenises
them, so a full-width or ligature spelling finds what the plain one finds. Ties in score are broken by chunk order in the table (stable).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay._text import fold_text
from assay.corpus import ChunkTable, PrincipalLike, allows, load_chunks
from assay.systems.identity import source_hash

__all__ = ["BM25System"]


class BM25System:
    def __init__(self, chunks: ChunkTable, *, stemmer: str = "english"):
        import bm25s
        import Stemmer

        self.chunks = chunks.require_chunks("index")
        self._ids = [c.chunk_id for c in chunks]
        self._stemmer = Stemmer.Stemmer(stemmer)
        corpus_tokens = bm25s.tokenize(
            [fold_text(c.text) for c in chunks],
            stopwords="en",
            stemmer=self._stemmer,
            show_progress=False,
        )
        self._retriever = bm25s.BM25()
        self._retriever.index(corpus_tokens, show_progress=False)
        dates = [c.accepted_at for c in chunks]
        self._dates = np.array([d.toordinal() if d else -1 for d in dates], dtype=np.int64)
        labels = [c.access for c in chunks]
        self._labelled = [(i, a) for i, a in enumerate(labels) if a is not None and a.restricts]
        self.corpus_hash = chunks.version
        self.chunks_path = chunks.path  # where its chunk table is: recorded in the run
        self.identity = {
            "kind": "bm25",
            "index_version": chunks.version,
            "n_chunks": len(chunks),
            "stemmer": stemmer,
            "code": source_hash(__name__),
        }

    @classmethod
    def from_path(cls, path: str | Path) -> BM25System:
        return cls(load_chunks(path))

    def retrieve(
        self, query: str, *, as_of: dt.date | None, k: int, principal: PrincipalLike | None = None
    ) -> Sequence[dict[str, Any]]:
        import bm25s

        tokens = bm25s.tokenize(
            [fold_text(query)],
            stopwords="en",
            stemmer=self._stemmer,
            show_progress=False,
            return_ids=False,
        )
        scores = self._retriever.get_scores(tokens[0])
        if as_of is not None:
            hidden = self._dates > as_of.toordinal()
            scores = np.where(hidden, -np.inf, scores)
        denied = [i for i, a in self._labelled if not allows(a, principal, as_of)]
        if denied:
            scores = scores.copy()
            scores[denied] = -np.inf
        order = np.lexsort((np.arange(len(scores)), -scores))
        out: list[dict[str, Any]] = []
        for i in order[:k]:
            if not np.isfinite(scores[i]) or scores[i] <= 0:
                break
            out.append({"chunk_id": self._ids[int(i)], "score": round(float(scores[i]), 6)})
        return out
