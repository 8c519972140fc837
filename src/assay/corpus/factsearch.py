"""Search the facts table for a 'not disclosed' label's structured-data lookup.

Before an expert marks a question unanswerable ("the filing does not say"), the facts table
(``facts.jsonl``, `assay.corpus.facts`) is searched for the figure: a footnote one reader missed
makes a correct refusal look wrong. `search_facts(facts, company=..., fiscal_year=...,
concept=...)` returns a `FactsSearch`: the company's facts for the period (what the workbench
shows beside the form), the ones whose line item holds every word of the concept, and the
`searched` / `found` sentences an entry's ``structured_lookup`` records (`to_record`).

A company matches when every word of the name asked for is a word of the fact's company
("Johnson & Johnson" finds "Johnson & Johnson Inc."; legal suffixes asked for are ignored). A
concept word matches a line-item word that starts with it, so "revenue" finds "Revenues".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl
from assay._stopwords import CONCEPT_GLUE
from assay.corpus.facts import Fact
from assay.errors import DataError, Problem

__all__ = ["FactsSearch", "load_facts", "search_facts"]

_WORD = re.compile(r"[a-z0-9]+")
_LEGAL = frozenset({"inc", "corp", "corporation", "co", "company", "ltd", "plc", "the", "llc"})
MAX_SHOWN = 200
"""Most facts a search lists for the period (a list read by hand)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("&", " and "))


def load_facts(path: str | Path) -> list[Fact]:
    """The facts of a ``facts.jsonl`` file, or of the one in a corpus folder; [] when the
    corpus has none (built before the facts table). A malformed row is a `DataError` naming
    file and line (`assay._io.iter_jsonl`)."""
    p = Path(path)
    if p.is_dir():
        p = p / "facts.jsonl"
    if not p.exists():
        return []
    out: list[Fact] = []
    problems: list[Problem] = []
    for line, row in iter_jsonl(p):
        try:
            out.append(Fact(**row))
        except TypeError as exc:  # a missing or unknown field
            problems.append(Problem(str(p), line, None, f"not a facts-table row: {exc}"))
    if problems:
        raise DataError(problems)
    return out


@dataclass(frozen=True)
class FactsSearch:
    """What a search of the facts table found: ``period`` holds the company's facts for the
    fiscal year (every year when none is given), ``matches`` those whose line item holds the
    concept."""

    company: str
    fiscal_year: int | None
    concept: str
    period: tuple[Fact, ...]  # the first `MAX_SHOWN`, latest year first
    matches: tuple[Fact, ...]
    n_period: int  # the period's facts in all

    @property
    def searched(self) -> str:
        """'Amazon, fiscal 2017: "customer count" in the facts table'."""
        when = f"fiscal {self.fiscal_year}" if self.fiscal_year is not None else "every year"
        what = f'"{self.concept}"' if self.concept.strip() else "every line item"
        return f"{self.company}, {when}: {what} in the facts table"

    @property
    def found(self) -> str:
        """The matching figures ('Revenues, fiscal 2017: $177,866 million (p. 37); ...'), or
        'nothing' with how many facts the period holds."""
        if not self.n_period:
            return "nothing: the facts table holds no fact of this company and period"
        if not self.matches:
            return (
                f"nothing: no line item holds {self.concept!r} among the {self.n_period} "
                "facts of the period"
            )
        shown = [
            f"{f.line_item}, fiscal {f.fiscal_year}: {f.figure()} ({f.doc_id} p. {f.page})"
            for f in self.matches[:10]
        ]
        more = len(self.matches) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more else "")

    def to_record(self, by: str | None = None, at: str | None = None) -> dict[str, Any]:
        """The entry's ``structured_lookup`` (`assay.dataset.schema.StructuredLookup`)."""
        out: dict[str, Any] = {"source": "facts", "searched": self.searched, "found": self.found}
        return out | {k: v for k, v in (("by", by), ("at", at)) if v}


def search_facts(
    facts: Iterable[Fact],
    *,
    company: str,
    fiscal_year: int | None = None,
    concept: str = "",
) -> FactsSearch:
    """Search the facts table for ``company``'s ``concept`` in ``fiscal_year`` (see the module
    docs); an empty concept matches every fact of the period."""
    want = [w for w in _words(company) if w not in _LEGAL] or _words(company)
    concept_words = [w for w in _words(concept) if w not in CONCEPT_GLUE]
    period: list[Fact] = []
    matches: list[Fact] = []
    for f in facts:
        if not want or not set(want) <= set(_words(f.company or "")):
            continue
        if fiscal_year is not None and f.fiscal_year != fiscal_year:
            continue
        period.append(f)
        item = _words(f.line_item)
        if all(any(t.startswith(w) for t in item) for w in concept_words):
            matches.append(f)
    return FactsSearch(
        company=company,
        fiscal_year=fiscal_year,
        concept=concept,
        period=tuple(sorted(period, key=_order)[:MAX_SHOWN]),
        matches=tuple(sorted(matches, key=_order)),
        n_period=len(period),
    )


def _order(f: Fact) -> tuple[int, str, int, str, int]:
    # latest year first, then by filing, page and row
    return (-f.fiscal_year, f.doc_id, f.page or 0, f.line_item, f.column)
