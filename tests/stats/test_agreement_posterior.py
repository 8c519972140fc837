"""Quadratic kappa and interval alpha on ordered scales of three or more labels: the union of the
weighted score interval and the Dirichlet(1/2) posterior interval (the default).

References: the posterior interval against a direct Dirichlet draw over the k (k + 1) / 2
unordered cells written out cell by cell; determinism (the same table, the same interval,
whatever the order of the items or the rater pair it comes from); the union against its two
parts; coverage by a seeded simulation of near misses (`bench/bench_agreement_coverage.py
--categories 3 --numeric --adjacent`), the grid under the ``simulation`` marker
(tests/stats/test_agreement_coverage.py); the candidates compared in
`bench/bench_agreement_nearmiss.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from assay.stats import agreement as ag
from assay.stats.agreement import agreement

from .test_agreement_score import rows_of

SQUARED = ("cohen_kappa_quadratic", "alpha_interval")
QUADRATIC = ag._disagreement_weights(3)["cohen_kappa_quadratic"]
#: Interval alpha's distances on grades 1, 2, 3: four times the quadratic weights.
DISTANCES = (np.arange(1.0, 4.0)[:, None] - np.arange(1.0, 4.0)[None, :]) ** 2

#: Two raters' label pairs on grades 1 < 2 < 3: the common grade, near misses, the far grade
#: rare or absent.
PATTERNS: list[list[tuple[tuple[Any, ...], int]]] = [
    [((1, 1), 26), ((1, 2), 3), ((2, 2), 1)],
    [((1, 1), 22), ((2, 2), 2), ((3, 3), 1), ((1, 2), 3), ((3, 2), 2)],
    [((1, 1), 10), ((2, 2), 9), ((3, 3), 8), ((1, 2), 1), ((2, 3), 2)],
]


def _table(patterns: list[tuple[tuple[Any, ...], int]]) -> np.ndarray:
    codes = np.array([[x - 1 for x in lab] for lab, c in patterns for _ in range(c)])
    return ag._pair_matrix(codes, 3)


def test_posterior_interval_is_the_dirichlet_draws_quantiles() -> None:
    # the same draws written out cell by cell: Dirichlet(counts + 1/2) over the unordered pairs
    # {j, l}, each draw's table split in halves off the diagonal, its weighted Scott's pi
    table = _table(PATTERNS[1])
    draws, seed = 4000, 11
    iv = ag._posterior_interval(table, QUADRATIC, 0.95, seed, full_scale=True, draws=draws)
    pairs = [(j, m) for j in range(3) for m in range(j, 3)]
    counts = np.array([table[j, m] if j == m else 2 * table[j, m] for j, m in pairs])
    digest = ag.hashlib.blake2b(
        (np.round(table, 9) + 0.0).tobytes() + QUADRATIC.tobytes(), digest_size=8
    ).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
    gamma = rng.standard_gamma(counts + 0.5, size=(draws, len(pairs)))
    kappas = []
    for row in gamma / gamma.sum(axis=1, keepdims=True):
        p = np.zeros((3, 3))
        for (j, m), q in zip(pairs, row, strict=True):
            p[j, m] += q / 2
            p[m, j] += q / 2
        pi = p.sum(axis=0)
        kappas.append(1 - (QUADRATIC * p).sum() / (pi @ QUADRATIC @ pi))
    want = np.quantile(kappas, [0.025, 0.975])
    assert iv is not None
    np.testing.assert_allclose(iv, want, atol=1e-12)


def test_posterior_interval_draws_the_far_grade_the_table_lacks() -> None:
    # no label of grade 3 on a scale of three: with the scale given the prior's half counts
    # give it weight (the upper end rises with it); without it the table's two grades alone
    table = _table(PATTERNS[0])
    full = ag._posterior_interval(table, QUADRATIC, 0.95, 0, full_scale=True)
    own = ag._posterior_interval(table, QUADRATIC, 0.95, 0, full_scale=False)
    assert full is not None and own is not None
    assert full[1] > own[1] + 0.03  # 0.855 against 0.808
    # degenerate: one grade, weights all 0 among the grades drawn, fewer than two items
    assert (
        ag._posterior_interval(np.diag([30.0, 0, 0]), QUADRATIC, 0.95, 0, full_scale=False) is None
    )
    assert (
        ag._posterior_interval(np.diag([30.0, 0, 0]), 0 * QUADRATIC, 0.95, 0, full_scale=True)
        is None
    )
    assert ag._posterior_interval(np.diag([1.0, 0, 0]), QUADRATIC, 0.95, 0, full_scale=True) is None


@pytest.mark.parametrize("patterns", PATTERNS)
def test_the_union_contains_the_weighted_score_interval(
    patterns: list[tuple[tuple[Any, ...], int]],
) -> None:
    res = agreement(rows_of(patterns), categories=[1, 2, 3], n_resamples=20, rng=3)
    table = _table(patterns)
    n = sum(c for _, c in patterns)
    # the posterior's seed: a child of the caller's generator (its stream left alone)
    seed = int(np.random.default_rng(3).spawn(1)[0].integers(2**63))
    for key in SQUARED:
        e = res.statistics[key]
        assert e.value is not None and e.low is not None and e.high is not None
        w = QUADRATIC if key == "cohen_kappa_quadratic" else DISTANCES
        score = ag._weighted_score_interval(table, w, 0.95, t_dof=n - 1)
        post = ag._posterior_interval(table, w / w.max(), 0.95, seed, full_scale=True)
        assert score is not None and post is not None
        assert e.method == ag.WEIGHTED_SCORE_POSTERIOR, key
        assert e.low <= min(score[0], e.value) and e.high >= max(score[1], e.value), key
        assert (e.low, e.high) == (
            min(score[0], post[0], e.value),
            max(score[1], post[1], e.value),
        ), key
    # quadratic kappa and interval alpha weigh alike up to a factor (grades 1, 2, 3): one
    # posterior; the other weighted figures keep the weighted score interval alone
    q, a = res.statistics["cohen_kappa_quadratic"], res.statistics["alpha_interval"]
    for key in ("cohen_kappa_linear", "alpha_ordinal", "alpha_ratio"):
        assert res.statistics[key].method == ag.WEIGHTED_SCORE, key
    assert q.method == a.method


def test_the_same_table_gives_the_same_interval() -> None:
    # the same seed: the same interval, whatever the order of the items and their ids
    patterns = PATTERNS[1]
    rows = rows_of(patterns)
    first = agreement(rows, categories=[1, 2, 3], n_resamples=20, rng=7)
    again = agreement(rows, categories=[1, 2, 3], n_resamples=20, rng=7)
    shuffled = rows_of(list(reversed(patterns)))
    other_order = agreement(shuffled, categories=[1, 2, 3], n_resamples=20, rng=7)
    # more resamples draw more from the generator: the posterior is untouched
    more = agreement(rows, categories=[1, 2, 3], n_resamples=200, rng=7)
    for key in SQUARED:
        want = first.statistics[key]
        for res in (again, other_order, more):
            got = res.statistics[key]
            assert (got.low, got.high, got.method) == (want.low, want.high, want.method), key
    # two raters: the pair's table is the pooled one, and so is its interval
    pair = first.pairs[0].cohen_kappa_quadratic
    e = first.statistics["cohen_kappa_quadratic"]
    assert (pair.low, pair.high) == (e.low, e.high)
    # another seed moves the ends by the draws' Monte-Carlo error only
    seeded = agreement(rows, categories=[1, 2, 3], n_resamples=20, rng=8)
    got = seeded.statistics["cohen_kappa_quadratic"]
    assert e.low is not None and e.high is not None and got.low is not None
    assert got.high is not None
    assert abs(got.low - e.low) < 0.03 and abs(got.high - e.high) < 0.03
    # the library function: the same table and seed, the same interval
    table = _table(patterns)
    a = ag._posterior_interval(table, QUADRATIC, 0.95, 5, full_scale=True)
    b = ag._posterior_interval(table.copy(), QUADRATIC.copy(), 0.95, 5, full_scale=True)
    assert a == b


def test_three_raters_get_the_union_on_the_pooled_table_and_each_pair() -> None:
    pats: list[tuple[tuple[Any, ...], int]] = [
        ((1, 1, 1), 20),
        ((1, 1, 2), 4),
        ((2, 2, 1), 2),
        ((3, 3, 3), 1),
    ]
    res = agreement(rows_of(pats), categories=[1, 2, 3], n_resamples=20)
    assert res.statistics["cohen_kappa_quadratic"].method == ag.WEIGHTED_SCORE_POSTERIOR
    for p in res.pairs:
        assert p.cohen_kappa_quadratic.method == ag.WEIGHTED_SCORE_POSTERIOR
        assert p.cohen_kappa_linear.method == ag.WEIGHTED_SCORE
    assert not [m for m in res.messages if m.startswith("few disagreements")]
    # the pooled table's cells are thirds, summed in the items' order: another order, the
    # same table and interval (up to the score interval's rounding)
    other = agreement(rows_of(list(reversed(pats))), categories=[1, 2, 3], n_resamples=20)
    for key in SQUARED:
        a, b = res.statistics[key], other.statistics[key]
        assert (a.low, a.high) == pytest.approx((b.low, b.high), abs=1e-12), key


#: The worst cells of the near-miss grid for the weighted score interval alone (the default
#: before): n = 30, the common grade at 0.95, wrong grades one step off. The bench's
#: `--categories 3 --numeric --adjacent` (seed 5, 300 label sets a cell): the weighted score
#: interval alone 0.880 and 0.870, the union 1.000 and 0.997.
WORST = [(2, 0.9), (3, 0.95)]


@pytest.mark.parametrize(("raters", "acc"), WORST)
def test_the_union_covers_near_misses_where_the_score_interval_did_not(
    bench_script: Callable[[str], ModuleType], raters: int, acc: float
) -> None:
    bench = bench_script("bench_agreement_coverage")
    reps = 300
    mc = math.sqrt(0.95 * 0.05 / reps)
    res = bench.coverage(
        30,
        0.95,
        acc,
        raters=raters,
        reps=reps,
        n_resamples=20,
        seed=5,
        keys=SQUARED,
        methods=("gof",),
        categories=3,
        numeric=True,
        adjacent=True,
    )
    for k in SQUARED:
        cell = res[("gof", k)]
        print(f"{k}: default {cell.coverage:.3f}, width {cell.mean_width:.3f} (MC se {mc:.3f})")
        assert cell.coverage >= 0.95, k
        assert cell.used[ag.WEIGHTED_SCORE_POSTERIOR] >= reps - 5, k
