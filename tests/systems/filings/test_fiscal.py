from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.corpus import FiscalCalendar
from assay.systems.filings.fiscal import parse_periods

MSFT = FiscalCalendar.parse("06-30")
NIKE = FiscalCalendar.parse("05-31")
APPLE = FiscalCalendar.parse("09-30")
CAL = FiscalCalendar.parse("12-31")
FOOTLOCKER = FiscalCalendar.infer("01-31", [(2022, dt.date(2023, 1, 28))])

# company calendar x phrasing -> fiscal (year, quarter or None) pairs
TABLE = [
    (MSFT, "FY24", [(2024, None)]),
    (MSFT, "FY2024", [(2024, None)]),
    (MSFT, "fiscal 2024", [(2024, None)]),
    (MSFT, "fiscal year 2024", [(2024, None)]),
    (MSFT, "2024", [(2024, None)]),
    (MSFT, "calendar 2024", [(2024, 3), (2024, 4), (2025, 1), (2025, 2)]),
    (MSFT, "3Q23", [(2023, 3)]),
    (MSFT, "Q3 FY24", [(2024, 3)]),
    (MSFT, "first half of 2022", [(2022, 1), (2022, 2)]),
    (MSFT, "as of August 30, 2023", [(2024, 1)]),
    (NIKE, "FY2024", [(2024, None)]),
    (NIKE, "calendar 2024", [(2024, 3), (2024, 4), (2025, 1), (2025, 2)]),
    (NIKE, "May 26, 2023", [(2023, 4)]),
    (NIKE, "June 1, 2023", [(2024, 1)]),
    (APPLE, "fiscal 2023", [(2023, None)]),
    (APPLE, "October 15, 2023", [(2024, 1)]),
    (APPLE, "Q1 2024", [(2024, 1)]),
    (APPLE, "calendar 2023", [(2023, 2), (2023, 3), (2023, 4), (2024, 1)]),
    (CAL, "calendar 2024", [(2024, 1), (2024, 2), (2024, 3), (2024, 4)]),
    (CAL, "Q2'2023", [(2023, 2)]),
    (CAL, "2022 Q2", [(2022, 2)]),
    (CAL, "Q2 of FY2022", [(2022, 2)]),
    (CAL, "second fiscal quarter of 2023", [(2023, 2)]),
    (CAL, "H2 2021", [(2021, 3), (2021, 4)]),
    (FOOTLOCKER, "January 15, 2023", [(2022, 4)]),
    (FOOTLOCKER, "fiscal 2022", [(2022, None)]),
]


@pytest.mark.parametrize(("cal", "phrase", "expected"), TABLE)
def test_phrasing_maps_to_fiscal_periods(
    cal: FiscalCalendar, phrase: str, expected: list[tuple[int, int | None]]
) -> None:
    refs = parse_periods(phrase)
    assert len(refs) == 1, refs
    assert refs[0].fiscal_quarters(cal) == expected


def test_year_ends_per_company() -> None:
    assert MSFT.year_end(2024) == dt.date(2024, 6, 30)
    assert MSFT.year_start(2024) == dt.date(2023, 7, 1)
    assert NIKE.year_end(2024) == dt.date(2024, 5, 31)
    assert APPLE.year_end(2023) == dt.date(2023, 9, 30)
    assert FOOTLOCKER.naming == "start" and FOOTLOCKER.year_end(2022) == dt.date(2023, 1, 31)
    assert MSFT.quarter_end(2024, 1) == dt.date(2023, 9, 30)
    assert NIKE.quarter_end(2024, 2) == dt.date(2023, 11, 30)


def test_fiscal_2024_is_not_calendar_2024_for_microsoft() -> None:
    fiscal = parse_periods("fiscal 2024")[0].fiscal_quarters(MSFT)
    calendar = parse_periods("calendar 2024")[0].fiscal_quarters(MSFT)
    assert fiscal != calendar
    assert (2025, 1) in calendar and all(fy == 2024 for fy, _ in fiscal)


def test_52_53_week_period_end_within_tolerance() -> None:
    assert NIKE.period_ending(dt.date(2024, 5, 31)) == (2024, 4)
    assert FiscalCalendar.parse("01-31").period_ending(dt.date(2024, 2, 3)) == (2024, 4)
    assert MSFT.period_ending(dt.date(2024, 5, 1)) is None


def test_relative_and_ranges() -> None:
    assert [r.relative for r in parse_periods("what was it in the latest quarter")] == [
        "latest_quarter"
    ]
    assert [r.relative for r in parse_periods("total debt as of year end")] == ["latest_year"]
    # an explicit year beats the relative phrase
    assert [r.fiscal_year for r in parse_periods("year end FY2018 net PPNE")] == [2018]
    assert [r.fiscal_year for r in parse_periods("the FY2017 - FY2019 average")] == [
        2017,
        2018,
        2019,
    ]
    assert [r.fiscal_year for r in parse_periods("from FY2020 to FY2022")] == [2020, 2021, 2022]
    assert [(r.fiscal_year, r.quarter) for r in parse_periods("Q3")] == [(None, 3)]


def test_numbers_are_not_years() -> None:
    assert parse_periods("revenue of $2024 million and 2,024 units, up 2019%") == []


@given(
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2090, 12, 31)),
    st.sampled_from([MSFT, NIKE, APPLE, CAL, FOOTLOCKER]),
)
def test_period_of_contains_the_date(day: dt.date, cal: FiscalCalendar) -> None:
    fy, q = cal.period_of(day)
    assert cal.quarter_start(fy, q) <= day <= cal.quarter_end(fy, q)


def test_quarters_of_a_year_ending_on_a_month_end_end_on_month_ends() -> None:
    from assay.corpus import FiscalCalendar

    june = FiscalCalendar.parse("06-30")
    assert [june.quarter_end(2024, q).isoformat() for q in (1, 2, 3, 4)] == [
        "2023-09-30", "2023-12-31", "2024-03-31", "2024-06-30",
    ]  # fmt: skip
    sept = FiscalCalendar.parse("09-30")
    assert sept.quarter_end(2024, 1).isoformat() == "2023-12-31"
    # a year ending mid-month keeps its day
    mid = FiscalCalendar.parse("01-28")
    assert mid.quarter_end(2024, 1).isoformat() == "2023-04-28"
