"""Refusal detection: does an answer decline to answer?

Rule (documented, general): an answer is a refusal when it contains a refusal cue -- an
apology-with-decline ("I'm sorry, but ..."), a model disclaimer ("as an AI", "I don't have access
to"), a statement that the material lacks what is needed ("the provided context does not
contain ...", "is not provided", "no information about"), an inability ("I cannot calculate",
"unable to determine", "impossible to") or a request for more ("please provide", "you would need
to") -- in its opening or closing sentence, and no sentence commits to an answer with a
conclusion cue ("therefore ... is", "the answer is"). A pointer to other sources ("please refer
to the 10-Q") after an opening that states the answer ("Yes, ...", "Capex was $1,577 million.")
is not a refusal. Cues in the middle of a long answer are treated as caveats, not refusals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["RefusalResult", "detect_escalation", "detect_refusal", "split_sentences"]

_SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\-*$\"'])|\n+")

_CUES: dict[str, str] = {
    "apology": r"\b(?:i'?m sorry|i am sorry|i apologi[sz]e|sorry, but|unfortunately)\b",
    "disclaimer": (
        r"\b(?:as an ai\b|as a language model|i (?:do not|don't) have (?:real-time |direct )?"
        r"(?:access|the ability|browsing)|(?:cannot|can't|unable to) (?:access|browse))"
    ),
    "missing": (
        r"\b(?:(?:does|do|did) not|doesn't|don't|didn't) (?:contain|include|provide|have|specify|"
        r"mention|disclose|give|show|offer|state|list|present)\b[^.]{0,80}?\b(?:information|data|"
        r"details?|figures?|numbers?|amounts?|specifics?|breakdown|values?|mention|statement|needed|necessary|required)"
        r"|\bnot (?:provided|available|included|mentioned|specified|given|present|found|listed|"
        r"stated|disclosed) (?:in|within|from) (?:the|this|these)\b"
        r"|\bno (?:direct |specific |explicit |relevant )?(?:information|data|details|mention)\b"
        r"|\b(?:insufficient|not enough|lacks? (?:the )?(?:necessary|required|specific))\b"
        r"|\bis not (?:possible|feasible) to\b"
        r"|\bnot (?:explicitly|directly|specifically) (?:stated|state|mentioned|provided|disclosed|"
        r"given|listed|addressed)\b"
        r"|\bno (?:direct |explicit |specific |clear )?evidence\b"
        r"|\b(?:would be|is) (?:required|needed) to (?:answer|calculate|determine|provide)\b"
    ),
    "inability": (
        r"\b(?:i|we) (?:cannot|can't|can not|am unable to|are unable to|could not|couldn't|"
        r"won't be able to|will not be able to|am not able to) (?!stress|emphasi)\w+"
        r"|\b(?:i|we) (?:don't|do not) (?:have (?:the|enough|sufficient|access|any|specific)|know)\b"
        r"|\bunable to (?:provide|calculate|determine|answer|compute|find|give|confirm)"
        r"|\bimpossible to\b|\bcannot be (?:calculated|determined|computed|answered|found)"
    ),
    "request": (
        r"\b(?:please provide|if you (?:can |could )?provide|you would need to|you (?:would|will) "
        r"need (?:to|the)|i would need|we would need|would need (?:to have|access|the actual)|"
        r"recommend (?:checking|referring|consulting|looking)|please refer to|"
        r"you (?:can|may|should) (?:check|refer|look|consult|find))"
    ),
}
_CUE_RES = {name: re.compile(pat, re.IGNORECASE) for name, pat in _CUES.items()}
_COMMIT_RE = re.compile(
    r"\b(?:therefore|thus|hence|in conclusion|in summary|so,? the|the answer is|"
    r"the answer to (?:the|your) question is)\b[^.]{0,160}?\b(?:is|was|were|are|equals|=|of)\b"
    r"[^.]{0,120}?(?:\d|\byes\b|\bno\b)",
    re.IGNORECASE,
)

_ANSWER_ANYWAY_RE = re.compile(
    r"\b(?:however|but|nevertheless|that said|although)\b,?\s+(?:it|the|there|we|based|"
    r"according|from|boeing|this|they|he|she|[a-z]+'s)\b[^.]{0,80}\b(?:mentions?|states?|shows?|"
    r"indicates?|reports?|is|was|were|are|has|had|plans?)\b"
    r"|\b(?:we can conclude|it can be inferred|this suggests|the only)\b",
    re.IGNORECASE,
)

_ANSWER_OPENER_RE = re.compile(
    r"^(?:yes|no)\b|\b(?:is|was|were|are|totall?ed|amounted to|came to|equals?)\s+(?:about |"
    r"approximately |roughly |around )?[-−(]?(?:US\$|USD|\$|€|£)?\s?\d",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class RefusalResult:
    """Whether an answer declines, and the cue that says so (empty when it does not)."""

    refused: bool
    cue: str = ""
    kind: str = ""


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of `text` (decimals and abbreviations like "U.S." are not split)."""
    return [s.strip() for s in _SENT_RE.split(text) if s and s.strip()]


_CUE_ORDER = ("apology", "disclaimer", "inability", "request", "missing")


def _first_cue(text: str) -> tuple[str, str] | None:
    """The strongest cue in `text`: a decline outranks a mere note that something is missing."""
    for name in _CUE_ORDER:
        rx = _CUE_RES[name]
        m = rx.search(text)
        if m:
            return name, m.group(0)
    return None


def detect_refusal(answer: str | None) -> RefusalResult:
    """Detect a refusal; an empty or missing answer counts as one."""
    if answer is None or not answer.strip():
        return RefusalResult(True, "", "empty")
    return _refusal(answer)


@lru_cache(maxsize=4096)
def _refusal(answer: str) -> RefusalResult:
    """`detect_refusal` of a non-empty answer, read once (the checks of an entry ask it of the
    same answer more than once; the result is immutable)."""
    sents = split_sentences(answer)
    edges = sents[:2] + sents[-2:] if len(sents) > 4 else sents
    hit = None
    for s in edges:
        hit = _first_cue(s)
        if hit:
            break
    if hit is None:
        return RefusalResult(False)
    if any(_COMMIT_RE.search(s) and not _first_cue(s) for s in sents):
        return RefusalResult(False)
    opener_cue = _first_cue(sents[0])
    if opener_cue is None and _ANSWER_OPENER_RE.search(sents[0]):
        # the answer opens with its answer; a closing pointer to other sources ("please refer
        # to ...") does not undo it, while a closing "I cannot compute it" still declines
        closing = [c for c in (_first_cue(x) for x in sents[1:]) if c]
        if closing and all(c[0] == "request" for c in closing):
            return RefusalResult(False)
    if hit[0] == "missing" and not any(
        c and c[0] != "missing" for c in (_first_cue(s) for s in sents)
    ):
        # a lack of information alone declines only when it opens the answer and the answer
        # does not go on to give one ("However, ...")
        opener = _first_cue(sents[0])
        if opener is None or _ANSWER_ANYWAY_RE.search(answer):
            return RefusalResult(False)
    return RefusalResult(True, hit[1], hit[0])


_ESCALATION_RE = re.compile(
    r"\bescalat(?:e|ed|es|ing|ion)\b"
    r"|\b(?:request|ask for|seek|obtain)\s+(?:access|approval|authori[sz]ation|clearance)\b"
    r"|\b(?:contact|ask|consult|refer (?:this|the request|it) to)\s+(?:your |the )?"
    r"(?:compliance|legal|deal[- ]team|data[- ]room|manager|owner|administrator|security)\b"
    r"|\brequires?\s+(?:approval|authori[sz]ation|clearance|a wall[- ]cross)\b",
    re.IGNORECASE,
)


def detect_escalation(answer: str | None) -> bool:
    """Does the answer hand the request on (escalate it, ask for approval or access, refer it to
    compliance or the data-room owner) rather than answer it or merely decline?"""
    return bool(answer) and _ESCALATION_RE.search(answer or "") is not None
