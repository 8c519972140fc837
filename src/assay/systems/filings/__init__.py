"""The reference filings pipeline: fiscal calendars, entity resolution, filtered hybrid retrieval,
rerankers and answerers (extractive, facts, LLM), as an assay system (`build(corpus_dir, mode=...,
answerer=...)`); a conversation's follow-ups read against its history (`contextualize`)."""

from assay.corpus import FiscalCalendar
from assay.systems.filings.answer import REFUSAL, Answer, Answerer, ExtractiveAnswerer, LLMAnswerer
from assay.systems.filings.entities import EntityResolver
from assay.systems.filings.fiscal import PeriodRef, parse_periods
from assay.systems.filings.history import ConversationState, FollowUp, contextualize
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.query import QueryPlan, plan_query
from assay.systems.filings.rerank import DenseReranker, Reranker, StatementReranker
from assay.systems.filings.system import (
    ANSWERERS,
    MODES,
    FilingsSystem,
    RetrievalConfig,
    build,
    make_answerer,
)
from assay.systems.filings.vectors import CorpusEmbedding, embed_corpus

__all__ = [
    "ANSWERERS",
    "MODES",
    "REFUSAL",
    "Answer",
    "Answerer",
    "ConversationState",
    "CorpusEmbedding",
    "DenseReranker",
    "EntityResolver",
    "ExtractiveAnswerer",
    "FilingsIndex",
    "FilingsSystem",
    "FiscalCalendar",
    "FollowUp",
    "LLMAnswerer",
    "PeriodRef",
    "QueryPlan",
    "Reranker",
    "RetrievalConfig",
    "StatementReranker",
    "build",
    "contextualize",
    "embed_corpus",
    "make_answerer",
    "parse_periods",
    "plan_query",
]
