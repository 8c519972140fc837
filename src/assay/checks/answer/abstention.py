"""The answer given when it should be, declined when it should be (`refusal_ok` and its two
errors), and no claim that the filings are silent on an answerable question."""

from __future__ import annotations

from assay.dataset import ExpectedBehavior
from assay.judge.context import CheckContext
from assay.judge.numeric import not_disclosed_claim
from assay.judge.registry import Outcome, check


def _should_abstain(ctx: CheckContext) -> bool:
    return ctx.behavior in (ExpectedBehavior.abstain, ExpectedBehavior.refuse)


@check(
    "refusal_ok",
    rates=lambda e: (
        e.behavior() in (ExpectedBehavior.answer, ExpectedBehavior.abstain, ExpectedBehavior.refuse)
    ),
)
def refusal_ok(ctx: CheckContext) -> bool | None:
    """Neither refusal error (clarify / correct-premise entries: clarify_ok, premise_corrected)."""
    if not (_should_abstain(ctx) or ctx.behavior is ExpectedBehavior.answer):
        return None
    return not (
        ctx.result("answered_when_should_abstain") or ctx.result("abstained_when_should_answer")
    )


@check(
    "answered_when_should_abstain",
    higher_is_better=False,
    rates=lambda e: e.behavior() in (ExpectedBehavior.abstain, ExpectedBehavior.refuse),
)
def answered_when_should_abstain(ctx: CheckContext) -> bool | None:
    """Error: answered an entry that should abstain or refuse (rated over those entries)."""
    return (not ctx.refused) if _should_abstain(ctx) else None


@check(
    "abstained_when_should_answer",
    higher_is_better=False,
    rates=lambda e: e.behavior() is ExpectedBehavior.answer,
)
def abstained_when_should_answer(ctx: CheckContext) -> bool | None:
    """Error: declined an entry that should be answered (rated over those entries)."""
    return ctx.refused if ctx.behavior is ExpectedBehavior.answer else None


@check("not_disclosed_unsupported", higher_is_better=False)
def not_disclosed_unsupported(ctx: CheckContext) -> Outcome:
    """Error: asserts the filings do not disclose something although the entry is answerable."""
    claim = not_disclosed_claim(ctx.answer)
    notes = (
        ("asserts non-disclosure; prefer 'could not find this in the filings searched'",)
        if claim
        else ()
    )
    return Outcome(claim and ctx.entry.answerable is not False, notes)
