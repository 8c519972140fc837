"""``complete@k``: 1 when some path has every piece satisfied in the top k, else 0.

Binary: compared with the exact McNemar test on the entries that flipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.metrics._registry import register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from assay.metrics._registry import MetricContext


@register("complete", binary=True, cutoff=True, default=2)
def complete(ctx: MetricContext, k: int | None) -> NDArray[np.float64]:
    """1 when some path has every piece satisfied in the top k, else 0 (what a user experiences)."""
    assert k is not None
    # the best path has the highest recall, so it is complete exactly when some path is
    return (ctx.recall(k) >= 1.0).astype(float)
