"""Cluster-aware tests and intervals (`assay.stats.clusters`): a published worked example,
brute-force enumeration, and the clustered null simulation and coverage grid.

The simulation draws documents with a difficulty of their own and a document-by-run effect (a
change that helps one question on a filing tends to help the others), so the paired differences
are correlated within a document; the runs are exchangeable under the null. Each grid prints its
Monte-Carlo error. The fast, seeded versions always run; the large ones are marked slow.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from typing import Any

import numpy as np
import pytest
from scipy.stats import chi2

from assay.stats.clusters import (
    EXACT_CLUSTERS,
    Clustering,
    cluster_codes,
    cluster_mean_interval,
    cluster_rate_interval,
    cluster_sign_flip,
    clustered_delta,
    clustered_mcnemar,
    describe_clusters,
)
from assay.stats.paired import mcnemar_exact, wilcoxon_moved

# Obuchowski (1998), PET against SPECT on the parathyroid glands of 21 patients, as tabulated in
# the R package clust.bin.pair: per patient, glands negative on both (a), PET only (b), SPECT
# only (c), neither (d). Published: Obuchowski's chi-square 2.857, p = 0.0910.
THYROID = {
    "a": [0, 2, 3, 1, 2, 4, 3, 2, 1, 1, 2, 2, 3, 2, 0, 2, 2, 2, 2, 1, 2],
    "b": [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    "c": [2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0],
    "d": [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
}


def _thyroid_entries() -> tuple[list[int], list[int], list[int]]:
    """Per gland: PET negative (base), SPECT negative (cand), patient (cluster)."""
    a: list[int] = []
    b: list[int] = []
    cl: list[int] = []
    for k in range(21):
        for x, y, cell in ((1, 1, "a"), (1, 0, "b"), (0, 1, "c"), (0, 0, "d")):
            c = THYROID[cell][k]
            a += [x] * c
            b += [y] * c
            cl += [k] * c
    return a, b, cl


def test_obuchowski_statistic_reproduces_the_published_thyroid_example() -> None:
    sizes = np.sum([THYROID[c] for c in "abcd"], axis=0)
    # base = PET, cand = SPECT: "fixed" is c (SPECT only), "broken" is b (PET only)
    res = clustered_mcnemar(THYROID["c"], THYROID["b"], sizes)
    ob = res["obuchowski"]
    assert ob.statistic == pytest.approx(20 / 7, rel=1e-12)  # 2.857
    assert round(ob.statistic, 4) == 2.8571 and round(ob.pvalue, 5) == 0.09097
    # Durkalski et al. (2003) on the same table, from its formula by hand
    d = np.array(THYROID["c"]) - np.array(THYROID["b"])
    r = d / sizes
    assert res["durkalski"].statistic == pytest.approx(r.sum() ** 2 / (r * r).sum(), rel=1e-12)
    assert res["durkalski"].pvalue == pytest.approx(chi2.sf(res["durkalski"].statistic, 1))
    # the glands one by one, as a comparison would hold them: the cell's statistic is the same
    a, b, cl = _thyroid_entries()
    cell = clustered_delta(a, b, cl, rng=np.random.default_rng(0), test="clustered_mcnemar")
    assert cell.test.statistic == pytest.approx(20 / 7, rel=1e-12)
    # six patients moved: exact over 2**6 patterns; |T| = 6 is reached by 10 of 64 patterns
    assert cell.test.method.startswith("exact (64 sign patterns of the 6 clusters that moved)")
    assert cell.test.pvalue == pytest.approx(10 / 64)
    # the entry-level McNemar would have said p = 0.125 (6 vs 1 discordant glands)
    assert mcnemar_exact(6, 1).pvalue == pytest.approx(0.125)


def _brute_p(s: np.ndarray) -> float:
    total = abs(float(s.sum()))
    hits = 0
    count = 0
    for signs in itertools.product((-1.0, 1.0), repeat=s.size):
        count += 1
        hits += abs(float(np.dot(signs, s))) >= total - 1e-9
    return hits / count


@pytest.mark.parametrize("seed", range(6))
def test_exact_cluster_sign_flip_equals_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 11))
    sizes = rng.integers(1, 5, k)
    cl = np.repeat(np.arange(k), sizes)
    a = rng.choice([0.0, 0.5, 1.0], cl.size)
    b = np.clip(a + rng.choice([-0.5, 0.0, 0.5, 1.0], cl.size), 0, 1)
    s = np.bincount(cl, weights=b - a)
    s = np.round(s, 12)
    want = _brute_p(s[s != 0]) if np.any(s != 0) else 1.0
    got = cluster_sign_flip(a, b, cl)
    assert got.pvalue == pytest.approx(want, abs=1e-12)
    cell = clustered_delta(a, b, cl)
    assert cell.test.pvalue == pytest.approx(want, abs=1e-12)


def test_monte_carlo_cluster_sign_flip_agrees_with_enumeration_beyond_the_exact_limit() -> None:
    rng = np.random.default_rng(3)
    k = EXACT_CLUSTERS + 2  # 16 clusters: 65,536 patterns, enumerated here by brute force
    sizes = rng.integers(2, 6, k)
    cl = np.repeat(np.arange(k), sizes)
    a = (rng.random(cl.size) < 0.5).astype(float)
    b = a.copy()
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    # every cluster moves: one or two entries, up in 11 clusters and down in 5
    for j, start in enumerate(first):
        up = j % 3 != 0
        a[start : start + 1 + j % 2] = 0.0 if up else 1.0
        b[start : start + 1 + j % 2] = 1.0 if up else 0.0
    s = np.round(np.bincount(cl, weights=b - a), 12)
    want = _brute_p(s[s != 0])
    got = cluster_sign_flip(a, b, cl, rng=np.random.default_rng(1), n_permutations=20_000)
    assert got.method.startswith("monte carlo")
    se = math.sqrt(want * (1 - want) / 20_000)
    assert abs(got.pvalue - want) < 4 * se + 1e-4
    # seeded: the same generator gives the same p, bit for bit
    again = cluster_sign_flip(a, b, cl, rng=np.random.default_rng(1), n_permutations=20_000)
    assert again == got


def test_one_verdict_the_interval_excludes_zero_exactly_when_p_is_below_alpha() -> None:
    rng = np.random.default_rng(8)
    seen = {True: 0, False: 0}
    for _ in range(150):
        k = int(rng.integers(4, 30))
        sizes = rng.integers(1, 6, k)
        cl = np.repeat(np.arange(k), sizes)
        a = (rng.random(cl.size) < 0.5).astype(float)
        lean = rng.normal(0, 0.3, k)[cl] + rng.normal(0.15, 0.2)
        b = np.where(rng.random(cl.size) < np.abs(lean), (lean > 0).astype(float), a)
        cell = clustered_delta(a, b, cl, rng=rng, n_permutations=400)
        iv = cell.interval
        assert iv.low is not None and iv.high is not None and iv.value is not None
        assert iv.low <= iv.value <= iv.high
        excludes = iv.low > 0 or iv.high < 0
        assert excludes == (cell.test.pvalue < 0.05)
        seen[excludes] += 1
    assert min(seen.values()) >= 10  # both verdicts were exercised


def test_nothing_moved_is_never_a_point_and_few_clusters_say_so() -> None:
    a = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    cell = clustered_delta(a, a, [0, 0, 1, 1, 2, 2])
    assert cell.test.pvalue == 1.0
    assert cell.interval.low is not None and cell.interval.high is not None
    assert cell.interval.low < -0.2 and cell.interval.high > 0.2
    # three clusters, all moving up: 2 / 2**3 = 0.25 is the smallest p there is
    up = clustered_delta(np.zeros(6), np.ones(6), [0, 0, 1, 1, 2, 2])
    assert up.test.pvalue == pytest.approx(0.25)
    assert up.interval.note and "only 3 clusters moved" in up.interval.note


def test_cluster_labels_and_summary() -> None:
    codes, k = cluster_codes(["b", "a", "b", "c"])
    assert k == 3 and codes.tolist() == [0, 1, 0, 2]
    summary = describe_clusters("doc", ["x", "x", "y"])
    assert summary.words() == "clustered by document: 3 entries in 2 clusters"
    c = Clustering("company", {"e1": "company:a", "e2": "company:a"})
    assert c.labels(["e1", "e2", "e3"]) == ["company:a", "company:a", "entry:e3"]
    assert c.summary(["e1", "e2", "e3"]).words() == "clustered by company: 3 entries in 2 clusters"


# ------------------------------------------------------------------ the clustered simulation


def draw(
    rng: np.random.Generator, k: int, q: int, shift: float = 0.0, *, graded: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two runs over ``k`` documents with ``q`` questions each: a document difficulty (sd 1),
    a document-by-run effect (sd 0.6), a question effect (sd 0.7) and run noise (sd 0.7) on a
    probit scale; the candidate is shifted by ``shift``. Graded: recall over two pieces."""
    n = k * q
    doc = np.repeat(np.arange(k), q)
    u = rng.normal(0.0, 1.0, k)[doc]
    w = rng.normal(0.0, 0.7, n)
    out = []
    for sh in (0.0, shift):
        lat = 0.3 + sh + u + rng.normal(0.0, 0.6, k)[doc] + w
        if graded:
            hits = [(lat + rng.normal(0.0, 0.7, n)) > 0 for _ in range(2)]
            out.append((hits[0].astype(float) + hits[1]) / 2.0)
        else:
            out.append(((lat + rng.normal(0.0, 0.7, n)) > 0).astype(float))
    return out[0], out[1], doc


def _null_rates(
    rng: np.random.Generator, q: int, k: int, reps: int, graded: bool
) -> tuple[float, float, float]:
    """Rejection rates at alpha 0.05 under the null: clustered, entry-level; and the MC error."""
    clustered = entry = 0
    for _ in range(reps):
        a, b, doc = draw(rng, k, q, graded=graded)
        cell = clustered_delta(a, b, doc, rng=rng, n_permutations=300)
        clustered += cell.test.pvalue < 0.05
        if graded:
            p = wilcoxon_moved(a, b).pvalue
        else:
            p = mcnemar_exact(
                int(np.sum((a < 0.5) & (b > 0.5))), int(np.sum((a > 0.5) & (b < 0.5)))
            ).pvalue
        entry += p < 0.05
    return clustered / reps, entry / reps, math.sqrt(0.05 * 0.95 / reps)


def _check_null(
    grid: list[tuple[int, int]], reps: int, seed: int, kinds: tuple[bool, ...] = (False, True)
) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out = []
    for graded in kinds:
        for q, k in grid:
            rate, entry, se = _null_rates(rng, q, k, reps, graded)
            kind = "graded" if graded else "binary"
            print(
                f"null {kind} {q} per doc, {k} docs: clustered {rate:.3f}, entry-level "
                f"{entry:.3f} (alpha 0.05, Monte-Carlo error {se:.3f}, {reps} draws)"
            )
            out.append({"graded": graded, "q": q, "rate": rate, "entry": entry, "se": se})
            assert rate <= 0.05 + 2 * se, (kind, q, k, rate)
    return out


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_clustered_null_simulation_fast(graded: bool) -> None:
    # (a graded cell with few clusters moving also computes the entry-level score interval,
    # the slow part: the graded grid is smaller)
    grid = [(4, 30), (8, 10)] if graded else [(4, 12), (4, 30), (8, 10)]
    rows = _check_null(grid, reps=150 if graded else 200, seed=2026, kinds=(graded,))
    # the defect the clusters fix: entry-level tests reject too often with 8 per document
    worst = max(r["entry"] for r in rows if r["q"] == 8)
    assert worst > 0.10


@pytest.mark.simulation
def test_clustered_null_simulation_large() -> None:
    _check_null([(1, 50), (4, 8), (4, 20), (4, 50), (8, 8), (8, 20), (8, 50)], reps=2000, seed=7)


def _coverage(grid: list[tuple[int, int]], shifts: tuple[float, ...], reps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for graded in (False, True):
        for shift in shifts:
            big = [draw(rng, 40_000, 1, shift, graded=graded) for _ in range(2)]
            truth = float(np.mean([b.mean() - a.mean() for a, b, _ in big]))
            rate = float(np.mean([a.mean() for a, _, _ in big]))
            for q, k in grid:
                cov = cov_rate = 0
                for _ in range(reps):
                    a, b, doc = draw(rng, k, q, shift, graded=graded)
                    iv = clustered_delta(a, b, doc, rng=rng, n_permutations=300).interval
                    assert iv.low is not None and iv.high is not None
                    cov += iv.low <= truth <= iv.high
                    if not graded:
                        r = cluster_rate_interval(a, doc)
                        assert r.low is not None and r.high is not None
                        cov_rate += r.low <= rate <= r.high
                se = math.sqrt(0.95 * 0.05 / reps)
                kind = "graded" if graded else "binary"
                print(
                    f"coverage {kind} delta {truth:+.3f}, {q} per doc, {k} docs: "
                    f"{cov / reps:.3f}" + ("" if graded else f", rate {cov_rate / reps:.3f}")
                    + f" (Monte-Carlo error {se:.3f}, {reps} draws)"
                )  # fmt: skip
                assert cov / reps >= 0.93 - 2 * se
                if not graded:
                    assert cov_rate / reps >= 0.93 - 2 * se


def test_clustered_interval_coverage_fast() -> None:
    _coverage([(4, 8), (8, 50)], (0.3,), reps=120, seed=99)


@pytest.mark.simulation
def test_clustered_interval_coverage_large() -> None:
    grid = [(q, k) for q in (1, 4, 8) for k in (8, 14, 20, 30, 50)]
    _coverage(grid, (0.0, 0.3), reps=1000, seed=5)


def test_rate_interval_widens_with_the_design_effect() -> None:
    # 40 entries in 5 documents, every document all-pass or all-fail: 5 draws, not 40
    x = np.repeat([1.0, 0.0, 1.0, 1.0, 0.0], 8)
    cl = np.repeat(np.arange(5), 8)
    clustered = cluster_rate_interval(x, cl)
    independent = cluster_rate_interval(x, np.arange(40))
    assert clustered.width is not None and independent.width is not None
    assert clustered.width > 2 * independent.width
    assert clustered.note and "5 clusters" in clustered.note
    # every value equal: the worst-case design effect, not a confident interval
    ones = cluster_rate_interval(np.ones(40), cl)
    assert ones.low is not None and ones.low < 0.6


def _rare_cluster_coverage(interval: Any, good: float, k: int, m: int, q: float) -> float:
    """Exact coverage when each of ``k`` clusters of ``m`` entries is, with chance ``q``, a
    cluster whose every entry scores 0 (else every entry scores ``good``): the interval depends
    only on how many clusters failed, so the coverage is a sum over that binomial count."""
    from scipy.stats import binom

    truth = good * (1.0 - q)
    cl = np.repeat(np.arange(k), m)
    total = 0.0
    for r in range(k + 1):
        x = np.where(np.repeat(np.arange(k) < r, m), 0.0, good)
        iv = interval(x, cl)
        assert iv.low is not None and iv.high is not None
        total += float(binom.pmf(r, k, q)) * (iv.low <= truth <= iv.high)
    return total


@pytest.mark.parametrize(("k", "q"), [(30, 0.005), (50, 0.01), (50, 0.02)])
def test_graded_cluster_interval_keeps_the_rare_event_fix_over_cluster_means(
    k: int, q: float
) -> None:
    # a recall of 0.9 on most documents and 0 on the odd one: the cluster means are two-valued
    # with few off the usual one, where the score interval over them under-covers (0.85 at 30
    # documents and a 1-in-200 chance); the exact interval over the cluster means holds
    cov = _rare_cluster_coverage(cluster_mean_interval, 0.9, k, 4, q)
    print(f"graded, {k} documents of 4, chance {q}: exact coverage {cov:.4f}")
    assert cov >= 0.95
    cov_rate = _rare_cluster_coverage(cluster_rate_interval, 1.0, k, 4, q)
    print(f"binary, {k} documents of 4, chance {q}: exact coverage {cov_rate:.4f}")
    assert cov_rate >= 0.93


def test_one_cluster_gives_no_interval_for_rates_graded_means_and_deltas() -> None:
    # every entry in one document (FinanceBench clustered by its split): one draw, whatever the
    # kind of metric; the graded cell and the delta said [0.03, 0.82] and [-0.80, +0.78]
    cl = ["dev"] * 23
    graded = np.r_[np.full(3, 0.5), np.full(2, 1.0), np.zeros(18)]
    binary = np.r_[np.ones(3), np.zeros(20)]
    for iv in (
        cluster_rate_interval(binary, cl),
        cluster_mean_interval(graded, cl),
    ):
        assert (iv.low, iv.high) == (0.0, 1.0)
        assert iv.note == "one cluster: no interval"
    assert describe_clusters("split", cl).words() == "clustered by split: 23 entries in 1 cluster"
    d = clustered_delta(binary, np.r_[np.ones(2), np.zeros(21)], cl)
    assert (d.interval.low, d.interval.high) == (-1.0, 1.0)
    assert d.interval.note == "one cluster: no interval"
    assert d.test.pvalue == 1.0


FINANCEBENCH = "/work/shared/financebench"


def _financebench_tables() -> list[tuple[str, list[float], list[float], list[str]]]:
    """FinanceBench's human-graded answers (dev split): per pair of model configurations and
    per question type, each question's correct (1) or not (0) under both, clustered by filing."""
    import collections
    from pathlib import Path

    folder = Path(FINANCEBENCH)
    qs = {}
    for line in (folder / "questions_dev.jsonl").read_text().splitlines():
        q = json.loads(line)
        qs[q["financebench_id"]] = q
    graded: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for line in (folder / "graded_answers_dev.jsonl").read_text().splitlines():
        r = json.loads(line)
        ok = 1.0 if r["label"] == "Correct Answer" else 0.0
        graded[f"{r['model_name']}/{r['eval_mode']}"][r["financebench_id"]] = ok
    out = []
    for a, b in itertools.combinations(sorted(graded), 2):
        for kind in ("domain-relevant", "metrics-generated", "novel-generated"):
            ids = [i for i in sorted(qs) if qs[i]["question_type"] == kind]
            ids = [i for i in ids if i in graded[a] and i in graded[b]]
            out.append((
                f"{a} vs {b}, {kind}", [graded[a][i] for i in ids], [graded[b][i] for i in ids],
                [qs[i]["doc_name"] for i in ids],
            ))  # fmt: skip
    return out


@pytest.mark.skipif(not os.path.isdir(FINANCEBENCH), reason="FinanceBench not on this machine")
def test_clustered_mcnemar_equals_enumeration_on_financebench_graded_answers() -> None:
    # real tables: 16 model configurations graded by experts on FinanceBench's dev questions,
    # several questions per filing; every table with at most EXACT_CLUSTERS filings that moved
    # against the p-value of every sign pattern of those filings, enumerated here
    checked = 0
    for name, a, b, doc in _financebench_tables():
        d = np.asarray(b) - np.asarray(a)
        s = np.array(
            [sum(v for v, c in zip(d, doc, strict=True) if c == k) for k in dict.fromkeys(doc)]
        )
        moved = s[s != 0]
        if not 2 <= moved.size <= EXACT_CLUSTERS:
            continue
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=int(moved.size))))
        brute = float(np.mean(np.abs(signs @ np.abs(moved)) >= abs(s.sum()) - 1e-9))
        res = clustered_delta(a, b, doc, test="clustered_mcnemar")
        assert res.test.pvalue == pytest.approx(brute, abs=1e-12), name
        iv = res.interval
        assert iv.low is not None and iv.high is not None
        assert (iv.low > 0 or iv.high < 0) == (res.test.pvalue < 0.05), name  # one verdict
        checked += 1
    print(f"{checked} FinanceBench tables equal enumeration")
    assert checked >= 100


@pytest.mark.skipif(not os.path.isdir(FINANCEBENCH), reason="FinanceBench not on this machine")
def test_the_icc_of_paired_changes_by_filing_on_financebench_graded_answers() -> None:
    # the figure docs/statistics.md quotes for the planner: over every pair of FinanceBench's
    # 16 graded model configurations, the ICC by filing of the per-question change
    from assay.stats.clusters import icc_oneway

    whole: dict[str, tuple[list[float], list[float], list[str]]] = {}
    for name, a, b, doc in _financebench_tables():
        pair = name.rsplit(", ", 1)[0]
        x, y, d = whole.setdefault(pair, ([], [], []))
        x += a
        y += b
        d += doc
    iccs = [icc_oneway(np.subtract(y, x), d) for x, y, d in whole.values()]
    sizes = np.unique(max((d for _, _, d in whole.values()), key=len), return_counts=True)[1]
    assert float(np.sum(sizes**2) / sizes.sum()) == pytest.approx(2.87, abs=0.01)
    q1, med, q3 = np.percentile(iccs, [25, 50, 75])
    print(f"{len(iccs)} pairs: ICC median {med:.3f}, quartiles {q1:.3f}-{q3:.3f}")
    assert len(iccs) == 120
    assert (
        med == pytest.approx(0.064, abs=5e-4) and q1 == 0.0 and q3 == pytest.approx(0.19, abs=5e-3)
    )


def test_t_quantile_and_chi_square_tail_match_scipy_stats() -> None:
    # the cluster intervals and tests need no scipy (assay.stats._dist, held to a 40-digit
    # reference by tests/stats/test_dist.py): within 1e-13 of t.ppf and chi2.sf
    from scipy.stats import t as student_t

    from assay.stats.clusters import _t_quantile

    for df in [*range(1, 400), 1_000, 4_999, 5_000, 10_000, 43_245, 1_000_000]:
        for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
            want = float(student_t.ppf(0.5 + confidence / 2.0, df))
            assert abs(_t_quantile(confidence, df) - want) <= 1e-13 * abs(want), (df, confidence)
    rng = np.random.default_rng(5)
    for _ in range(200):
        fixed, broken = rng.integers(0, 6, size=(2, int(rng.integers(2, 40))))
        sizes = fixed + broken + rng.integers(1, 4, size=fixed.size)
        for test in clustered_mcnemar(fixed, broken, sizes).values():
            want = float(chi2.sf(test.statistic, 1))
            assert abs(test.pvalue - want) <= 1e-13 * want
