"""Adding an agreement coefficient is one decorated function: it then appears in every report,
with a bootstrap interval and an undefined note, checked here against a reference."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from assay.stats.agreement import (
    COEFFICIENTS,
    STATISTICS,
    Sums,
    agreement,
    coefficient,
    fleiss_kappa,
)


@pytest.fixture
def scott_pi() -> Iterator[str]:
    @coefficient("scott_pi", "Scott's pi", undefined="every label is the same")
    def _scott(s: Sums) -> np.ndarray:
        # chance agreement from the pooled category shares (two raters: Fleiss' kappa)
        pe = (s.pi**2).sum(axis=1)
        return (s.pa - pe) / np.where(pe < 1.0, 1.0 - pe, np.nan)

    yield "scott_pi"
    del COEFFICIENTS["scott_pi"], STATISTICS["scott_pi"]


def test_a_registered_coefficient_is_reported_with_an_interval(scott_pi: str) -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 80)
    a = np.where(rng.random(80) < 0.3, rng.integers(0, 3, 80), truth)
    b = np.where(rng.random(80) < 0.3, rng.integers(0, 3, 80), truth)
    rows = [
        {"item": str(i), "rater": r, "label": int(v)}
        for r, vals in (("a", a), ("b", b))
        for i, v in enumerate(vals)
    ]
    res = agreement(rows, n_resamples=300)
    est = res.statistics[scott_pi]
    assert est.value == pytest.approx(fleiss_kappa([a.tolist(), b.tolist()]), abs=1e-12)
    assert est.low is not None and est.high is not None and est.low < est.value < est.high
    assert "Scott's pi" in res.to_markdown() and list(res.statistics)[-1] == scott_pi
    same = agreement([{"item": str(i), "rater": r, "label": 1} for i in range(5) for r in "ab"])
    assert same.statistics[scott_pi].value is None
    assert same.statistics[scott_pi].note == "undefined: every label is the same"
    with pytest.raises(ValueError, match="already registered"):
        coefficient("scott_pi", "again")(lambda s: s.pa)
