"""The answer held to its sources and the question: its figures in (or computed from) the chunks it
cites, the year and the yes/no asked, cited chunks holding evidence, the higher authority."""

from __future__ import annotations

from assay.dataset import ExpectedBehavior
from assay.judge.context import CheckContext
from assay.judge.derived import Operand, derive, relevant_figures
from assay.judge.numeric import figure_in_spans, stated_years
from assay.judge.polarity import answer_polarity, reference_polarity
from assay.judge.registry import Outcome, check
from assay.judge.semantic import note


@check("numbers_verified")
def numbers_verified(ctx: CheckContext) -> Outcome:
    """Every figure of the answer appears in a chunk it cites, or is computed from cited figures
    by a stated or standard formula (ratio, margin, growth, sum, difference, per share; the
    formula is noted); abstains without a chunk table."""
    if ctx.chunk_text is None:
        return Outcome(None)
    figs = ctx.answer_figures
    if not figs:
        return Outcome(True)
    if not ctx.cited:
        return Outcome(False)
    spans = ctx.cited_figures
    found = [a for a in figs if figure_in_spans(a, spans)]
    computed: dict[str, str] = {}
    unverified: list[str] = []
    named: list[Operand] | None = None
    for a in figs:
        if a in found or a.text in computed:
            continue
        if named is None:  # the cited figures whose rows name what the question or answer does
            named = relevant_figures(ctx.cited, f"{ctx.entry.query}\n{ctx.answer or ''}")
        # a figure computed from cited figures (a ratio, margin, growth, sum, per share)
        how = derive(a, found, named)
        if how is None:
            unverified.append(a.text)
        else:
            computed[a.text] = f"computed: {how}"
    unverified = [t for t in dict.fromkeys(unverified) if t not in computed]
    notes = tuple(computed.values())[:5]
    if unverified:
        return Outcome(False, ("unverified figures: " + ", ".join(unverified[:5]), *notes))
    return Outcome(True, notes)


@check("fiscal_year_ok")
def fiscal_year_ok(ctx: CheckContext) -> Outcome:
    """The answer's conclusion does not state only years other than the one asked about."""
    want = ctx.wanted_years
    if not (want and ctx.answer and not ctx.refused):
        return Outcome(None)
    stated = stated_years(ctx.conclusion)
    if stated and not stated & want:
        return Outcome(False, (f"answer states {sorted(stated)}, entry asks about {sorted(want)}",))
    return Outcome(True)


@check(
    "polarity_correct",
    rates=lambda e: e.behavior() is ExpectedBehavior.answer and reference_polarity(e) is not None,
)
def polarity_correct(ctx: CheckContext) -> Outcome:
    """A yes/no or direction question is answered the way the reference answers it (yes vs no,
    increased vs decreased, is vs is not; negation scope read); abstains on other entries."""
    if ctx.behavior is not ExpectedBehavior.answer:
        return Outcome(None)
    want = reference_polarity(ctx.entry)
    if want is None:
        return Outcome(None)
    if not ctx.answer or ctx.refused:
        return Outcome(False, ("polarity: no answer to a " + want.kind + " question",))
    got, why = answer_polarity(ctx.entry, ctx.answer, want)
    if got is None:
        extra = note()
        return Outcome(False, (f"polarity: {why} ({want.how})", *([extra] if extra else [])))
    if got.sign != want.sign:
        return Outcome(False, (f"polarity: the answer {got.how}; {want.how}",))
    return Outcome(True)


@check("citation_precision", kind="graded", default=False)
def citation_precision(ctx: CheckContext) -> Outcome:
    """Share of the cited chunks that hold the entry's evidence (a gold chunk, a gold anchor's
    quote, or a chunk of a gold page); abstains on refusals, uncited answers, entries without
    evidence and without a chunk table."""
    if ctx.refused or not ctx.citations or ctx.chunk_text is None:
        return Outcome(None)
    if not ctx.entry.is_answerable:
        return Outcome(None)
    cited = list(dict.fromkeys(ctx.citations))
    held = [c for c in cited if ctx.holds_evidence(c)]
    notes = (
        ()
        if len(held) == len(cited)
        else (
            "cites chunks without evidence: " + ", ".join(c for c in cited if c not in held)[:200],
        )
    )
    return Outcome(len(held) / len(cited), notes)


@check("conflict_handling", default=False)
def conflict_handling(ctx: CheckContext) -> Outcome:
    """On an entry with a planted conflict (`metadata.conflict`), the answer follows the higher
    authority tier: it states the authority's figure, does not give the superseded one as the
    answer, and does not cite only the superseded document; abstains elsewhere."""
    conf = ctx.entry.metadata.get("conflict")
    if not isinstance(conf, dict) or ctx.answer is None or ctx.refused:
        return Outcome(None)
    return ctx.conflict_outcome(conf)
