from __future__ import annotations

from assay.systems.filings.entities import EntityResolver
from assay.systems.filings.index import ChunkRecord, _detect_items, detect_statement
from assay.systems.filings.query import plan_query, strip_boilerplate

RESOLVER = EntityResolver.from_documents([{"company": "3M Company"}, {"company": "Boeing"}])


def test_plan_reads_entities_periods_metrics_and_statements() -> None:
    plan = plan_query(
        "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to "
        "the question by relying on the details shown in the cash flow statement.",
        RESOLVER,
    )
    assert [e.company for e in plan.entities] == ["3M Company"]
    assert [p.fiscal_year for p in plan.periods] == [2018]
    assert "capex" in plan.metrics and plan.statements == ("cashflow",) and plan.statements_named
    assert "purchases of property plant and equipment" in plan.search_text
    assert "USD millions" not in plan.search_text


def test_metric_implies_statement_and_forms() -> None:
    plan = plan_query("Boeing net PP&E in the 10-K for FY2022")
    assert plan.statements == ("balance",) and not plan.statements_named
    assert plan.forms == ("10-K",)
    assert plan_query("What is Boeing forecasting for FY2023?").forward_looking
    assert not plan_query("What was Boeing's revenue in FY2022?").forward_looking


def test_boilerplate_is_removed_but_the_question_stays() -> None:
    text = "Round your answer to two decimal places. What is the quick ratio?"
    assert strip_boilerplate(text) == "What is the quick ratio?"


def test_statement_page_detection() -> None:
    page = (
        "Table of Contents\nCONSOLIDATED BALANCE SHEETS\n(In millions) 2023 2022\n"
        + "Cash 1,234 5,678\n" * 20
    )
    assert detect_statement(page) == "balance"
    prose = "Our consolidated balance sheets reflect strong liquidity and careful management. " * 5
    assert detect_statement(prose) is None
    cash = "CONSOLIDATED STATEMENTS OF CASH FLOWS\n" + "Net income 1,234 5,678 9,012\n" * 20
    assert detect_statement(cash) == "cashflow"


def test_items_follow_headings_and_ignore_table_of_contents() -> None:
    texts = [
        "Item 1. Business\nItem 7. MD&A\nItem 8. Financial Statements\nItem 10. Directors",  # contents
        "Item 1. Business. We make things.",
        "More about the business.",
        "Item 8. Financial Statements and Supplementary Data",
        "Consolidated balance sheets follow.",
        "Item 10. Directors, Executive Officers",
    ]
    chunks = [ChunkRecord(f"d/{i}", "d", t, (i + 1,)) for i, t in enumerate(texts)]
    assert _detect_items(chunks) == [None, "1", "1", "8", "8", "10"]


def test_analyst_concepts_map_to_filing_wording() -> None:
    plan = plan_query("Is Verizon a capital-intensive business based on FY 2022 data?")
    assert "capital_intensity" in plan.metrics and set(plan.statements) == {"balance", "cashflow"}
    assert "property plant and equipment" in plan.search_text
    assert "geography" in plan_query("Which geographies does it operate in?").metrics
    assert "growth" in plan_query("Are these the financials of a high growth company?").metrics


def test_concept_map_reads_analyst_concepts_only_when_asked() -> None:
    q = "Is 3M a capital-intensive business based on FY2022 data?"
    plain = plan_query(q, RESOLVER)
    read = plan_query(q, RESOLVER, concepts=True)
    assert plain.concepts == () and "income" not in plain.statements
    # capital intensity: capex (cash flow), PP&E and total assets (balance), revenue (income)
    assert read.concepts == ("capital_intensity",)
    assert set(read.statements) == {"balance", "cashflow", "income"}
    assert "total revenues" in read.search_text and "total revenues" not in plain.search_text
    assert read.to_dict()["concepts"] == ["capital_intensity"]


def test_concept_map_wording() -> None:
    def concepts(text: str) -> tuple[str, ...]:
        return plan_query(text, concepts=True).concepts

    assert concepts("What drove the operating margin change in FY2022?") == ("margin", "drivers")
    assert "gross profit" in plan_query("How did margins move?", concepts=True).search_text
    assert concepts("Is Pfizer spinning off any business?") == ("spin_off",)
    assert concepts("Did it retain customers?") == ("retention",)
    assert concepts("What were its retained earnings?") == ()  # a balance sheet line
    assert concepts("Who are the primary customers of Boeing?") == ("customers",)
    assert concepts("How much will it pay its retirees?") == ("retirement_benefits",)
    assert concepts("Which notes are registered to trade on a national securities exchange?") == (
        "listed_securities",
    )
    assert "section 12(b)" in plan_query("What is its trading symbol?", concepts=True).search_text
    # a plain metric question reads no concept; a named statement keeps the plan's statements
    assert concepts("What is the FY2018 capital expenditure amount?") == ()
    named = plan_query("Is it capital-intensive, using the balance sheet?", concepts=True)
    assert named.statements == ("balance",) and named.concepts == ("capital_intensity",)
