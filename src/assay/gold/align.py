"""Anchor alignment: resolve gold quotes onto whatever chunks an index has.

A chunk *holds* an anchor when it contains at least 80% of the quote's normalised tokens (counted
with multiplicity). Normalisation folds case, whitespace, punctuation and number formatting:
"$1,234.50" -> "1234.5", "(12)" -> "12", "4.20%" -> "4.2".
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from assay.corpus.chunks import Chunk, ChunkTable
from assay.dataset.schema import Anchor

__all__ = [
    "HOLD_THRESHOLD",
    "AnchorResolution",
    "chunk_fingerprint",
    "containment",
    "normalize_tokens",
    "resolve_anchor",
]

HOLD_THRESHOLD = 0.8
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


def normalize_tokens(text: str) -> list[str]:
    """Lowercased word and number tokens with punctuation and number formatting folded."""
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        tok = m.group(0)
        out.append(_fold_number(tok) if tok[0].isdigit() else tok)
    return out


def chunk_fingerprint(text: str) -> str:
    """What a chunk says, as 16 hex digits: SHA-256 of its normalised tokens joined by spaces.

    Whitespace, case, punctuation and number formatting do not change it (a re-parse that only
    reflows a paragraph keeps the fingerprint); any changed word or figure does.
    """
    return hashlib.sha256(" ".join(normalize_tokens(text)).encode()).hexdigest()[:16]


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


def _candidates(anchor: Anchor, table: ChunkTable) -> list[Chunk]:
    if anchor.page is not None:
        return table.on_page(anchor.doc, anchor.page)
    return table.of_doc(anchor.doc)


def resolve_anchor(
    anchor: Anchor, table: ChunkTable, *, threshold: float = HOLD_THRESHOLD
) -> AnchorResolution:
    """Every chunk of the anchor's doc (and page, when given) that holds the quote."""
    ids: list[str] = []
    best = 0.0
    for c in _candidates(anchor, table):
        s = containment(anchor.quote, c.text)
        best = max(best, s)
        if s >= threshold:
            ids.append(c.chunk_id)
    return AnchorResolution(anchor, tuple(ids), best)
