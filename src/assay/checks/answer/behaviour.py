"""`clarify_ok` and `premise_corrected`: the expected behaviours that are not answers.

An entry whose `expected_behavior` is ``clarify`` asks something that can be read more than one
way ("Northwind net income 2023" where two companies go by Northwind; "revenue 2023" from a
company whose fiscal year is not the calendar year). A good answer asks which reading is meant,
or answers every reading, naming each; a guess (one reading, silently) fails, and so does a
refusal that neither asks nor names the readings. An entry whose `expected_behavior` is
``correct_premise`` assumes something false (a figure disclosed for a quarter it is not); a
good answer says the assumption is false; an answer given as if it held fails, and so does a
refusal that does not name the premise.

Deterministic where the entry says what to ask or correct:

- `clarify_with` lists the readings. A reading is *named* when each of its words is in the
  answer ("FY2023" reads as "fiscal 2023"). The answer passes when it names every reading, or
  when a sentence of it asks (a question mark, "please specify", "do you mean", "could you
  confirm", ...) and shares a word with a reading ("Which Northwind do you mean?").
- `false_premise` states the false assumption as a claim ("Northwind discloses its count of
  $100k+ customers for the third quarter"). The answer passes when it states that claim with
  the opposite polarity (negated, or by an antonym: `assay.judge.meaning.read_fact` reads it
  as contradicted by negation or antonym; another period or entity does not correct it), or
  when a sentence of it states a gap (`gap.states_a_gap`: "isn't disclosed for the third
  quarter") naming every period the premise names and another of its concepts.

Without them the check asks the LLM judge its behaviour question (`assay.judge.llm.
BEHAVIOUR_QUESTIONS`; the judge also reads the entry's `acceptable_response_notes`) when the
checks were given a judge, and abstains otherwise, saying so. Both checks abstain on entries
with other behaviours and on missing answers.
"""

from __future__ import annotations

import re

from assay._stopwords import FACT_STOPWORDS
from assay.checks.answer.gap import states_a_gap
from assay.dataset import ExpectedBehavior
from assay.judge.context import CheckContext
from assay.judge.meaning import _Periods, analyse, read_fact
from assay.judge.refusal import split_sentences
from assay.judge.registry import Outcome, check

__all__ = ["asks_for_clarification", "clarify_ok", "named_readings", "premise_corrected"]

_FY_RE = re.compile(r"\bFY ?'?(\d{4}|\d{2})\b", re.IGNORECASE)
# words a company's name may go without ("Averix Technologies" names "Averix Technologies, Inc.")
_SUFFIXES = frozenset(
    ["inc", "incorporated", "corp", "corporation", "co", "ltd", "plc", "llc", "sa", "ag", "nv"]
)
_WORD_RE = re.compile(r"[a-z0-9]+(?:[.&'][a-z0-9]+)*")
_ASK_RE = re.compile(
    r"\?|\b(?:please|could you|can you|would you|kindly)\s+(?:\w+\s+)?(?:specify|clarify|"
    r"confirm|indicate|let (?:me|us) know|tell (?:me|us)|say)\b|\b(?:do|did) you mean\b|"
    r"\bare you (?:asking|referring|interested)\b|\bif you (?:could|can) (?:specify|clarify|"
    r"confirm)\b|\blet (?:me|us) know (?:which|whether|if)\b",
    re.IGNORECASE,
)


def _words(text: str) -> set[str]:
    """The words of `text`, lower case, with "FY2023" / "FY23" read as "fiscal 2023"."""

    def fiscal(m: re.Match[str]) -> str:
        y = m.group(1)
        return f"fiscal {'20' + y if len(y) == 2 else y}"

    text = _FY_RE.sub(fiscal, text.replace("\u2019", "'")).lower()
    return {w for w in _WORD_RE.findall(text) if w not in FACT_STOPWORDS and w not in _SUFFIXES}


def named_readings(readings: list[str], answer: str) -> list[str]:
    """The readings every word of which the answer states."""
    said = _words(answer)
    return [r for r in readings if _words(r) and _words(r) <= said]


def asks_for_clarification(readings: list[str], answer: str) -> str | None:
    """The first sentence of `answer` that asks the user which reading is meant (a question or
    a request that shares a word with one of `readings`), or None."""
    words = set().union(*(_words(r) for r in readings))
    for s in split_sentences(answer):
        if _ASK_RE.search(s) and _words(s) & words:
            return s
    return None


def _by_judge(ctx: CheckContext, question: str, what: str) -> Outcome:
    verdict = ctx.judged(question)
    if verdict is None:
        return Outcome(
            None,
            (f"no {what} on the entry and no LLM judge: not graded (assay judge run asks it)",),
        )
    notes = (f"LLM judge: {verdict.critique}",) if verdict.critique else ()
    return Outcome(verdict.passed, notes)


@check("clarify_ok")
def clarify_ok(ctx: CheckContext) -> Outcome:
    """The answer asks which reading of an ambiguous question is meant, or answers each reading
    naming it, instead of guessing (entries expected to clarify)."""
    if ctx.behavior is not ExpectedBehavior.clarify or not (ctx.answer or "").strip():
        return Outcome(None)
    readings = ctx.entry.clarify_with
    if not readings:
        return _by_judge(ctx, "clarify_ok", "clarify_with")
    answer = ctx.answer or ""
    named = named_readings(readings, answer)
    if len(named) == len(readings):
        return Outcome(True, ("answers every reading: " + "; ".join(named),))
    asked = asks_for_clarification(readings, answer)
    if asked is not None:
        return Outcome(True, (f"asks: {asked[:120]}",))
    if named:
        return Outcome(False, (f"guesses: answers for {'; '.join(named)} without asking",))
    return Outcome(False, ("neither asks which reading is meant nor names the readings",))


@check("premise_corrected")
def premise_corrected(ctx: CheckContext) -> Outcome:
    """The answer says that the question's false premise is false (entries expected to
    correct a premise)."""
    if ctx.behavior is not ExpectedBehavior.correct_premise or not (ctx.answer or "").strip():
        return Outcome(None)
    premise = ctx.entry.false_premise
    if not premise:
        return _by_judge(ctx, "premise_corrected", "false_premise")
    # the premise is read by its words: a figure in it names the thing assumed ("customers over
    # $100,000"), not a value the answer must repeat
    reading = read_fact(premise, ctx.answer or "", context=[ctx.entry.query], fact_figures=[])
    if reading.status == "contradicted" and reading.reason in ("negation", "antonym"):
        return Outcome(True, (f"corrects the premise: {reading.sentence[:120]}",))
    gap = _gap_for_period(premise, ctx.answer or "")
    if gap is not None:
        return Outcome(True, (f"says the premise's period is not covered: {gap[:120]}",))
    if ctx.refused:
        return Outcome(False, ("declines without naming the false premise",))
    return Outcome(False, (f"never says that the premise is false: {premise[:120]}",))


_PERIOD_WORD = re.compile(
    r"first|second|third|fourth|q[1-4]|quarters?|fiscal|years?|fy\d*|\d+|h[12]|half", re.IGNORECASE
)


def _gap_for_period(premise: str, answer: str) -> str | None:
    """A sentence of `answer` that states a gap about the period the premise names ("the count
    isn't disclosed for the third quarter"): it names every year and quarter of the premise and
    one more of its concepts. None when the premise names no period."""
    want = _Periods.of(premise)
    if not (want.years or want.quarters):
        return None
    concepts = {t.key for t in analyse(premise) if not _PERIOD_WORD.fullmatch(t.text)}
    for s in split_sentences(answer):
        got = _Periods.of(s)
        if (
            want.years <= got.years
            and want.quarters <= got.quarters
            and concepts & {t.key for t in analyse(s)}
            and states_a_gap(s)
        ):
            return s
    return None
