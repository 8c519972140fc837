"""Rerankers: reorder a retrieved candidate list. One protocol, two implementations.

`DenseReranker` re-scores the candidates with the dense encoder (cosine of query and chunk
embeddings, both cached) fused with the retrieval order by reciprocal rank; `StatementReranker`
promotes chunks on the primary statement the query asks for (balance sheet, income statement,
cash flow statement). With `exempt_tables=True` table chunks are not reranked: they keep the
slots their retrieval score gave them and the prose chunks are reordered around them.

Ties break on the candidate's retrieval rank, so every reranker is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from assay.systems.filings.dense import Encoder
from assay.systems.filings.query import QueryPlan

__all__ = ["Candidate", "ChainReranker", "DenseReranker", "Reranker", "StatementReranker"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A retrieved chunk: id, text, kind, primary-statement label, retrieval score."""

    chunk_id: str
    text: str
    score: float
    kind: str = "prose"
    statement: str | None = None


class Reranker(Protocol):
    name: str

    def rerank(self, plan: QueryPlan, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Candidates in a new order (same set), each with its new score."""
        ...


def _merge_exempt(
    candidates: Sequence[Candidate], reordered_prose: list[Candidate]
) -> list[Candidate]:
    """Put table chunks back in their retrieval slots; prose fills the rest in new order."""
    prose = iter(reordered_prose)
    out = [cand if cand.kind == "table" else next(prose) for cand in candidates]
    # scores must stay monotone for consumers that sort: rescore by final rank
    n = len(out)
    return [replace(c, score=float(n - i)) for i, c in enumerate(out)]


class DenseReranker:
    """Dense re-scoring of the top `depth` candidates, fused with retrieval rank by RRF."""

    name = "dense"

    def __init__(
        self, encoder: Encoder, *, depth: int = 30, rrf_k: int = 20, weight: float = 1.0,
        exempt_tables: bool = False,
    ) -> None:  # fmt: skip
        self.encoder = encoder
        self.depth = depth
        self.rrf_k = rrf_k
        self.weight = weight
        self.exempt_tables = exempt_tables

    def rerank(self, plan: QueryPlan, candidates: Sequence[Candidate]) -> list[Candidate]:
        head = list(candidates[: self.depth])
        tail = list(candidates[self.depth :])
        pool = [c for c in head if not (self.exempt_tables and c.kind == "table")]
        if not pool:
            return list(candidates)
        query = plan.search_text or plan.text
        vecs = self.encoder.encode([query, *(c.text for c in pool)])
        sims = vecs[1:] @ vecs[0]
        dense_rank = np.argsort(-sims, kind="stable")
        rank_of = {int(i): r for r, i in enumerate(dense_rank)}
        fused = [
            (1.0 / (self.rrf_k + r + 1) + self.weight / (self.rrf_k + rank_of[r] + 1), -r, c)
            for r, c in enumerate(pool)
        ]
        fused.sort(key=lambda t: (t[0], t[1]), reverse=True)
        reordered = [replace(c, score=float(s)) for s, _, c in fused]
        head = _merge_exempt(head, reordered) if self.exempt_tables else reordered
        return head + tail


class StatementReranker:
    """Promote chunks of the primary statement(s) the query names or implies."""

    name = "statement"

    def __init__(self, *, boost: float = 1.0, exempt_tables: bool = False) -> None:
        self.boost = boost
        self.exempt_tables = exempt_tables

    def rerank(self, plan: QueryPlan, candidates: Sequence[Candidate]) -> list[Candidate]:
        if not plan.statements:
            return list(candidates)
        wanted = set(plan.statements)
        pool = [c for c in candidates if not (self.exempt_tables and c.kind == "table")]
        keyed = [
            (c.score * (1.0 + self.boost) if c.statement in wanted else c.score, -r, c)
            for r, c in enumerate(pool)
        ]
        keyed.sort(key=lambda t: (t[0], t[1]), reverse=True)
        reordered = [replace(c, score=float(s)) for s, _, c in keyed]
        return _merge_exempt(candidates, reordered) if self.exempt_tables else reordered


class ChainReranker:
    """Apply rerankers in order."""

    def __init__(self, *rerankers: Reranker) -> None:
        self.rerankers = rerankers
        self.name = "+".join(r.name for r in rerankers)

    def rerank(self, plan: QueryPlan, candidates: Sequence[Candidate]) -> list[Candidate]:
        out = list(candidates)
        for r in self.rerankers:
            out = r.rerank(plan, out)
        return out
