"""Follow-up questions read in the light of the conversation before them.

`contextualize(query, history, resolver)` turns a follow-up such as "And the year before?" into a
question that stands on its own ("And fiscal 2022? (Averix Technologies, Inc.; total revenue)"),
from the earlier USER turns of `history` (assistant turns are never read: an answer may name
companies the user did not ask about). The user turns are read oldest first, each one updating
what the conversation is about:

- the companies: the turn's own (`EntityResolver`) when it names any, which switches the
  conversation to them; else those of the turn before;
- the periods: the turn's own (`fiscal.parse_periods`) when it names any; a period relative to
  the conversation's ("the year before", "prior fiscal year", "a year earlier", "the quarter
  before", "last quarter", "the same quarter a year earlier", "the following year") is resolved
  against the periods of the turn before (a year back keeps the quarter; a quarter back from Q1
  is Q4 of the year before; a quarter back from a whole fiscal year is its fourth quarter); a
  quarter without a year ("what about Q2?", "Q2 of that year") takes the year of the turn
  before, and is written in full where it is asked; a follow-up
  asking how something changed ("how did that change from the prior year?") keeps the earlier
  period beside the resolved one; a relative period beside one the turn names ("in Q2 2023 ...
  compared to the same quarter a year earlier") is relative to that one, and both are kept; no
  period named: those of the turn before;
- the measure: the turn's own words once company, period and conversational filler ("what
  about", "and", "the same figure") are set aside, when any remain; else the turn before's.

What the follow-up lacks is then written into it: a relative period is replaced by the period it
resolves to, and the companies, measure and periods it took from the history are appended in
brackets. A follow-up that names its company, period and measure is left as asked, and so is every
query without history: `FilingsSystem.retrieve(..., history=None)` is the single-turn pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assay._stopwords import FOLLOW_UP_FILLER
from assay.corpus import shift_months
from assay.systems.filings.entities import EntityMatch, EntityResolver, normalize_name
from assay.systems.filings.fiscal import PeriodRef, parse_periods

__all__ = ["ConversationState", "FollowUp", "contextualize", "period_text", "read_history"]

_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}

# (pattern, unit, shift): a period named relative to the conversation's
_YEAR = r"(?:fiscal\s+|calendar\s+)?year"
_QTR = r"(?:fiscal\s+)?quarter"
_RELATIVE: tuple[tuple[re.Pattern[str], str, int], ...] = tuple(
    (re.compile(p, re.I), unit, shift)
    for p, unit, shift in (
        (
            r"\b(?:the\s+)?same\s+(?:quarter|period)\s+(?:(?:of\s+)?(?:the\s+)?(?:prior|previous|"
            r"last|preceding)\s+year|(?:a|one|the)\s+year\s+(?:earlier|before|ago|prior)|last\s+"
            r"year|a\s+year\s+ago)\b|\b(?:the\s+)?year[\s-]+ago\s+quarter\b",
            "same_quarter",
            -1,
        ),
        (r"\btwo\s+years\s+(?:before|earlier|prior|ago)\b", "year", -2),
        (
            rf"\b(?:the\s+)?{_YEAR}\s+before(?:\s+that)?\b|\b(?:the\s+)?(?:prior|previous|"
            rf"preceding)\s+{_YEAR}\b|\b(?:a|one)\s+year\s+(?:earlier|before|prior)\b"
            rf"|\b(?:the\s+)?prior[\s-]+year\b|\blast\s+{_YEAR}\b",
            "year",
            -1,
        ),
        (
            rf"\b(?:the\s+)?{_YEAR}\s+after(?:\s+that)?\b|\b(?:the\s+)?(?:following|next)\s+"
            rf"{_YEAR}\b|\b(?:a|one)\s+year\s+later\b",
            "year",
            1,
        ),
        (
            rf"\b(?:the\s+)?{_QTR}\s+before(?:\s+that)?\b|\b(?:the\s+)?(?:prior|previous|"
            rf"preceding|last)\s+{_QTR}\b|\b(?:a|one)\s+quarter\s+(?:earlier|before)\b"
            rf"|\bsequentially\b",
            "quarter",
            -1,
        ),
        (
            rf"\b(?:the\s+)?{_QTR}\s+after(?:\s+that)?\b|\b(?:the\s+)?(?:following|next)\s+"
            rf"{_QTR}\b|\b(?:a|one)\s+quarter\s+later\b",
            "quarter",
            1,
        ),
    )
)

# a follow-up about how a figure moved keeps the earlier period beside the one it names
_CHANGE = re.compile(
    r"\b(?:chang\w*|compar\w*|versus|vs\.?|grow\w*|grew|increas\w*|decreas\w*|declin\w*|"
    r"up\s+or\s+down|differ\w*|mov(?:e|ed|ing)|y/?o?y|year[\s-]+over[\s-]+year)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&./'’\-]*%?")


@dataclass(frozen=True, slots=True)
class ConversationState:
    """What the conversation is about after a user turn: companies, periods and measure words."""

    entities: tuple[EntityMatch, ...] = ()
    periods: tuple[PeriodRef, ...] = ()
    measure: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "companies": [e.company for e in self.entities],
            "periods": [period_text(p) for p in self.periods],
            "measure": self.measure,
        }


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A query read against its history: the question to run (`query`), as asked (`asked`),
    what it took from the history (`carried`: "company", "period", "measure") and the state."""

    query: str
    asked: str
    state: ConversationState
    carried: tuple[str, ...] = field(default=())

    @property
    def rewritten(self) -> bool:
        return self.query != self.asked

    def to_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "query": self.query,
            "carried": list(self.carried),
            "state": self.state.to_dict(),
        }


def period_text(ref: PeriodRef) -> str:
    """A period as words `parse_periods` reads back as the same period ("fiscal 2023", "second
    quarter of fiscal 2023", "first half of calendar 2024", "2023-06-30")."""
    if ref.on_date is not None:
        return ref.on_date.isoformat()
    if ref.fiscal_year is None:
        return ref.text
    year = f"{'calendar' if ref.calendar else 'fiscal'} {ref.fiscal_year}"
    if ref.quarter is not None:
        return f"{_ORDINAL[ref.quarter]} quarter of {year}"
    if ref.half is not None:
        return f"{_ORDINAL[ref.half]} half of {year}"
    return year


def _key(ref: PeriodRef) -> tuple[Any, ...]:
    return (ref.fiscal_year, ref.quarter, ref.half, ref.calendar, ref.relative, ref.on_date)


def _shift(ref: PeriodRef, unit: str, by: int) -> PeriodRef | None:
    """`ref` moved `by` years or quarters (None when it cannot be: a relative "latest")."""
    if ref.on_date is not None:
        new = shift_months(ref.on_date, 3 * by if unit == "quarter" else 12 * by)
        return PeriodRef(new.isoformat(), on_date=new)
    if ref.fiscal_year is None:
        return None
    fy = ref.fiscal_year
    if unit in ("year", "same_quarter"):
        moved = replace(ref, fiscal_year=fy + by)
    elif ref.quarter is not None:
        q0 = ref.quarter - 1 + by
        moved = replace(ref, fiscal_year=fy + q0 // 4, quarter=q0 % 4 + 1)
    elif ref.half is not None:
        q = 2 * ref.half if by < 0 else 2 * ref.half - 1
        moved = _shift(replace(ref, half=None, quarter=q), unit, by) or ref
    else:  # a whole year: its last quarter, or the first of the next
        moved = replace(ref, quarter=4) if by < 0 else replace(ref, fiscal_year=fy + 1, quarter=1)
    return replace(moved, text=period_text(moved))


@dataclass(frozen=True, slots=True)
class _Turn:
    state: ConversationState
    carried: tuple[str, ...]
    relative: tuple[int, int, str] | None  # span and replacement of a relative period phrase
    explicit: tuple[PeriodRef, ...]


def _measure(text: str, entities: Sequence[EntityMatch], spans: Sequence[tuple[int, int]]) -> str:
    """The turn's words once companies, periods and conversational filler are set aside."""
    masked = list(text)
    for a, b in spans:
        masked[a:b] = " " * (b - a)
    names = {w for e in entities for w in [*normalize_name(e.text), *normalize_name(e.company)]}
    names |= {e.text.lower() for e in entities}
    words = []
    for m in _WORD.finditer("".join(masked)):
        w = re.sub(r"(?:['’]s|['’])$", "", m.group(0)).strip(".,-/")
        low = w.lower()
        if not w or low in FOLLOW_UP_FILLER or low in names or re.fullmatch(r"[\d,.%]+", w):
            continue
        if any(low == n or normalize_name(w) == [n] for n in names):
            continue
        words.append(w)
    return " ".join(words)


def _read(state: ConversationState, text: str, resolver: EntityResolver | None) -> _Turn:
    """One user turn read against the state before it."""
    carried: list[str] = []
    entities = tuple(resolver.resolve(text)) if resolver is not None else ()
    if not entities and state.entities:
        entities = state.entities
        carried.append("company")
    spans: list[tuple[int, int]] = []
    relative: tuple[int, int, str] | None = None
    rel_unit: tuple[str, int] | None = None
    masked = text
    base = state.periods
    for pattern, unit, by in _RELATIVE if base else ():  # relative to nothing: as asked
        m = pattern.search(masked)
        if m is not None:
            spans.append(m.span())
            rel_unit = (unit, by)
            relative = (m.start(), m.end(), m.group(0))
            masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
            break
    explicit = tuple(parse_periods(masked))
    for phrase in {ref.text for ref in explicit}:  # every mention ("FY2022 ... for FY2022")
        spans += [m.span() for m in re.finditer(re.escape(phrase), masked)]
    periods: tuple[PeriodRef, ...]
    if explicit:
        years = [p.fiscal_year for p in base if p.fiscal_year is not None]
        periods = tuple(
            replace(p, fiscal_year=years[0], text=period_text(replace(p, fiscal_year=years[0])))
            if p.quarter is not None and p.fiscal_year is None and p.on_date is None and years
            else p
            for p in explicit
        )
        if periods != explicit:
            carried.append("period")
            if relative is None and len(explicit) == 1:
                # "Q2 of that year": the quarter named in full where it is asked
                m = re.search(re.escape(explicit[0].text), masked)
                if m is not None:
                    relative = (m.start(), m.end(), periods[0].text)
        if rel_unit is not None:
            # "in Q2 2023 ... compared to the same quarter a year earlier": relative to the
            # period the turn names itself, which it keeps beside
            moved = [_shift(p, *rel_unit) for p in periods]
            if relative is not None and all(p is not None for p in moved):
                resolved = tuple(p for p in moved if p is not None)
                words = " and ".join(period_text(p) for p in resolved)
                relative = (relative[0], relative[1], words)
                periods = (*periods, *resolved)
            else:
                relative = None
    elif rel_unit is not None and base:
        moved = [_shift(p, *rel_unit) for p in base]
        if all(p is not None for p in moved):
            resolved = tuple(p for p in moved if p is not None)
            assert relative is not None
            words = " and ".join(period_text(p) for p in resolved)
            relative = (relative[0], relative[1], words)
            periods = (*base, *resolved) if _CHANGE.search(text) else resolved
            carried.append("period")
        else:
            relative, periods = None, base
    else:
        relative = None
        periods = base
        if base:
            carried.append("period")
    measure = _measure(text, [*entities] if "company" not in carried else [], spans)
    if not measure and state.measure:
        measure = state.measure
        carried.append("measure")
    return _Turn(ConversationState(entities, periods, measure), tuple(carried), relative, explicit)


def read_history(
    history: Sequence[Mapping[str, Any]] | None, resolver: EntityResolver | None
) -> ConversationState:
    """What the conversation is about after the user turns of `history` (oldest first)."""
    state = ConversationState()
    for i, message in enumerate(history or ()):
        if not isinstance(message, Mapping):
            raise ValueError(f"history[{i}]: expected a {{role, content}} object, got {message!r}")
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            raise ValueError(f"history[{i}].role: expected 'user' or 'assistant', got {role!r}")
        if not isinstance(content, str):
            raise ValueError(f"history[{i}].content: expected text, got {type(content).__name__}")
        if role == "user":
            state = _read(state, content, resolver).state
    return state


def contextualize(
    query: str,
    history: Sequence[Mapping[str, Any]] | None,
    resolver: EntityResolver | None,
) -> FollowUp:
    """`query` as a question that stands on its own, given the earlier turns `history`
    (``[{"role": "user" | "assistant", "content": str}, ...]``, oldest first). Without history
    (None or []) the query is returned as asked."""
    if not history:
        return FollowUp(query, query, ConversationState())
    before = read_history(history, resolver)
    turn = _read(before, query, resolver)
    if not turn.carried and turn.relative is None:
        return FollowUp(query, query, turn.state)
    text = query
    if turn.relative is not None:
        a, b, words = turn.relative
        text = text[:a] + words + text[b:]
    extra: list[str] = []
    if "company" in turn.carried:
        extra.append(", ".join(e.company for e in turn.state.entities))
    if "measure" in turn.carried:
        extra.append(turn.state.measure)
    if "period" in turn.carried:
        # the periods of the state that the text does not name yet (in full)
        named = {_key(p) for p in parse_periods(text)}
        missing = [p for p in turn.state.periods if _key(p) not in named]
        if missing:
            extra.append(" and ".join(period_text(p) for p in missing))
    text = text.strip()
    if extra:
        text = f"{text} ({'; '.join(x for x in extra if x)})"
    return FollowUp(text, query, turn.state, turn.carried)
