"""``ndcg@k``: nDCG of the best path, each piece one evidence group credited once.

DCG = sum over the path's pieces satisfied in the top k of gain / log2(rank + 1), at the rank
where the piece is first satisfied; a piece's gain is the largest ``relevance`` of its
alternatives (1 when none is given). The ideal places the path's pieces at ranks 1..min(k, pieces)
in decreasing gain; nDCG is capped at 1 when one chunk satisfies several pieces at once. With one
path whose pieces each hold one chunk id this is trec_eval's ``ndcg_cut.k`` (linear gain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics.context import Context


@register("ndcg", binary=False, cutoff=True, default=4)
def ndcg(ctx: Context, k: int | None) -> NDArray[np.float64]:
    """On the best path, each piece is one group credited once at the rank where it is first
    satisfied; gain = the largest `relevance` of its alternatives (default 1), discount
    log2(rank + 1); ideal = the path's pieces at ranks 1..min(k, pieces). Capped at 1 when one
    chunk satisfies several pieces."""
    assert k is not None
    return ctx.on_best_path(ctx.path_ndcg(k), k)
