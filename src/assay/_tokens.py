"""Text normalisation shared by quote alignment (`assay.gold.align`) and the answer checks.

`normalize_tokens` folds case, whitespace, punctuation, number formatting (US, European and
Czech: `assay._numfmt`) and diacritics; `containment` is the share of a quote's tokens a text
holds, the rule by which a chunk holds an anchor (`HOLD_THRESHOLD`); `chunk_fingerprint` is what a
chunk says, for gold that names chunk ids.

Quotes copied from PDFs lose spaces or gain them ("MGMRESORTSINTERNATIONALANDSUBSIDIARIES",
"reve-\nnue"), and so do parsers: `spacing_containment` compares the two texts with every token
run together, so where words break does not matter, and `aligned_containment` is the rule
alignment uses: the token containment, or the spacing-free one where that is higher and the token
one falls short of the threshold (and says which it used).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from assay._numfmt import CURRENCY_CODES, fold_diacritics, number_value

__all__ = [
    "HOLD_THRESHOLD",
    "SPACING_GRAM",
    "aligned_containment",
    "chunk_fingerprint",
    "containment",
    "normalize_tokens",
    "spacing_containment",
    "token_count",
]

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
    return _tokens(text, _WORD_FOLDS)


def _tokens(text: str, folds: Mapping[str, str]) -> list[str]:
    low = _EU_NUMERAL.sub(lambda m: _canonical_number(m.group(0)), text.lower())
    low = fold_diacritics(low.replace("kč", "czk"))
    out: list[str] = []
    for m in _TOKEN.finditer(low):
        tok = m.group(0)
        out.append(_canonical_number(tok) if tok[0].isdigit() else folds.get(tok, tok))
    return out


def chunk_fingerprint(text: str) -> str:
    """What a chunk says, as 16 hex digits: SHA-256 of its normalised tokens joined by spaces.

    Whitespace, case, punctuation and number formatting do not change it (a re-parse that only
    reflows a paragraph keeps the fingerprint); any changed word or figure does.
    """
    return hashlib.sha256(" ".join(_fingerprint_tokens(text)).encode()).hexdigest()[:16]


@lru_cache(maxsize=4096)
def _token_tuple(text: str) -> tuple[str, ...]:
    return tuple(normalize_tokens(text))


@lru_cache(maxsize=200_000)
def _counter(text: str) -> Counter[str]:
    return Counter(_token_tuple(text))


def token_count(text: str) -> int:
    """How many normalised tokens `text` has (the unit of `containment`)."""
    return sum(_counter(text).values())


def containment(quote: str, text: str) -> float:
    """Share of the quote's normalised tokens (with multiplicity) found in `text`."""
    q = _counter(quote)
    total = sum(q.values())
    if total == 0:
        return 0.0
    t = _counter(text)
    return sum(min(n, t[tok]) for tok, n in q.items()) / total


SPACING_GRAM = 8
"""Characters per gram of the spacing-free comparison: long enough that an unrelated page of a
filing shares few of a quote's grams (at most 62% of any FinanceBench dev quote's, on the
next page of its filing), short enough that a figure ("1526762") is nearly one gram."""


@lru_cache(maxsize=4096)
@lru_cache(maxsize=4096)
def _unfolded_tuple(text: str) -> tuple[str, ...]:
    """The tokens without the whole-word folds ("kc" -> "czk", "mil" -> "million"): a fold
    applies to a word standing alone, so it would make where the words break matter (a text's
    "a kc" against a quote's "akc")."""
    return tuple(_tokens(text, {}))


def _run_together(text: str) -> str:
    return "".join(_unfolded_tuple(text))


@lru_cache(maxsize=512)
def _grams(text: str) -> Counter[str]:
    s, k = _run_together(text), SPACING_GRAM
    return Counter([s[i : i + k] for i in range(len(s) - k + 1)])


def spacing_containment(quote: str, text: str) -> float:
    """Share of the quote's normalised tokens the text holds when neither side's word breaks
    count: spaces lost or added, or words hyphenated at line ends ("reve-\nnue").

    Both texts' tokens are run together; a character gram (`SPACING_GRAM` long) of the quote's is
    matched when the text's has it (each of the text's grams matches once), and a quote token is
    held when matched grams cover every one of its characters. Counted per quote token, as
    `containment` counts, so a quote cut at a chunk boundary scores as it does there. A quote
    shorter than one gram must appear whole. Whole-word folds (`normalize_tokens`) are not
    applied here: `containment` reads them, this reads the characters."""
    toks = _unfolded_tuple(quote)
    q = "".join(toks)
    if not q:
        return 0.0
    k = SPACING_GRAM
    if len(q) < k:
        return 1.0 if q in _run_together(text) else 0.0
    have = _grams(text)
    used: Counter[str] = Counter()
    cover = [0] * (len(q) + 1)  # +1 where a matched gram starts, -1 where it ends
    for i in range(len(q) - k + 1):
        g = q[i : i + k]
        if used[g] < have[g]:
            used[g] += 1
            cover[i] += 1
            cover[i + k] -= 1
    held = at = depth = 0
    for tok in toks:
        whole = True
        for c in range(at, at + len(tok)):
            depth += cover[c]
            whole = whole and depth > 0
        held += whole
        at += len(tok)
    return held / len(toks)


def aligned_containment(
    quote: str, text: str, *, threshold: float = HOLD_THRESHOLD
) -> tuple[float, bool]:
    """(containment, whether it is the spacing-free one): the token `containment`, or where
    that falls short of `threshold` and `spacing_containment` is higher, the latter."""
    s = containment(quote, text)
    if s >= threshold:
        return s, False
    w = spacing_containment(quote, text)
    return (w, True) if w > s else (s, False)
