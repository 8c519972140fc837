"""The facts route: line item + period -> the figure's page first, and the figure to the answerer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assay.corpus import extract_facts
from assay.systems.filings.facts_route import LINE_ITEMS, FactsTable
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.system import FilingsSystem, RetrievalConfig

from .conftest import CHUNKS, DOCS

FULL = RetrievalConfig(ranker="bm25", filters=True, understand=True, latest_when_undated=True)


@pytest.fixture
def index(corpus_dir: Path) -> FilingsIndex:
    return FilingsIndex.load(corpus_dir)


@pytest.fixture
def facts() -> FactsTable:
    docs = {d["doc_id"]: d for d in DOCS}
    rows = [
        {**c, "pages": [c["page"]], "kind": c.get("kind", "prose"),
         "company": docs[c["doc_id"]]["company"], "fiscal_year": docs[c["doc_id"]]["fiscal_year"],
         "fiscal_quarter": docs[c["doc_id"]]["fiscal_quarter"]}
        for c in CHUNKS
    ]  # fmt: skip
    return FactsTable(extract_facts(rows))


def test_the_figure_of_the_named_year_comes_from_that_years_filing(
    index: FilingsIndex, facts: FactsTable
) -> None:
    system = FilingsSystem(index, FULL)
    plan = system.plan("What was Microsoft's total revenue in FY2023?")
    everything = np.ones(len(index.ids), dtype=np.bool_)
    (hit,) = facts.lookup(plan, index, everything, [2023])
    # both 10-Ks print fiscal 2023 revenue; the FY2023 filing's own column wins
    assert hit.fact.chunk_id == "msft-2023-10k/2/0" and hit.fact.column == 0
    assert (hit.metric, hit.fiscal_year, hit.fact.value) == ("revenue", 2023, 211915.0)
    # hidden by the mask (filters, as_of): the comparative column of the later filing is used
    hidden = everything.copy()
    hidden[index.pos["msft-2023-10k/2/0"]] = False
    (other,) = facts.lookup(plan, index, hidden, [2023])
    assert other.fact.chunk_id == "msft-2024-10k/2/0" and other.fact.column == 1


def test_route_ranks_the_fact_page_first_and_hands_the_figure_on(
    index: FilingsIndex, facts: FactsTable
) -> None:
    query = "What was Microsoft's operating income in fiscal 2024?"
    plain = FilingsSystem(index, FULL).retrieve(query, k=3)
    system = FilingsSystem(index, _with(FULL, facts=True), facts=facts)
    hits = system.retrieve(query, k=3)
    assert hits[0]["chunk_id"] == "msft-2024-10k/2/0"
    assert {h["chunk_id"] for h in hits} == {h["chunk_id"] for h in plain} | {"msft-2024-10k/2/0"}
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    logged = system.log[-1]["facts"]
    assert [(f["line_item"], f["figure"]) for f in logged] == [
        ("Operating income", "$109,433 million")
    ]
    answer = system.answer(query, hits=hits)
    assert answer["facts"][0]["figure"] == "$109,433 million"
    assert "109,433" in answer["answer"]


def test_facts_only_returns_nothing_without_a_fact(index: FilingsIndex, facts: FactsTable) -> None:
    only = FilingsSystem(index, _with(FULL, facts=True, facts_only=True), facts=facts)
    assert [h["chunk_id"] for h in only.retrieve("Microsoft revenue FY2024", k=5)] == [
        "msft-2024-10k/2/0"
    ]
    assert only.retrieve("Who are Acme's directors?", k=5) == []
    # no line item named: the route leaves the ranking alone
    route = FilingsSystem(index, _with(FULL, facts=True), facts=facts)
    q = "Who are Acme's directors?"
    assert route.retrieve(q, k=5) == FilingsSystem(index, FULL).retrieve(q, k=5)


def test_line_item_patterns() -> None:
    assert LINE_ITEMS["capex"].search("Purchases of property, plant and equipment (PP&E)")
    assert LINE_ITEMS["capex"].search("Capital expenditures")
    assert not LINE_ITEMS["capex"].search("Proceeds from sale of PP&E and other assets")
    assert LINE_ITEMS["revenue"].search("Total net sales")
    assert not LINE_ITEMS["revenue"].search("Cost of sales")
    assert LINE_ITEMS["net_income"].search("Net income attributable to 3M")
    assert LINE_ITEMS["ppe"].search("Property, plant and equipment — net")


def _with(cfg: RetrievalConfig, **kw: object) -> RetrievalConfig:
    from dataclasses import replace

    return replace(cfg, **kw)  # type: ignore[arg-type]
