"""Box and sheet gold: IoU >= 0.3 confirmed by text, intact in the chunk; cell ranges held whole."""

from __future__ import annotations

import pytest

from assay.corpus import Chunk, ChunkTable
from assay.dataset import Anchor
from assay.gold.align import box_iou, resolve_anchor

LINES = [[50.0, 700.0, 300.0, 710.0], [50.0, 688.0, 300.0, 698.0], [50.0, 676.0, 300.0, 686.0]]


def _chunk(cid: str, text: str, lines: list[list[float]], **extra: object) -> Chunk:
    return Chunk(cid, "d", text, [1], extra={"line_boxes": lines, **extra})


@pytest.mark.parametrize(
    ("a", "b", "ref"),
    [
        ((0, 0, 2, 2), (1, 1, 3, 3), 1 / 7),  # overlap 1, union 4 + 4 - 1
        ((0, 0, 10, 1), (5, 0, 15, 1), 5 / 15),
        ((0, 0, 1, 1), (2, 2, 3, 3), 0.0),
        ((0, 0, 4, 4), (1, 1, 3, 3), 4 / 16),  # one inside the other
    ],
)
def test_iou_hand_worked(a: tuple[float, ...], b: tuple[float, ...], ref: float) -> None:
    assert box_iou(a, b) == pytest.approx(ref)
    assert box_iou(b, a) == pytest.approx(ref)


def test_box_rule_rescues_noisy_text_and_refuses_cut_gold() -> None:
    # OCR misread two of five tokens: 60% containment fails the 80% rule, the box confirms it.
    ocr = "Total deposits wcre 10,00O at year end\nother line\nthird line"
    gold = Anchor(doc="d", page=1, quote="total deposits were 10000 at", box=(50, 700, 300, 710))
    table = ChunkTable(
        [
            _chunk("hit", ocr, LINES),
            _chunk("far", ocr, [[50.0, 100.0, 300.0, 110.0]]),  # same text, elsewhere on the page
        ]
    )
    assert resolve_anchor(gold, table).chunk_ids == ("hit",)
    # gold spans two lines; a chunk holding only one of them does not hold the gold intact
    two = Anchor(doc="d", page=1, quote="total deposits wcre other line", box=(50, 688, 300, 710))
    split = ChunkTable(
        [
            _chunk("top", "Total deposits wcre 10,00O at year end", LINES[:1]),
            _chunk("both", "Total deposits wcre 10,00O\nother line", LINES[:2]),
        ]
    )
    assert resolve_anchor(two, split).chunk_ids == ("both",)
    # box overlaps but text does not confirm: not held
    wrong = Anchor(
        doc="d", page=1, quote="net interest margin widened sharply", box=(50, 700, 300, 710)
    )
    assert resolve_anchor(wrong, table).chunk_ids == ()


def test_sheet_cells_hold_only_whole_ranges() -> None:
    table = ChunkTable(
        [
            Chunk(
                "r1",
                "d",
                "Metric FY2024\nRevenue 1,234",
                [1],
                extra={"sheet": "P&L", "cells": "A1:B2"},
            ),
            Chunk(
                "r2",
                "d",
                "Metric FY2024\nRevenue 1,234",
                [1],
                extra={"sheet": "P&L", "cells": "A4:B5"},
            ),
            Chunk(
                "o",
                "d",
                "Metric FY2024\nRevenue 1,234",
                [2],
                extra={"sheet": "Other", "cells": "A1:B2"},
            ),
        ]
    )
    a = Anchor(doc="d", sheet="P&L", cells="A2:B2", quote="Revenue 1,234")
    assert resolve_anchor(a, table).chunk_ids == ("r1",)
    straddle = Anchor(doc="d", sheet="P&L", cells="A2:B4", quote="Revenue 1,234")
    assert resolve_anchor(straddle, table).chunk_ids == ()


def test_cells_must_be_a1() -> None:
    with pytest.raises(ValueError):
        Anchor(doc="d", sheet="S", cells="b2", quote="x")
