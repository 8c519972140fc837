"""``no_contradiction`` (binary; turns 2 and later): no later answer states a different figure
for a key fact an earlier answer of the same conversation stated. For each critical key fact
of an earlier turn whose figure that turn's answer stated (`assay.judge.numbers`' matching,
scale and rounding aware), the answer is read clause by clause (sentences, then split at
";" and ", and / but / while"; citations in brackets left out); a clause that speaks of
the same thing, of the same company (it names no other company of the dataset, spellings
of the earlier turn's read as one) and of the same period, and states a figure of the same
kind (currency, percent, ...) none of whose figures match, is a contradiction. The same
thing: every word of what a short key fact names ("net income"; words compared stemmed,
"increased" as "increase"); two of the words a sentence-long key fact shares with the
earlier question ("effective tax rate" of "The effective tax rate ... changed from 24.6% in
FY2021 to 21.6% in FY2022"); for a fact that is only a figure, a word of the earlier
question's asking sentence (two of it when it has more than two: "asset turnover ratio"),
not of the definitions around it. The same period: a year the earlier answer stated the
figure for (else its question's, its gold's, or the latest earlier question's that names
one); a clause naming no year is of the last year its sentence named, and one whose
sentence names none is compared only when the earlier figure's year is unknown too.
Abstains when no earlier answer stated a key-fact figure.
"""

from __future__ import annotations

import re

from assay._stopwords import FACT_STOPWORDS
from assay.checks.conversation.context import (
    _CITATION,
    _NOT_NAMES,
    _WORD,
    _entities,
    _later,
    _meant_years,
    _names_loosely,
    _names_of,
    _turn,
)
from assay.judge.context import CheckContext
from assay.judge.numbers import Quantity, compare
from assay.judge.numeric import read_figures, stated_years
from assay.judge.refusal import split_sentences
from assay.judge.registry import Outcome, check

__all__ = ["contradicting_clause", "split_clauses"]


_CLAUSE = re.compile(r";\s*|,\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
_PERIOD_WORDS = frozenset(
    ["fiscal", "year", "years", "quarter", "quarters", "fy", "annual", "ended", "ending", "end",
     "january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december", "prior", "previous", "last", "current"]
)  # fmt: skip
_ASKING = frozenset(
    ["much", "many", "report", "reported", "pull", "say", "said", "state", "stated", "disclose",
     "disclosed", "total", "amount", "figure", "number", "value", "about", "thousand",
     "million", "billion", "trillion", "bn", "mn", "percent", "dollar", "usd", "eur"]
)  # fmt: skip


def split_clauses(text: str) -> list[str]:
    """The answer's clauses: its sentences, each split at ";" and ", and / but / while"
    (citations in square brackets left out)."""
    text = _CITATION.sub(" ", text)
    return [c for s in split_sentences(text) for c in _CLAUSE.split(s) if c.strip()]


def _stem(word: str) -> str:
    """A word's stem for matching what a fact names: "increased", "increase" and "increases"
    alike, "revenues" and "revenue", "declined" and "decline"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word.removesuffix("e") if len(word) > 3 else word


def _concept(text: str, entities: list[str]) -> set[str]:
    """The words naming what a fact or question is about ("net income"): no stop, period,
    asking or entity word, no number."""
    named = {w for n in entities for w in _WORD.findall(n.lower())}
    return {
        w
        for w in _WORD.findall(text.lower())
        if w not in FACT_STOPWORDS
        and w not in _NOT_NAMES
        and w not in _PERIOD_WORDS
        and w not in _ASKING
        and w not in named
        and not any(ch.isdigit() for ch in w)
    }


def contradicting_clause(
    fact: Quantity,
    years: set[int],
    concept: set[str],
    answer: str,
    *,
    every_word: bool = False,
    at_least: int = 1,
    elsewhere: list[str] | None = None,
) -> tuple[str, Quantity] | None:
    """The first clause of `answer` that states another figure than `fact` for the same
    thing (`at_least` words of `concept`, stemmed; each of them with `every_word`) and period
    (a year of `years`; a clause naming no year is of the last year its sentence named before
    it, and with no year named there nor in `years`, of the same unnamed period), and names
    none of
    the companies `elsewhere` (another company's figure is another fact), with the figure it
    states; None if none."""
    concept = {_stem(w) for w in concept}
    clauses = [
        (i, c)
        for i, sentence in enumerate(split_sentences(_CITATION.sub(" ", answer)))
        for c in _CLAUSE.split(sentence)
        if c.strip()
    ]
    last: tuple[int, set[int]] = (-1, set())
    for i, clause in clauses:
        named_years = stated_years(clause)
        period = named_years or (last[1] if last[0] == i else set())
        last = (i, named_years or (last[1] if last[0] == i else set()))
        words = {_stem(w) for w in _WORD.findall(clause.lower())}
        same = concept <= words if every_word else len(words & concept) >= at_least
        if not concept or not same:
            continue
        if not (period & years if period or years else True):
            continue
        if elsewhere and _names_loosely(elsewhere, clause):
            continue
        figs = [q for q in read_figures(clause) if q.kind == fact.kind and not q.is_year]
        if not figs or any(compare(fact, q).ok for q in figs):
            continue
        return clause.strip(), figs[0]
    return None


@check("no_contradiction", group="conversation", rates=_later)
def no_contradiction(ctx: CheckContext) -> Outcome:
    """No later answer states a different figure for a key fact an earlier answer of the same
    conversation stated."""
    ref = ctx.entry.conversation
    if ref is None or not _later(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    compared = False
    for n in range(1, ref.turn):
        earlier = _turn(ctx, n)
        said = ctx.turn_answer(f"{ref.id}#{n}")
        if earlier is None or not said:
            continue
        facts = [kf for kf in earlier.key_facts if kf.critical]
        if not facts:
            continue
        theirs = _names_of(ctx, earlier)
        memo = _entities(ctx)  # the other companies' names, not another spelling of theirs
        elsewhere = [] if memo is None else memo.others([*theirs, *memo.proper_of(theirs)])
        # what the earlier question asks: its asking sentence ("What is the FY2019 fixed asset
        # turnover ratio for Activision Blizzard?"), not the definitions around it
        sentences = split_sentences(earlier.query)
        asking = next((x for x in sentences if "?" in x), sentences[0] if sentences else "")
        asked = _concept(asking, theirs)
        stated = [(c, read_figures(c)) for c in split_clauses(said)]  # once per earlier turn
        for kf in facts:
            # what the fact is about: its own words ("net income for fiscal 2024: $283
            # million"), all of them; for a sentence (more than three words: "The effective
            # tax rate ... has changed from 24.6% in FY2021 to 21.6% in FY2022"), two of
            # those it shares with the earlier question (or of its own); else a word of the
            # earlier question
            own = _concept(_CITATION.sub(" ", kf.fact), theirs)
            if 0 < len(own) <= 3:
                concept, every_word, at_least = own, True, 1
            elif own:
                stems = {_stem(w) for w in asked}
                concept, every_word = {w for w in own if _stem(w) in stems} or own, False
                at_least = min(2, len(concept))
            else:  # a word of the question's; two of a longer one ("asset turnover ratio")
                concept, every_word, at_least = asked, False, 1 if len(asked) <= 2 else 2
            for fig in read_figures(kf.fact):
                where = next(
                    (c for c, figs in stated if any(compare(fig, q).ok for q in figs)), None
                )
                if where is None:
                    continue  # the earlier answer did not state it: nothing to hold to
                years = (
                    stated_years(where)
                    or stated_years(earlier.query)
                    or _meant_years(earlier)
                    or _conversation_years(ctx, n)
                )
                compared = True
                hit = contradicting_clause(
                    fig, years, concept, ctx.answer or "", every_word=every_word,
                    at_least=at_least, elsewhere=elsewhere,
                )  # fmt: skip
                if hit is not None:
                    clause, q = hit
                    return Outcome(
                        False,
                        (
                            f"states {q.text} where turn {n}'s answer stated {fig.text} "
                            f"({kf.fact[:80]}): {clause[:120]}",
                        ),
                    )
    if not compared:
        return Outcome(None)
    return Outcome(True)


def _conversation_years(ctx: CheckContext, n: int) -> set[int]:
    """The years the latest of turns 1..`n` that names one in its question names ("that
    year" of turn 2 is turn 1's)."""
    for m in range(n, 0, -1):
        t = _turn(ctx, m)
        if t is not None and (years := stated_years(t.query)):
            return years
    return set()
