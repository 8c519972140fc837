"""``map``: average precision (its mean over entries is MAP), over the whole retrieved list.

Per path: the sum, over the path's pieces satisfied anywhere in the list, of the precision at the
rank where each is first satisfied, divided by the path's number of pieces (a piece never
satisfied adds 0). The precision at rank r counts the ranks 1..r that satisfy some piece of the
path, each rank once (a chunk that satisfies two pieces fills one slot, so the value stays within
[0, 1]). An entry takes the largest value over its paths (the path the system served best).
Relevance is binary: every alternative graded above 0 is relevant, a grade-0 one satisfies
nothing. Duplicates are credited at their first rank only.

With one path whose pieces each have one relevant chunk this is trec_eval's ``map``
(`tests/metrics/test_ir_measures.py` checks it against pytrec_eval on random graded qrels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("map", binary=False, cutoff=False)
def average_precision(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """Average precision over the whole list: per path, the mean over its pieces of the precision
    at the rank each is first satisfied (0 if never); the largest over the entry's paths."""
    import numpy as np

    from assay.metrics.context import NEVER

    sat = np.flatnonzero(ctx.piece_rank < NEVER)
    path, rank = ctx.piece_path[sat], ctx.piece_rank[sat]
    order = np.lexsort((rank, path))
    path, rank = path[order], rank[order]
    n = len(sat)
    starts = np.ones(n, dtype=bool)
    starts[1:] = path[1:] != path[:-1]
    # a new relevant slot: the first piece of its path, or a rank its predecessor did not take
    fresh = starts.copy()
    fresh[1:] |= rank[1:] != rank[:-1]
    count = np.cumsum(fresh)
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    slots = count - count[first] + 1  # relevant ranks 1..r of the path, each rank once
    precision = slots / (rank + 1.0)
    total = np.bincount(path, weights=precision, minlength=ctx.n_paths)
    return ctx.best_of_paths(total / ctx.pieces_per_path)
