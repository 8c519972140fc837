"""Scans: the recorded affine moves a box onto where the scan shows it; the same seed, same bytes."""

from __future__ import annotations

import io

import numpy as np
import pypdfium2
import pytest
from PIL import Image

from assay.corpus import read_bytes
from assay.gold.align import box_iou
from assay.synth.pdf import write_pdf
from assay.synth.scan import DPI, move_box, scan_pages

LINES = [("title", "Scanned quarterly report")] + [("mono", "X" * 60)] * 3


def _ink_box(jpeg: bytes, h_pt: float) -> tuple[float, float, float, float]:
    """Bounding box (PDF points, origin bottom-left) of the dark pixels of a scan."""
    arr = np.asarray(Image.open(io.BytesIO(jpeg)).convert("L"))
    ys, xs = np.nonzero(arr < 100)
    s = DPI / 72
    return (xs.min() / s, h_pt - ys.max() / s, xs.max() / s, h_pt - ys.min() / s)


@pytest.mark.parametrize("heavy", [False, True])
def test_affine_moves_the_ink_where_the_scan_shows_it(heavy: bool) -> None:
    pdf = write_pdf([LINES])
    clean = read_bytes(pdf, ".pdf")
    boxes = [b for b in clean.line_boxes[1] if b is not None]  # title, rows and page footer
    assert len(boxes) == 5
    ink = (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
    (sc,) = scan_pages(pdf, [1], np.random.default_rng(5), heavy=heavy)
    seen = _ink_box(sc.jpeg, 792)
    assert box_iou(move_box(ink, sc.affine), seen) > 0.8
    assert abs(sc.angle) <= (2.5 if heavy else 0.9)
    # the scanned page has no text layer, only the image
    out = write_pdf([LINES], images={1: (sc.jpeg, sc.width, sc.height)})
    doc = pypdfium2.PdfDocument(out)
    assert doc[0].get_textpage().get_text_range().strip() == ""
    again = scan_pages(pdf, [1], np.random.default_rng(5), heavy=heavy)[0]
    assert again.jpeg == sc.jpeg and again.affine == sc.affine


def test_move_box_hand_worked() -> None:
    # a quarter turn about the origin maps (1..3, 1..2) to (-2..-1, 1..3)
    quarter = (0.0, -1.0, 0.0, 1.0, 0.0, 0.0)
    assert move_box((1, 1, 3, 2), quarter) == (-2, 1, -1, 3)
    shift = (1.0, 0.0, 5.0, 0.0, 1.0, -2.0)
    assert move_box((0, 0, 1, 1), shift) == (5, -2, 6, -1)
