"""`acknowledges_gap`: a partly answerable question's answer says what the filings do not disclose.

An entry marked ``must_acknowledge_gap`` asks for something the corpus covers only in part (a
segment figure a company does not break out, a reason it never states). A good answer gives
what is there and says what is not; an answer that fills the gap with a confident figure, or
says nothing of it, fails. The check passes when any sentence of the answer carries a
statement-of-absence cue -- the refusal detector's "missing" and "inability" cues ("does not
disclose ...", "is not provided in the filing", "no information about", "cannot be determined")
or one of a few gap phrasings ("does not break out", "not separately disclosed") -- wherever it
stands, since such an answer usually states the available part first. It abstains on entries
without the flag and on missing answers. A full refusal also passes: whether refusing was
right is `refusal_ok`'s question, not this one's.
"""

from __future__ import annotations

import re

from assay.judge.context import CheckContext
from assay.judge.refusal import _CUE_RES, split_sentences
from assay.judge.registry import Outcome, check

__all__ = ["acknowledges_gap", "states_a_gap"]

_GAP_RE = re.compile(
    r"\b(?:(?:does|do|did) not|doesn't|don't|didn't) (?:break (?:out|down)|separately (?:disclose|"
    r"report))\b|\bnot (?:separately |specifically )?(?:broken out|disclosed|reported)\b"
    r"|\b(?:could|can)(?: ?not|n't) (?:find|locate)\b|\bno (?:breakdown|split|figure)\b",
    re.IGNORECASE,
)


def states_a_gap(answer: str) -> str | None:
    """The first sentence of ``answer`` that says something is not disclosed, or None."""
    for sentence in split_sentences(answer):
        if _GAP_RE.search(sentence) or any(
            _CUE_RES[cue].search(sentence) for cue in ("missing", "inability")
        ):
            return sentence
    return None


@check("acknowledges_gap")
def acknowledges_gap(ctx: CheckContext) -> Outcome:
    """The answer says what the filings do not disclose (entries marked must_acknowledge_gap)."""
    answer = ctx.answer or ""
    if not ctx.entry.must_acknowledge_gap or not answer.strip():
        return Outcome(None)
    said = states_a_gap(answer)
    if said is None:
        return Outcome(False, ("the answer never says what the filings do not disclose",))
    return Outcome(True, (f"gap stated: {said[:120]}",))
