"""`acknowledges_gap`: a partly answerable question's answer says what the filings do not disclose.

An entry marked ``must_acknowledge_gap`` asks for something the corpus covers only in part (a
segment figure a company does not break out, a reason it never states). A good answer gives
what is there and says what is not; an answer that fills the gap with a confident figure, or
says nothing of it, fails. The check passes when any sentence of the answer carries a
statement-of-absence cue -- the refusal detector's "missing" and "inability" cues ("does not
disclose ...", "is not provided in the filing", "no information about", "cannot be determined")
or a gap phrasing -- wherever it stands, since such an answer usually states the available part
first. A gap phrasing is a negated act of disclosure, active ("does not break it out", "has
never disclosed", "doesn't itemize") or passive ("is not separately reported", "isn't
provided", "not broken out"), a missing disclosure noun ("no country breakdown", "there is no
segment-level figure", "gives no split by country", "lacks a country table"), or "unavailable",
"silent on", "cannot be isolated", "only in aggregate". A negated fact is not a gap: "did not pay
a dividend", "does not expect", "no change in revenue", "not material", "did not report a
loss" (tested on a contrast set of FinanceBench and filing phrasings,
tests/judge/data/gap_contrast.jsonl). It abstains on entries without the flag and on missing
answers. A full refusal also passes: whether refusing was
right is `refusal_ok`'s question, not this one's.
"""

from __future__ import annotations

import re

from assay.judge.context import CheckContext
from assay.judge.refusal import _CUE_RES, split_sentences
from assay.judge.registry import Outcome, check

__all__ = ["acknowledges_gap", "states_a_gap"]

# what a filing does when it discloses something (active: "does not break it out"; passive:
# "is not separately reported"); the subject is the filing, the company or the figure
_ACTIVE = (
    r"disclos(?:e|es|ed)|report|provide|break(?: (?:it|them|this|that|\w+))? (?:out|down)|"
    r"itemi[sz]e|give|present|show|specify|state|quantify|say|separate|detail|publish|"
    r"split(?: out)?|allocate|mention|offer|appear (?:in|anywhere|on)"
)
_PASSIVE = (
    r"disclosed|reported|provided|given|broken (?:out|down)|presented|shown|specified|stated|"
    r"detailed|itemi[sz]ed|available|quantified|mentioned|listed|isolated|separated|published|"
    r"split out|outlined|allocated|made public"
)
# what is not disclosed: the nouns of a disclosure ("no country breakdown", "no segment-level
# figure", "gives no split by country"), never "no change", "no material weakness"
_NOUNS = (
    r"breakdown|break-?out|split|figures?|disclosures?|data|information|details?|tables?|"
    r"numbers?|quantification|mention"
)
# what a company reports without any gap ("did not report a loss")
_FACTS = r"(?:a |an |any )?(?:net )?(?:loss|losses|profit|gain|income|decline|increase|growth|improvement)\b"
_NEG = (
    r"(?:(?:does|do|did|has|have|had|would|could)(?: not|n't)|will not|won't|cannot|can not|can't|"
    r"(?:has |have |had )?never|nor (?:does|do|did))"
)
_GAP_RE = re.compile(
    rf"\b{_NEG}\s+(?:\w+ly\s+)?(?:{_ACTIVE})\b(?!\s+{_FACTS})"
    rf"|(?:\b(?:is|are|was|were|been)\s+not|\b(?:isn't|aren't|wasn't|weren't)|\bnor (?:is|are|was))"
    rf"\s+(?:(?:\w+ly|yet|anywhere)\s+)?(?:{_PASSIVE})\b"
    rf"|\bnot (?:separately |specifically |publicly )?(?:broken (?:out|down)|disclosed|reported)\b"
    rf"|\b(?:could(?: ?not|n't)|can(?: ?not|'t)) (?:find|locate|be (?:isolated|determined|identified|derived|"
    rf"separated|quantified|broken out))\b"
    rf"|\bno (?:[\w-]+ ){{0,2}}?(?:{_NOUNS})\b"
    rf"|\black(?:s|ed|ing)? (?:a |an |any )?(?:[\w-]+ ){{0,2}}?(?:{_NOUNS})\b"
    rf"|\bunavailable\b|\bsilent (?:on|about|as to)\b|\bomit(?:s|ted)\b"
    rf"|\bnot (?:part of|among) (?:the|its) (?:disclosures?|filings?|10-[KQ]|report)"
    rf"|\b(?:only|solely) (?:in (?:the )?aggregate|on a (?:consolidated|combined|total) basis)",
    re.IGNORECASE,
)


def states_a_gap(answer: str) -> str | None:
    """The first sentence of ``answer`` that says something is not disclosed, or None."""
    for sentence in split_sentences(answer.replace("\u2019", "'")):
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
