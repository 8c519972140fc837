"""The facts table read from statement tables: hand-worked rows, and through corpus build."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.corpus import Fact, build_corpus, detect_statement, extract_facts, parse_table

from .test_build import _docs, _src

CASH = """Consolidated Statement of Cash Flows
Years ended December 31
(Millions) 2018 2017 2016
Cash Flows from Investing Activities:
Purchases of property, plant and equipment (PP&E) $ (1,577) $ (1,373) $ (1,420)
Proceeds from sale of PP&E and other assets 262 49 58
Acquisitions, net of cash acquired 13 (2,023) —
Purchases and proceeds from maturities and sale of marketable
securities and investments, net 669 (798) (163)
Free cash flow conversion 91 % 100 % 104 %
Net income attributable to 3M — diluted 8.89 7.93 8.16
Note 5 12 7 3 1
46"""


def test_rows_are_read_one_figure_per_year_column() -> None:
    rows = {(label, year): (v, unit, scale) for label, year, v, unit, scale in parse_table(CASH)}
    capex = "Purchases of property, plant and equipment (PP&E)"
    assert rows[(capex, 2018)] == (-1577.0, "USD", 1e6)  # parentheses are negative
    assert rows[(capex, 2016)] == (-1420.0, "USD", 1e6)
    assert rows[("Acquisitions, net of cash acquired", 2016)] == (0.0, "USD", 1e6)  # a dash is 0
    # a label that wraps onto the next line is joined
    wrapped = (
        "Purchases and proceeds from maturities and sale of marketable securities and "
        "investments, net"
    )
    assert rows[(wrapped, 2017)] == (-798.0, "USD", 1e6)
    assert rows[("Free cash flow conversion", 2017)] == (100.0, "percent", None)
    # four figures under three year columns: not read
    assert not any(label.startswith("Note 5") for label, _ in rows)
    assert len({y for _, y in rows}) == 3


def test_header_with_dates_and_a_shifted_fiscal_year() -> None:
    text = (
        "Consolidated Balance Sheets\n$ in millions, except per share amounts\n"
        "January 28, 2023 January 29, 2022\nMerchandise inventories 5,140 5,965\n"
        "Total assets $ 15,803 $ 17,504\n"
    )
    row = {"chunk_id": "bby/39/1", "doc_id": "bby", "pages": [39], "kind": "table",
           "text": text, "company": "Best Buy", "fiscal_year": 2022, "fiscal_quarter": None}  # fmt: skip
    facts = extract_facts([row])
    assert detect_statement(text) == "balance"
    total = [f for f in facts if f.line_item == "Total assets"]
    # the filing calls the year ended January 2023 fiscal 2022: every column moves by one
    assert [(f.fiscal_year, f.value, f.column) for f in total] == [
        (2022, 15803.0, 0),
        (2021, 17504.0, 1),
    ]
    assert total[0].statement == "balance" and total[0].page == 39
    assert total[0].figure() == "$15,803 million" and total[0].amount == pytest.approx(15.803e9)


def test_figures_read_as_an_analyst_writes_them() -> None:
    f = Fact("3M", "d", 2018, None, "cashflow", "Capex", -1577.0, "USD", 1e6, 60, "d/60/1", 0)
    assert f.figure() == "-$1,577 million"
    assert (
        Fact(**{**f.to_dict(), "unit": "USD per share", "value": 8.89, "scale": None}).figure()
        == "$8.89 per share"
    )
    assert (
        Fact(**{**f.to_dict(), "unit": "percent", "value": 91.5, "scale": None}).figure() == "91.5%"
    )


def test_prose_chunks_give_no_facts() -> None:
    assert extract_facts([{"chunk_id": "a/1/0", "doc_id": "a", "pages": [1], "kind": "prose",
                           "text": "Revenue 2023 2022\nNet sales 5 4"}]) == []  # fmt: skip


def test_corpus_build_writes_the_facts_table(
    tmp_path: Path, pdf_factory: Callable[[list[list[str]]], bytes]
) -> None:
    out = tmp_path / "corpus"
    m = build_corpus(_src(tmp_path, pdf_factory), meta=_docs(), out_dir=out, workers=1)
    rows = [json.loads(x) for x in (out / "facts.jsonl").read_text().splitlines()]
    got = {(r["line_item"], r["fiscal_year"]): r for r in rows}
    assert got[("Net sales", 2023)]["value"] == 5363.0
    assert got[("Net income", 2022)]["value"] == 998.0
    assert got[("Net sales", 2023)]["statement"] == "income"
    assert got[("Net sales", 2023)]["scale"] == 1e6 and got[("Net sales", 2023)]["page"] == 2
    assert got[("Net sales", 2023)]["chunk_id"].split("~")[0] == "acme-2023-10k/2/1"
    assert "facts.jsonl" in m.outputs


def test_rows_joined_on_one_line_are_read_one_by_one() -> None:
    from assay.corpus import parse_table, split_joined_rows

    line = (
        "2022 2021 2020 Cash Flows - Operating Activities Net earnings $ 2,735.0 $ 2,346.0 "
        "$ 2,210.8 Adjustments to reconcile net earnings to net cash: Depreciation and "
        "amortization 570.3 601.3 594.7 Dividends paid (1,244.5) (1,246.4) (1,195.8)"
    )
    rows = split_joined_rows(line)
    assert rows[0] == "2022 2021 2020" and "Dividends paid (1,244.5) (1,246.4) (1,195.8)" in rows
    assert "Depreciation and amortization 570.3 601.3 594.7" in rows
    got = {
        (label, year): value for label, year, value, _, _ in parse_table("(In millions)\n" + line)
    }
    assert got[("Dividends paid", 2022)] == -1244.5
    assert got[("Depreciation and amortization", 2020)] == 594.7
    # a header of fiscal years and a header of dates stay whole
    assert split_joined_rows("Fiscal 2022 Fiscal 2021 % change") == [
        "Fiscal 2022 Fiscal 2021 % change"
    ]
    assert split_joined_rows("January 28, 2023 January 29, 2022") == [
        "January 28, 2023 January 29, 2022"
    ]
