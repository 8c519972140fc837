"""The weighted score interval of the weighted kappas and ordered alphas on ordered scales of three
or more labels (the default).

References: the variance against statsmodels' ``cohens_kappa`` (Fleiss, Cohen and Everitt's
1969 variance, to 1e-12) and the SAS printout statsmodels tests it against; the pooled-margin
variance against `_model_variance` (unweighted) and a numerical derivative; the inversion
against a brute-force grid with the variance written out cell by cell; alpha against the
`krippendorff` package; coverage by a seeded simulation (`bench/bench_agreement_coverage.py
--categories 3 --numeric`), the grid under the ``simulation`` marker.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy.stats import t as student
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from assay.stats import agreement as ag
from assay.stats.agreement import agreement

from .test_agreement_score import rows_of

#: The coefficients that get the weighted score interval on an ordered scale of 3+ labels.
WEIGHTED = (
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "alpha_ordinal",
    "alpha_interval",
    "alpha_ratio",
)

#: statsmodels' test table (a SAS example): weighted kappa 0.4701, ASE 0.1457 with weights
#: [0, 1, 2] (linear).
TABLE10 = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]], dtype=np.float64)


def weights(k: int, wt: str | None) -> np.ndarray:
    name = "cohen_kappa" if wt is None else f"cohen_kappa_{wt}"
    return ag._disagreement_weights(k)[name]


def test_variance_is_the_published_weighted_kappa_ase() -> None:
    # the SAS printout of statsmodels' tests: kappa 0.4701, ASE 0.1457 (4 decimals)
    n = TABLE10.sum()
    v = ag._weighted_variance(TABLE10 / n, weights(3, "linear"), margins="own")
    assert math.sqrt(v / n) == pytest.approx(0.1457, abs=5e-5)


@pytest.mark.parametrize("wt", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_variance_is_fleiss_cohen_and_everitts(wt: str | None, seed: int) -> None:
    # Cohen's weighted kappa with its own margins: statsmodels' var_kappa to 1e-12 (relative)
    rng = np.random.default_rng(seed)
    k = 3 + seed
    table = rng.integers(0, 15, size=(k, k)).astype(np.float64) + 6 * np.eye(k)
    ref = sm_cohens_kappa(table, wt=wt)
    n = table.sum()
    mine = ag._weighted_variance(table / n, weights(k, wt), margins="own") / n
    assert mine == pytest.approx(ref.var_kappa, rel=1e-12)


@pytest.mark.parametrize("kappa", [-0.2, 0.0, 0.4, 0.9])
def test_pooled_variance_unweighted_is_the_model_variance(kappa: float) -> None:
    pi = np.array([0.7, 0.2, 0.06, 0.04])
    table = np.outer(pi, pi) + kappa * (np.diag(pi) - np.outer(pi, pi))
    got = ag._weighted_variance(table, 1.0 - np.eye(4))
    assert got == pytest.approx(ag._model_variance(pi, kappa), rel=1e-12)


@pytest.mark.parametrize("wt", ["linear", "quadratic"])
def test_pooled_variance_is_the_delta_method_of_weighted_scotts_pi(wt: str) -> None:
    # the gradient checked by central differences on the table's cells
    rng = np.random.default_rng(7)
    p = rng.random((4, 4)) + np.eye(4)
    p /= p.sum()
    w = weights(4, wt)

    def scott(q: np.ndarray) -> float:
        q = q / q.sum()
        pi = (q.sum(axis=0) + q.sum(axis=1)) / 2
        return 1.0 - float((w * q).sum()) / float(pi @ w @ pi)

    h = 1e-6
    grad = np.zeros_like(p)
    for j in range(4):
        for m in range(4):
            e = np.zeros_like(p)
            e[j, m] = h
            # along cell (j, m) holding the others' counts: the multinomial's influence
            grad[j, m] = (scott(p + e) - scott(p - e)) / (2 * h)
    mean = float((p * grad).sum())
    want = float((p * grad * grad).sum()) - mean**2
    assert ag._weighted_variance(p, w) == pytest.approx(want, rel=1e-6)


def brute_force(table: np.ndarray, w: np.ndarray, crit: float) -> tuple[float, float, float, float]:
    """Weighted Scott's pi of a k x k table, the kappas on a fine grid that the score test at
    `crit` accepts (the model's table and the variance written out cell by cell), the step."""
    n = table.sum()
    p = table / n
    pi = (p.sum(axis=0) + p.sum(axis=1)) / 2
    keep = pi > 0
    pi, w = pi[keep], w[np.ix_(keep, keep)]
    p = p[np.ix_(keep, keep)]
    k = pi.size
    de = sum(w[j, m] * pi[j] * pi[m] for j in range(k) for m in range(k))
    centre = 1 - float((w * p).sum()) / de
    floor = float(max(-pi / (1 - pi)))
    grid = np.linspace(floor, 1.0, 40_001)
    wb = [sum(w[j, m] * pi[m] for m in range(k)) for j in range(k)]
    var = np.zeros_like(grid)
    mean = np.zeros_like(grid)
    for j in range(k):
        for m in range(k):
            cell = pi[j] * pi[m] * (1 - grid) + (grid * pi[j] if j == m else 0.0)
            g = -(w[j, m] - (1 - grid) * (wb[j] + wb[m])) / de
            var += cell * g * g
            mean += cell * g
    accepted = grid[(centre - grid) ** 2 <= crit * (var - mean * mean) / n]
    return centre, float(accepted.min()), float(accepted.max()), (1.0 - floor) / 40_000


PATTERNS = [
    # (labels of two raters, items) on 1 < 2 < 3: prevalent 1, two rare grades
    [((1, 1), 22), ((2, 2), 2), ((3, 3), 1), ((1, 2), 3), ((3, 1), 2)],
    [((1, 1), 10), ((2, 2), 9), ((3, 3), 8), ((1, 2), 1), ((2, 3), 2)],
    [((1, 1), 27), ((2, 2), 1), ((1, 3), 1), ((2, 1), 1)],
]


def _pooled(patterns: list[tuple[tuple[int, int], int]]) -> tuple[int, np.ndarray]:
    """Items and the symmetric (pooled) 3 x 3 table of two raters' label pairs."""
    table = np.zeros((3, 3))
    for (x, y), c in patterns:
        table[x - 1, y - 1] += c / 2
        table[y - 1, x - 1] += c / 2
    return sum(c for _, c in patterns), table


@pytest.mark.parametrize("patterns", PATTERNS)
@pytest.mark.parametrize("wt", ["linear", "quadratic"])
def test_two_raters_invert_the_weighted_score_test(
    patterns: list[tuple[tuple[int, int], int]], wt: str
) -> None:
    res = agreement(rows_of(patterns), n_resamples=20)
    n, table = _pooled(patterns)
    w = weights(3, wt)
    _, low, high, step = brute_force(table, w, float(student.ppf(0.975, n - 1)) ** 2)
    e = res.statistics[f"cohen_kappa_{wt}"]
    a = [x for (x, _), c in patterns for _ in range(c)]
    b = [y for (_, y), c in patterns for _ in range(c)]
    assert e.value == pytest.approx(ag.cohen_kappa(a, b, weights=wt), abs=1e-12)  # type: ignore[arg-type]
    assert e.value is not None and e.low is not None and e.high is not None
    # the inversion itself against the brute force, centred on the weighted Scott's pi
    iv = ag._weighted_score_interval(table, w, 0.95, t_dof=n - 1)
    assert iv is not None
    assert iv == pytest.approx((low, high), abs=step)
    # Cohen's own value kept inside; quadratic kappa adds the posterior interval
    # (tests/stats/test_agreement_posterior.py)
    _reported_as(e, (min(iv[0], e.value), max(iv[1], e.value)), squared=wt == "quadratic")
    pair = getattr(res.pairs[0], f"cohen_kappa_{wt}")
    assert pair.method == e.method and (pair.low, pair.high) == (e.low, e.high)
    # no "intervals under-cover" message: this interval covers on scarce tables
    assert not [m for m in res.messages if m.startswith("few disagreements")]


def _reported_as(e: Any, score: tuple[float, float], *, squared: bool) -> None:
    """`e` is the weighted score interval `score` (around the value), or for quadratic kappa
    and interval alpha (`squared`) the union of it and a posterior interval."""
    if not squared:
        assert e.method == ag.WEIGHTED_SCORE
        assert (e.low, e.high) == score
        return
    assert e.method == ag.WEIGHTED_SCORE_POSTERIOR
    assert e.low <= score[0] and e.high >= score[1]


def test_no_scarce_message_on_a_rare_grade_under_the_default() -> None:
    # a grade given twice: quadratic kappa and interval alpha get the posterior interval as
    # well, which covers where the far grade is rare (docs/agreement.md): no message
    rare = agreement(
        rows_of([((1, 1), 14), ((2, 2), 8), ((1, 2), 6), ((3, 3), 1), ((2, 1), 1)]),
        n_resamples=20,
    )
    assert not [m for m in rare.messages if m.startswith("few disagreements")], rare.messages
    assert rare.statistics["alpha_interval"].method == ag.WEIGHTED_SCORE_POSTERIOR


@pytest.mark.parametrize("patterns", PATTERNS)
def test_ordered_alphas_invert_the_score_test_with_their_distances(
    patterns: list[tuple[tuple[int, int], int]],
) -> None:
    res = agreement(rows_of(patterns), n_resamples=20)
    n, table = _pooled(patterns)
    data = np.array([[lab[r] for lab, c in patterns for _ in range(c)] for r in (0, 1)], float)
    # ordinal distances at the data's grade counts (Krippendorff's), interval ones (a - b)^2
    counts = table.sum(axis=0) * 2
    csum = np.cumsum(counts)
    ordinal = np.zeros((3, 3))
    for c in range(3):
        for d in range(3):
            lo, hi = min(c, d), max(c, d)
            ordinal[c, d] = (
                0.0
                if c == d
                else (csum[hi] - csum[lo] + counts[lo] - (counts[c] + counts[d]) / 2) ** 2
            )
    values = np.arange(1.0, 4.0)
    dist = {
        "alpha_ordinal": ordinal,
        "alpha_interval": (values[:, None] - values[None, :]) ** 2,
        "alpha_ratio": ((values[:, None] - values[None, :]) / (values[:, None] + values[None, :]))
        ** 2,
    }
    crit = float(student.ppf(0.975, n - 1)) ** 2
    for key, w in dist.items():
        e = res.statistics[key]
        level = key.removeprefix("alpha_")
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert e.value == pytest.approx(ref, abs=1e-9), key
        _, low, high, step = brute_force(table, w, crit)
        iv = ag._weighted_score_interval(table, w, 0.95, t_dof=n - 1)
        assert iv is not None and iv == pytest.approx((low, high), abs=step), key
        assert e.value is not None
        score = (min(iv[0], e.value), max(iv[1], e.value))
        _reported_as(e, score, squared=key == "alpha_interval")


def test_unweighted_it_is_the_score_interval() -> None:
    table = np.array([[20.0, 1.5, 1.0], [1.5, 2.0, 0.0], [1.0, 0.0, 3.0]])
    a = ag._weighted_score_interval(table, 1.0 - np.eye(3), 0.95, t_dof=29)
    b = ag._score_interval(table, 0.95, t_dof=29)
    assert a is not None and b is not None
    np.testing.assert_allclose(a, b, atol=1e-11)


def test_degenerate_tables() -> None:
    # one grade used: no interval (kappa undefined); no disagreement: bounded below, reaches 1
    assert (
        ag._weighted_score_interval(np.diag([30.0, 0, 0]), weights(3, "linear"), 0.95, t_dof=29)
        is None
    )
    iv = ag._weighted_score_interval(np.diag([24.0, 4, 2]), weights(3, "linear"), 0.95, t_dof=29)
    assert iv is not None and iv[1] == 1.0 and 0.4 < iv[0] < 0.95
    res = agreement(rows_of([((1, 1), 24), ((2, 2), 4), ((3, 3), 2)]), n_resamples=20)
    for key in WEIGHTED:
        e = res.statistics[key]
        assert e.method in (ag.WEIGHTED_SCORE, ag.WEIGHTED_SCORE_POSTERIOR), key
        assert e.value == 1.0 and e.high == 1.0, key
    # text labels without an order: the weighted figures stay undefined
    text = agreement(rows_of([(("a", "a"), 10), (("b", "c"), 2), (("c", "c"), 3)]), n_resamples=20)
    assert text.statistics["cohen_kappa_linear"].value is None
    # three raters: the items' pooled table, n the number of items
    pats: list[tuple[tuple[Any, ...], int]] = [((1, 1, 1), 20), ((1, 1, 2), 4), ((3, 3, 3), 3)]
    three = agreement(rows_of(pats), n_resamples=20)
    codes = np.array([[x - 1 for x in p] for p, c in pats for _ in range(c)])
    pooled = ag._pair_matrix(codes, 3)
    iv = ag._weighted_score_interval(pooled, weights(3, "quadratic"), 0.95, t_dof=26)
    e = three.statistics["cohen_kappa_quadratic"]
    assert iv is not None and e.value is not None
    _reported_as(e, (min(iv[0], e.value), max(iv[1], e.value)), squared=True)
    e = three.statistics["cohen_kappa_linear"]
    iv = ag._weighted_score_interval(pooled, weights(3, "linear"), 0.95, t_dof=26)
    assert iv is not None and e.value is not None
    _reported_as(e, (min(iv[0], e.value), max(iv[1], e.value)), squared=False)


#: The worst cells of the three-label grid for the jackknife (the default before): n = 30, the
#: common grade at 0.95, two raters. `bench/bench_agreement_coverage.py --categories 3
#: --numeric` (400 label sets a cell, seed 1): jackknife 0.705-0.805, the weighted score
#: interval 0.965-0.980 (docs/agreement.md).
WORST = [(0.95, 0.9), (0.95, 0.95)]


@pytest.mark.parametrize(("prev", "acc"), WORST)
def test_weighted_score_interval_covers_where_the_jackknife_did_not(
    bench_script: Callable[[str], ModuleType], prev: float, acc: float
) -> None:
    bench = bench_script("bench_agreement_coverage")
    reps = 100
    mc = math.sqrt(0.95 * 0.05 / reps)
    res = bench.coverage(
        30,
        prev,
        acc,
        raters=2,
        reps=reps,
        n_resamples=20,
        seed=5,
        keys=WEIGHTED,
        methods=("jackknife", "gof"),
        categories=3,
        numeric=True,
    )
    for k in WEIGHTED:
        old, new = res[("jackknife", k)], res[("gof", k)]
        print(f"{k}: jackknife {old.coverage:.3f}, default {new.coverage:.3f} (MC se {mc:.3f})")
        assert old.coverage < 0.87 and new.coverage >= 0.93, k
        assert new.mean_width < old.mean_width, k
