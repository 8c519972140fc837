"""`polarity_correct`: a yes/no or direction question answered the way the reference answers it.

Decided from the entry's question and reference answer alone (no key facts needed), so it decides
imported benchmark entries (FinanceBench) that carry nothing else:

* **yes/no questions** (the query opens with an auxiliary: "Is", "Does", "Has", "Did", ...).
  The reference's polarity is the Yes or No it opens with, else the way it states the question's
  statement ("Verizon's debt decreased" answers "Has Verizon increased its debt?" with No). The
  answer's polarity is the Yes or No it opens with; else the way it states the question's
  statement or the reference's first statement (`assay.judge.meaning.read_fact`: negation with
  its scope, antonyms); else, where those rules find neither and the dense extra is installed,
  the semantic opinion (`assay.judge.semantic`) on whether a sentence of the answer says the
  question's statement, its polarity read deterministically (a negator or a negative axis
  word the statement lacks: the other way).
* **direction questions** (the query asks how something changed, "did ... increase", a trend)
  whose reference states a direction (increased / decreased, rose / fell, improved /
  worsened): the answer's direction for the same concept, negation included ("did not rise"
  is a fall).

An answer opening with Yes or No whose own statement says the other way ("Yes, Boeing's
business is not subject to cyclicality") contradicts itself and fails. A refusal, or an answer
that states no polarity, fails: the question asked for one. The check abstains on entries that
are neither kind, on entries expected not to be answered, and where the reference states no
polarity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.dataset import Entry
from assay.judge.meaning import (
    Term,
    _align,
    _content,
    _sentences,
    _split,
    analyse,
    read_fact,
    yes_no,
)
from assay.judge.semantic import opinion

__all__ = [
    "Polarity",
    "answer_polarity",
    "question_statement",
    "reference_polarity",
    "statement_polarity",
]

_AUX = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|shall|may"
    r"|might|must)\b(?:n't)?\s+",
    re.IGNORECASE,
)
_DIRECTION_ASKED = re.compile(
    r"\b(?:how\s+(?:did|has|have|does|do)\b.*\b(?:change|chang|move|trend|evolve|develop)"
    r"|what\s+(?:was|is)\s+the\s+(?:trend|direction|change)|trend|direction\s+of)",
    re.IGNORECASE | re.DOTALL,
)
_DIRECTION = "axis:direction"
_QUALIFIER = re.compile(
    r",?\s+\b(?:based\s+on|according\s+to|judging\s+by|relying\s+on|using|per)\b", re.I
)


@dataclass(frozen=True, slots=True)
class Polarity:
    """A polarity read from a text: +1 (yes / up), -1 (no / down), how it was read."""

    sign: int
    how: str
    kind: str  # "yes/no" | "direction"


def question_statement(query: str) -> str | None:
    """The statement a yes/no question asks about, or None when the query is not one: its first
    question, the opening auxiliary dropped ("Is Boeing's business subject to cyclicality?" ->
    "Boeing's business subject to cyclicality")."""
    first = re.split(r"(?<=\?)", query.strip(), maxsplit=1)[0]
    if not first.endswith("?"):
        return None
    m = _AUX.match(first)
    if m is None:
        return None
    rest = first[m.end() :].rstrip("?").strip()
    # the qualifier of how to answer is not part of the statement ("... capital intensive
    # business based on FY 2022 data": an answer says "is a capital-intensive business")
    rest = _QUALIFIER.split(rest, maxsplit=1)[0].strip(" ,")
    return rest or None


def _asked_statement(query: str) -> str | None:
    st = question_statement(query)
    if st is not None:
        return st
    # a leading phrase before the question proper ("Looking at VaR, did the risk ...?")
    m = re.search(r",\s*((?:is|are|was|were|does|do|did|has|have|had)\b[^?]*\?)", query, re.I)
    return None if m is None else question_statement(m.group(1))


def _direction_terms(text: str) -> list[Term]:
    return [t for t in analyse(text) if t.key == _DIRECTION]


def reference_polarity(entry: Entry) -> Polarity | None:
    """The polarity the entry's reference answer gives its yes/no or direction question (None:
    the entry asks neither, or the reference states no polarity)."""
    ref = (entry.reference_answer or "").strip()
    if not ref:
        return None
    statement = _asked_statement(entry.query)
    if statement is not None:
        said = yes_no(ref)
        if said is not None:
            return Polarity(said, "the reference opens with " + ("Yes" if said > 0 else "No"),
                            "yes/no")  # fmt: skip
        sign = _stated(statement, ref)
        if sign is not None:
            return Polarity(sign, "the reference states the question's statement"
                            + ("" if sign > 0 else " the other way"), "yes/no")  # fmt: skip
        return None
    if _DIRECTION_ASKED.search(entry.query) or _direction_terms(entry.query):
        d = _first_direction(ref)
        if d is not None:
            return Polarity(d.polarity, f"the reference states {d.text!r}", "direction")
    return None


def _first_direction(text: str) -> Term | None:
    for a, b in _sentences(text):
        terms = _direction_terms(text[a:b])
        if terms:
            return terms[0]
    return None


def _stated(statement: str, text: str) -> int | None:
    """+1 when `text` states `statement`, -1 when it states it the other way (negation or an
    antonym), None when it does neither."""
    reading = read_fact(statement, text)
    if reading.contradicted and reading.reason in ("negation", "antonym", "answer"):
        return -1
    return 1 if reading.present else None


def answer_polarity(entry: Entry, answer: str, want: Polarity) -> tuple[Polarity | None, str]:
    """The polarity `answer` gives the entry's question (of `want`'s kind), and a note: None
    when it states none."""
    if want.kind == "direction":
        return _answer_direction(entry, answer)
    statement = _asked_statement(entry.query) or ""
    opened = yes_no(answer)
    body = _stated(statement, _after_opening(answer)) if statement else None
    if opened is not None:
        if body is not None and body != opened:
            return None, (
                f"opens with {'Yes' if opened > 0 else 'No'} but states the question's statement "
                + ("the other way" if body < 0 else "as asked")
            )
        return Polarity(opened, "opens with " + ("Yes" if opened > 0 else "No"), "yes/no"), ""
    if body is not None:
        return Polarity(body, "states the question's statement"
                        + ("" if body > 0 else " the other way"), "yes/no"), ""  # fmt: skip
    ref = entry.reference_answer or ""
    first = _reference_statement(ref)
    if first:
        told = _stated(first, answer)
        if told is not None:
            sign = told * want.sign
            return Polarity(sign, "states the reference's statement"
                            + ("" if told > 0 else " the other way"), "yes/no"), ""  # fmt: skip
    said = _semantic(statement, answer)
    if said is not None:
        return Polarity(said[0], said[1], "yes/no"), ""
    return None, "states no yes or no"


def _semantic(statement: str, answer: str) -> tuple[int, str] | None:
    return opinion().polarity(statement, answer) if statement else None


def statement_polarity(query: str, answer: str) -> int | None:
    """+1 when `answer` states the statement the yes/no question `query` asks about, -1 when it
    states it the other way, None when it does neither or `query` is no yes/no question: read
    by the rules, else (where they find neither) by the semantic opinion."""
    statement = _asked_statement(query)
    if statement is None:
        return None
    told = _stated(statement, answer)
    if told is None:
        said = _semantic(statement, answer)
        told = None if said is None else said[0]
    return told


def _after_opening(answer: str) -> str:
    return re.sub(r"^\s*(?:yes|no)\b[\s,.;:!-]*", "", answer, count=1, flags=re.I)


def _reference_statement(ref: str) -> str:
    """The reference's first statement after its Yes/No ("" when it is only "Yes")."""
    rest = _after_opening(ref).strip()
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", rest, maxsplit=1)[0] if rest else ""


def _answer_direction(entry: Entry, answer: str) -> tuple[Polarity | None, str]:
    ref = entry.reference_answer or ""
    for a, b in _sentences(ref):
        ref_terms = _content(analyse(ref[a:b]))
        if not any(t.key == _DIRECTION for t in ref_terms):
            continue
        for s in _split(answer):
            for f, t in _align(ref_terms, s.terms):
                if f.key == _DIRECTION:
                    return Polarity(
                        t.polarity,
                        f"states {t.text!r}" + (" (negated)" if t.negated else ""),
                        "direction",
                    ), ""
        break
    signs = {t.polarity for t in _direction_terms(answer)}
    if len(signs) == 1:
        d = _first_direction(answer)
        assert d is not None
        return Polarity(d.polarity, f"states {d.text!r}", "direction"), ""
    return None, "states no direction" if not signs else "states both directions"
