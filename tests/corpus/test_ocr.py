"""OCR plumbing: segments grouped into lines, engines named, image-only pages routed to OCR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.corpus import ocr, read_file
from assay.corpus.ocr import _group_lines
from assay.synth.pdf import write_pdf
from assay.synth.scan import scan_pages


def test_segments_become_lines_left_to_right() -> None:
    segs = [
        ("1,111", 300.0, 101.0, 340.0, 111.0),
        ("Revenue", 10.0, 100.0, 80.0, 112.0),
        ("1,234", 200.0, 100.0, 240.0, 110.0),
        ("Net income 5", 10.0, 130.0, 120.0, 142.0),
    ]
    assert _group_lines(segs) == [
        ("Revenue 1,234 1,111", (10.0, 100.0, 340.0, 112.0)),
        ("Net income 5", (10.0, 130.0, 120.0, 142.0)),
    ]


def test_engine_names() -> None:
    assert ocr.ocr_engine(None) is None and ocr.ocr_engine("none") is None
    with pytest.raises(ValueError):
        ocr.ocr_engine("abbyy")


def test_only_image_pages_go_to_ocr(tmp_path: Path) -> None:
    pages = [[("p", "A text page.")], [("p", "A scanned page.")]]
    pdf = write_pdf(pages)
    (sc,) = scan_pages(pdf, [2], np.random.default_rng(0))
    f = tmp_path / "s.pdf"
    f.write_bytes(write_pdf(pages, images={2: (sc.jpeg, sc.width, sc.height)}))
    seen: list[int] = []

    def fake(page: Any) -> tuple[list[str], list[tuple[float, float, float, float] | None]]:
        seen.append(1)
        return ["A scanned page."], [(54.0, 730.0, 200.0, 740.0)]

    p = read_file(f, ocr=fake)
    assert seen == [1]
    assert p.pages[1] == "A scanned page." and p.sources == {2: {"ocr": True}}
    assert p.line_boxes[2] == [(54.0, 730.0, 200.0, 740.0)]
    assert read_file(f).pages[1] == ""  # no engine: the page is empty, not an error
