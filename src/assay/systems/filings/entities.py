"""Entity resolution: which companies a query is about.

The resolver is built from the corpus' document metadata (`company`, `ticker`, `aliases`) plus a
small built-in table of short forms analysts type ("JPM", "MMM", "Coke", "Amex", "JnJ"). A
built-in short form is only active when its company is in the corpus. Matching is conservative:

- names and aliases match on normalised word sequences (case, punctuation, "&", "Inc.", "Corp."
  and possessives ignored; "Coca Cola" = "Coca-Cola" = "CocaCola");
- tickers match only as upper-case standalone tokens ("JPM", not "jpm" inside a sentence);
- a company's first word alone ("Lockheed") matches only when it is distinctive: unique in the
  corpus, at least 4 letters and not a common English word ("General", "American", "Best");
- fuzzy matching allows one edit for names of 6+ characters and two for 10+ (typos such as
  "Pfzier"), never for tickers or short forms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN_ALIASES", "EntityMatch", "EntityResolver", "company_key", "normalize_name"]

# short forms -> a name the corpus' `company` normalises to (first match wins)
BUILTIN_ALIASES: dict[str, tuple[str, ...]] = {
    "3M": ("MMM",),
    "Activision Blizzard": ("ATVI", "Activision"),
    "Adobe": ("ADBE",),
    "AES Corporation": ("AES",),
    "Amazon": ("AMZN", "Amazon.com"),
    "Amcor": ("AMCR",),
    "AMD": ("Advanced Micro Devices",),
    "American Express": ("AXP", "Amex"),
    "American Water Works": ("AWK", "American Water"),
    "Apple": ("AAPL",),
    "Best Buy": ("BBY",),
    "Block": ("SQ", "Square"),
    "Boeing": ("BA",),
    "Coca-Cola": ("KO", "Coke", "The Coca-Cola Company"),
    "Corning": ("GLW",),
    "Costco": ("COST", "Costco Wholesale"),
    "CVS Health": ("CVS",),
    "Foot Locker": ("FL", "Footlocker"),
    "General Mills": ("GIS",),
    "Johnson & Johnson": ("JNJ", "JnJ", "J&J"),
    "JPMorgan": ("JPM", "JPMorgan Chase", "JP Morgan", "J.P. Morgan", "Chase"),
    "Kraft Heinz": ("KHC", "Kraft"),
    "Lockheed Martin": ("LMT", "Lockheed"),
    "MGM Resorts": ("MGM",),
    "Microsoft": ("MSFT",),
    "Netflix": ("NFLX",),
    "Nike": ("NKE",),
    "PepsiCo": ("PEP", "Pepsi"),
    "Pfizer": ("PFE",),
    "Ulta Beauty": ("ULTA", "Ulta"),
    "Verizon": ("VZ", "Verizon Communications"),
    "Walmart": ("WMT", "Wal-Mart"),
    "Alphabet": ("GOOGL", "GOOG", "Google"),
    "Meta Platforms": ("META", "Facebook"),
    "Tesla": ("TSLA",),
    "Goldman Sachs": ("GS", "Goldman"),
    "Bank of America": ("BAC", "BofA"),
    "Wells Fargo": ("WFC",),
    "Berkshire Hathaway": ("BRK", "Berkshire"),
    "Procter & Gamble": ("PG", "P&G"),
    "Exxon Mobil": ("XOM", "Exxon"),
}

_SUFFIXES = {
    "inc", "incorporated", "corp", "corporation", "co", "company", "companies", "plc", "ltd",
    "limited", "llc", "lp", "holdings", "holding", "group", "sa", "nv", "ag", "the",
}  # fmt: skip

_COMMON_WORDS = {
    "american", "general", "best", "united", "first", "national", "international", "global",
    "new", "great", "health", "bank", "capital", "financial", "energy", "resources", "foot",
    "water", "works", "block", "martin", "chase", "morgan", "motors", "mills", "beauty", "johnson",
    "express", "resorts", "public", "service", "services", "systems", "technologies", "data",
    "home", "power", "royal", "southern", "western", "eastern", "northern", "central", "pacific",
    "atlantic", "digital", "market", "markets", "world", "life", "food", "foods", "group", "air",
}  # fmt: skip

_TOKEN = re.compile(r"[a-z0-9]+")


def normalize_name(text: str) -> list[str]:
    """Lower-case word tokens of a name: accents, punctuation, possessive 's and '&' removed."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"(\w)['’]s\b", r"\1", text.lower())
    text = text.replace("&", " and ")
    text = re.sub(r"(?<=\w)[.\-](?=\w)", "", text)  # J.P. -> JP, Coca-Cola -> CocaCola
    return [t for t in _TOKEN.findall(text) if t != "and"]


def company_key(company: str) -> str:
    """Canonical key of a company name: normalised words without legal suffixes, joined."""
    words = [w for w in normalize_name(company) if w not in _SUFFIXES] or normalize_name(company)
    return "".join(words)


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """A company found in a query: its key, display name, the matched text and how it matched."""

    key: str
    company: str
    text: str
    via: str  # name | alias | ticker | short | fuzzy


def _edit_distance(a: str, b: str, limit: int) -> int:
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    # optimal string alignment distance: a swap of two neighbours ("Pfzier") costs one edit
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            cur.append(cost)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


class EntityResolver:
    """Resolve company mentions in text to the companies of a corpus."""

    def __init__(self) -> None:
        self.companies: dict[str, str] = {}  # key -> display name
        self._phrases: dict[str, tuple[str, str]] = {}  # joined phrase -> (key, via)
        self._tickers: dict[str, str] = {}  # upper-case ticker -> key
        self._max_words = 1

    @classmethod
    def from_documents(
        cls, documents: Iterable[Mapping[str, Any]], *, builtin: bool = True
    ) -> EntityResolver:
        """Resolver over every company named in `documents` (dicts with company/ticker/aliases)."""
        res = cls()
        for doc in documents:
            company = doc.get("company")
            if not company:
                continue
            aliases = list(doc.get("aliases") or [])
            res.add(str(company), ticker=doc.get("ticker"), aliases=[str(a) for a in aliases])
        if builtin:
            res._add_builtin()
        res._add_first_words()
        return res

    def add(self, company: str, *, ticker: str | None = None, aliases: Iterable[str] = ()) -> str:
        key = company_key(company)
        if not key:
            return key
        self.companies.setdefault(key, company)
        self._phrase(company, key, "name")
        for alias in aliases:
            if alias.isupper() and " " not in alias and len(alias) <= 5:
                self._tickers.setdefault(alias, key)
            self._phrase(alias, key, "alias")
        if ticker:
            self._tickers.setdefault(ticker.upper(), key)
        return key

    def _phrase(self, text: str, key: str, via: str) -> None:
        words = normalize_name(text)
        stripped = [w for w in words if w not in _SUFFIXES]
        for variant in (words, stripped):
            if not variant:
                continue
            self._phrases.setdefault("".join(variant), (key, via))
            self._max_words = max(self._max_words, len(variant))

    def _add_builtin(self) -> None:
        for name, shorts in BUILTIN_ALIASES.items():
            key = company_key(name)
            if key not in self.companies:
                continue
            for short in shorts:
                if short.isupper() and len(short) <= 5 and short.isalpha():
                    self._tickers.setdefault(short, key)
                else:
                    self._phrase(short, key, "short")

    def _add_first_words(self) -> None:
        firsts: dict[str, set[str]] = {}
        for key, company in self.companies.items():
            words = [w for w in normalize_name(company) if w not in _SUFFIXES]
            if len(words) >= 2:
                firsts.setdefault(words[0], set()).add(key)
        for word, keys in firsts.items():
            if (
                len(keys) == 1
                and len(word) >= 4
                and word not in _COMMON_WORDS
                and not word.isdigit()
            ):
                self._phrases.setdefault(word, (next(iter(keys)), "short"))

    def resolve(self, text: str) -> list[EntityMatch]:
        """Companies mentioned in `text`, in order of first mention, each once."""
        out: dict[str, EntityMatch] = {}
        raw_tokens = list(re.finditer(r"[A-Za-z0-9&][A-Za-z0-9&.'’\-]*", text))
        for m in raw_tokens:
            tok = re.sub(r"['’]s$|[.'’\-]+$", "", m.group(0))
            key = self._tickers.get(tok) if tok.isupper() and len(tok) >= 2 else None
            if key and key not in out:
                out[key] = EntityMatch(key, self.companies[key], tok, "ticker")
        words = normalize_name(text)
        i = 0
        while i < len(words):
            hit = None
            for n in range(min(self._max_words, len(words) - i), 0, -1):
                phrase = "".join(words[i : i + n])
                if phrase in self._phrases:
                    hit = (n, phrase, *self._phrases[phrase])
                    break
            if hit is None:
                fuzzy = self._fuzzy(words, i)
                if fuzzy is not None:
                    n, phrase, key = fuzzy
                    out.setdefault(key, EntityMatch(key, self.companies[key], phrase, "fuzzy"))
                    i += n
                    continue
                i += 1
                continue
            n, phrase, key, via = hit
            out.setdefault(
                key, EntityMatch(key, self.companies[key], " ".join(words[i : i + n]), via)
            )
            i += n
        return sorted(out.values(), key=lambda e: _first_pos(text, e))

    def _fuzzy(self, words: list[str], i: int) -> tuple[int, str, str] | None:
        best: tuple[int, int, str, str] | None = None
        for n in (2, 1):
            if i + n > len(words):
                continue
            phrase = "".join(words[i : i + n])
            if len(phrase) < 6 or phrase.isdigit():
                continue
            limit = 2 if len(phrase) >= 10 else 1
            for cand, (key, via) in self._phrases.items():
                if via not in ("name", "alias") or len(cand) < 6:
                    continue
                d = _edit_distance(phrase, cand, limit)
                if 0 < d <= limit and (best is None or (d, cand) < (best[0], best[3])):
                    best = (d, n, key, cand)
        if best is None:
            return None
        return best[1], best[3], best[2]

    def __len__(self) -> int:
        return len(self.companies)


def _first_pos(text: str, match: EntityMatch) -> int:
    pos = text.lower().find(match.text.split(" ")[0].lower())
    return pos if pos >= 0 else len(text)
