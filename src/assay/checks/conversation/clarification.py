"""``clarified`` (binary; turns whose ``expected_behavior`` is ``clarify``): the answer asks a
question instead of answering. With ``clarify_with`` on the turn this is ``clarify_ok``
(asks which reading is meant, or answers each reading naming it); without it the answer
must ask (a question mark or a request such as "could you specify") and state no figure.
"""

from __future__ import annotations

from assay.checks.answer.behaviour import _ASK_RE
from assay.checks.conversation.context import _clarifying
from assay.judge.context import CheckContext
from assay.judge.numeric import read_figures
from assay.judge.refusal import split_sentences
from assay.judge.registry import Outcome, check


@check("clarified", group="conversation", rates=_clarifying)
def clarified(ctx: CheckContext) -> Outcome:
    """A turn that calls for clarification asks a question instead of answering."""
    if not _clarifying(ctx.entry) or not (ctx.answer or "").strip():
        return Outcome(None)
    if ctx.entry.clarify_with:
        return ctx.outcome("clarify_ok")
    answer = ctx.answer or ""
    asks = next((s for s in split_sentences(answer) if _ASK_RE.search(s)), None)
    figures = [q for q in read_figures(answer) if not q.is_year]
    if asks is None:
        return Outcome(False, ("answers without asking which is meant",))
    if figures:
        return Outcome(False, (f"asks, but answers anyway ({figures[0].text})",))
    return Outcome(True, (f"asks: {asks[:120]}",))
