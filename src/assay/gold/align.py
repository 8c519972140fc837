"""Anchor alignment: resolve gold quotes onto whatever chunks an index has.

A chunk *holds* an anchor when it contains at least 80% of the quote's normalised tokens (counted
with multiplicity). Normalisation folds case, whitespace, punctuation and number formatting:
"$1,234.50" -> "1234.5", "(12)" -> "12", "4.20%" -> "4.2". Where that falls short, the quote and
the chunk are compared again with their tokens run together (`assay._tokens.aligned_containment`),
so a quote whose spaces were lost or added ("MGMRESORTSINTERNATIONALANDSUBSIDIARIES", "reve-\nnue"
hyphenated at a line end) aligns all the same; the resolution says so (`whitespace_insensitive`).

Two more ways to hold one, for gold recorded where it lies rather than only what it says:

- an anchor with a `box` is held by a chunk with line boxes (`line_boxes`, from a PDF's text
  layer or from OCR) when the chunk's lines that touch the box overlap it by IoU >= 0.3, the
  chunk's own box covers at least 90% of the gold box (the gold is intact in it, not cut in two),
  and the text confirms it (>= 50% of the quote's tokens, tolerant of OCR errors);
- an anchor with a `sheet` (and `cells`) is held by a table region of that sheet whose cell range
  holds the whole gold range, confirmed by the text the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay._tokens import (
    HOLD_THRESHOLD,
    aligned_containment,
    chunk_fingerprint,
    containment,
    normalize_tokens,
    spacing_containment,
)
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Anchor

__all__ = [
    "BOX_IOU",
    "HOLD_THRESHOLD",
    "TEXT_CONFIRM",
    "AnchorResolution",
    "aligned_containment",
    "box_iou",
    "chunk_fingerprint",
    "containment",
    "normalize_tokens",
    "resolve_anchor",
    "spacing_containment",
]

BOX_IOU = 0.3
TEXT_CONFIRM = 0.5
INTACT = 0.9


@dataclass(frozen=True, slots=True)
class AnchorResolution:
    anchor: Anchor
    chunk_ids: tuple[str, ...]
    best: float  # best containment seen among candidate chunks
    # a chunk holds it only when whitespace is ignored (the quote's spaces were lost or added)
    whitespace_insensitive: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.chunk_ids)


def _area(b: tuple[float, ...]) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes (0 when either is empty)."""
    i = _inter(a, b)
    u = _area(a) + _area(b) - i
    return i / u if u > 0 else 0.0


def _boxes(c: Chunk) -> list[tuple[float, ...]]:
    raw = c.extra.get("line_boxes")
    if not isinstance(raw, list):
        return []
    return [tuple(float(v) for v in b) for b in raw if isinstance(b, list) and len(b) == 4]


def _box_holds(box: tuple[float, ...], c: Chunk) -> bool:
    lines = _boxes(c)
    touching = [b for b in lines if _inter(b, box) > 0]
    if not touching:
        return False
    u = (
        min(b[0] for b in touching),
        min(b[1] for b in touching),
        max(b[2] for b in touching),
        max(b[3] for b in touching),
    )
    whole = (
        min(b[0] for b in lines),
        min(b[1] for b in lines),
        max(b[2] for b in lines),
        max(b[3] for b in lines),
    )
    area = _area(box)
    return box_iou(u, box) >= BOX_IOU and area > 0 and _inter(whole, box) / area >= INTACT


_A1 = re.compile(r"^([A-Z]{1,3})([0-9]+)(?::([A-Z]{1,3})([0-9]+))?$")


def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _range(a1: str) -> tuple[int, int, int, int] | None:
    m = _A1.match(a1)
    if not m:
        return None
    c0, r0 = _col(m.group(1)), int(m.group(2))
    c1, r1 = (_col(m.group(3)), int(m.group(4))) if m.group(3) else (c0, r0)
    return min(c0, c1), min(r0, r1), max(c0, c1), max(r0, r1)


def _cells_hold(cells: str, c: Chunk) -> bool:
    want = _range(cells)
    have = _range(str(c.extra.get("cells", "")))
    if want is None or have is None:
        return False
    return have[0] <= want[0] and have[1] <= want[1] and want[2] <= have[2] and want[3] <= have[3]


def _candidates(anchor: Anchor, table: ChunkTable) -> list[Chunk]:
    found = (
        table.on_page(anchor.doc, anchor.page)
        if anchor.page is not None
        else table.of_doc(anchor.doc)
    )
    if anchor.sheet is not None:  # chunks of other sheets are out; a chunker without sheets is not
        found = [c for c in found if c.extra.get("sheet", anchor.sheet) == anchor.sheet]
    return found


def _holds(anchor: Anchor, c: Chunk, s: float, threshold: float) -> bool:
    if anchor.cells is not None and "cells" in c.extra:
        return s >= TEXT_CONFIRM and _cells_hold(anchor.cells, c)
    if anchor.box is not None and "line_boxes" in c.extra:
        return s >= threshold or (s >= TEXT_CONFIRM and _box_holds(anchor.box, c))
    return s >= threshold


def resolve_anchor(
    anchor: Anchor, table: ChunkTable, *, threshold: float = HOLD_THRESHOLD
) -> AnchorResolution:
    """Every chunk of the anchor's doc (and page, sheet, when given) that holds the gold.

    Where no chunk holds it by its tokens, the chunks are compared again with whitespace ignored
    (`spacing_containment`), and the resolution says so (``whitespace_insensitive``)."""
    found = _candidates(anchor, table)
    scores = [containment(anchor.quote, c.text) for c in found]
    ids = [
        c.chunk_id for c, s in zip(found, scores, strict=True) if _holds(anchor, c, s, threshold)
    ]
    best = max(scores, default=0.0)
    if ids:
        return AnchorResolution(anchor, tuple(ids), best)
    spaced = [spacing_containment(anchor.quote, c.text) for c in found]
    ids = [
        c.chunk_id for c, s in zip(found, spaced, strict=True) if _holds(anchor, c, s, threshold)
    ]
    return AnchorResolution(anchor, tuple(ids), max([best, *spaced]), bool(ids))
