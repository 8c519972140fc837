"""The room's fiscal calendar and the pipeline's are kept apart on purpose (the room writes the
truth the pipeline is measured against); they must agree on every month-end calendar."""

from __future__ import annotations

import pytest

from assay.corpus import FiscalCalendar as PipelineCalendar
from assay.synth.facts_ledger import FiscalCalendar as RoomCalendar


@pytest.mark.parametrize("month", range(1, 13))
def test_room_and_pipeline_calendars_agree_on_month_end_years(month: int) -> None:
    room = RoomCalendar(month)
    pipeline = PipelineCalendar(month, 31)  # day 31, clipped: the last day of the month
    for fy in range(2019, 2031):
        assert room.year_end(fy) == pipeline.year_end(fy)
        assert room.year_start(fy) == pipeline.year_start(fy)
        for q in range(1, 5):
            assert room.quarter_end(fy, q) == pipeline.quarter_end(fy, q), (month, fy, q)
            assert room.quarter_start(fy, q) == pipeline.quarter_start(fy, q), (month, fy, q)
