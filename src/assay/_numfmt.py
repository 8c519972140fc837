"""Number formats shared by the answer checks and quote alignment: US, European and Czech.

An analyst's "1,234.50", a European "1.234,50" or "1 234,50", a Czech "1 234,5 mil. Kč" state
figures the same way once their separators are read. `number_value(numeral)` reads one
numeral as written (digits with grouping and decimal separators) and returns its value and
its canonical digits ("1234.50"); `currency_code(symbol)` maps "$", "€", "Kč", "korun" ... to
an ISO code; `fold_diacritics` drops accents ("Kč" -> "Kc") for comparing words.

How a separator is read:

- "1,234" and "1,234,567.8": a comma followed by exactly three digits, in a well-formed
  US grouping, is a thousands separator (the US reading wins when both readings are possible);
- "1.234,50", "1 234,50", "234,5": otherwise a comma is the decimal separator;
- "1.234.567": several dots are thousands separators; one dot ("1.234") is a decimal point;
- spaces, no-break spaces (U+00A0), narrow no-break spaces (U+202F) and thin spaces (U+2009)
  group thousands. The regular expressions that find numerals (`assay.judge.numbers`) accept
  a plain space as a separator only where the numeral cannot be two table cells: before a
  decimal comma or before a European currency or scale word ("1 234 Kč", "1 234 mil.").
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CURRENCY_CODES",
    "SCALE_ABBREVIATIONS",
    "currency_code",
    "fold_diacritics",
    "number_value",
]

CURRENCY_CODES: dict[str, str] = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "kč": "CZK",
    "kc": "CZK",
    "czk": "CZK",
    "koruna": "CZK",
    "koruny": "CZK",
    "korun": "CZK",
    "chf": "CHF",
}
"""Currency symbols and words (lower case) -> ISO 4217 code."""

SCALE_ABBREVIATIONS: dict[str, float] = {
    "tis": 1e3,  # Czech tisíc
    "mil": 1e6,  # Czech milion, also English shorthand
    "mio": 1e6,  # German/Czech Million
    "mld": 1e9,  # Czech miliarda
    "mrd": 1e9,  # German Milliarde
}
"""Scale abbreviations of European filings (written with or without a trailing dot)."""

_SPACES = "\u00a0\u202f\u2009 "
_US_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def fold_diacritics(text: str) -> str:
    """`text` without combining accents ("Kč" -> "Kc", "Nestlé" -> "Nestle")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def currency_code(symbol: str | None) -> str | None:
    """ISO code of a currency symbol or word ("$" -> "USD", "Kč" -> "CZK"); None if unknown."""
    if not symbol:
        return None
    key = symbol.strip().lower()
    return CURRENCY_CODES.get(key) or CURRENCY_CODES.get(fold_diacritics(key))


def number_value(numeral: str) -> tuple[float, str]:
    """(value, canonical digits) of one numeral: "1 234,50" -> (1234.5, "1234.50").

    See the module docs for how separators are read. The canonical digits keep every written
    decimal (a trailing zero is stated precision for an answer).
    """
    s = "".join(ch for ch in numeral if ch not in _SPACES)
    if "," in s and "." in s:
        if s.rfind(",") > s.rfind("."):  # 1.234,50
            s = s.replace(".", "").replace(",", ".")
        else:  # 1,234.50
            s = s.replace(",", "")
    elif "," in s:
        s = s.replace(",", "") if _US_GROUPED.fullmatch(s) else s.replace(",", ".")
    elif s.count(".") > 1:
        s = s.replace(".", "")
    return float(s), s
