"""Flattened tables and European / Czech number formats in the numeric checks."""

from __future__ import annotations

from typing import Any

import pytest

from assay.dataset import Entry
from assay.gold.align import chunk_fingerprint, normalize_tokens
from assay.judge.checking import check_entry
from assay.judge.numbers import compare, extract_quantities, parse_quantity, table_rows

FLAT = (
    "Consolidated Statements of Income (Dollars in millions, except per share amounts) "
    "Year ended December 31, 2022 2021 Total revenues 66,608 63,110 Cost of revenues 27,374 "
    "25,123 Diluted earnings per share 4.50 4.10"
)


def _lines(text: str) -> str:
    for label in ("Year ended", "Total revenues", "Cost of revenues", "Diluted"):
        text = text.replace(" " + label, "\n" + label)
    return text.replace(") Year", ")\nYear")


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e",
        "query": "What were total revenues in FY2022?",
        "category": "lookup",
        "reference_answer": "$66.6 billion",
        "key_facts": [{"fact": "total revenues FY2022: $66.6 billion"}],
    }
    base.update(kw)
    return Entry.model_validate(base)


@pytest.mark.parametrize("text", [FLAT, _lines(FLAT)], ids=["joined", "lines"])
def test_flattened_table_reads_like_the_one_with_line_breaks(text: str) -> None:
    right = check_entry(
        entry(), "Total revenues were $66.6 billion in FY2022.", citations=["c"],
        chunk_text={"c": text}, evidence_text=[text],
    )  # fmt: skip
    assert right.values["numeric_correct"] is True
    assert right.values["contradiction_free"] is True, right.notes
    assert right.values["answer_correct"] is True
    assert right.values["numbers_verified"] is True
    other_row = check_entry(
        entry(reference_answer="$66,608 million", key_facts=[]),
        "Total revenues were $27,374 million in FY2022.",
        citations=["c"], chunk_text={"c": text}, evidence_text=[text],
    )  # fmt: skip
    assert other_row.numeric.reason == "mismatch"  # another row, not the prior period
    prior = check_entry(
        entry(reference_answer="$66,608 million", key_facts=[]),
        "Total revenues were $63,110 million in FY2022.",
        citations=["c"], chunk_text={"c": text}, evidence_text=[text],
    )  # fmt: skip
    assert prior.numeric.reason == "prior_period"


def test_table_rows_split_joined_rows_and_keep_prose_whole() -> None:
    rows = [FLAT[a:b] for a, b in table_rows(FLAT)]
    assert "Total revenues 66,608 63,110" in rows
    assert "Cost of revenues 27,374 25,123" in rows
    prose = "Revenue was $2,534 million in fiscal 2023, compared with $2,249 million in 2022."
    assert [prose[a:b] for a, b in table_rows(prose)] == [prose]
    pdf = "Net sales\n$\n5,363\n4,869\nOther\n9"
    assert [pdf[a:b] for a, b in table_rows(pdf)] == ["Net sales\n$\n5,363\n4,869", "Other\n9"]


def test_per_share_rows_keep_their_scale_under_a_unit_line_that_excepts_them() -> None:
    figs = {q.text: q for q in extract_quantities(FLAT)}
    assert figs["66,608"].value == 66_608  # bare before the unit line is applied
    from assay.judge.numbers import extract_with_units

    scaled = {q.text: q for q in extract_with_units(FLAT)}
    assert scaled["66,608"].value == 66_608e6
    assert scaled["4.50"].value == 4.5


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1 234,5 mil. Kč", "1234.5 million CZK"),
        ("1 234,50 Kč", "CZK 1,234.50"),
        ("1.234,50 €", "EUR 1,234.5"),
        ("€1,5 mil.", "1.5 million EUR"),
        ("12,5 %", "12.5%"),
        ("2,1 mld. Kč", "2.1 billion CZK"),
        ("1\u00a0234\u00a0567 Kč", "1,234,567 CZK"),
    ],
)
def test_european_and_czech_formats(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert qa is not None and qb is not None
    assert compare(qb, qa).status == "match", (qa, qb)
    assert compare(qa, qb).status == "match"


def test_currencies_must_agree_and_us_grouping_still_wins() -> None:
    czk = parse_quantity("1 234,5 mil. Kč")
    usd = parse_quantity("$1,234.5 million")
    assert czk is not None and usd is not None and czk.currency == "CZK"
    assert compare(czk, usd).status == "mismatch" and "currency" in compare(czk, usd).note
    (q,) = extract_quantities("sales of 1,234 units")
    assert q.value == 1234
    # two table cells separated by a plain space stay two figures
    assert [q.value for q in extract_quantities("Employees 120 450")] == [120, 450]


def test_quote_alignment_folds_czech_formats_and_diacritics() -> None:
    assert normalize_tokens("1 234,50 Kč") == normalize_tokens("1234.5 CZK") == ["1234.5", "czk"]
    assert normalize_tokens("1 234,5 mil. Kč") == normalize_tokens("1234.5 million CZK")
    assert normalize_tokens("Nestlé") == ["nestle"]
    # fingerprints recorded before keep their value
    assert chunk_fingerprint("Net sales $1,234.50") == chunk_fingerprint("net SALES 1234.5")
    assert chunk_fingerprint("1 234,50 Kč") != chunk_fingerprint("1234.5 CZK")
