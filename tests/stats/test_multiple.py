"""Holm and the ledger correction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from assay.stats.multiple import holm, ledger_adjust, ledger_alpha, ledger_factor


@pytest.mark.parametrize("seed", range(25))
def test_holm_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(int(rng.integers(1, 30))) ** 3
    if seed % 3 == 0:
        p[: len(p) // 2] = p[0]  # ties
    ref = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), ref, rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_invariants(ps: list[float]) -> None:
    adj = holm(ps)
    p = np.asarray(ps)
    assert np.all(adj >= p - 1e-15)
    assert np.all(adj <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in p


def test_holm_ignores_nan() -> None:
    out = holm([0.01, float("nan"), 0.04])
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2]], [0.02, 0.04])


def test_ledger_spending_sums_to_alpha() -> None:
    total = sum(ledger_alpha(t, 0.05) for t in range(1, 200_000))
    assert total == pytest.approx(0.05, rel=1e-4)
    assert total < 0.05
    assert ledger_factor(1) == 2 and ledger_factor(10) == 110
    np.testing.assert_allclose(ledger_adjust([0.001, 0.5], 3), [0.012, 1.0])
    with pytest.raises(ValueError):
        ledger_factor(0)


def test_ledger_controls_familywise_error_over_history() -> None:
    # 30 comparisons of pure noise per "dataset life", many lives: any false positive <= alpha.
    rng = np.random.default_rng(0)
    lives, t_max = 4000, 30
    p = rng.random((lives, t_max))
    factors = np.array([ledger_factor(t) for t in range(1, t_max + 1)])
    any_fp = np.any(np.minimum(1, p * factors) <= 0.05, axis=1).mean()
    naive = np.any(p <= 0.05, axis=1).mean()
    assert any_fp <= 0.05 + 0.01
    assert naive > 0.7
