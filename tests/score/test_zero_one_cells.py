"""A cell whose values are all 0 or 1 is a rate, whatever the metric's declared kind: recall@k
with one evidence piece per entry, or mrr at k=1, gets the rate interval with its exact
(Clopper-Pearson) fallback for rare events, the same interval as complete@k on the same data."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint
from tests.metrics._util import E, R

from assay.judge.report import mean_ci
from assay.score import score_retrieval


def test_recall_with_one_piece_per_entry_gets_the_rate_interval_of_complete() -> None:
    # 30 entries, one evidence piece each; only the first is retrieved
    entries = [E(f"e{i}", [[[f"a{i}"]]]) for i in range(30)]
    run = R({f"e{i}": [f"a{i}"] if i == 0 else ["noise"] for i in range(30)})
    s = score_retrieval(entries, run, k=5)
    s.add_ci(seed=1, n_resamples=200)
    assert s.overall is not None
    complete, recall = s.overall.ci["complete@5"], s.overall.ci["recall@5"]
    low, high = proportion_confint(1, 30, alpha=0.05, method="beta")
    assert (complete.low, complete.high) == pytest.approx((low, high), rel=1e-9)
    # was Wilson's [0.0059, 0.167] before: it covers a true rate of 0.0058 only 84% of the time
    assert (recall.low, recall.high) == (complete.low, complete.high)
    assert recall.method == "clopper-pearson"
    assert round(recall.low, 4) == 0.0008 and round(recall.high, 3) == 0.172


def test_a_graded_check_of_zeros_and_ones_gets_the_rate_interval() -> None:
    import numpy as np

    iv = mean_ci([1.0] + [0.0] * 29, np.random.default_rng(0))
    assert iv is not None and iv.method == "clopper-pearson"
    low, high = proportion_confint(1, 30, alpha=0.05, method="beta")
    assert (iv.low, iv.high) == pytest.approx((low, high), rel=1e-9)
