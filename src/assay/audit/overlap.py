"""Normalised tokens and word n-grams: the one text-overlap rule the leakage audit and the
synthetic-question copying filter share.

Normalisation: Unicode NFKC, lower case, thousands separators dropped inside numbers
(``1,234`` -> ``1234``); tokens are the maximal runs of letters and digits, a decimal point
between digits kept (``3.5``); everything else (punctuation, ``$``, ``%``, whitespace) only
separates tokens. So ``"Revenue was $1,234.5 million."`` is ``revenue was 1234.5 million``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from assay._stopwords import AUDIT_STOPWORDS

__all__ = ["STOPWORDS", "ngrams", "normalise", "tokens"]

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)+|[^\W_]+")

#: Function words: an n-gram made only of these is never evidence of copying
#: (`assay._stopwords.AUDIT_STOPWORDS`).
STOPWORDS = AUDIT_STOPWORDS


def normalise(text: str) -> str:
    """The text as its normalised tokens joined by single spaces."""
    return " ".join(tokens(text))


def tokens(text: str) -> list[str]:
    """Normalised tokens of a text (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _THOUSANDS.sub("", text)
    return _TOKEN.findall(text)


def ngrams(toks: Sequence[str], n: int) -> Iterator[tuple[str, ...]]:
    """Every contiguous run of `n` tokens (none when there are fewer than `n`)."""
    for i in range(len(toks) - n + 1):
        yield tuple(toks[i : i + n])
