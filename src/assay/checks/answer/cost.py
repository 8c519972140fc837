"""What the answer cost: tokens and US dollars, from the run row (`extra.cost`)."""

from __future__ import annotations

from assay.judge.context import CheckContext
from assay.judge.registry import check


@check("answer_tokens", kind="count", default=False, higher_is_better=False)
def answer_tokens(ctx: CheckContext) -> int | None:
    """Tokens the answer cost (prompt + completion, from the run row's `extra.cost`); abstains
    when the answerer reports none (not an LLM)."""
    cost = ctx.cost
    return None if cost is None else cost.get("total_tokens")


@check("answer_cost_musd", kind="count", default=False, higher_is_better=False)
def answer_cost_musd(ctx: CheckContext) -> int | None:
    """What the answer cost in millionths of a US dollar (the run row's `extra.cost.usd`, from
    the answerer's token prices); abstains without a price."""
    cost = ctx.cost
    usd = None if cost is None else cost.get("usd")
    return None if usd is None else round(float(usd) * 1e6)
