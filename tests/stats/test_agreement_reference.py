"""Agreement statistics against reference implementations on random data, to 1e-9."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from assay.stats.agreement import cohen_kappa, fleiss_kappa, gwet_ac1, krippendorff_alpha

TOL = 1e-9


def _random_matrix(seed: int, *, raters: int, items: int, k: int, missing: float) -> np.ndarray:
    """raters x items of integer labels 1..k correlated through an item truth; NaN = missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, k + 1, size=items)
    noise = rng.random((raters, items)) < rng.uniform(0.2, 0.6)
    data = np.where(noise, rng.integers(1, k + 1, size=(raters, items)), truth).astype(float)
    data[rng.random((raters, items)) < missing] = np.nan
    return data


def _cac(data: np.ndarray, weights: str = "identity") -> CAC:
    frame = pd.DataFrame(data.T, columns=[f"r{i}" for i in range(data.shape[0])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CAC(frame, weights=weights, digits=15)


@pytest.mark.parametrize("seed", range(8))
def test_cohen_kappa_matches_sklearn_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    data = _random_matrix(seed, raters=2, items=int(rng.integers(20, 120)), k=k, missing=0.0)
    a, b = data.astype(int)
    labels = sorted(set(a) | set(b))
    for weights in (None, "linear", "quadratic"):
        ours = cohen_kappa(a.tolist(), b.tolist(), weights=weights)
        ref = cohen_kappa_score(a, b, weights=weights, labels=labels)
        assert ours == pytest.approx(ref, abs=TOL)
    table = pd.crosstab(a, b).reindex(index=labels, columns=labels, fill_value=0).to_numpy()
    assert cohen_kappa(a.tolist(), b.tolist()) == pytest.approx(
        cohens_kappa(table, return_results=False), abs=TOL
    )
    # statsmodels' "linear" weights are the same |i - j| positions
    assert cohen_kappa(a.tolist(), b.tolist(), weights="linear") == pytest.approx(
        cohens_kappa(table, wt="linear", return_results=False), abs=TOL
    )


@pytest.mark.parametrize("seed", range(8))
def test_fleiss_matches_statsmodels_complete_data(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    data = _random_matrix(
        100 + seed, raters=int(rng.integers(2, 6)), items=80, k=int(rng.integers(2, 5)), missing=0.0
    )
    table, _ = aggregate_raters(data.T.astype(int))
    assert fleiss_kappa(data) == pytest.approx(sm_fleiss(table, method="fleiss"), abs=TOL)


@pytest.mark.parametrize("seed", range(8))
def test_multi_rater_coefficients_match_irrcac_with_missing(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    data = _random_matrix(
        200 + seed,
        raters=int(rng.integers(2, 6)),
        items=60,
        k=int(rng.integers(2, 5)),
        missing=0.25,
    )
    # irrCAC drops items nobody rated; so do we (they carry no information)
    cac = _cac(data)
    assert fleiss_kappa(data) == pytest.approx(cac.fleiss()["est"]["coefficient_value"], abs=TOL)
    assert gwet_ac1(data) == pytest.approx(cac.gwet()["est"]["coefficient_value"], abs=TOL)
    assert krippendorff_alpha(data) == pytest.approx(
        cac.krippendorff()["est"]["coefficient_value"], abs=TOL
    )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_matches_krippendorff_package(seed: int, level: str) -> None:
    rng = np.random.default_rng(300 + seed)
    data = _random_matrix(
        300 + seed,
        raters=int(rng.integers(2, 6)),
        items=int(rng.integers(10, 80)),
        k=int(rng.integers(2, 7)),
        missing=float(rng.uniform(0, 0.4)),
    )
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(ref, abs=TOL)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(5))
def test_irrcac_weighted_alpha_equals_interval_and_ratio_but_not_its_ordinal(seed: int) -> None:
    """Krippendorff's alpha is unchanged by rescaling the distance, so irrCAC's quadratic and
    ratio weights reproduce the interval and ratio metrics. irrCAC's "ordinal" weights are
    Gwet's rank-count weights, fixed by category positions; Krippendorff's ordinal metric depends
    on how often each category was used. They legitimately differ."""
    data = _random_matrix(400 + seed, raters=3, items=50, k=5, missing=0.2)
    assert krippendorff_alpha(data, level="interval") == pytest.approx(
        _cac(data, "quadratic").krippendorff()["est"]["coefficient_value"], abs=TOL
    )
    assert krippendorff_alpha(data, level="ratio") == pytest.approx(
        _cac(data, "ratio").krippendorff()["est"]["coefficient_value"], abs=TOL
    )
    theirs = _cac(data, "ordinal").krippendorff()["est"]["coefficient_value"]
    ours = krippendorff_alpha(data, level="ordinal")
    assert ours is not None and abs(ours - theirs) > 1e-6


def test_pabak_matches_irrcac_brennan_prediger() -> None:
    from assay.stats.agreement import agreement

    data = _random_matrix(500, raters=4, items=70, k=3, missing=0.2)
    records = [
        {"item": i, "rater": r, "label": int(v)}
        for r, row in enumerate(data)
        for i, v in enumerate(row)
        if not np.isnan(v)
    ]
    res = agreement(records, n_resamples=10)
    assert res.statistics["pabak"].value == pytest.approx(
        _cac(data).bp()["est"]["coefficient_value"], abs=TOL
    )
    assert res.statistics["raw_agreement"].value == pytest.approx(
        _cac(data).fleiss()["est"]["pa"], abs=TOL
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_many_raters_linear_memory(level: str) -> None:
    # 100 raters x 2000 items: per-pair tables would need 4950 pairs x k^2 cells per item
    # (over 600 MB); the coincidence matrix needs a few MB and matches the package
    import tracemalloc

    data = _random_matrix(11, raters=100, items=2000, k=4, missing=0.3)
    tracemalloc.start()
    try:
        ours = krippendorff_alpha(data, level=level)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(ref, abs=TOL)
    assert peak < 40e6, f"peak {peak / 1e6:.0f} MB"


def test_krippendorff_text_labels_and_undefined_levels() -> None:
    a = [["x", "y", "x", None, "y"], ["x", "y", "y", "x", "y"], ["x", None, "x", "x", "y"]]
    codes = np.array([[0, 1, 0, np.nan, 1], [0, 1, 1, 0, 1], [0, np.nan, 0, 0, 1]])
    ref = krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal")
    assert krippendorff_alpha(a) == pytest.approx(ref, abs=TOL)
    assert krippendorff_alpha(a, level="interval") is None  # text labels have no values
    assert krippendorff_alpha([[1, 1, 1], [1, 1, 1]]) is None  # no variation: undefined


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_of_a_pair_ignores_other_raters(weights: str) -> None:
    # A and B use grades 0, 1 and 3; C also uses 2. A-B's weighted kappa is A's and B's alone
    # (positions among the grades they used, as sklearn's cohen_kappa_score), whoever else rated.
    from assay.stats.agreement import agreement

    rng = np.random.default_rng(21)
    truth = rng.choice([0, 1, 3], size=60)
    a = np.where(rng.random(60) < 0.3, rng.choice([0, 1, 3], size=60), truth)
    b = np.where(rng.random(60) < 0.3, rng.choice([0, 1, 3], size=60), truth)
    c = np.where(rng.random(60) < 0.5, 2, truth)
    rows = [
        {"item": str(i), "rater": r, "label": int(v)}
        for r, vals in (("a", a), ("b", b), ("c", c))
        for i, v in enumerate(vals)
    ]
    key = f"cohen_kappa_{weights}"
    pair_only = agreement([r for r in rows if r["rater"] != "c"], n_resamples=50)
    with_c = agreement(rows, n_resamples=50)
    ab = next(p for p in with_c.pairs if (p.rater_a, p.rater_b) == ("a", "b"))
    ref = cohen_kappa_score(a, b, weights=weights)
    assert getattr(ab, key).value == pytest.approx(ref, abs=TOL)
    assert pair_only.statistics[key].value == pytest.approx(ref, abs=TOL)
    assert cohen_kappa(a.tolist(), b.tolist(), weights=weights) == pytest.approx(ref, abs=TOL)  # type: ignore[arg-type]
    # naming the full scale puts every pair on it (sklearn's labels=)
    full = agreement(rows, categories=[0, 1, 2, 3], n_resamples=50)
    ab_full = next(p for p in full.pairs if (p.rater_a, p.rater_b) == ("a", "b"))
    ref_full = cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3])
    assert getattr(ab_full, key).value == pytest.approx(ref_full, abs=TOL)
    assert abs(ref_full - ref) > 1e-3  # the scale matters, so the test can tell


# ------------------------------------------------------- the delta-method (linearized) variance


def _delta_se(data: np.ndarray) -> tuple[dict[str, float | None], list[dict[str, float | None]]]:
    from assay.stats import agreement as ag

    design = ag._numeric_design(data, None)
    assert design is not None
    lay = ag._features(design.codes, len(design.categories))
    infl, pairs = ag._influence(lay, design, None)
    return (
        {k: ag._linearized_se(v) for k, v in infl.items()},
        [{k: ag._linearized_se(v) for k, v in p.items()} for p in pairs],
    )


@pytest.mark.parametrize("seed", range(6))
def test_delta_variance_is_gwets_as_irrcac_reports_it(seed: int) -> None:
    # complete data: Fleiss' kappa, AC1 and Brennan-Prediger (PABAK) standard errors are
    # Gwet's (2014) linearized variances, as irrCAC computes them (f = 0: no finite-population
    # correction)
    rng = np.random.default_rng(300 + seed)
    data = _random_matrix(
        300 + seed,
        raters=int(rng.integers(2, 6)),
        items=int(rng.integers(20, 90)),
        k=int(rng.integers(2, 5)),
        missing=0.0,
    )
    se, _ = _delta_se(data)
    cac = _cac(data)
    for key, ref in (("fleiss_kappa", cac.fleiss()), ("gwet_ac1", cac.gwet()), ("pabak", cac.bp())):
        assert se[key] == pytest.approx(ref["est"]["se"], rel=1e-8), key


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_delta_variance_of_cohens_kappa_is_fleiss_cohen_everitt(
    seed: int, weights: str | None
) -> None:
    # two raters: the large-sample variance of (weighted) kappa of Fleiss, Cohen & Everitt
    # (1969), statsmodels' std_kappa, with n - 1 in place of n (Gwet's convention)
    rng = np.random.default_rng(400 + seed)
    n, k = int(rng.integers(25, 120)), int(rng.integers(2, 5))
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, n))
    a[:k], b[:k] = np.arange(k), np.arange(k)  # every category used by both raters
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1)
    ref = cohens_kappa(table, wt=weights)
    _, pairs = _delta_se(np.array([a, b], dtype=float))
    key = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    assert pairs[0][key] == pytest.approx(ref.std_kappa * np.sqrt(n / (n - 1)), rel=1e-8)
