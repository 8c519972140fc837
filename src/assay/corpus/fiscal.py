"""The fiscal calendar: when a company's fiscal year and quarters end, and how its years are named.

A company's fiscal year is named by the calendar year in which it ends unless the company says
otherwise: Microsoft's FY2024 runs July 2023 - June 2024, Nike's June 2023 - May 2024. Some
retailers whose year ends in January name the year by the calendar year in which it *starts*
(Foot Locker's "fiscal 2022" ended on 28 January 2023); `FiscalCalendar.naming` records which
convention applies and `FiscalCalendar.infer` learns it from a filing's `fiscal_year` and
`period_end`.

This is the one fiscal calendar of assay's live code: the corpus derives a FinanceBench filing's
period end from it (`assay.corpus.documents`), and the filings pipeline resolves a question's
period phrases against it (`assay.systems.filings.fiscal`). The synthetic room keeps its own
(`assay.synth.facts_ledger.FiscalCalendar`) on purpose, as an independent oracle.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["FiscalCalendar", "Naming", "shift_months"]

Naming = Literal["end", "start"]


def _clip_day(year: int, month: int, day: int) -> dt.date:
    return dt.date(year, month, min(day, _calendar.monthrange(year, month)[1]))


def _add_months(d: dt.date, months: int, day: int) -> dt.date:
    idx = d.year * 12 + (d.month - 1) + months
    return _clip_day(idx // 12, idx % 12 + 1, day)


def shift_months(d: dt.date, months: int) -> dt.date:
    """`d` moved by `months` (negative: back), its day clipped to the month's last day
    (2024-05-31 back 3 months is 2024-02-29)."""
    return _add_months(d, months, d.day)


@dataclass(frozen=True, slots=True)
class FiscalCalendar:
    """When a company's fiscal year ends (nominal month and day) and how its years are named.

    Days are nominal: 52/53-week years end on a nearby weekday, so matching a real period end
    allows `tolerance_days` either side.
    """

    end_month: int = 12
    end_day: int = 31
    naming: Naming = "end"
    tolerance_days: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.end_month <= 12:
            raise ValueError(f"fiscal year end month must be 1-12, got {self.end_month}")
        if not 1 <= self.end_day <= 31:
            raise ValueError(f"fiscal year end day must be 1-31, got {self.end_day}")

    @classmethod
    def parse(cls, fiscal_year_end: str | None, *, naming: Naming = "end") -> FiscalCalendar:
        """From `fiscal_year_end` as "MM-DD" (also "--MM-DD" or "MMDD"); None means December 31."""
        if not fiscal_year_end:
            return cls(naming=naming)
        m = re.fullmatch(r"-*(\d{1,2})-?(\d{2})", fiscal_year_end.strip())
        if not m:
            raise ValueError(f"fiscal_year_end must look like 'MM-DD', got {fiscal_year_end!r}")
        return cls(int(m.group(1)), int(m.group(2)), naming)

    @classmethod
    def infer(
        cls,
        fiscal_year_end: str | None,
        examples: list[tuple[int, dt.date]] = [],  # noqa: B006 (read only)
    ) -> FiscalCalendar:
        """Calendar whose naming agrees with (fiscal_year, annual period_end) examples, if any.

        A year ending in January 2023 that the company calls 2022 means start-year naming.
        """
        cal = cls.parse(fiscal_year_end)
        votes: dict[Naming, int] = {"end": 0, "start": 0}
        namings: tuple[Naming, ...] = ("end", "start")
        for fy, period_end in examples:
            for naming in namings:
                probe = cls(cal.end_month, cal.end_day, naming)
                if abs((probe.year_end(fy) - period_end).days) <= cal.tolerance_days:
                    votes[naming] += 1
        if votes["start"] > votes["end"]:
            return cls(cal.end_month, cal.end_day, "start")
        return cal

    def year_end(self, fiscal_year: int) -> dt.date:
        """Nominal last day of fiscal year `fiscal_year`."""
        year = fiscal_year if self.naming == "end" else fiscal_year + 1
        return _clip_day(year, self.end_month, self.end_day)

    def year_start(self, fiscal_year: int) -> dt.date:
        return self.year_end(fiscal_year - 1) + dt.timedelta(days=1)

    def quarter_end(self, fiscal_year: int, quarter: int) -> dt.date:
        """Nominal last day of fiscal quarter `quarter` (1-4) of `fiscal_year`."""
        if not 1 <= quarter <= 4:
            raise ValueError(f"quarter must be 1-4, got {quarter}")
        end = self.year_end(fiscal_year)
        # a year ending on a month's last day has quarters ending on months' last days (June 30:
        # September 30, December 31, March 31), not on the 30th of each
        last = _calendar.monthrange(end.year, end.month)[1] == end.day
        return _add_months(end, -3 * (4 - quarter), 31 if last else self.end_day)

    def quarter_start(self, fiscal_year: int, quarter: int) -> dt.date:
        if quarter == 1:
            return self.year_start(fiscal_year)
        return self.quarter_end(fiscal_year, quarter - 1) + dt.timedelta(days=1)

    def period_of(self, day: dt.date) -> tuple[int, int]:
        """(fiscal year, fiscal quarter) containing calendar date `day`."""
        fy = day.year if self.naming == "end" else day.year - 1
        # the fiscal year containing `day` is the first whose end is on or after it
        while self.year_end(fy) < day:
            fy += 1
        while self.year_start(fy) > day:
            fy -= 1
        for q in (1, 2, 3, 4):
            if day <= self.quarter_end(fy, q):
                return fy, q
        return fy, 4  # unreachable: the year's last quarter ends on the year end

    def period_ending(self, period_end: dt.date) -> tuple[int, int] | None:
        """(fiscal year, quarter) whose nominal end is within tolerance of a real period end."""
        fy, q = self.period_of(period_end)
        best: tuple[int, tuple[int, int]] | None = None
        for cand in ((fy, q), self._prev(fy, q), self._next(fy, q)):
            gap = abs((self.quarter_end(*cand) - period_end).days)
            if gap <= self.tolerance_days and (best is None or gap < best[0]):
                best = (gap, cand)
        return None if best is None else best[1]

    def calendar_year_quarters(self, year: int) -> list[tuple[int, int]]:
        """Fiscal (year, quarter) pairs that lie mostly inside calendar year `year`."""
        out: list[tuple[int, int]] = []
        fy, q = self.period_of(dt.date(year, 1, 1))
        for _ in range(6):
            start, end = self.quarter_start(fy, q), self.quarter_end(fy, q)
            mid = start + (end - start) / 2
            if mid.year == year:
                out.append((fy, q))
            fy, q = self._next(fy, q)
        return out

    @staticmethod
    def _prev(fy: int, q: int) -> tuple[int, int]:
        return (fy, q - 1) if q > 1 else (fy - 1, 4)

    @staticmethod
    def _next(fy: int, q: int) -> tuple[int, int]:
        return (fy, q + 1) if q < 4 else (fy + 1, 1)
