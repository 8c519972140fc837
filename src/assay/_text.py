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

Contract of `visible_text(text)`: the text as a reader sees it. Characters that are not seen as
characters of their own are dropped -- format characters (Unicode category Cf: the zero-width
space, ZWNJ, ZWJ, word joiner, soft hyphen, BOM, bidi marks, tag characters), variation
selectors and fillers, and combining and enclosing marks (Mn, Me: ``4\u0301``, ``4\u20dd``
read ``4``; an accent written as a mark is dropped with it) -- and decimal digits of other
scripts read as ASCII digits, so ``$7\u200b42 mil\u00adlion`` reads ``$742 million``,
``4\u03011\u03012`` reads ``412`` and ``٧٤٢`` reads ``742``. Every check that
looks for a restricted figure or quote in free text reads it through this one table
(`unseen_table`): the workbench's quote detector (`assay.workbench.service.quotes`) and the
judge's leak check (`assay.checks.policy.leaked_figures`).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["fold_text", "normalise_query", "unseen_table", "visible_text"]

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


_FILLERS = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180E, 0x180F, 0x3164, 0xFFA0}
)


_UNSEEN = frozenset({"Cf", "Mn", "Me"})  # format characters, combining and enclosing marks


@functools.cache
def unseen_table() -> dict[int, str | None]:
    """`str.translate` table of what a reader does not see as a character of its own (the
    module's `visible_text` contract): invisible characters and combining marks map to None, other scripts' decimal
    digits to the ASCII digit."""
    table: dict[int, str | None] = {}
    for o in range(0x80, 0x10000):
        ch = chr(o)
        cat = unicodedata.category(ch)
        if cat in _UNSEEN or 0xFE00 <= o <= 0xFE0F or o in _FILLERS:
            table[o] = None
        elif cat == "Nd":
            table[o] = str(unicodedata.digit(ch))
    for lo, hi in ((0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)):
        for o in range(lo, hi + 1):
            table[o] = None
    for o in range(0x10000, 0x20000):  # the supplementary plane's combining marks
        if unicodedata.category(chr(o)) in ("Mn", "Me"):
            table[o] = None
    return table


def visible_text(text: str) -> str:
    """`text` as a reader sees it (the module's contract); unchanged (the same object) when
    ASCII."""
    return text if text.isascii() else text.translate(unseen_table())
