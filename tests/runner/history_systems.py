"""Small systems that read a conversation's history: one resolves "the year before" from it."""

from __future__ import annotations

import datetime as dt
import re
import threading
from typing import Any

REVENUE = {
    ("Averix", 2023): "4.2",
    ("Averix", 2022): "3.9",
    ("Borlan", 2023): "7.1",
    ("Borlan", 2022): "6.4",
    ("Cendra", 2023): "2.5",
    ("Cendra", 2022): "2.2",
}
COMPANIES = sorted({c for c, _ in REVENUE})

CALLS: list[tuple[str, list[dict[str, str]] | None]] = []
LOCK = threading.Lock()
FAIL_ON: set[str] = set()


def _about(text: str) -> tuple[str | None, int | None]:
    company = next((c for c in COMPANIES if c in text), None)
    years = re.findall(r"\b(20\d\d)\b", text)
    return company, int(years[-1]) if years else None


class YearBefore:
    """Answers revenue questions; a follow-up ("And the year before?") is read against the last
    question of its history. Without history it guesses the first company it knows."""

    def identity(self) -> dict[str, Any]:
        return {"kind": "year-before", "version": 1}

    def retrieve(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        history: list[dict[str, str]] | None = None,
    ) -> list[str]:
        company, year = _resolve(query, history)
        return [f"{company.lower()}/fy{year}"]

    def answer(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        hits: Any,
        history: list[dict[str, str]] | None = None,
    ) -> str:
        with LOCK:
            CALLS.append((query, history))
        if query in FAIL_ON:
            raise RuntimeError("killed")
        company, year = _resolve(query, history)
        return f"{company}'s revenue in fiscal {year} was ${REVENUE[(company, year)]} billion."


def _resolve(query: str, history: list[dict[str, str]] | None) -> tuple[str, int]:
    """The company and year a question asks about, "the year before" read from the history."""
    company, year = _about(query)
    if company is None or year is None:
        asked = [m["content"] for m in history or [] if m["role"] == "user"]
        before_c, before_y = _about(asked[-1]) if asked else (None, None)
        company = company or before_c or COMPANIES[0]
        year = (before_y - 1) if before_y is not None and year is None else (year or 2023)
    return company, year


class NoHistory:
    """A system that does not take history (called as before)."""

    def identity(self) -> dict[str, Any]:
        return {"kind": "no-history", "version": 1}

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[str]:
        return []

    def answer(self, query: str, *, as_of: dt.date | None, hits: Any) -> str:
        return f"about {query}"


def conversations(n: int = 6) -> list[dict[str, Any]]:
    """`n` two-turn conversations: revenue in fiscal 2023, then "And the year before?"."""
    out = []
    for i in range(n):
        c = COMPANIES[i % len(COMPANIES)]
        out.append(
            {
                "id": f"conv-{i}",
                "category": "carried_context",
                "label_tier": "gold",
                "metadata": {"company": c},
                "turns": [
                    {
                        "query": f"What was {c}'s total revenue in fiscal 2023?",
                        "evidence_paths": [[[f"{c.lower()}/fy2023"]]],
                        "key_facts": [{"fact": f"${REVENUE[(c, 2023)]} billion"}],
                        "reference_answer": f"{c} reported total revenue of "
                        f"${REVENUE[(c, 2023)]} billion for fiscal 2023.",
                    },
                    {
                        "query": "And the year before?",
                        "depends_on": [1],
                        "evidence_paths": [[[f"{c.lower()}/fy2022"]]],
                        "key_facts": [{"fact": f"${REVENUE[(c, 2022)]} billion"}],
                        "reference_answer": f"{c} reported total revenue of "
                        f"${REVENUE[(c, 2022)]} billion for fiscal 2022.",
                    },
                ],
                "criteria": ["kept_context"],
            }
        )
    return out
