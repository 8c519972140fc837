"""``bpref``: binary preference (Buckley and Voorhees), robust to incomplete judgements.

Judged not relevant are an entry's alternatives graded 0 (``metadata.relevance`` of a chunk id, an
anchor's ``relevance``) that no other alternative of the entry makes relevant; every other chunk
is unjudged and does not count. Per path, with R its number of pieces and N the entry's judged
not relevant: each piece satisfied at rank r earns 1 - min(n, R) / min(R, N), where n is the number
of judged-not-relevant chunks retrieved above r (1 when n is 0); the sum is divided by R. An entry
takes the largest value over its paths. Without any grade-0 alternative every satisfied piece
earns 1 (bpref is then recall over the whole list). Duplicates count at their first rank only.

With one path whose pieces each have one relevant chunk this is trec_eval's ``bpref`` on the
graded qrels `assay trec export` writes (`tests/metrics/test_ir_measures.py` checks it against
pytrec_eval on random graded qrels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("bpref", binary=False, cutoff=False)
def bpref(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """Binary preference: per path, each piece satisfied earns 1 - min(n, R) / min(R, N), n the
    chunks graded 0 retrieved above it, R the path's pieces, N the entry's chunks graded 0; summed
    over R; the largest over the entry's paths."""
    import numpy as np

    from assay.metrics.context import NEVER

    sat = np.flatnonzero(ctx.piece_rank < NEVER)
    entry, rank = ctx.piece_entry[sat], ctx.piece_rank[sat]
    got = np.flatnonzero(ctx.judged_rank < NEVER)
    j_entry, j_rank = ctx.judged_entry[got], ctx.judged_rank[got]
    # judged-not-relevant retrieved above each satisfied piece, in its entry: one sorted key
    span = int(max(rank.max(initial=0), j_rank.max(initial=0))) + 1
    keys = np.sort(j_entry * span + j_rank)
    above = np.searchsorted(keys, entry * span + rank) - np.searchsorted(keys, entry * span)
    big_r = ctx.pieces_per_path[ctx.piece_path[sat]]
    big_n = np.bincount(ctx.judged_entry, minlength=ctx.n_entries)[entry]
    denom = np.minimum(big_r, big_n).clip(min=1)
    earned = np.where(above > 0, 1.0 - np.minimum(above, big_r) / denom, 1.0)
    total = np.bincount(ctx.piece_path[sat], weights=earned, minlength=ctx.n_paths)
    return ctx.best_of_paths(total / ctx.pieces_per_path)
