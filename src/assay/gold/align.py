"""Anchor alignment: resolve gold quotes onto whatever chunks an index has.

A chunk *holds* an anchor when it contains at least 80% of the quote's normalised tokens (counted
with multiplicity). Normalisation folds case, whitespace, punctuation and number formatting:
"$1,234.50" -> "1234.5", "(12)" -> "12", "4.20%" -> "4.2".

Two more ways to hold one, for gold recorded where it lies rather than only what it says:

- an anchor with a `box` is held by a chunk with line boxes (`line_boxes`, from a PDF's text
  layer or from OCR) when the chunk's lines that touch the box overlap it by IoU >= 0.3, the
  chunk's own box covers at least 90% of the gold box (the gold is intact in it, not cut in two),
  and the text confirms it (>= 50% of the quote's tokens, tolerant of OCR errors);
- an anchor with a `sheet` (and `cells`) is held by a table region of that sheet whose cell range
  holds the whole gold range, confirmed by the text the same way.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from assay._numfmt import CURRENCY_CODES, fold_diacritics, number_value
from assay.corpus.chunks import Chunk, ChunkTable
from assay.dataset.schema import Anchor

__all__ = [
    "BOX_IOU",
    "HOLD_THRESHOLD",
    "TEXT_CONFIRM",
    "AnchorResolution",
    "box_iou",
    "chunk_fingerprint",
    "containment",
    "normalize_tokens",
    "resolve_anchor",
]

HOLD_THRESHOLD = 0.8
BOX_IOU = 0.3
TEXT_CONFIRM = 0.5
INTACT = 0.9
_TOKEN = re.compile(r"[0-9]+(?:[,.][0-9]+)*|[^\W\d_]+", re.UNICODE)


def _fold_number(tok: str) -> str:
    # "1,234.50" -> "1234.5"; a comma followed by exactly three digits is a thousands separator.
    t = re.sub(r",(?=\d{3}(?:\D|$))", "", tok)
    t = t.replace(",", ".")
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    if not t.startswith("0."):
        t = t.lstrip("0") or "0"  # "007" -> "7", "0" stays "0"
    return t


def _fingerprint_tokens(text: str) -> list[str]:
    """The normalisation chunk fingerprints were first recorded with (kept as it was, so a
    fingerprint stored in gold stays valid when `normalize_tokens` learns new formats)."""
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        tok = m.group(0)
        out.append(_fold_number(tok) if tok[0].isdigit() else tok)
    return out


# a numeral grouped by spaces where it cannot be two table cells (before a decimal comma or a
# European currency or scale word), or by typographic spaces: "1 234,50 kč", "1 234 mil."
_EU_NUMERAL = re.compile(
    r"(?<![\d.,])\d{1,3}(?:[\u00a0\u202f\u2009]\d{3})+(?:,\d+)?(?![\d])"
    r"|(?<![\d.,])\d{1,3}(?: \d{3})+(?:,\d+(?![\d])|(?=\s?(?:kč|kc\b|czk|eur|€|korun|mil\b|mil\.|tis\b|"
    r"tis\.|mld\b|mld\.|mio\b|mrd\b)))"
)
# currency and scale words with one spelling each ("kč" and "korun" are "czk", "mil." "million")
_WORD_FOLDS = {
    **{k: v.lower() for k, v in CURRENCY_CODES.items() if k.isalpha()},
    "tis": "thousand",
    "mil": "million",
    "mio": "million",
    "mld": "billion",
    "mrd": "billion",
}


def _canonical_number(tok: str) -> str:
    try:
        _, digits = number_value(tok)
    except ValueError:  # pragma: no cover - the token regex guarantees digits
        return _fold_number(tok)
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    if not digits.startswith("0."):
        digits = digits.lstrip("0") or "0"
    return digits


def normalize_tokens(text: str) -> list[str]:
    """Lowercased word and number tokens with punctuation, number formatting and diacritics
    folded: "$1,234.50", "1.234,50" and "1 234,50 Kč" give "1234.5" ("Kč" gives "czk", "mil."
    "million"; see `assay._numfmt` for how separators are read)."""
    low = _EU_NUMERAL.sub(lambda m: _canonical_number(m.group(0)), text.lower())
    low = fold_diacritics(low.replace("kč", "czk"))
    out: list[str] = []
    for m in _TOKEN.finditer(low):
        tok = m.group(0)
        out.append(_canonical_number(tok) if tok[0].isdigit() else _WORD_FOLDS.get(tok, tok))
    return out


def chunk_fingerprint(text: str) -> str:
    """What a chunk says, as 16 hex digits: SHA-256 of its normalised tokens joined by spaces.

    Whitespace, case, punctuation and number formatting do not change it (a re-parse that only
    reflows a paragraph keeps the fingerprint); any changed word or figure does.
    """
    return hashlib.sha256(" ".join(_fingerprint_tokens(text)).encode()).hexdigest()[:16]


@lru_cache(maxsize=200_000)
def _counter(text: str) -> Counter[str]:
    return Counter(normalize_tokens(text))


def containment(quote: str, text: str) -> float:
    """Share of the quote's normalised tokens (with multiplicity) found in `text`."""
    q = _counter(quote)
    total = sum(q.values())
    if total == 0:
        return 0.0
    t = _counter(text)
    return sum(min(n, t[tok]) for tok, n in q.items()) / total


@dataclass(frozen=True, slots=True)
class AnchorResolution:
    anchor: Anchor
    chunk_ids: tuple[str, ...]
    best: float  # best containment seen among candidate chunks

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


def resolve_anchor(
    anchor: Anchor, table: ChunkTable, *, threshold: float = HOLD_THRESHOLD
) -> AnchorResolution:
    """Every chunk of the anchor's doc (and page, sheet, when given) that holds the gold."""
    ids: list[str] = []
    best = 0.0
    for c in _candidates(anchor, table):
        s = containment(anchor.quote, c.text)
        best = max(best, s)
        if anchor.cells is not None and "cells" in c.extra:
            held = s >= TEXT_CONFIRM and _cells_hold(anchor.cells, c)
        elif anchor.box is not None and "line_boxes" in c.extra:
            held = s >= threshold or (s >= TEXT_CONFIRM and _box_holds(anchor.box, c))
        else:
            held = s >= threshold
        if held:
            ids.append(c.chunk_id)
    return AnchorResolution(anchor, tuple(ids), best)
