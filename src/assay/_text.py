"""The one form a query is compared in: `normalise_query`, and the character fold under it.

Every place that asks "is this the same question?" compares queries in this form: the entry
fingerprint a run row carries (`assay.dataset.fingerprint`), the sealed fresh-sample registry
(`assay.dataset.fresh`), production-log matching against a golden set (`assay.logs`); and the
lexical tokenisers (the filings pipeline's `assay.systems.filings.index.tokenize` and the BM25
baseline `assay.systems.bm25`) read queries and chunks through the same character fold, so a
query typed on a phone finds what the ASCII spelling finds.

Contract of `fold_text(text)`:

1. Unicode NFKC: full-width letters and digits, ligatures ("ﬁ"), non-breaking and other
   compatibility spaces become their plain forms;
2. typographic quotes and dashes become ASCII: ‘ ’ ‚ ‛ ′ to ``'``, “ ” „ ‟ ″ to ``"``, the hyphens,
   dashes and the minus sign (U+2010 to U+2015, U+2212) to ``-``;
3. case folded (`str.casefold`, so "ß" and "ss" agree).

Contract of `normalise_query(text)`: `fold_text`, then

4. every character other than a word character and ``$ % / & . ' -`` becomes a space (so "?",
   ",", brackets, double quotes and colons do not tell two questions apart, while "10-K",
   "R&D", "y/y", "4.5%" and "company's" keep their meaning);
5. runs of whitespace collapsed to one space; spaces and full stops stripped at both ends.

It is idempotent (``normalise_query(normalise_query(q)) == normalise_query(q)``). It is *not*
the request-cache key: the system under test is asked the query as written, and a reply to one
spelling is not a reply to another (`assay.runner` keys its cache on the raw text).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold_text", "normalise_query"]

_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
_PUNCT = re.compile(r"[^\w$%/&.'-]+")
_SPACE = re.compile(r"\s+")


def fold_text(text: str) -> str:
    """`text` in NFKC, typographic quotes and dashes as ASCII, case folded (steps 1-3 above)."""
    if text.isascii():
        return text.lower()  # the same as casefold on ASCII, and faster
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).casefold()
    return unicodedata.normalize("NFKC", text)  # casefold can undo NFKC ("ǰ")


def normalise_query(text: str) -> str:
    """The comparable form of a query (the module's contract, steps 1-5)."""
    return _SPACE.sub(" ", _PUNCT.sub(" ", fold_text(text))).strip(" .")
