"""``ndcg@k``: nDCG of the best path, each piece one evidence group credited once.

Grades: every alternative keeps its own grade (an anchor's ``relevance``, a chunk id's
``metadata.relevance[chunk_id]``; 1 when none is given); a grade-0 alternative is not relevant and
satisfies nothing. DCG = sum over the path's pieces satisfied in the top k of the piece's credit:
the largest grade / log2(rank + 1) among its alternatives retrieved in the top k, so the grade is
that of the chunk actually retrieved (a grade-1 alternative at rank 1 earns 1, not the grade 3 of
another alternative of the same piece). The ideal places the path's pieces at ranks
1..min(k, pieces) in decreasing order of their best grade; nDCG is capped at 1 when one chunk
satisfies several pieces at once.

With one path whose pieces each have one alternative graded above 0 (others graded 0 are
allowed) this is trec_eval's ``ndcg_cut.k`` on the graded qrels `assay trec export` writes
(`tests/metrics/test_graded.py` checks it against pytrec_eval on random graded qrels). A piece
with several relevant alternatives is where the two part: trec_eval credits each retrieved
relevant document and counts all of them in the ideal; assay credits the piece once, as it
needs any one of them.
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
