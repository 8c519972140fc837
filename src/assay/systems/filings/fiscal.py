"""Fiscal calendars and fiscal periods as analysts write them.

The calendar itself (when a company's fiscal years and quarters end, and how its years are
named) is `assay.corpus.fiscal.FiscalCalendar`.

`parse_periods(text)` turns the period phrases of a query ("FY24", "fiscal 2024", "3Q23",
"first half of 2022", "latest quarter", "as of year end", "May 26, 2023", "calendar 2024") into
`PeriodRef` values. They are resolved against one company's filings by
`assay.systems.filings.index` (`select_period_docs`), never against a calendar year blindly.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

from assay.corpus import FiscalCalendar

__all__ = ["PeriodRef", "parse_periods"]

_MONTHS = (
    {name.lower(): i for i, name in enumerate(_calendar.month_name) if name}
    | {name.lower(): i for i, name in enumerate(_calendar.month_abbr) if name}
    | {"sept": 9}
)


Relative = Literal["latest_quarter", "latest_year"]


@dataclass(frozen=True, slots=True)
class PeriodRef:
    """One period phrase of a query.

    fiscal_year: the company's own fiscal year (None when the phrase names no year);
    quarter: 1-4 or None; half: 1-2 or None; calendar: the year is a calendar year ("calendar
    2024", "CY2024") and must be mapped through the company's calendar; relative: "latest_quarter"
    or "latest_year" (resolved against the filings visible at as_of); on_date: a calendar date.
    """

    text: str
    fiscal_year: int | None = None
    quarter: int | None = None
    half: int | None = None
    calendar: bool = False
    relative: Relative | None = None
    on_date: dt.date | None = None

    def fiscal_quarters(self, cal: FiscalCalendar) -> list[tuple[int, int | None]]:
        """(fiscal_year, quarter or None for the whole year) pairs this phrase denotes."""
        if self.on_date is not None:
            fy, q = cal.period_of(self.on_date)
            return [(fy, q)]
        if self.fiscal_year is None:
            return []
        if self.calendar:
            pairs = cal.calendar_year_quarters(self.fiscal_year)
            if self.quarter is not None:
                pairs = pairs[self.quarter - 1 : self.quarter]
            elif self.half is not None:
                pairs = pairs[2 * (self.half - 1) : 2 * self.half]
            return [(fy, q) for fy, q in pairs]
        if self.quarter is not None:
            return [(self.fiscal_year, self.quarter)]
        if self.half is not None:
            return [(self.fiscal_year, 2 * self.half - 1), (self.fiscal_year, 2 * self.half)]
        return [(self.fiscal_year, None)]


def _year(token: str) -> int:
    """'2024' -> 2024, '24' / "'24" -> 2024, '99' -> 1999."""
    token = token.lstrip("'’")
    value = int(token)
    if len(token) == 4:
        return value
    return 2000 + value if value < 80 else 1900 + value


_ORD = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
}  # fmt: skip
_ORD_RE = "first|1st|second|2nd|third|3rd|fourth|4th"
_Y4 = r"(?:19|20)\d{2}"
_YR = rf"(?:{_Y4}|['’]?\d{{2}})"  # 4-digit year or 2-digit with optional apostrophe
_FYPFX = r"(?:fiscal\s+(?:year\s+)?|fy\s*['’]?|f\.y\.\s*)"
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

# order matters: longer, more specific phrases first; each match consumes its span
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso_date", re.compile(rf"\b({_Y4})-(\d{{2}})-(\d{{2}})\b")),
    (
        "mdy_date",
        re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+({_Y4})\b", re.I),
    ),
    (
        "dmy_date",
        re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+({_Y4})\b", re.I),
    ),
    (
        "ord_quarter",
        re.compile(
            rf"\b({_ORD_RE})\s+(?:fiscal\s+)?quarter(?:\s+of)?(?:\s+(?:the\s+)?"
            rf"(?:(?:fiscal|calendar)\s+)?(?:year\s+)?(?:fy\s*['’]?)?({_YR}))?\b",
            re.I,
        ),
    ),
    (
        "half",
        re.compile(
            rf"\b(first|1st|second|2nd)\s+half(?:\s+of)?(?:\s+(?:the\s+)?(?:(fiscal|calendar)"
            rf"\s+)?(?:year\s+)?(?:fy\s*['’]?)?({_YR}))?\b",
            re.I,
        ),
    ),
    (
        "h_year",
        re.compile(rf"\b([12])h\s*['’]?({_YR})\b|\bh([12])\s*(?:fy\s*)?['’]?({_YR})\b", re.I),
    ),
    ("nq_year", re.compile(rf"\b([1-4])q\s*(?:fy\s*)?({_YR})\b", re.I)),
    (
        "q_year",
        re.compile(rf"\bq([1-4])\s*(?:of\s+)?(?:{_FYPFX})?\s*['’]?({_Y4}|\d{{2}}(?!\d))", re.I),
    ),
    ("year_q", re.compile(rf"\b(?:{_FYPFX})?({_Y4}|(?<=fy)\d{{2}})\s*q([1-4])\b", re.I)),
    ("q_only", re.compile(r"\bq([1-4])\b", re.I)),
    ("calendar_year", re.compile(rf"\b(?:calendar\s+(?:year\s+)?|cy\s*['’]?)({_YR})\b", re.I)),
    ("fy_year", re.compile(rf"(?<![a-z])(?:{_FYPFX})({_YR})\b", re.I)),
    (
        "latest_quarter",
        re.compile(r"\b(?:latest|most\s+recent|last|current)\s+(?:fiscal\s+)?quarter\b", re.I),
    ),
    (
        "latest_year",
        re.compile(
            r"\b(?:latest|most\s+recent|last|current)\s+(?:fiscal\s+year|year|annual)\b"
            r"|\b(?:as\s+of|at)\s+(?:the\s+)?(?:fiscal\s+)?year[\s-]end\b",
            re.I,
        ),
    ),
    ("bare_year", re.compile(rf"(?<![\d$.,])({_Y4})(?![\d%])")),
]


def parse_periods(text: str) -> list[PeriodRef]:
    """Every period phrase in `text`, in order of appearance.

    "FY2017 - FY2019" and "2017-2019" ranges expand to each year. "year end FY2018" yields
    FY2018 (the explicit year wins over the relative "year end"). Two-digit years are 20xx
    below 80, else 19xx.
    """
    taken = [False] * len(text)
    found: list[tuple[int, PeriodRef]] = []

    def free(a: int, b: int) -> bool:
        return not any(taken[a:b])

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.span()
            if not free(a, b):
                continue
            ref = _ref(kind, m)
            if ref is None:
                continue
            for i in range(a, b):
                taken[i] = True
            found.append((a, ref))
    found.sort(key=lambda item: item[0])
    refs = [ref for _, ref in found]
    refs = _expand_ranges(text, found)
    explicit_year = any(r.fiscal_year is not None or r.on_date is not None for r in refs)
    # "as of year end FY2018": the relative phrase only stands when no year is named
    return [r for r in refs if not (r.relative == "latest_year" and explicit_year)]


def _ref(kind: str, m: re.Match[str]) -> PeriodRef | None:
    g = m.groups()
    text = m.group(0)
    try:
        if kind == "iso_date":
            return PeriodRef(text, on_date=dt.date(int(g[0]), int(g[1]), int(g[2])))
        if kind == "mdy_date":
            return PeriodRef(text, on_date=dt.date(int(g[2]), _MONTHS[g[0].lower()], int(g[1])))
        if kind == "dmy_date":
            return PeriodRef(text, on_date=dt.date(int(g[2]), _MONTHS[g[1].lower()], int(g[0])))
    except ValueError:
        return None
    if kind == "ord_quarter":
        calendar = "calendar" in text.lower()
        return PeriodRef(
            text, fiscal_year=_year(g[1]) if g[1] else None, quarter=_ORD[g[0].lower()],
            calendar=calendar,
        )  # fmt: skip
    if kind == "half":
        return PeriodRef(
            text, fiscal_year=_year(g[2]) if g[2] else None, half=_ORD[g[0].lower()],
            calendar=(g[1] or "").lower() == "calendar",
        )  # fmt: skip
    if kind == "h_year":
        half, year = (g[0], g[1]) if g[0] else (g[2], g[3])
        return PeriodRef(text, fiscal_year=_year(year), half=int(half))
    if kind == "nq_year":
        return PeriodRef(text, fiscal_year=_year(g[1]), quarter=int(g[0]))
    if kind == "q_year":
        return PeriodRef(text, fiscal_year=_year(g[1]), quarter=int(g[0]))
    if kind == "year_q":
        return PeriodRef(text, fiscal_year=_year(g[0]), quarter=int(g[1]))
    if kind == "q_only":
        return PeriodRef(text, quarter=int(g[0]))
    if kind == "calendar_year":
        return PeriodRef(text, fiscal_year=_year(g[0]), calendar=True)
    if kind == "fy_year":
        return PeriodRef(text, fiscal_year=_year(g[0]))
    if kind == "latest_quarter":
        return PeriodRef(text, relative="latest_quarter")
    if kind == "latest_year":
        return PeriodRef(text, relative="latest_year")
    if kind == "bare_year":
        return PeriodRef(text, fiscal_year=int(g[0]))
    return None  # pragma: no cover


_RANGE_GAP = re.compile(r"^\s*(?:-|–|—|to|through|thru)\s*$", re.I)


def _expand_ranges(text: str, found: list[tuple[int, PeriodRef]]) -> list[PeriodRef]:
    """'FY2017 - FY2019' -> FY2017, FY2018, FY2019 (whole fiscal years only, at most 10)."""
    out: list[PeriodRef] = []
    for i, (start, ref) in enumerate(found):
        out.append(ref)
        if i + 1 >= len(found):
            continue
        nxt_start, nxt = found[i + 1]
        whole = (
            ref.fiscal_year is not None and nxt.fiscal_year is not None
            and ref.quarter is None and nxt.quarter is None and ref.half is None
            and nxt.half is None and ref.calendar == nxt.calendar
        )  # fmt: skip
        if not whole:
            continue
        assert ref.fiscal_year is not None and nxt.fiscal_year is not None
        gap = text[start + len(ref.text) : nxt_start]
        if _RANGE_GAP.match(gap) and 0 < nxt.fiscal_year - ref.fiscal_year <= 10:
            for year in range(ref.fiscal_year + 1, nxt.fiscal_year):
                out.append(PeriodRef(f"{year}", fiscal_year=year, calendar=ref.calendar))
    return out
