"""Standard metrics from line items: question parsing, formulas, formatting."""

from __future__ import annotations

import math

import pytest

from assay.systems.filings.metrics import (
    FORMULAS,
    ITEMS,
    Figure,
    evaluate,
    format_value,
    parse_metric_question,
)

# a small company's statements, USD (balances at year end, flows over the year)
BOOK: dict[tuple[str, int], float] = {
    ("revenue", 2021): 1000e6, ("revenue", 2022): 1200e6, ("revenue", 2023): 1500e6,
    ("cogs", 2022): 700e6, ("cogs", 2023): 900e6,
    ("operating_income", 2021): 100e6, ("operating_income", 2022): 150e6,
    ("operating_income", 2023): 210e6,
    ("depreciation", 2021): 40e6, ("depreciation", 2022): 45e6, ("depreciation", 2023): 60e6,
    ("net_income", 2023): 120e6, ("dividends", 2023): -48e6, ("capex", 2023): -75e6,
    ("ppe", 2022): 380e6, ("ppe", 2023): 420e6,
    ("total_assets", 2022): 2000e6, ("total_assets", 2023): 2400e6,
    ("inventory", 2022): 150e6, ("inventory", 2023): 170e6,
    ("payables", 2022): 90e6, ("payables", 2023): 110e6,
    ("receivables", 2022): 200e6, ("receivables", 2023): 240e6,
    ("current_assets", 2023): 800e6, ("current_liabilities", 2023): 500e6,
    ("operating_cash_flow", 2023): 260e6,
}  # fmt: skip


def get(item: str, year: int) -> Figure | None:
    v = BOOK.get((item, year))
    return None if v is None else Figure(item, year, v, item, chunk_id=f"c/{item}/{year}", page=1)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the FY2023 fixed asset turnover ratio for Acme?", 1500 / 400),
        ("What is Acme's FY2023 inventory turnover ratio?", 900 / 160),
        ("What is the FY2023 asset turnover ratio for Acme?", 1500 / 2200),
        ("What is Acme's FY2023 days payable outstanding (DPO)?", 365 * 100 / (900 + 20)),
        ("What is Acme's FY2023 days sales outstanding?", 365 * 220 / 1500),
        ("What is Acme's FY2023 return on assets (ROA)?", 120 / 2200),
        ("What is the FY2023 operating cash flow ratio for Acme?", 260 / 500),
        ("What is Acme's FY2023 current ratio?", 800 / 500),
        ("What is Acme's FY2023 quick ratio?", (800 - 170) / 500),
        ("What is the FY2023 retention ratio for Acme?", (120 - 48) / 120),
        ("What is the FY2023 capex as a % of revenue for Acme?", 100 * 75 / 1500),
        ("What is Acme's FY2023 COGS % margin?", 100 * 900 / 1500),
        ("What is Acme's FY2023 gross margin?", 100 * 600 / 1500),
        ("What is the FY2023 unadjusted EBITDA % margin for Acme?", 100 * 270 / 1500),
        ("What is Acme's FY2023 free cash flow (in USD millions)?", 185e6),
        ("What is the FY2023 capital expenditure amount (in USD millions) for Acme?", 75e6),
        ("What is Acme's year-over-year change in revenue from FY2022 to FY2023?", 25.0),
        ("What is Acme's 2 year total revenue CAGR from FY2021 to FY2023?", 100 * (1.5**0.5 - 1)),
        (
            "What is the FY2021 - FY2023 3 year average operating income % margin for Acme?",
            100 * (100 / 1000 + 150 / 1200 + 210 / 1500) / 3,
        ),
    ],
)
def test_formulas_on_a_known_book(question: str, expected: float) -> None:
    q = parse_metric_question(question)
    assert q is not None, question
    res = evaluate(q, get)
    assert res is not None
    assert math.isclose(res.value, expected, rel_tol=1e-9), (q, res.value, expected)
    assert res.figures and all(f.chunk_id for f in res.figures)  # every figure read is cited


def test_question_reading() -> None:
    q = parse_metric_question(
        "Assume you are an analyst. Using the balance sheet: what is the year end FY2018 net "
        "PPNE for 3M? Answer in USD billions."
    )
    assert q is not None and (q.target, q.shape, q.years, q.scale) == (
        "ppe",
        "single",
        (2018,),
        1e9,
    )
    q = parse_metric_question(
        "What is the FY2017 - FY2019 3 year average of capex as a % of revenue for X? Answer in "
        "units of percents and round to one decimal place."
    )
    assert q is not None and q.shape == "average" and q.years == (2017, 2018, 2019)
    assert q.decimals == 1 and q.percent
    # not a request for a figure, or a figure no formula here honours
    assert parse_metric_question("Does X have positive working capital based on FY2022?") is None
    assert parse_metric_question("How much was the change in sales in FY2023 vs FY2022, "
                                 "excluding the impact of FX movement?") is None  # fmt: skip
    assert parse_metric_question("Who audited X in FY2022?") is None


def test_a_missing_figure_or_a_zero_gives_no_answer() -> None:
    q = parse_metric_question("What is Acme's FY2023 interest coverage ratio?")
    assert q is not None and evaluate(q, get) is None  # no interest expense in the book
    q = parse_metric_question("What is Acme's FY2030 current ratio?")
    assert q is not None and evaluate(q, get) is None


def test_formatting() -> None:
    assert format_value(1577e6, "money", scale=1e6) == "$1,577 million"
    assert format_value(8.7e9, "money", scale=1e9) == "$8.70 billion"
    assert format_value(24.2567, "ratio", decimals=2) == "24.26"
    assert format_value(30.77, "percent", decimals=1) == "30.8%"
    assert format_value(93.861, "days") == "93.86 days"
    assert format_value(-0.0249, "ratio", decimals=2) == "-0.02"


def test_every_formula_and_item_is_named_once() -> None:
    names = [f.name for f in FORMULAS]
    assert len(names) == len(set(names))
    assert not set(names) & set(ITEMS)


def test_yes_no_questions_on_a_metric() -> None:
    from assay.systems.filings.metrics import judge_metric, parse_judgement

    cases = [
        ("Does Acme have positive working capital based on FY2023 data?", True),
        ("Has Acme increased its total assets between FY2022 and FY2023?", True),
        ("Did Acme decrease its inventory between FY2022 and FY2023?", False),
        ("Does Acme have a healthy liquidity profile based on its quick ratio for FY2023?", True),
        ("Does Acme have an improving operating margin profile as of FY2023?", True),
    ]
    for question, verdict in cases:
        jq = parse_judgement(question)
        assert jq is not None, question
        res = judge_metric(jq, get)
        assert res is not None and res.verdict is verdict, (question, res)
    assert parse_judgement("What is Acme's FY2023 current ratio?") is None  # not yes/no
    assert parse_judgement("Has Acme paid dividends in FY2023?") is None  # no verdict word


def test_more_standard_formulas() -> None:
    book = {**BOOK, ("income_tax", 2023): 30e6, ("pretax_income", 2023): 150e6}

    def g(item: str, year: int) -> Figure | None:
        v = book.get((item, year))
        return None if v is None else Figure(item, year, v, item)

    q = parse_metric_question("What is Acme's FY2023 effective tax rate?")
    assert q is not None and (res := evaluate(q, g)) is not None and res.value == pytest.approx(20)
    q = parse_metric_question("What is Acme's FY2023 cash conversion cycle?")
    assert q is not None and (res := evaluate(q, g)) is not None
    dio, dso, dpo = 365 * 160 / 900, 365 * 220 / 1500, 365 * 100 / 920
    assert res.value == pytest.approx(dio + dso - dpo)
