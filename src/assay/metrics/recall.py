"""``recall@k``: the best path's share of pieces satisfied in the top k (partial credit).

With one path whose pieces each hold one chunk id this is trec_eval's ``recall.k``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("recall", binary=False, cutoff=True, default=1)
def recall(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """The best path's share of pieces with an alternative in the top k (partial credit)."""
    assert k is not None
    return ctx.recall(k)
