"""``mrr``: reciprocal rank of the first retrieved chunk that satisfies any piece of any path.

Over the whole retrieved list (no cutoff); 0 when no retrieved chunk satisfies a piece. With one
path this is trec_eval's ``recip_rank``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("mrr", binary=False, cutoff=False, default=3)
def mrr(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """1 / rank of the first retrieved chunk that satisfies any piece of any path, over the whole
    list; 0 when none does."""
    import numpy as np

    from assay.metrics.context import NEVER

    first = ctx.first_rank
    return np.where(first < NEVER, 1.0 / (first + 1.0), 0.0)
