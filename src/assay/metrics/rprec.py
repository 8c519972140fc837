"""``rprec``: R-precision, the share of a path's pieces satisfied within its top R, where R is the
number of the path's pieces.

No cutoff: each path brings its own (R). An entry takes the largest value over its paths (the path
the system served best). Graded relevance does not enter: every alternative graded above 0 is
relevant, a grade-0 one satisfies nothing. Duplicates are credited at their first rank only. With
one path whose pieces each have one relevant chunk this is trec_eval's ``Rprec``
(`tests/metrics/test_ir_measures.py` checks it against pytrec_eval on random graded qrels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("rprec", binary=False, cutoff=False)
def rprec(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """R-precision: the share of a path's R pieces satisfied within its top R retrieved; the
    largest over the entry's paths."""
    import numpy as np

    within = ctx.piece_rank < ctx.pieces_per_path[ctx.piece_path]
    sat = np.bincount(ctx.piece_path[within], minlength=ctx.n_paths).astype(np.float64)
    return ctx.best_of_paths(sat / ctx.pieces_per_path)
