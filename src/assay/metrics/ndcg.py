"""``ndcg@k``: nDCG of the best path, each piece one evidence group credited once.

A piece's credit is the largest grade / log2(rank + 1) among its alternatives retrieved in the
top k (grade 0 satisfies nothing); the ideal ranks the path's pieces by their best grade, and
nDCG is capped at 1. The grades, and where this is and is not trec_eval's ``ndcg_cut.k``
(checked against pytrec_eval in ``tests/metrics/test_graded.py``): docs/scores.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("ndcg", binary=False, cutoff=True, default=4)
def ndcg(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """On the best path, each piece is one group credited once: the largest grade / log2(rank + 1)
    among its alternatives retrieved in the top k (the grade of the chunk retrieved; `relevance`,
    default 1; grade 0 satisfies nothing); ideal = the path's pieces at ranks 1..min(k, pieces) by
    their best grade. Capped at 1 when one chunk satisfies several pieces."""
    assert k is not None
    return ctx.on_best_path(ctx.path_ndcg(k), k)
