"""``hit@k``: 1 when at least one required piece of the best path is satisfied in the top k.

Binary (compared with the exact McNemar test). The best path has the highest recall@k, so this is
1 exactly when some piece of some path is satisfied in the top k. With one path whose pieces each
hold one chunk id this is trec_eval's ``success.k``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("hit", binary=True, cutoff=True)
def hit(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """1 when at least one required piece of the best path is satisfied in the top k, else 0."""
    assert k is not None
    return (ctx.recall(k) > 0.0).astype(float)
