from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.judge.numbers import (
    Kind,
    compare,
    extract_quantities,
    extract_with_units,
    find_match,
    parse_quantity,
    scale_hint,
)


def q(text: str, **kw: object):  # type: ignore[no-untyped-def]
    out = parse_quantity(text, **kw)  # type: ignore[arg-type]
    assert out is not None, text
    return out


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("$4.2 billion", "4,213 million"),
        ("$4.2 billion", "USD 4.21bn"),
        ("4,213 million", "USD 4.21bn"),
        ("up about 40 bp", "expanded by roughly 0.40 percentage points"),
        ("30.8%", "30.8 percent"),
        ("$1,577 million", "$1.577 billion"),
        ("-$546 million", "$(546) million"),
    ],
)
def test_issue_examples_agree_both_ways(a: str, b: str) -> None:
    assert compare(q(a), q(b)).status == "match"
    assert compare(q(b), q(a)).status == "match"


@pytest.mark.parametrize(
    ("ref", "ans"),
    [("30.8%", "31.0%"), ("65.4%", "65.2%"), ("0.4%", "0.45%"), ("17.98", "18.35")],
)
def test_outside_rounding_tolerance_is_a_mismatch(ref: str, ans: str) -> None:
    assert compare(q(ref), q(ans)).status == "mismatch"


def test_truncation_one_unit_below_agrees_but_not_above() -> None:
    assert compare(q("3.46"), q("3.45")).ok  # 3.456 truncated
    assert not compare(q("3.46"), q("3.47")).ok


def test_truncation_allowance_is_capped_at_one_percent() -> None:
    # one unit of "0.40" (trailing zero is formatting) is a quarter of the value: no widening
    ref = q("$0.40", kind=Kind.currency, scale=1e9)
    assert not compare(ref, q("$327 million")).ok
    assert compare(ref, q("$0.389 billion")).ok  # within half a unit
    assert not compare(q("-0.02"), q("-1.42%")).ok


def test_coarse_answer_capped_at_one_percent() -> None:
    # the answer's own rounding is honoured only up to 1% of the reference
    assert not compare(q("4,213 million"), q("about $4 billion")).ok


def test_thousand_fold_error_is_reported_as_scale_error() -> None:
    res = compare(q("$4,213 million"), q("$4,213 billion"))
    assert res.status == "scale_error"
    assert "scale error" in res.note
    assert res.factor == 1000.0
    res = compare(q("$5,466 million"), q("$5,466,312"))
    assert res.status == "scale_error"


def test_percent_fraction_and_bare_readings() -> None:
    assert compare(q("30.8%"), q("0.308")).ok
    assert compare(q("-0.02"), q("-1.53%")).ok  # -0.0153 rounds to -0.02
    assert not compare(q("-0.02"), q("-0.9%")).ok  # below the truncation band
    assert not compare(q("-0.02"), q("-2.5%")).ok  # rounds half-up to -0.03


def test_bare_answer_takes_reference_scale() -> None:
    ref = q("1577", kind=Kind.currency, scale=1e6)
    assert ref.value == 1577e6
    assert compare(ref, q("1,577")).ok
    assert compare(ref, q("$1,577 million")).ok
    assert compare(ref, q("$1.58 billion")).ok


def test_years_dates_forms_and_list_markers_are_not_amounts() -> None:
    text = (
        "1. In FY2022 (10-K filed March 3, 2023), Q2 revenue was $5.2 billion, "
        "up 3% from 2021.\n2. Item 7 shows it."
    )
    got = [x.text for x in extract_quantities(text)]
    assert got == ["$5.2 billion", "3%"]
    with_years = extract_quantities(text, keep_years=True)
    assert any(x.is_year and x.value == 2021 for x in with_years)


def test_a_text_read_again_gives_the_same_figures_in_a_list_of_its_own() -> None:
    # the figures of a text are read once and kept: a caller changing its list changes no
    # later reading, and the reading with years is kept apart from the one without
    text = "In FY2022 revenue was $5.2 billion, up 3% from 2021."
    first = extract_quantities(text)
    assert [x.text for x in first] == ["$5.2 billion", "3%"]
    first.clear()
    again = extract_quantities(text)
    assert [x.text for x in again] == ["$5.2 billion", "3%"] and again is not first
    with_years = extract_quantities(text, keep_years=True)
    assert [x.text for x in with_years if x.is_year] == ["2021"]
    assert [x.text for x in extract_quantities(text)] == ["$5.2 billion", "3%"]


def test_negative_in_parentheses_and_kinds() -> None:
    (x,) = extract_quantities("Purchases of PP&E (1,577)")
    assert x.value == -1577 and x.kind is Kind.number
    (y,) = extract_quantities("margin fell 25 bps")
    assert y.kind is Kind.points and math.isclose(y.value, 0.25)
    (z,) = extract_quantities("USD 4.21bn")
    assert z.kind is Kind.currency and z.value == pytest.approx(4.21e9)


def test_scale_hint_from_question() -> None:
    assert scale_hint("What is capex (in USD millions)?") == (Kind.currency, 1e6)
    assert scale_hint("Answer in USD billions.") == (Kind.currency, 1e9)
    assert scale_hint("Answer in units of percents and round") == (Kind.percent, None)
    assert scale_hint("What is the ratio?") == (None, None)


def test_find_match_prefers_match_over_scale_error() -> None:
    ref = q("$4.2 billion")
    res = find_match(ref, extract_quantities("first $4.2 million, then $4.2 billion"))
    assert res.ok and res.answer is not None and res.answer.text == "$4.2 billion"


@settings(max_examples=150, deadline=None)
@given(
    value=st.floats(min_value=1.0, max_value=9.99e11, allow_nan=False),
    unit=st.sampled_from([(1e6, "million"), (1e9, "billion"), (1e3, "thousand")]),
)
def test_same_amount_written_two_ways_agrees(value: float, unit: tuple[float, str]) -> None:
    scale, word = unit
    a = f"${value / scale:,.2f} {word}"
    # skip the exact half-unit boundary, where half-up rounding is ambiguous
    assume(abs(float(a[1:].split()[0].replace(",", "")) * scale - value) < 0.00499 * scale)
    b = f"${value:,.2f}"
    assert compare(q(a), q(b)).ok, (a, b)


@settings(max_examples=150, deadline=None)
@given(
    value=st.floats(min_value=1.0, max_value=1e6, allow_nan=False),
    factor=st.sampled_from([1e3, 1e6]),
)
def test_thousandfold_multiples_are_never_matches(value: float, factor: float) -> None:
    shown = float(f"{value:.2f}")  # the multiple of the figure as written ($1.125 reads $1.12)
    ref = q(f"${shown:,.2f} million")
    wrong = q(f"${shown * factor:,.2f} million")
    assert compare(ref, wrong).status == "scale_error"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_extraction_never_crashes_and_spans_are_in_text(text: str) -> None:
    for x in extract_quantities(text):
        assert 0 <= x.start <= x.end <= len(text)
        assert math.isfinite(x.value)


def test_docs_examples_run() -> None:
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "answers.md"
    res = doctest.testfile(str(doc), module_relative=False, verbose=False)
    assert res.attempted >= 5 and res.failed == 0


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ('"Net income 66 47" [fern-2023-q2-ex99/1/2; Fernleaf 8-K]', [66, 47]),
        ("for fiscal 2023 (ended 2023-06-30)", []),
        ("as of 2022/12/31 and 12/31/2022, up 5%", [5.0]),
        ("COVID-19 costs of $12 million", [12e6]),
        ("Common equity tier 1 capital ratio 11.5%", [11.5]),
        ("Fiscal 2023 Fiscal 2022 % change", []),
        ("Exhibit 99 shows revenue of $3.2 billion", [3.2e9]),
    ],
)
def test_ids_dates_and_labels_are_not_figures(text: str, figures: list[float]) -> None:
    assert [f.value for f in extract_quantities(text)] == figures


def test_a_unit_line_scales_the_bare_figures_below_it() -> None:
    text = (
        "Title (Millions) 2018 2017\nCapex (1,577) (1,373)\nRevenue was $3.2 billion.\n"
        "(in thousands, except per share data)\nNet income 47,039\n"
        "Diluted earnings per share\n0.16\nMargin 12.5% and 2.7x\n"
        "In millions\nDeposits 11,574\n"
    )
    got = [(f.text, f.value, f.scale_stated) for f in extract_with_units(text)]
    assert got == [
        ("(1,577)", -1577e6, True),
        ("(1,373)", -1373e6, True),
        ("$3.2 billion", 3.2e9, True),
        ("47,039", 47_039_000.0, True),
        ("0.16", 0.16, True),  # a per-share row, its cell on a line of its own
        ("12.5%", 12.5, False),
        ("2.7x", 2.7, False),
        ("11,574", 11_574e6, True),
    ]
    assert [f.value for f in extract_with_units("Capex 1,577")] == [1577]
