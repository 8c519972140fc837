"""Calibrating a binary judge against human labels, and correcting its pass rate.

Conventions: True means PASS. The human label is the truth.

- TPR (sensitivity) = P(judge passes | human passes)
- TNR (specificity) = P(judge fails | human fails)
- Cohen's kappa between human and judge (chance-corrected agreement)

Every figure carries a percentile bootstrap interval over items. Because a binary pair of labels
is fully described by its 2x2 table, resampling n items with replacement is the same as drawing
the four cell counts from a multinomial with the observed cell proportions; that is how the
resamples are drawn (exactly the item bootstrap, in O(resamples) time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import DataError, Problem
from assay.stats._resample import (
    Estimate,
    as_bool_array,
    check_confidence,
    clean,
    make_rng,
    percentile_interval,
    safe_ratio,
)

__all__ = [
    "MIN_HUMAN_FAILS",
    "MIN_ITEMS",
    "Calibration",
    "Estimate",
    "binary_calibration",
    "binary_calibration_by_category",
]

#: Below this many labelled items a calibration is reported with a warning.
MIN_ITEMS = 100
#: Below this many items the human failed, TNR rests on too few cases: warning.
MIN_HUMAN_FAILS = 30

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Calibration:
    """How a binary judge agrees with human labels (human = truth, True = PASS)."""

    n: int
    n_human_pass: int
    n_human_fail: int
    tp: int  # human pass, judge pass
    fn: int  # human pass, judge fail
    fp: int  # human fail, judge pass
    tn: int  # human fail, judge fail
    tpr: Estimate
    tnr: Estimate
    kappa: Estimate
    agreement: Estimate
    human_pass_rate: float | None
    judge_pass_rate: float | None
    confidence: float
    n_resamples: int
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "n_human_pass": self.n_human_pass,
            "n_human_fail": self.n_human_fail,
            "confusion": {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn},
            "tpr": self.tpr.to_dict(),
            "tnr": self.tnr.to_dict(),
            "kappa": self.kappa.to_dict(),
            "agreement": self.agreement.to_dict(),
            "human_pass_rate": self.human_pass_rate,
            "judge_pass_rate": self.judge_pass_rate,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "warnings": list(self.warnings),
        }


def _stats_from_cells(cells: FloatArray) -> dict[str, FloatArray]:
    """TPR, TNR, raw agreement and kappa from cell counts [..., (tp, fn, fp, tn)]; NaN = undefined."""
    tp, fn, fp, tn = (cells[..., i] for i in range(4))
    n = tp + fn + fp + tn
    tpr = safe_ratio(tp, tp + fn)
    tnr = safe_ratio(tn, fp + tn)
    po = safe_ratio(tp + tn, n)
    human_pass = safe_ratio(tp + fn, n)
    judge_pass = safe_ratio(tp + fp, n)
    pe = human_pass * judge_pass + (1.0 - human_pass) * (1.0 - judge_pass)
    # pe == 1 exactly when both gave one and the same label to every item: kappa is 0/0.
    denom = np.where(np.isclose(pe, 1.0, rtol=0.0, atol=1e-12), 0.0, 1.0 - pe)
    kappa = safe_ratio(po - pe, denom)
    return {"tpr": tpr, "tnr": tnr, "agreement": po, "kappa": kappa}


_UNDEFINED = {
    "tpr": "undefined: the human passed no item",
    "tnr": "undefined: the human failed no item",
    "agreement": "undefined: no items",
    "kappa": "undefined: human and judge gave the same single label to every item "
    "(raw agreement 1.0, no variation to correct for chance)",
}


def binary_calibration(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> Calibration:
    """Calibrate a binary judge against human labels (True = PASS), with bootstrap CIs over items.

    Returns TPR, TNR, raw agreement and Cohen's kappa, each an `Estimate` with a percentile
    bootstrap interval. Undefined figures (e.g. TPR when the human passed nothing) have
    `value=None` and a note; `warnings` also flags fewer than `MIN_ITEMS` items or fewer than
    `MIN_HUMAN_FAILS` human FAILs. `rng` may be a Generator or a seed; None means seed 0.

    >>> c = binary_calibration([1, 1, 0, 0] * 30, [1, 0, 0, 0] * 30)
    >>> round(c.tpr.value, 2), round(c.tnr.value, 2), round(c.kappa.value, 2)
    (0.5, 1.0, 0.5)
    """
    check_confidence(confidence, n_resamples)
    h = as_bool_array(human, "human")
    j = as_bool_array(judge, "judge")
    if h.shape != j.shape:
        raise DataError(
            Problem("<input>", None, "judge", f"{j.size} judge labels for {h.size} human labels")
        )
    gen = make_rng(rng)
    n = int(h.size)
    tp = int(np.sum(h & j))
    fn = int(np.sum(h & ~j))
    fp = int(np.sum(~h & j))
    tn = int(np.sum(~h & ~j))
    cells = np.array([tp, fn, fp, tn], dtype=np.float64)
    point = _stats_from_cells(cells)

    warnings: list[str] = []
    if n < MIN_ITEMS:
        warnings.append(
            f"only {n} labelled items (< {MIN_ITEMS}): intervals are wide, treat as indicative"
        )
    if fp + tn < MIN_HUMAN_FAILS:
        warnings.append(
            f"only {fp + tn} human FAILs (< {MIN_HUMAN_FAILS}): TNR, the judge's ability to catch "
            "failures, is poorly determined"
        )

    if n > 0:
        boot = gen.multinomial(n, cells / n, size=n_resamples).astype(np.float64)
        reps = _stats_from_cells(boot)
    else:
        reps = {k: np.full(0, np.nan) for k in point}

    estimates: dict[str, Estimate] = {}
    for name, value in point.items():
        v = clean(float(value))
        if v is None:
            why = "undefined: no items" if n == 0 else _UNDEFINED[name]
            warnings.append(f"{name} {why}")
            estimates[name] = Estimate(None, None, None, why)
            continue
        low, high, ci_note = percentile_interval(reps[name], confidence, what=name)
        estimates[name] = Estimate(v, low, high, ci_note)

    return Calibration(
        n=n,
        n_human_pass=tp + fn,
        n_human_fail=fp + tn,
        tp=tp,
        fn=fn,
        fp=fp,
        tn=tn,
        tpr=estimates["tpr"],
        tnr=estimates["tnr"],
        kappa=estimates["kappa"],
        agreement=estimates["agreement"],
        human_pass_rate=(tp + fn) / n if n else None,
        judge_pass_rate=(tp + fp) / n if n else None,
        confidence=confidence,
        n_resamples=n_resamples,
        warnings=warnings,
    )


def binary_calibration_by_category(
    human: ArrayLike,
    judge: ArrayLike,
    categories: Sequence[str],
    *,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[str, Calibration]:
    """`binary_calibration` per category (sorted by name) and overall (key "overall", last).

    One Generator is drawn from in that order, so the result is reproducible for a given seed.
    """
    h = as_bool_array(human, "human")
    j = as_bool_array(judge, "judge")
    cats = np.asarray([str(c) for c in categories], dtype=object)
    if not (h.size == j.size == cats.size):
        raise DataError(
            Problem(
                "<input>",
                None,
                "categories",
                f"lengths differ: {h.size} human, {j.size} judge, {cats.size} categories",
            )
        )
    gen = make_rng(rng)
    out: dict[str, Calibration] = {}
    for cat in sorted(set(cats.tolist())):
        mask = cats == cat
        out[cat] = binary_calibration(
            h[mask], j[mask], rng=gen, n_resamples=n_resamples, confidence=confidence
        )
    out["overall"] = binary_calibration(
        h, j, rng=gen, n_resamples=n_resamples, confidence=confidence
    )
    return out
