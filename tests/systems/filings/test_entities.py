from __future__ import annotations

import pytest

from assay.systems.filings.entities import EntityResolver, company_key

DOCS = [
    {"company": "JPMorgan Chase & Co.", "ticker": "JPM", "aliases": ["JPMorgan"]},
    {"company": "3M Company", "ticker": None},
    {"company": "The Coca-Cola Company"},
    {"company": "American Express Company"},
    {"company": "American Water Works Company, Inc."},
    {"company": "Johnson & Johnson"},
    {"company": "Lockheed Martin Corporation"},
    {"company": "General Mills, Inc."},
    {"company": "Best Buy Co., Inc."},
    {"company": "Pfizer Inc."},
]


@pytest.fixture(scope="module")
def resolver() -> EntityResolver:
    return EntityResolver.from_documents(DOCS)


@pytest.mark.parametrize(
    ("query", "company"),
    [
        ("JPM net interest income 2Q23", "JPMorgan Chase & Co."),
        ("What was JPMorgan's VaR?", "JPMorgan Chase & Co."),
        ("MMM capex FY2018", "3M Company"),
        ("3M capex FY2018", "3M Company"),
        ("Coke revenue growth", "The Coca-Cola Company"),
        ("Coca Cola COGS margin", "The Coca-Cola Company"),
        ("Amex card member retention", "American Express Company"),
        ("AMEX operating margin", "American Express Company"),
        ("American Express' geographies", "American Express Company"),
        ("American Water Works dividends", "American Water Works Company, Inc."),
        ("JnJ gross margin", "Johnson & Johnson"),
        ("J&J inventory turnover", "Johnson & Johnson"),
        ("Lockheed revenue CAGR", "Lockheed Martin Corporation"),
        ("Pfzier spin-off costs", "Pfizer Inc."),
    ],
)
def test_resolves(resolver: EntityResolver, query: str, company: str) -> None:
    found = resolver.resolve(query)
    assert [e.company for e in found] == [company]


@pytest.mark.parametrize(
    "query",
    [
        "what is the best quarter for general revenue",
        "american companies with jpm-like margins",  # lower-case ticker is not a ticker
        "which company has the largest debt",
        "the martin luther king holiday",
    ],
)
def test_conservative(resolver: EntityResolver, query: str) -> None:
    assert resolver.resolve(query) == []


def test_several_companies_in_order(resolver: EntityResolver) -> None:
    found = resolver.resolve("Compare Pfizer and JnJ gross margins")
    assert [e.company for e in found] == ["Pfizer Inc.", "Johnson & Johnson"]


def test_builtin_short_forms_only_for_companies_in_corpus() -> None:
    res = EntityResolver.from_documents([{"company": "Pfizer Inc."}])
    assert res.resolve("MMM and JPM results") == []


def test_company_key_ignores_legal_suffixes() -> None:
    assert company_key("The Coca-Cola Company") == company_key("Coca Cola")
    assert company_key("Johnson & Johnson") == company_key("JOHNSON JOHNSON")
