"""The answer checks' shared text reading, made faster without changing what it reads: each
shortcut is held to the reading it replaced (the plain definition, written out here)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.checks.conversation.context import _name_pattern, named_companies
from assay.judge.meaning import (
    _LONGEST,
    _TABLE,
    AXES,
    SYNONYMS,
    _phrase_at,
    _words,
)
from assay.judge.numbers import extract_quantities
from assay.judge.numeric import stated_years
from assay.judge.refusal import detect_refusal

# the words of the vocabulary tables' phrases, so that generated texts spell their phrases
_VOCAB = sorted(
    {w for group in SYNONYMS for p in group for w in re.split(r"[\s-]+", p) if w}
    | {w for pos, neg in AXES.values() for p in (*pos, *neg) for w in re.split(r"[\s-]+", p) if w}
)
_PHRASES = sorted(
    {p for group in SYNONYMS for p in group}
    | {p for pos, neg in AXES.values() for p in (*pos, *neg)}
)
_TOKENS = st.one_of(
    st.sampled_from(_PHRASES),
    st.sampled_from(_VOCAB),
    st.sampled_from(_VOCAB).map(str.capitalize),
    st.sampled_from([",", ";", ".", "not", "the", "Averix", "and"]),
)


def _phrase_by_definition(
    words: list, i: int, name_word: bool
) -> tuple[int, tuple[str, int]] | None:
    """The longest phrase of the table within the clause, longest first (the reading before)."""
    w = words[i]
    for n in range(min(_LONGEST, len(words) - i), 0, -1):
        span = words[i : i + n]
        if any(s.clause != w.clause for s in span) or (n == 1 and name_word):
            continue
        phrase = tuple(s.lemma for s in span)
        if phrase in _TABLE:
            return n, _TABLE[phrase]
    return None


@settings(max_examples=150, deadline=None)
@given(st.lists(_TOKENS, min_size=1, max_size=14))
def test_the_phrase_read_at_each_word_is_the_longest_of_the_table(tokens: list[str]) -> None:
    text = " ".join(tokens).replace(" ,", ",").replace(" ;", ";").replace(" .", ".")
    words = _words(text)
    lemmas = [w.lemma for w in words]
    for i in range(len(words)):
        for name_word in (False, True):
            assert _phrase_at(words, lemmas, i, name_word) == _phrase_by_definition(
                words, i, name_word
            ), (text, i, name_word)


def test_a_multi_word_phrase_beats_its_first_word_and_stops_at_a_clause() -> None:
    words = _words("Cost of sales rose; the board member left, and cost fell; board, member.")
    lemmas = [w.lemma for w in words]

    def length(i: int, name_word: bool = False) -> int:
        hit = _phrase_at(words, lemmas, i, name_word)
        return 0 if hit is None else hit[0]

    at = {w.text: i for i, w in reversed(list(enumerate(words)))}
    assert length(at["Cost"]) == 3  # "cost of sales", not "cost"
    assert length(at["board"]) == 2  # "board member", not "board"
    assert length(at["cost"]) == 1  # "cost" alone
    assert length(len(words) - 2) == 1  # "board" with "member" in the next clause
    assert length(at["Cost"], name_word=True) == 3  # a name's word still opens a phrase


def test_each_sentence_opens_with_its_first_word() -> None:
    words = _words("Revenue rose. Costs fell sharply! Did margins widen? Yes")
    opening = [w.text for w in words if w.sentence_start]
    assert opening == ["Revenue", "Costs", "Did", "Yes"]


_NAMES = st.sampled_from(
    ["Averix", "Averix Technologies Inc.", "AT&T", "&Co Holdings", "T", "Granite State Bancorp",
     "3M", "3M Co", "Inc.", "Kestrel Systems", "Kestrel", "Q2 Holdings"]
)  # fmt: skip
_TEXT_BITS = st.sampled_from(
    ["Averix", "Averix Technologies", "AT&T", "AT", "&Co", "Holdings", "T", "3M", "3Ms",
     "Granite State", "Bancorp", "Kestrel", "KestrelSystems", "Systems", "Q2", "xAverix",
     "é", "-", "'s", ",", ".", " ", "revenue was $4.2 billion"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_NAMES, max_size=6, unique=True), st.lists(_TEXT_BITS, max_size=10))
def test_named_companies_finds_what_each_names_pattern_finds(
    names: list[str], bits: list[str]
) -> None:
    for joiner in (" ", ""):
        answer = joiner.join(bits)
        want = [n for n in names if (p := _name_pattern(n)) is not None and p.search(answer)]
        assert named_companies(names, answer) == want, (names, answer)


def test_readings_kept_once_are_each_callers_own() -> None:
    years = stated_years("Revenue in FY2023 rose from 2022.")
    assert years == {2022, 2023}
    years.add(1999)
    assert stated_years("Revenue in FY2023 rose from 2022.") == {2022, 2023}
    first = detect_refusal("I cannot find that in the filings.")
    assert first.refused and detect_refusal("I cannot find that in the filings.") == first
    assert not detect_refusal("Revenue was $4.2 billion.").refused
    assert detect_refusal("  ").refused and detect_refusal(None).refused


def test_a_text_without_a_digit_states_no_figure() -> None:
    assert extract_quantities("Revenue rose by a third, to a record.") == []
    assert [q.text for q in extract_quantities("Revenue rose by a third, to $5 billion.")] == [
        "$5 billion"
    ]
