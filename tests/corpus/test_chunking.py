from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.corpus import ChunkSettings, chunk_document, chunk_page, is_table_row, numeric_tail

STATEMENT = """Table of Contents
Acme Corp and Subsidiaries
Consolidated Statement of Cash Flows
Years ended December 31
(in millions, except per share data)
2023 2022 2021
Cash Flows from Operating Activities
Net income $ 5,363 $ 4,869 $ 5,058
Depreciation and amortization 1,488 1,544 1,474
Company pension contributions (370) (967) (383)
Stock-based compensation expense 302 324 298
Deferred income taxes (57) 107 7
Changes in assets and liabilities
Accounts receivable (305) (245) (313)
Inventories (509) (387) 57
Other — net 120 — 76
Net cash provided by operating activities 6,439 6,240 6,662
Cash Flows from Investing Activities
Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)
Proceeds from sale of PP&E and other assets 262 49 58
Net cash used in investing activities 222 (3,086) (1,403)
Earnings per share 9.09 8.02 8.35"""

BODY_ROWS = [ln for ln in STATEMENT.splitlines() if is_table_row(ln) and not ln.startswith("2023")]


def _prose(n_sentences: int, seed: int = 0) -> str:
    words = ["revenue", "growth", "segment", "margin", "customers", "pricing", "demand", "costs"]
    out = []
    for i in range(n_sentences):
        w = [words[(seed + i * 3 + j) % len(words)] for j in range(11)]
        out.append(f"Sentence {i} says the {' '.join(w)}.")
    return "\n".join(out)


def test_numeric_tail_counts_trailing_cells_only() -> None:
    assert numeric_tail(["Net", "income", "$", "5,363", "$", "4,869", "$", "5,058"])[0] == 3
    assert numeric_tail(["Other", "—", "net", "120", "—", "76"])[0] == 3
    assert (
        numeric_tail(
            ["Revenue", "grew", "5%", "to", "$1,234", "million", "in", "2023", "and", "more"]
        )[0]
        == 0
    )
    assert numeric_tail(["Gross", "margin", "41.2", "%", "40.1", "%"])[0] == 2
    assert not is_table_row("In 2023 revenue was 1,234, up from 1,111 last year.")


def test_statement_is_one_table_chunk_with_unit_and_header() -> None:
    chunks = chunk_page("acme-2023-10k", 60, STATEMENT, ChunkSettings())
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) == 1
    text = tables[0].text
    assert "(in millions, except per share data)" in text
    assert "2023 2022 2021" in text
    for row in BODY_ROWS:
        assert row in text.splitlines()
    assert tables[0].extra["unit"] == "(in millions, except per share data)"
    # the char span covers the table's own lines in the page text
    assert tables[0].char_start == 0 and tables[0].char_end >= STATEMENT.index(BODY_ROWS[-1]) + len(
        BODY_ROWS[-1]
    )


@pytest.mark.parametrize("budget", [40, 60, 90])
def test_split_table_carries_unit_and_header_and_keeps_rows_intact(budget: int) -> None:
    s = ChunkSettings(table_max_tokens=budget)
    chunks = chunk_page("acme-2023-10k", 60, STATEMENT, s)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) >= 2
    seen: list[str] = []
    for t in tables:
        lines = t.text.splitlines()
        assert "(in millions, except per share data)" in lines, (
            "unit line on every chunk of the table"
        )
        assert "2023 2022 2021" in lines, "column header on every chunk of the table"
        assert t.extra["table_parts"] == len(tables)
        seen.extend(ln for ln in lines if ln in BODY_ROWS)
    # every row appears whole, exactly once across the table's chunks
    assert sorted(seen) == sorted(BODY_ROWS)


def test_unit_found_above_the_header() -> None:
    page = (
        "Segment results\n(Dollars in thousands)\nThe table below shows revenue by segment for the year.\n"
        + "\n".join(f"Segment {i} {100 + i} {90 + i}" for i in range(8))
    )
    chunks = chunk_page("d", 1, page, ChunkSettings(table_max_tokens=30))
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) >= 2
    assert all("(Dollars in thousands)" in t.text.splitlines() for t in tables)
    assert all(t.extra["unit"] == "(Dollars in thousands)" for t in tables)


def test_table_continued_on_next_page_inherits_header_and_unit() -> None:
    p1 = "Income statement\n(in millions)\n2023 2022\n" + "\n".join(
        f"Line item {i} {i * 10} {i * 9}" for i in range(1, 6)
    )
    p2 = "Table of Contents\n" + "\n".join(f"Other item {i} {i * 7} {i * 6}" for i in range(1, 6))
    chunks = chunk_document("d", [p1, p2])
    second = [c for c in chunks if c.page == 2 and c.kind == "table"]
    assert second and second[0].extra.get("continued") is True
    lines = second[0].text.splitlines()
    assert "2023 2022" in lines and "(in millions)" in lines


def test_prose_chunks_respect_size_overlap_and_spans() -> None:
    page = _prose(60)
    s = ChunkSettings(target_tokens=80, max_tokens=100, overlap_tokens=15)
    chunks = chunk_page("d", 3, page, s)
    assert len(chunks) > 3
    assert all(c.kind == "prose" for c in chunks)
    assert all(len(c.text.split()) <= s.max_tokens for c in chunks)
    for a, b in itertools.pairwise(chunks):
        assert b.char_start < a.char_end, "consecutive prose chunks overlap"
    for c in chunks:
        assert page[c.char_start : c.char_end].split() == c.text.split()
    assert [c.chunk_id.split("~")[0] for c in chunks] == [
        f"d/3/{i}" for i in range(1, len(chunks) + 1)
    ]
    assert all(c.chunk_id == f"d/3/{c.n}~{c.content_hash[:8]}" for c in chunks)


def test_ids_are_stable_and_pages_one_based() -> None:
    pages = [_prose(5), STATEMENT, "", _prose(30, seed=2)]
    a = chunk_document("acme", pages)
    b = chunk_document("acme", pages)
    assert [c.to_row() for c in a] == [c.to_row() for c in b]
    assert {c.page for c in a} == {1, 2, 4}
    assert all(re.fullmatch(r"acme/\d+/\d+~[0-9a-f]{8}", c.chunk_id) for c in a)
    assert len({c.chunk_id for c in a}) == len(a)


def test_long_html_paragraph_is_split() -> None:
    para = " ".join(f"Word{i} is here." for i in range(400))
    chunks = chunk_page(
        "d", 1, para, ChunkSettings(target_tokens=100, max_tokens=120, overlap_tokens=10)
    )
    assert len(chunks) >= 8
    assert all(len(c.text.split()) <= 120 for c in chunks)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abcdefgh ", min_size=1, max_size=60),
            st.builds(
                lambda a, b, c: f"Item {a} {b:,} {c:,}",
                st.integers(0, 99),
                st.integers(0, 10**6),
                st.integers(0, 10**6),
            ),
        ),
        min_size=1,
        max_size=80,
    ),
    st.integers(20, 120),
)
def test_every_token_of_the_page_lands_in_some_chunk(lines: list[str], target: int) -> None:
    page = "\n".join(lines)
    s = ChunkSettings(
        target_tokens=target,
        max_tokens=target + 20,
        overlap_tokens=min(10, target - 1),
        table_max_tokens=max(40, target),
    )
    chunks = chunk_page("d", 1, page, s)
    covered = " ".join(c.text for c in chunks).split()
    assert set(page.split()) <= set(covered)
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    for c in chunks:
        assert 0 <= c.char_start <= c.char_end <= len(page)


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        ChunkSettings(target_tokens=400, max_tokens=300)
    with pytest.raises(ValueError):
        ChunkSettings(overlap_tokens=300)
