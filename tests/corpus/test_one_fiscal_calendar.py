"""One fiscal calendar in live code (`assay.corpus.fiscal`): the corpus derives a FinanceBench
filing's period end from it, the filings pipeline reads question periods with it; the synthetic
room's own calendar (`assay.synth.facts_ledger`) stays apart, as the independent oracle."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import assay
from assay.corpus import FINANCEBENCH_COMPANIES, from_financebench
from assay.synth.facts_ledger import FiscalCalendar as RoomCalendar

FINANCEBENCH = Path("/work/shared/financebench/documents.jsonl")
SRC = Path(assay.__file__).parent
DATE_ARITHMETIC_ELSEWHERE = {
    "sql/suite.py",  # moves a test database's dates by a month: no fiscal years
}


@pytest.mark.parametrize("company", sorted(FINANCEBENCH_COMPANIES))
def test_financebench_period_ends_agree_with_the_room_calendar(company: str) -> None:
    info = FINANCEBENCH_COMPANIES[company]
    room = RoomCalendar(int(info.fiscal_year_end[:2]))
    shift = 1 if info.fy_named_by == "start" else 0  # the room names years by their end
    for fy in range(2015, 2025):
        rec = {"company": company, "doc_period": fy}
        annual = from_financebench({**rec, "doc_name": f"X_{fy}_10K", "doc_type": "10k"})
        assert annual.period_end == room.year_end(fy + shift)
        for q in range(1, 5):
            name = f"X_{fy}Q{q}_10Q"
            d = from_financebench({**rec, "doc_name": name, "doc_type": "10q"})
            assert d.period_end == room.quarter_end(fy + shift, q), (company, fy, q)


@pytest.mark.skipif(not FINANCEBENCH.is_file(), reason="FinanceBench not on this machine")
def test_every_financebench_filing_ends_on_its_calendar() -> None:
    """Real records: each derived period end is a quarter end of the company's calendar."""
    seen = 0
    for line in FINANCEBENCH.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        info = FINANCEBENCH_COMPANIES[rec["company"]]
        d = from_financebench(rec)
        if "dated" in rec["doc_name"] or d.period_end is None:
            continue
        cal = info.calendar
        fy, q = cal.period_of(d.period_end)
        assert cal.quarter_end(fy, q) == d.period_end, rec["doc_name"]
        assert fy == d.fiscal_year and q == (d.fiscal_quarter or 4), rec["doc_name"]
        seen += 1
    assert seen > 300


def test_no_other_live_module_does_calendar_month_arithmetic() -> None:
    """`calendar.monthrange` is where a quarter end is computed: only the fiscal calendar (and
    the room, on purpose) may call it."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if (
            rel == "corpus/fiscal.py"
            or rel.startswith("synth/")
            or rel in DATE_ARITHMETIC_ELSEWHERE
        ):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "monthrange":
                found.append(f"{rel}:{node.lineno}")
    assert found == []


def test_shift_months_clips_the_day_to_the_month() -> None:
    import datetime as dt

    from assay.corpus import shift_months

    assert shift_months(dt.date(2024, 5, 31), -3) == dt.date(2024, 2, 29)
    assert shift_months(dt.date(2023, 11, 30), 3) == dt.date(2024, 2, 29)
    assert shift_months(dt.date(2024, 2, 29), -12) == dt.date(2023, 2, 28)
    assert shift_months(dt.date(2024, 1, 15), 0) == dt.date(2024, 1, 15)
