"""Text normalisation shared by quote alignment (`assay.gold.align`) and the answer checks.

`normalize_tokens` folds case, whitespace, punctuation, number formatting (US, European and
Czech: `assay._numfmt`) and diacritics; `containment` is the share of a quote's tokens a text
holds, the rule by which a chunk holds an anchor (`HOLD_THRESHOLD`); `chunk_fingerprint` is what a
chunk says, for gold that names chunk ids.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import lru_cache

from assay._numfmt import CURRENCY_CODES, fold_diacritics, number_value

__all__ = ["HOLD_THRESHOLD", "chunk_fingerprint", "containment", "normalize_tokens"]

HOLD_THRESHOLD = 0.8
"""A chunk holds an anchor when it contains at least this share of the quote's tokens."""

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
