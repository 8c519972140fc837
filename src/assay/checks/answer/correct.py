"""The answer right against the entry's reference: the figure it concludes with, the critical key
facts it states, nothing contradicting the reference, and all three (`answer_correct`)."""

from __future__ import annotations

from assay.dataset import ExpectedBehavior
from assay.judge.context import CheckContext
from assay.judge.numbers import compare
from assay.judge.registry import Outcome, check
from assay.judge.semantic import note


@check("numeric_correct")
def numeric_correct(ctx: CheckContext) -> Outcome:
    """The figure the answer concludes with agrees with the reference figure."""
    v = ctx.numeric
    notes: tuple[str, ...] = ()
    if v.status == "fail" and v.reason in ("scale_error", "prior_period"):
        notes = (f"{v.reason}: {v.answer_figure} ({v.note})",)
    return Outcome(v.value, notes)


@check("key_fact_recall_full")
def key_fact_recall_full(ctx: CheckContext) -> bool | None:
    """Every critical key fact is stated."""
    recall = ctx.key_fact_recall
    return None if recall is None else recall == 1.0


@check("key_fact_recall", kind="graded", default=False)
def key_fact_recall(ctx: CheckContext) -> float | None:
    """Share of the critical key facts the answer states (abstains without key facts)."""
    return ctx.key_fact_recall


@check("contradiction_free")
def contradiction_free(ctx: CheckContext) -> Outcome:
    """Nothing contradicts the reference: no wrong figure (scale errors, other periods, cited
    spans), no key fact negated or swapped, no reference sentence stated the other way."""
    if ctx.answer is None:
        return Outcome(None)
    v = ctx.numeric
    if v.status == "fail" and v.reason in ("scale_error", "prior_period", "mismatch"):
        return Outcome(False)
    for fact, reading in zip(ctx.critical_facts, ctx.fact_readings, strict=False):
        if reading.contradicted:
            return Outcome(False, (f"{reading.reason}: {reading.note} (key fact: {fact})",))
    ref = ctx.reference_contradiction
    if ref is not None:
        return Outcome(False, (f"{ref.reason}: {ref.note} (reference answer)",))
    if ctx.answer and ctx.cited:
        spans = ctx.cited_figures
        for a in ctx.answer_figures:
            # a bare span figure may carry any scale (tables state it in a header), so only a
            # span figure with a stated scale can show a scale error
            agrees = any(compare(s, a).ok or compare(a, s).ok for s in spans)
            off = any(s.scale_stated and compare(s, a).status == "scale_error" for s in spans)
            if off and not agrees:
                return Outcome(False, (f"scale_error against a cited span: {a.text}",))
    return Outcome(True)


@check("answer_correct", rates=lambda e: e.behavior() is ExpectedBehavior.answer)
def answer_correct(ctx: CheckContext) -> Outcome:
    """Every critical key fact stated, nothing contradicted, not about another year (without key
    facts: the figure, or the yes/no the reference answer opens with).

    Without key facts, a reference opening with Yes or No decides a yes/no question: an answer
    opening the other way fails, one opening the same way passes unless it contradicts the
    reference otherwise (a wrong figure, a sentence stated the other way; years it names
    beside the yes/no are not held against it), and one that opens with neither fails only on
    such a contradiction (else abstains)."""
    free = bool(ctx.result("contradiction_free")) and ctx.result("fiscal_year_ok") is not False
    if ctx.key_fact_recall is not None:
        said_by = [r.note for r in ctx.fact_readings if r.reason == "semantic"]
        return Outcome(ctx.key_fact_recall == 1.0 and free, tuple(said_by))
    said = ctx.yes_no
    if said is not None and said[1] == -said[0]:
        return Outcome(False)
    if ctx.numeric.value is not None:
        return Outcome(ctx.numeric.value and free)
    if said is not None:
        # the yes/no is the answer: years named around it (the reference's own "a 2018
        # accident" behind "Yes, ongoing legal battles in FY2022") are context, not a wrong year
        told = bool(ctx.result("contradiction_free"))
        if said[1] is not None or not told:
            return Outcome(told if said[1] is not None else False)
        extra = note()
        return Outcome(None, (extra,) if extra else ())
    return Outcome(None)
