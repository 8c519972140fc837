"""``precision@k``: the share of the top k retrieved chunks that satisfy some piece of some path.

The denominator is always k, also when fewer than k chunks were retrieved (trec_eval's ``P.k``).

Duplicates: a retrieved item is credited at its first rank only (the rule every metric here
follows), so a chunk retrieved twice fills two of the k slots but counts once.

Page level: a retrieved chunk is relevant when it is the first to reach a gold page; another chunk
of an already reached page is a repeat of that page and is not credited again (a chunk spanning two
gold pages counts once). Precision therefore rewards distinct evidence, not the same page read
twice.

With one path whose pieces each hold one chunk id, and no repeated chunk, this is trec_eval's
``P.k``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("precision", binary=False, cutoff=True)
def precision(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """Share of the top k retrieved chunks that satisfy some piece of some path (a repeat of an
    already retrieved chunk, or at page level of an already reached gold page, is not credited
    again); the denominator is k."""
    import numpy as np

    assert k is not None
    ok = ctx.alt_rank < k
    # a rank in the top k is relevant when some gold alternative of the entry is first retrieved
    # there; count each (entry, rank) once
    slots = np.unique(ctx.alt_entry[ok] * np.int64(k) + ctx.alt_rank[ok])
    counts = np.bincount(slots // k, minlength=ctx.n_entries)
    return counts / float(k)
