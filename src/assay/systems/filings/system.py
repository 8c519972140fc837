"""`FilingsSystem`: the reference question-answering pipeline over filings, as an assay system.

Retrieval, in order (each step a switch of `RetrievalConfig`):

1. `as_of` visibility and per-item supersession (always on: correctness, not a feature);
2. `filters`: entity, form and fiscal-period filters chosen from the query plan, applied before
   ranking (relaxed, and logged as relaxed, when they would leave nothing);
3. `understand`: rank with the plan's search text (instruction boilerplate removed, metric
   wording added) and promote chunks on the primary statement the query asks for;
4. BM25 over the visible chunks; its top `pool` chunks are the candidate set;
5. `dense` / `hybrid`: cosine similarity of the all-MiniLM-L6-v2 embeddings of the query and
   the candidates (embedded lazily, cached by content hash), alone or fused with BM25 by
   reciprocal-rank fusion (k = `rrf_k`). With `dense_scope="corpus"` (a true hybrid) the dense
   side is not limited to BM25's candidates: it searches every chunk the same filters allow
   (`vectors.DenseSearch` over the whole corpus embedded once), takes its own top `pool`, and the
   two lists are fused by reciprocal rank over their union (a chunk on one list only gets that
   list's term), so a chunk BM25 cannot match can still be found;
6. `rerank`: a `Reranker` over the fused list;
7. `facts`: a question naming a line item and a fiscal year is looked up in the corpus' facts
   table (`facts_route.FactsTable`, among the filings the filters allow); the pages of the facts
   found rank first and their figures, with unit and period, are handed to the answerer;
8. `statement_cover`: a question whose plan needs several primary statements (an analyst
   concept such as "capital-intensive" reads the cash flow statement, the balance sheet and the
   income statement) gets the best page of each statement it lacks in the last slots of its
   top k, so evidence spread over statements is not crowded out by one statement's pages.

`concepts` turns on the analyst-concept map of the query plan (`query.CONCEPTS`).

`trace(query, as_of=, k=)` gives the pool of the last retrieval before reranking (`candidates`)
and after it (`reranked`), which the runner stores in the run row for failure attribution.

Ties break by chunk position in chunks.jsonl. Every query appends a log record (query, as_of,
plan, filters, retrieved chunk ids and scores) to `FilingsSystem.log` and, when `log_path` is
set, to that JSONL file.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay.cache import RequestCache, default_cache_dir
from assay.corpus import AccessLabel, PrincipalLike, allows, decision, principal_key
from assay.errors import UsageError
from assay.systems.filings.answer import Answer, Answerer, ExtractiveAnswerer, LLMAnswerer
from assay.systems.filings.dense import DenseEncoder, Encoder
from assay.systems.filings.facts_route import FactHit, FactsTable
from assay.systems.filings.history import FollowUp, contextualize
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.query import QueryPlan, plan_query
from assay.systems.filings.rerank import (
    Candidate,
    ChainReranker,
    DenseReranker,
    Reranker,
    StatementReranker,
)
from assay.systems.filings.vectors import DenseSearch, corpus_vectors, vectors_path
from assay.systems.identity import source_hash

__all__ = ["ANSWERERS", "MODES", "FilingsSystem", "RetrievalConfig", "build", "make_answerer"]

Mode = Literal["bm25", "dense", "hybrid", "full"]
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid", "full")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Switches of the retrieval pipeline (see the module docs)."""

    ranker: Literal["bm25", "dense", "hybrid"] = "bm25"
    filters: bool = False
    understand: bool = False
    rerank: bool = False
    pool: int = 50
    rrf_k: int = 60
    statement_boost: float = 1.0  # named statement: pages lifted by this times the top score
    implied_statement_boost: float = 1.0  # statement implied by a metric
    exempt_tables: bool = False
    per_page: int = 0  # >0: at most this many chunks of one page ahead of other pages
    latest_when_undated: bool = False  # no period named: the company's latest fiscal year
    drop_scope: bool = False  # rank without the company's name (the entity filter holds it)
    dense_scope: Literal["pool", "corpus"] = "pool"  # corpus: dense search over every chunk
    facts: bool = False  # the facts route (needs the corpus' facts.jsonl)
    facts_only: bool = False  # return the facts route's chunks and nothing else (its ablation)
    concepts: bool = False  # read analyst concepts ("capital-intensive", "margin", ...)
    statement_cover: bool = False  # one page of every statement the plan needs in the top k

    @classmethod
    def for_mode(cls, mode: str, **overrides: Any) -> RetrievalConfig:
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        base = {
            "bm25": cls(ranker="bm25"),
            "dense": cls(ranker="dense"),
            "hybrid": cls(ranker="hybrid"),
            "full": cls(
                ranker="hybrid",
                filters=True,
                understand=True,
                rerank=True,
                per_page=1,
                latest_when_undated=True,
                exempt_tables=True,
                concepts=True,
                statement_cover=True,
            ),
        }[mode]
        return replace(base, **overrides)

    @property
    def needs_encoder(self) -> bool:
        return self.ranker != "bm25" or self.rerank


class FilingsSystem:
    """retrieve(query, as_of=, k=) and answer(query, as_of=, hits=) over one FilingsIndex."""

    chunks_path: str | None = None  # the corpus's chunks.jsonl (`build` sets it): run metadata

    def __init__(
        self,
        index: FilingsIndex,
        config: RetrievalConfig | None = None,
        *,
        encoder: Encoder | None = None,
        reranker: Reranker | None = None,
        answerer: Answerer | None = None,
        log_path: str | Path | None = None,
        name: str = "filings",
        dense_search: DenseSearch | None = None,
        cache_dir: str | Path | None = None,
        facts: FactsTable | None = None,
        ignore_acl: bool = False,
    ) -> None:
        self.index = index
        self.ignore_acl = ignore_acl
        # (query, as_of, principal) -> the label of the best chunk the access filter hid, when
        # it outscored everything the principal may see (answer() refuses or escalates on it)
        self._denied: dict[tuple[str, dt.date | None, str | None], AccessLabel] = {}
        self.config = config or RetrievalConfig()
        self._encoder = encoder
        self._reranker = reranker
        self.answerer: Answerer = answerer or ExtractiveAnswerer()
        self.log: list[dict[str, Any]] = []
        self._traces = threading.local()  # the last retrieval's pools, per thread
        self.log_path = None if log_path is None else Path(log_path)
        self.name = name
        self._dense_search = dense_search
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.facts = facts
        # (query, as_of, principal, access checked) -> the facts the last such retrieval found
        self._fact_hits: dict[tuple[str, dt.date | None, str | None, bool], list[FactHit]] = {}

    # -- components ---------------------------------------------------------------------------

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = DenseEncoder()
        return self._encoder

    @property
    def reranker(self) -> Reranker:
        if self._reranker is None:
            parts: list[Reranker] = [
                DenseReranker(self.encoder, exempt_tables=self.config.exempt_tables)
            ]
            if self.config.understand:
                parts.append(
                    StatementReranker(
                        boost=self.config.statement_boost, exempt_tables=self.config.exempt_tables
                    )
                )
            self._reranker = ChainReranker(*parts)
        return self._reranker

    @property
    def dense_search(self) -> DenseSearch:
        """Every chunk's vectors: the whole-corpus matrix when `corpus_vectors` has built it
        under `cache_dir`, else embedded on demand for the chunks a query's filters allow."""
        if self._dense_search is None:
            path = (
                None
                if self.cache_dir is None
                else vectors_path(self.cache_dir, self.index.version, self.encoder)
            )
            if path is not None and path.exists():
                matrix = corpus_vectors(self.index, self.encoder, cache_dir=self.cache_dir)
                self._dense_search = DenseSearch(matrix)
            else:  # embed what the filters allow, when they allow it (cached by content)
                chunks, encoder = self.index.chunks, self.encoder
                self._dense_search = DenseSearch.lazy(
                    len(chunks), lambda rows: encoder.encode([chunks[i].text for i in rows])
                )
        return self._dense_search

    def describe(self) -> dict[str, Any]:
        """Identity of this system for run files and caches (config + corpus version +
        answerer: an LLM answerer's endpoint, model and prompt)."""
        ident = getattr(self.answerer, "identity", None)
        return {
            "system": self.name,
            "corpus": self.index.version,
            "config": asdict(self.config),
            "encoder": getattr(self._encoder, "model_id", None)
            if self.config.needs_encoder
            else None,
            "answerer": ident() if callable(ident) else type(self.answerer).__name__,
        } | ({"ignore_acl": True} if self.ignore_acl else {})

    def identity(self) -> dict[str, Any]:
        """What the request cache keys on: configuration, corpus version, encoder and the
        source of the pipeline (every module of `assay.systems.filings`)."""
        return {**self.describe(), "code": source_hash("assay.systems.filings")}

    @property
    def corpus_hash(self) -> str:
        """The corpus this system searches: its manifest's hash (the SHA-256 of chunks.jsonl)
        shortened to 16 hex digits, as `ChunkTable.version` is, so the BM25 baseline and this
        pipeline over the same chunk table report the same corpus hash."""
        return str(self.index.version)[:16]

    # -- retrieval ----------------------------------------------------------------------------

    def plan(self, query: str) -> QueryPlan:
        return plan_query(
            query, self.index.resolver, drop_scope=self.config.drop_scope,
            concepts=self.config.concepts,
        )  # fmt: skip

    def _acl(self, principal: PrincipalLike | None, as_of: dt.date | None) -> Any:
        """The access mask of `principal` (None: nothing hidden, or --ignore-acl)."""
        return None if self.ignore_acl else self.index.access_mask(principal, as_of)

    def follow_up(self, query: str, history: Sequence[Mapping[str, Any]] | None) -> FollowUp:
        """`query` read against the conversation before it (`history.contextualize`: a follow-up
        that names no company, period or measure takes them from the earlier user turns)."""
        return contextualize(query, history, self.index.resolver)

    def retrieve(
        self,
        query: str,
        *,
        as_of: dt.date | None = None,
        k: int = 10,
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """The top `k` chunks for `query` visible at `as_of` to `principal` (None: the public);
        with ``ignore_acl`` (the deliberately leaky variant) access labels are not checked.

        `history` (the earlier turns of a conversation, ``[{"role", "content"}]``, oldest first)
        lets a follow-up ("And the year before?") take the company, period and measure it does
        not name from the earlier user turns (`follow_up`); None or [] is the single-turn query."""
        if history:
            turn = self.follow_up(query, history)
            return self._search(
                turn.query, as_of=as_of, k=k, principal=principal, asked=turn
            )  # fmt: skip
        return self._search(query, as_of=as_of, k=k, principal=principal)

    def _search(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None,
        check_access: bool = True,
        asked: FollowUp | None = None,
    ) -> list[dict[str, Any]]:
        """`retrieve`; ``check_access=False`` is the retrieval as if no label restricted
        `principal` (what `answer` weighs its visible evidence against: never returned to the
        caller, never logged or traced). `asked`: the follow-up `query` was rewritten from (the
        trace is kept under the query as asked; the log record says what was carried)."""
        start = time.perf_counter()
        cfg = self.config
        idx = self.index
        plan = self.plan(query)
        mask = idx.visible_mask(as_of)
        selection = None
        if cfg.filters:
            selection = idx.select_docs(plan, as_of, latest_when_undated=cfg.latest_when_undated)
            mask = mask & idx.doc_mask(selection.docs)
        text = plan.search_text if cfg.understand else query
        acl = self._acl(principal, as_of) if check_access else None
        who = principal_key(principal)
        if check_access:
            self._denied.pop((query, as_of, who), None)
        if acl is not None:
            everything = idx.bm25_scores(text, mask)
            hidden = mask & ~acl
            if hidden.any():
                best = int(np.argmax(np.where(hidden, everything, -np.inf)))
                top_seen = float(everything[mask & acl].max()) if (mask & acl).any() else 0.0
                if everything[best] > 0 and everything[best] > top_seen:
                    label = idx.chunks[best].access
                    assert label is not None
                    self._denied[(query, as_of, who)] = label
            mask = mask & acl
        scores = idx.bm25_scores(text, mask)
        if cfg.understand and plan.statements:
            boost = idx.statement_mask(plan.statements)
            # a statement the query names outright ranks its pages first; one implied by a
            # metric lifts them by a smaller share of the best score
            top = float(scores[mask].max()) if mask.any() else 0.0
            lift = top * (
                cfg.statement_boost if plan.statements_named else cfg.implied_statement_boost
            )
            scores = np.where(boost & mask & (scores > 0), scores + np.float32(lift), scores)
        candidates = self._top(scores, mask, max(cfg.pool, k))
        if cfg.ranker != "bm25" and cfg.dense_scope == "corpus":
            candidates = self._corpus_dense(
                query if not cfg.understand else plan.search_text, candidates, mask,
                max(cfg.pool, k),
            )  # fmt: skip
        elif cfg.ranker != "bm25" and candidates:
            candidates = self._dense(
                plan, query if not cfg.understand else plan.search_text, candidates
            )
        pool = candidates
        if cfg.rerank and candidates:
            candidates = self.reranker.rerank(plan, candidates)
        if cfg.per_page:
            candidates = self._diversify(candidates, cfg.per_page)
        fact_hits: list[FactHit] = []
        if cfg.facts and self.facts is not None:
            fact_hits = self.facts.lookup(plan, idx, mask, self._fact_years(plan, selection))
            self._fact_hits[(query, as_of, who, check_access)] = fact_hits
            candidates = self._facts_first(fact_hits, [] if cfg.facts_only else candidates)
        if cfg.statement_cover and len(plan.statements) > 1 and not cfg.facts_only:
            candidates = self._cover_statements(plan, candidates, scores, mask, k)
        hits = [{"chunk_id": c.chunk_id, "score": round(float(c.score), 6)} for c in candidates[:k]]
        if not check_access:
            return hits
        trace: dict[str, Any] = {"candidates": _hits(pool)}
        if (
            cfg.rerank
            or cfg.per_page
            or cfg.statement_cover
            or (cfg.facts and self.facts is not None)
        ):
            trace["reranked"] = _hits(candidates)  # the order the top k is cut from
        self._traces.last = (query if asked is None else asked.asked, as_of, k, trace)
        record = {
            "query": query,
            "as_of": None if as_of is None else as_of.isoformat(),
            "k": k,
            "plan": plan.to_dict(),
            "filters": None
            if selection is None
            else {
                "applied": selection.applied,
                "relaxed": selection.relaxed,
                "docs": sorted(idx.docs[i].doc_id for i in selection.docs)
                if selection.docs is not None
                else None,
            },
            "retrieved": hits,
            "facts": [h.to_dict() for h in fact_hits],
            "latency_ms": round((time.perf_counter() - start) * 1000.0, 3),
        }
        if asked is not None:
            record["follow_up"] = asked.to_dict()
        self.log.append(record)
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return hits

    def trace(
        self,
        query: str,
        *,
        as_of: dt.date | None = None,
        k: int = 10,
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The candidate pool of `retrieve(query, as_of=as_of, k=k)` before reranking
        (``candidates``: the first-stage ranking, BM25 or fused with dense, `pool` deep) and
        after it (``reranked``: the reranked and page-diversified order the top k is cut from;
        only when the configuration reranks). The runner calls it right after `retrieve` on the
        same thread, which returns what that call recorded; otherwise it retrieves again."""
        last = getattr(self._traces, "last", None)
        if last is None or last[:3] != (query, as_of, k):
            self.retrieve(query, as_of=as_of, k=k, principal=principal, history=history)
            last = self._traces.last
        return dict(last[3])

    def _fact_years(self, plan: QueryPlan, selection: Any) -> list[int]:
        """Fiscal years the plan names (in the company's calendar); none named: the latest
        fiscal year among the filings the filters chose."""
        idx = self.index
        keys = set(plan.entity_keys)
        cal = next((d.calendar for d in idx.docs if d.company_key in keys), None)
        years: set[int] = set()
        for ref in plan.periods:
            if cal is not None and (ref.fiscal_year is not None or ref.on_date is not None):
                years.update(fy for fy, _ in ref.fiscal_quarters(cal))
        if not years and selection is not None and selection.docs:
            chosen = [idx.docs[i].fiscal_year for i in selection.docs]
            known = [y for y in chosen if y is not None]
            if known:
                years.add(max(known))
        return sorted(years)

    def _facts_first(self, facts: list[FactHit], candidates: list[Candidate]) -> list[Candidate]:
        """The facts' chunks first (in the order found), then the rest in their order; scores
        rewritten by final rank so they stay monotone."""
        if not facts:
            return candidates
        idx = self.index
        first: list[str] = list(dict.fromkeys(h.fact.chunk_id for h in facts))
        known = {c.chunk_id: c for c in candidates}
        head = [
            known.get(cid)
            or Candidate(
                chunk_id=cid, text=idx.chunks[idx.pos[cid]].text, score=0.0,
                kind=idx.chunks[idx.pos[cid]].kind, statement=idx.statement[idx.pos[cid]],
            )
            for cid in first
        ]  # fmt: skip
        ordered = head + [c for c in candidates if c.chunk_id not in set(first)]
        n = len(ordered)
        return [replace(c, score=float(n - i)) for i, c in enumerate(ordered)]

    def _cover_statements(
        self,
        plan: QueryPlan,
        candidates: list[Candidate],
        scores: np.ndarray[Any, Any],
        mask: np.ndarray[Any, Any],
        k: int,
    ) -> list[Candidate]:
        """Every statement the plan needs, represented in the top `k`: for each one with no
        chunk there, its best chunk (the first in `candidates`, else the best BM25 score among
        the allowed chunks of that statement, else its first allowed chunk) takes one of the
        last slots of the top k; the others move down in their order. Scores are rewritten by
        final rank so they stay monotone."""
        idx = self.index
        top = candidates[:k]
        have = {c.statement for c in top}
        missing = [s for s in plan.statements if s not in have][: max(k - 1, 0)]
        if not missing:
            return candidates
        heads: list[Candidate] = []
        for statement in missing:
            head = next((c for c in candidates[k:] if c.statement == statement), None)
            if head is None:
                allowed = np.flatnonzero(mask & idx.statement_mask([statement]))
                if allowed.size == 0:
                    continue
                # best BM25 score first, then corpus position
                i = int(allowed[np.lexsort((allowed, -scores[allowed]))][0])
                head = self._candidate(i, float(scores[i]))
            heads.append(head)
        if not heads:
            return candidates
        taken = {c.chunk_id for c in heads}
        rest = [c for c in candidates if c.chunk_id not in taken]
        cut = max(k - len(heads), 1)
        ordered = rest[:cut] + heads + rest[cut:]
        n = len(ordered)
        return [replace(c, score=float(n - i)) for i, c in enumerate(ordered)]

    def _diversify(self, candidates: list[Candidate], per_page: int) -> list[Candidate]:
        """At most `per_page` chunks of one page before every page has had its turn; the rest
        follow in their order (scores are rewritten by final rank so they stay monotone)."""
        seen: dict[tuple[str, int], int] = {}
        first: list[Candidate] = []
        later: list[Candidate] = []
        for c in candidates:
            chunk = self.index.chunks[self.index.pos[c.chunk_id]]
            key = (chunk.doc_id, chunk.pages[0] if chunk.pages else 0)
            seen[key] = seen.get(key, 0) + 1
            (first if seen[key] <= per_page else later).append(c)
        ordered = first + later
        n = len(ordered)
        return [
            replace(c, score=float(n - i)) if (first and later) else c
            for i, c in enumerate(ordered)
        ]

    def _top(
        self, scores: np.ndarray[Any, Any], mask: np.ndarray[Any, Any], n: int
    ) -> list[Candidate]:
        eligible = np.flatnonzero(mask & (scores > 0))
        if eligible.size == 0:
            return []
        # stable order: higher score first, then corpus position
        order = eligible[np.lexsort((eligible, -scores[eligible]))][:n]
        return [self._candidate(i, float(scores[i])) for i in order]

    def _candidate(self, i: int, score: float) -> Candidate:
        """The chunk at corpus position `i` as a candidate scored `score`."""
        idx = self.index
        c = idx.chunks[i]
        return Candidate(idx.ids[i], c.text, score, kind=c.kind, statement=idx.statement[i])

    def _dense(self, plan: QueryPlan, text: str, candidates: list[Candidate]) -> list[Candidate]:
        vecs = self.encoder.encode([text, *(c.text for c in candidates)])
        sims = vecs[1:] @ vecs[0]
        if self.config.ranker == "dense":
            order = np.lexsort((np.arange(len(candidates)), -sims))
            return [replace(candidates[i], score=float(sims[i])) for i in order]
        k = self.config.rrf_k
        dense_rank = np.empty(len(candidates), dtype=np.int64)
        dense_rank[np.lexsort((np.arange(len(candidates)), -sims))] = np.arange(len(candidates))
        fused = np.array(
            [1.0 / (k + r + 1) + 1.0 / (k + int(dense_rank[r]) + 1) for r in range(len(candidates))]
        )
        order = np.lexsort((np.arange(len(candidates)), -fused))
        return [replace(candidates[i], score=float(fused[i])) for i in order]

    def _corpus_dense(
        self, text: str, lexical: list[Candidate], mask: np.ndarray[Any, Any], n: int
    ) -> list[Candidate]:
        """Dense search over every allowed chunk, alone or fused with `lexical` by RRF."""
        idx = self.index
        query_vec = self.encoder.encode([text])[0]
        rows, sims = self.dense_search.search(query_vec, n, mask)
        dense = [
            self._candidate(i, float(s)) for i, s in zip(rows.tolist(), sims.tolist(), strict=True)
        ]
        if self.config.ranker == "dense":
            return dense
        k = self.config.rrf_k
        fused: dict[str, float] = {}
        first: dict[str, Candidate] = {}
        for ranked in (lexical, dense):
            for r, c in enumerate(ranked):
                fused[c.chunk_id] = fused.get(c.chunk_id, 0.0) + 1.0 / (k + r + 1)
                first.setdefault(c.chunk_id, c)
        # ties: corpus position
        order = sorted(fused, key=lambda cid: (-fused[cid], idx.pos[cid]))
        return [replace(first[cid], score=fused[cid]) for cid in order]

    # -- answers ------------------------------------------------------------------------------

    def answer(
        self,
        query: str,
        *,
        as_of: dt.date | None = None,
        hits: Any = None,
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Answer from `hits` (retrieving them when not given): {"answer", "citations", ...}.

        `history`: as in `retrieve`, a follow-up is answered as the question it stands for.

        Access labels decide what may answer, not only what may be retrieved. When retrieval
        hid a chunk from `principal` that outscored everything they may see, the visible
        evidence is weighed against the hidden: the pipeline answers the question again as if
        no label restricted them (never shown), and when that answer rests on a chunk they may
        not see and covers more of the question than the visible answer does (or the visible
        evidence answers nothing), the best evidence for the question is behind that chunk's
        label. The reply then refuses or escalates as the label says
        (`assay.corpus.access.decision`), naming neither the label nor what it guards, instead of
        answering from weaker visible evidence that happens to share some of the question's
        words."""
        if hits is None:
            hits = self.retrieve(query, as_of=as_of, k=5, principal=principal, history=history)
        if history:
            query = self.follow_up(query, history).query
        ids = [
            h if isinstance(h, str) else (h["chunk_id"] if isinstance(h, dict) else h.chunk_id)
            for h in hits
        ]
        ids = [i for i in ids if i in self.index.pos]
        who = principal_key(principal)
        facts = self._fact_hits.get((query, as_of, who, True), [])
        result, route = self._answer_from(query, as_of, ids, facts, self._acl(principal, as_of))
        denied = self._denied.get((query, as_of, who))
        if denied is not None:
            label = self._restricted_support(query, as_of, max(len(ids), 1), principal, result)
            if label is not None:
                return _policy_reply(label, principal, as_of)
        out = result.to_dict()
        if facts:
            out["facts"] = [h.to_dict() for h in facts]
        if route is not None:
            out["trace"] = {"answer_route": route}
        return out

    def _answer_from(
        self,
        query: str,
        as_of: dt.date | None,
        ids: list[str],
        facts: list[FactHit],
        acl: Any,
        *,
        answerer: Answerer | None = None,
    ) -> tuple[Answer, dict[str, Any] | None]:
        """The answer of `answerer` (default: the pipeline's) from chunks `ids` and `facts`,
        looking up figures only where `acl` allows (None: everywhere)."""
        answerer = answerer or self.answerer
        plan = self.plan(query)
        evidence = [self._fact_evidence(h) for h in facts] + [self._evidence(i) for i in ids]
        answer_in = getattr(answerer, "answer_in", None)
        if callable(answer_in):  # the facts answerer looks up figures itself
            from assay.systems.filings.facts_answer import facts_context

            selection = self.index.select_docs(
                plan, as_of, latest_when_undated=self.config.latest_when_undated
            )
            ctx = facts_context(self.index, plan, query, as_of, primary=selection.docs or ())
            if acl is not None:
                ctx = replace(ctx, visible=ctx.visible & acl)
            result, route = answer_in(ctx, plan, evidence)
            return result, route
        return answerer.answer(plan, evidence), None

    def _restricted_support(
        self,
        query: str,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None,
        visible: Answer,
    ) -> AccessLabel | None:
        """The label of a chunk `principal` may not see that the answer would rest on if no
        label restricted them (the retrieval and the answer redone without access checks),
        when that answer is better supported than `visible`, the answer from what they may see
        (`Answer.support`: the share of the question its evidence covers; a refusal has none).
        None when the unrestricted answer rests on visible evidence, on nothing, or on no more
        than the visible answer does (or either answer's support is unknown)."""
        ids = self._search(query, as_of=as_of, k=k, principal=principal, check_access=False)
        cids = [h["chunk_id"] for h in ids]
        facts = self._fact_hits.pop((query, as_of, principal_key(principal), False), [])
        # restricted text never leaves the process: an answerer behind an endpoint is weighed
        # by the extractive answerer's reading of the same evidence
        local = None if not isinstance(self.answerer, LLMAnswerer) else ExtractiveAnswerer()
        result, _ = self._answer_from(query, as_of, cids, facts, None, answerer=local)
        if result.refused:
            return None
        if not visible.refused and (
            visible.support is None or result.support is None or result.support <= visible.support
        ):
            return None  # the visible evidence answers as fully: the label changes nothing
        for cid in result.citations:
            pos = self.index.pos.get(cid)
            if pos is None:
                continue
            label = self.index.chunks[pos].access
            if label is not None and not allows(label, principal, as_of):
                return label
        return None

    def _fact_evidence(self, hit: FactHit) -> dict[str, Any]:
        """A fact as evidence: its figure with unit and period, cited by its source chunk."""
        base = self._evidence(hit.fact.chunk_id)
        return {**base, "text": hit.evidence_text(), "kind": "fact"}

    def _evidence(self, chunk_id: str) -> dict[str, Any]:
        chunk = self.index.chunks[self.index.pos[chunk_id]]
        doc = self.index.doc(chunk_id)
        return {
            "chunk_id": chunk_id,
            "text": chunk.text,
            "kind": chunk.kind,
            "doc_id": chunk.doc_id,
            "company_key": doc.company_key,
            "fiscal_year": doc.fiscal_year,
            "fiscal_quarter": doc.fiscal_quarter,
            "label": doc.label(),
        }


def _policy_reply(
    label: AccessLabel, principal: PrincipalLike | None, as_of: dt.date | None
) -> dict[str, Any]:
    """The answer when what answers the question is restricted: a refusal, or an escalation.

    It names neither the label nor anything the label guards: a label's words can say what it
    hides ("draft 8-K (material non-public until 2025-03-25)"), and telling an outsider that a
    draft 8-K exists, or when it goes public, is itself a disclosure. Only the decision is
    returned (``policy.decision``)."""
    what, _ = decision([label], principal, as_of)
    if what == "escalate":
        text = (
            "I can't share this: the material that answers it is restricted. "
            "Please escalate the request to compliance for access."
        )
    else:
        text = "I can't share this: the material that answers it is restricted to others."
    return {"answer": text, "citations": [], "policy": {"decision": what}}


def _hits(candidates: list[Candidate]) -> list[dict[str, Any]]:
    return [{"chunk_id": c.chunk_id, "score": round(float(c.score), 6)} for c in candidates]


ANSWERERS: tuple[str, ...] = ("extractive", "facts", "llm")
"""Answerers `build` takes by name; `--mode full` defaults to "facts" (the best one that needs
no network), every other mode to "extractive"."""


def make_answerer(
    name: str | None,
    corpus_dir: str | Path,
    *,
    mode: str = "full",
    xbrl: str | Path | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_price_in: float | None = None,
    llm_price_out: float | None = None,
    cache_dir: str | Path | None = None,
) -> Answerer:
    """The answerer called `name` (`ANSWERERS`; None: the mode's default).

    facts: the corpus' statement facts (``facts.jsonl``) and, when given, a folder of XBRL
    company facts (`xbrl`; by default ``xbrl/`` inside the corpus folder, when there is one),
    with the extractive answerer for what they do not answer. llm: any OpenAI-compatible
    endpoint (`llm_base_url`, `llm_model`, else ``$ASSAY_LLM_BASE_URL`` / ``$ASSAY_LLM_MODEL``),
    every call cached with the prompt and model in its key; `llm_price_in` / `llm_price_out`
    (USD per million tokens) price each answer.
    """
    chosen = name or ("facts" if mode == "full" else "extractive")
    if chosen not in ANSWERERS:
        raise UsageError(f"unknown answerer {chosen!r}; choose one of {', '.join(ANSWERERS)}")
    if chosen == "extractive":
        return ExtractiveAnswerer()
    if chosen == "llm":
        cache = RequestCache(
            None if cache_dir is None else Path(cache_dir) / "requests.sqlite",
            namespace="filings-llm-answer",
        )
        return LLMAnswerer.connect(
            base_url=llm_base_url, model=llm_model, cache=cache,
            price_in=llm_price_in, price_out=llm_price_out,
        )  # fmt: skip
    from assay.systems.filings.facts_answer import FactsAnswerer, XbrlFacts

    folder = Path(xbrl) if xbrl is not None else Path(corpus_dir) / "xbrl"
    if xbrl is not None and not folder.is_dir():
        raise UsageError(f"--xbrl {folder}: not a folder of company-facts JSON files")
    return FactsAnswerer(
        table=FactsTable.load(corpus_dir),
        xbrl=XbrlFacts.load(folder) if folder.is_dir() else None,
    )


def build(
    corpus_dir: str | Path | None = None,
    mode: str = "full",
    *,
    corpus: str | Path | None = None,
    cache_dir: str | Path | None = None,
    answerer: Answerer | str | None = None,
    log_path: str | Path | None = None,
    encoder: Encoder | None = None,
    xbrl: str | Path | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_price_in: float | None = None,
    llm_price_out: float | None = None,
    ignore_acl: bool = False,
    **overrides: Any,
) -> FilingsSystem:
    """A FilingsSystem over the corpus in `corpus_dir` (chunks.jsonl + documents.jsonl).

    mode: bm25 | dense | hybrid | full (hybrid + entity/period filters + query understanding +
    reranker). `cache_dir` holds the embedding cache (default `$ASSAY_CACHE_DIR` or
    `.assay-cache/`). `answerer` is an `Answerer` or one of `ANSWERERS` by name (default: facts
    in full mode, else extractive; see `make_answerer` for `xbrl` and the ``llm_*`` options);
    `encoder` replaces the default dense encoder (e.g. `OnnxEncoder`). Extra keyword arguments
    override `RetrievalConfig` fields. `ignore_acl` builds the deliberately leaky variant:
    it takes the principal but never checks access labels.
    """
    root = corpus_dir if corpus_dir is not None else corpus
    if root is None:
        raise UsageError(
            "the filings system needs a corpus directory (chunks.jsonl, documents.jsonl)"
        )
    config = RetrievalConfig.for_mode(mode, **overrides)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if answerer is None or isinstance(answerer, str):
        answerer = make_answerer(
            answerer, root, mode=mode, xbrl=xbrl, llm_base_url=llm_base_url,
            llm_model=llm_model, llm_price_in=llm_price_in, llm_price_out=llm_price_out,
            cache_dir=cache,
        )  # fmt: skip
    index = FilingsIndex.load(root)
    if config.needs_encoder and encoder is None:
        encoder = DenseEncoder(cache_dir=cache)
    system = FilingsSystem(
        index, config, encoder=encoder if config.needs_encoder else None, answerer=answerer,
        log_path=log_path, name=f"filings-{mode}", cache_dir=cache,
        facts=FactsTable.load(root) if config.facts else None, ignore_acl=ignore_acl,
    )  # fmt: skip
    system.chunks_path = str(Path(root) / "chunks.jsonl")  # recorded in the run's metadata
    return system
