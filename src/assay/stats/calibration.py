"""Calibrating a binary judge against human labels, and correcting its pass rate.

Conventions: True means PASS. The human label is the truth.

- TPR (sensitivity) = P(judge passes | human passes)
- TNR (specificity) = P(judge fails | human fails)
- Cohen's kappa between human and judge (chance-corrected agreement)

TPR, TNR and raw agreement are proportions (of the human passes, of the human fails, of all
items) and get the rate interval `assay.stats.proportion.rate_ci`: Wilson's, Clopper-Pearson's
when fewer than 4 items fall on one side. A judge right on all 20 human passes has TPR
1.000 [0.83, 1.00], not the bootstrap's [1.00, 1.00]; at a true TPR of 0.95 on about 20 passes
the percentile bootstrap covered 63%. Kappa carries a percentile bootstrap interval over items.
Because a binary pair of labels is fully described by its 2x2 table, resampling n items with
replacement is the same as drawing the four cell counts from a multinomial with the observed cell
proportions; that is how the resamples are drawn (exactly the item bootstrap, in O(resamples)
time).

Corrected pass rates (`corrected_pass_rate`: Rogan-Gladen, PPI, PPI++) lean on the judge's error
rates as measured on the labels. With few human passes or fails those are barely measured (50
labels at a true pass rate of 0.97 hold one or two fails, often none), and the corrected
intervals were too narrow: PPI++ covered 74% there, a fifth of its intervals a single point. So
the PPI and PPI++ intervals are widened toward the labels-alone interval by the share ``1 -
min(1, passes / 10, fails / 10)`` (`MIN_PER_CLASS`): fully with no human fail, not at all from 10
of each on; an interval that came out a single point is replaced by the hull with the
labels-alone one outright. Just above that threshold PPI++ still covered 0.918 (true pass rate
0.8, TPR 0.99, TNR 0.5, 100 labels, 5,000 unlabelled: about 11 judge-human disagreements, the
only items the correction's variance is measured on), so the share is also
``1 - disagreements / 50`` when smaller (`MIN_DISAGREEMENTS`): on the grid of
``bench/bench_calibration_coverage.py`` PPI and PPI++ then cover at least 0.943 everywhere.
Rogan-Gladen, which divides by ``TPR + TNR - 1``, is not estimated below 10 of each (its interval
covered 55-75% there, conditional on being defined at all). Measured in
``tests/stats/test_calibration_coverage.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.report import Interval, ReportMixin, Tabular, undefined
from assay.stats._errors import StatsInputError
from assay.stats._resample import (
    PERCENTILE,
    as_bool_array,
    check_confidence,
    clean,
    join_notes,
    make_rng,
    percentile_interval,
    safe_ratio,
)
from assay.stats.proportion import _z, rate_ci

__all__ = [
    "CALIBRATION_KIND",
    "CORRECTED_HEADERS",
    "MEASURED_COVERAGE",
    "MIN_DISAGREEMENTS",
    "MIN_HUMAN_FAILS",
    "MIN_ITEMS",
    "MIN_PER_CLASS",
    "Calibration",
    "CorrectedPassRate",
    "RateEstimate",
    "binary_calibration",
    "binary_calibration_by_category",
    "calibration_headers",
    "calibration_row",
    "corrected_pass_rate",
    "ppi_mean",
    "rogan_gladen",
]

#: Below this many labelled items a calibration is reported with a warning.
MIN_ITEMS = 100
#: Below this many items the human failed, TNR rests on too few cases: warning.
MIN_HUMAN_FAILS = 30
#: Human passes and human fails each needed before a corrected pass rate trusts the judge's
#: measured error rates fully; below it the interval widens toward the labels-alone one.
MIN_PER_CLASS = 10
#: PPI and PPI++ are widened toward the labels alone below this many judge-human disagreements
#: on the labelled items (the rectifier's non-zero values; its variance is measured on them).
#: 50 is the smallest of 20, 30, 40, 50 at which both reached 0.93 on every cell of the grid of
#: `bench/bench_calibration_coverage.py` (PPI++ covered 0.918-0.928 at 20-40).
MIN_DISAGREEMENTS = 50

#: Worst coverage of each 95% interval over the grid of `bench/bench_calibration_coverage.py`
#: (true pass rate 0.5-0.97, TPR 0.9-0.99, TNR 0.5-0.95, 50-200 labels, 5,000 unlabelled; 1,000
#: calibrations per cell, Monte-Carlo se 0.007; an undefined interval counts as a miss). The
#: summary recommends the defined interval with the best measured coverage, the narrower on
#: these data among equals.
MEASURED_COVERAGE = {"ppi": 0.943, "ppi++": 0.943, "labels_only": 0.929, "rogan_gladen": 0.0}

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Calibration(ReportMixin):
    """How a binary judge agrees with human labels (human = truth, True = PASS). A report."""

    n: int
    n_human_pass: int
    n_human_fail: int
    tp: int  # human pass, judge pass
    fn: int  # human pass, judge fail
    fp: int  # human fail, judge pass
    tn: int  # human fail, judge fail
    tpr: Interval
    tnr: Interval
    kappa: Interval
    agreement: Interval
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

    def tabular(self) -> Tabular:
        return Tabular(
            "calibration against human labels",
            calibration_headers(self.confidence),
            [calibration_row("overall", self)],
            footer=[f"warning: {w}" for w in self.warnings],
            emphasis=set(),
        )


def _ci(e: Interval, digits: int = 3) -> str:
    return e.fmt_bounds(digits)


def _val(e: Interval, digits: int = 3) -> str:
    return e.fmt_value(digits)


def calibration_headers(confidence: float) -> list[str]:
    ci = f"{confidence:.0%} CI"
    return ["category", "n", "human FAILs", "TPR", ci, "TNR", ci, "kappa", ci]


def calibration_row(name: str, c: Calibration) -> list[str]:
    return [
        name,
        str(c.n),
        str(c.n_human_fail),
        _val(c.tpr),
        _ci(c.tpr),
        _val(c.tnr),
        _ci(c.tnr),
        _val(c.kappa),
        _ci(c.kappa),
    ]


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
    """Calibrate a binary judge against human labels (True = PASS), with a CI on every figure.

    Returns TPR, TNR, raw agreement and Cohen's kappa, each an `Interval`: the three proportions
    with `assay.stats.proportion.rate_ci` (Wilson; Clopper-Pearson below 4 on one side), kappa
    with a percentile bootstrap over items. Undefined figures (e.g. TPR when the human passed nothing) have
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
        raise StatsInputError("judge", f"{j.size} judge labels for {h.size} human labels")
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

    estimates: dict[str, Interval] = {}
    counts = {"tpr": (tp, tp + fn), "tnr": (tn, fp + tn), "agreement": (tp + tn, n)}
    for name, value in point.items():
        v = clean(float(value))
        if v is None:
            why = "undefined: no items" if n == 0 else _UNDEFINED[name]
            warnings.append(f"{name} {why}")
            method = "wilson" if name in counts else PERCENTILE
            estimates[name] = undefined(why, level=confidence, method=method)
            continue
        if name in counts:
            # a proportion: Wilson (Clopper-Pearson below 4 on one side), never a single point
            k, m = counts[name]
            estimates[name] = rate_ci(k, m, confidence=confidence)
            continue
        low, high, ci_note = percentile_interval(reps[name], confidence, what=name)
        estimates[name] = Interval(v, low, high, confidence, PERCENTILE, ci_note)

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
        raise StatsInputError(
            "categories", f"lengths differ: {h.size} human, {j.size} judge, {cats.size} categories"
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


# --------------------------------------------------------------------------------------------
# Corrected pass rates on unlabelled data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """One estimate of the true (human) pass rate with its interval (``estimate.method`` is
    the estimator: ``rogan_gladen``, ``ppi``, ``ppi++``, ``labels_only``, ``judge_uncorrected``)."""

    method: str
    estimate: Interval
    se: float | None
    lam: float | None = None  # PPI power-tuning weight (1 = plain PPI, 0 = labels only)

    @property
    def width(self) -> float | None:
        return self.estimate.width

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.estimate.to_dict(),
            "method": self.method,
            "se": self.se,
            "width": self.width,
            "lam": self.lam,
        }


def _normal_estimate(
    method: str,
    value: float,
    se: float,
    confidence: float,
    *,
    lam: float | None = None,
    bounds: tuple[float, float] | None = None,
    note: str | None = None,
) -> RateEstimate:
    """``value +- z se``; with ``bounds`` (a rate: (0, 1)) the value and interval are clipped
    to them and the note says so."""
    z = _z(confidence)
    notes = [note]
    low, high, v = value - z * se, value + z * se, value
    if bounds is not None:
        lo_b, hi_b = bounds
        if not lo_b <= value <= hi_b:
            v = min(hi_b, max(lo_b, value))
            notes.append(f"raw estimate {value:.4f} clipped to [{lo_b:g}, {hi_b:g}]")
        if low < lo_b or high > hi_b:
            notes.append(f"interval [{low:.4f}, {high:.4f}] clipped to [{lo_b:g}, {hi_b:g}]")
        low = min(hi_b, max(lo_b, low))
        high = max(lo_b, min(hi_b, high))
    if se == 0.0:
        notes.append("zero estimated variance: the interval is a single point")
    iv = Interval(v, low, high, confidence, method, join_notes(*notes))
    return RateEstimate(method, iv, se, lam)


def _undefined(method: str, why: str, *, lam: float | None = None) -> RateEstimate:
    return RateEstimate(method, undefined(f"undefined: {why}", method=method), None, lam)


def _wilson_rate(method: str, passed: int, n: int, confidence: float) -> RateEstimate:
    """A plain pass rate: Wilson's interval, Clopper-Pearson's below 4 passes or fails
    (`assay.stats.proportion.rate_ci`; never a single point on all-equal data)."""
    w = rate_ci(passed, n, confidence=confidence)
    p = passed / n
    iv = Interval(w.value, w.low, w.high, confidence, method, w.note)
    return RateEstimate(method, iv, float(np.sqrt(p * (1 - p) / n)))


def widen_toward(
    corrected: RateEstimate, labels: RateEstimate, trust: float, why: str
) -> RateEstimate:
    """Widen ``corrected``'s interval toward ``labels``' by the share ``1 - trust``.

    Each bound moves to ``trust * corrected + (1 - trust) * labels`` when that is wider, never
    narrower: ``trust = 0`` gives the hull of the two intervals, ``trust = 1`` leaves it alone.
    A corrected interval of width 0 is replaced by the hull whatever ``trust`` says (the judge's
    error rates cannot be known exactly from a sample). Undefined estimates stay undefined.
    """
    c, lab = corrected.estimate, labels.estimate
    if c.low is None or c.high is None or lab.low is None or lab.high is None:
        return corrected
    if c.high - c.low <= 0.0:
        trust = 0.0
        why = (
            f"{why}; its own interval was a single point"
            if why
            else ("its own interval was a single point")
        )
    trust = min(1.0, max(0.0, trust))
    if trust >= 1.0:
        return corrected
    low = min(c.low, trust * c.low + (1.0 - trust) * lab.low)
    high = max(c.high, trust * c.high + (1.0 - trust) * lab.high)
    if low == c.low and high == c.high:
        return corrected
    note = f"widened {1.0 - trust:.0%} of the way toward the labels-alone interval: {why}"
    iv = Interval(c.value, low, high, c.level, c.method, join_notes(c.note, note))
    return RateEstimate(corrected.method, iv, corrected.se, corrected.lam)


def _check_rate(name: str, value: float) -> None:
    if not isinstance(value, int | float) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise StatsInputError(name, f"must be a rate in [0, 1], got {value!r}")


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise StatsInputError(name, f"must be a count >= 0, got {value!r}")


def rogan_gladen(
    observed_rate: float,
    n_observed: int,
    tpr: float,
    tnr: float,
    n_pos: int,
    n_neg: int,
    *,
    confidence: float = 0.95,
) -> RateEstimate:
    """Rogan-Gladen corrected prevalence with a delta-method interval.

    true rate = (observed + TNR - 1) / (TPR + TNR - 1), where `observed_rate` is the judge's pass
    rate on `n_observed` unlabelled items, and TPR, TNR were estimated on `n_pos` human passes and
    `n_neg` human fails. The variance adds the three independent binomial sources:

        Var = [p(1-p)/N + pi^2 TPR(1-TPR)/n_pos + (1-pi)^2 TNR(1-TNR)/n_neg] / (TPR + TNR - 1)^2

    An estimate outside [0, 1] is clipped (and says so), the interval is centred on the clipped
    estimate (``pi +- z se``, so it re-centres rather than collapsing) and then cut to [0, 1]. The
    correction divides by the judge's Youden index ``J = TPR + TNR - 1``: when J is not clearly
    above zero (``J <= z * se(J)``, the judge not distinguishable from chance on the labelled
    items) the delta method has nothing to stand on and the estimate is undefined, with a note,
    rather than an interval of width 10^8; so it is with fewer than `MIN_PER_CLASS` human passes
    or human fails (2 and 2 gave a narrow, wrong interval), as `corrected_pass_rate` refuses. Rates must lie in [0, 1] and counts be >= 0
    (a `StatsInputError` otherwise).
    """
    method = "rogan_gladen"
    for name, rate in (("observed_rate", observed_rate), ("tpr", tpr), ("tnr", tnr)):
        _check_rate(name, rate)
    for name, count in (("n_observed", n_observed), ("n_pos", n_pos), ("n_neg", n_neg)):
        _check_count(name, count)
    if n_observed <= 0:
        return _undefined(method, "no unlabelled items")
    if min(n_pos, n_neg) < MIN_PER_CLASS:
        # Rogan-Gladen divides by TPR + TNR - 1; from a handful of human passes or fails that
        # divisor is a guess, and its delta-method interval covered 55-75% in simulation
        return _undefined(
            method,
            f"the labels hold {n_pos} human passes and {n_neg} human fails; TPR and TNR need at "
            f"least {MIN_PER_CLASS} of each before the correction divides by TPR + TNR - 1",
        )
    youden = tpr + tnr - 1.0
    if youden <= 0.0:
        return _undefined(
            method, f"the judge is no better than chance (TPR + TNR - 1 = {youden:.3f} <= 0)"
        )
    z = _z(confidence)
    se_youden = math.sqrt(tpr * (1.0 - tpr) / n_pos + tnr * (1.0 - tnr) / n_neg)
    if youden <= max(z * se_youden, 1e-6):
        return _undefined(
            method,
            f"the judge is not clearly better than chance: TPR + TNR - 1 = {youden:.3g} is "
            f"within {z:.2f} standard errors ({se_youden:.3g}) of 0, and the correction would "
            "divide by it",
        )
    raw = (observed_rate + tnr - 1.0) / youden
    pi = min(1.0, max(0.0, raw))
    var = (
        observed_rate * (1.0 - observed_rate) / n_observed
        + pi**2 * tpr * (1.0 - tpr) / n_pos
        + (1.0 - pi) ** 2 * tnr * (1.0 - tnr) / n_neg
    ) / youden**2
    se = float(np.sqrt(var))
    notes = []
    if raw != pi:
        notes.append(f"raw estimate {raw:.4f} clipped to [0, 1]")
    low, high = max(0.0, pi - z * se), min(1.0, pi + z * se)
    if se == 0.0:
        notes.append("zero estimated variance: the interval is a single point")
    return RateEstimate(method, Interval(pi, low, high, confidence, method, join_notes(*notes)), se)


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    lam: float | None = 1.0,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> RateEstimate:
    """Prediction-powered mean of Y from labelled (y, yhat) pairs and unlabelled predictions.

    estimate = lam * mean(yhat_unlabelled) + mean(y - lam * yhat)
    se^2     = lam^2 Var(yhat_unlabelled) / N + Var(y - lam * yhat) / n   (population variances)

    `lam=1` is PPI (Angelopoulos et al., 2023); `lam=None` is PPI++ power tuning (Angelopoulos,
    Duchi and Zrnic, 2023): lam = Cov(y, yhat) / ((1 + n/N) Var(yhat over all n + N items)),
    clipped to [0, 1], the variance-minimising weight (lam=0 falls back to the labels alone).
    Matches `ppi_py.ppi_mean_ci` / `ppi_mean_pointestimate` (tested to 1e-9). With `bounds`
    (``(0, 1)`` for a pass rate) the estimate is clipped into them and each end of the interval
    is clipped on its own, with a note: an interval lying wholly above 1 becomes ``[1, 1]`` (not
    re-centred; Rogan-Gladen instead centres its interval on the clipped estimate). Without
    `bounds` they are ppi_py's. `corrected_pass_rate` never reports such a point: it widens it
    toward the labels-alone interval.
    """
    yy = np.asarray(y, dtype=np.float64).reshape(-1)
    yh = np.asarray(yhat, dtype=np.float64).reshape(-1)
    yu = np.asarray(yhat_unlabelled, dtype=np.float64).reshape(-1)
    method = "ppi++" if lam is None else "ppi"
    if yy.size != yh.size:
        raise StatsInputError("yhat", f"{yh.size} predictions for {yy.size} labels")
    n, big_n = yy.size, yu.size
    if n == 0:
        return _undefined(method, "no labelled items")
    if big_n == 0:
        return _undefined(method, "no unlabelled items")
    note = None
    if lam is None:
        # centre on the PPI (lam=1) estimate as ppi_py does; Cov and Var are invariant to it
        allhat = np.concatenate([yh, yu])
        var_hat = float(np.var(allhat, ddof=1)) if allhat.size > 1 else 0.0
        cov = float(np.mean((yy - yy.mean()) * (yh - yh.mean())))
        if var_hat == 0.0:
            tuned, note = 0.0, "the judge gave one label to every item: lam = 0 (labels only)"
        else:
            tuned = float(np.clip(cov / ((1.0 + n / big_n) * var_hat), 0.0, 1.0))
        lam_v = tuned
    else:
        lam_v = float(lam)
    value = lam_v * float(yu.mean()) + float(np.mean(yy - lam_v * yh))
    se = float(np.sqrt(lam_v**2 * np.var(yu) / big_n + np.var(yy - lam_v * yh) / n))
    return _normal_estimate(method, value, se, confidence, lam=lam_v, bounds=bounds, note=note)


@dataclass(frozen=True, slots=True)
class CorrectedPassRate(ReportMixin):
    """The judge's pass rate on unlabelled items, corrected for its measured error three ways.
    A report."""

    n_labelled: int
    n_unlabelled: int
    judge_rate: RateEstimate  # uncorrected judge pass rate on the unlabelled items
    labels_only: RateEstimate  # human pass rate on the labelled items alone (classical)
    rogan_gladen: RateEstimate
    ppi: RateEstimate
    ppi_plus_plus: RateEstimate
    narrowest: str | None
    summary: str
    recommended: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def methods(self) -> list[RateEstimate]:
        return [self.judge_rate, self.labels_only, self.rogan_gladen, self.ppi, self.ppi_plus_plus]

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            "estimates": {m.method: m.to_dict() for m in self.methods},
            "narrowest": self.narrowest,
            "recommended": self.recommended,
            "summary": self.summary,
            "warnings": list(self.warnings),
        }

    def rows(self) -> list[list[str]]:
        return [
            [
                m.method,
                _val(m.estimate, 4),
                _ci(m.estimate, 4),
                "" if m.width is None else f"{m.width:.4f}",
                "" if m.lam is None else f"{m.lam:.3f}",
                m.estimate.note or "",
            ]
            for m in self.methods
        ]

    def tabular(self) -> Tabular:
        return Tabular(
            f"pass rate on {self.n_unlabelled} unlabelled items, corrected",
            list(CORRECTED_HEADERS),
            self.rows(),
            footer=[self.summary, *(f"warning: {w}" for w in self.warnings)],
            emphasis=set(),
        )


#: Columns of the corrected pass rate table.
CORRECTED_HEADERS = ("pass rate", "estimate", "CI", "width", "lambda", "note")


def corrected_pass_rate(
    human: ArrayLike,
    judge: ArrayLike,
    judge_unlabelled: ArrayLike,
    *,
    confidence: float = 0.95,
) -> CorrectedPassRate:
    """Correct the judge's pass rate on unlabelled items using the labelled items' judge errors.

    `human`, `judge`: the labelled items (True = PASS); `judge_unlabelled`: the judge's verdicts on
    items no human labelled, drawn from the same population. Returns the uncorrected judge rate,
    the labels-only rate, Rogan-Gladen (delta method), PPI and PPI++; says which of the three
    corrections has the narrowest interval on these data, and recommends the interval with the
    best coverage measured on the calibration grid (`MEASURED_COVERAGE`), the narrower among
    equals.
    """
    check_confidence(confidence, 1)
    h = as_bool_array(human, "human")
    j = as_bool_array(judge, "judge")
    u = as_bool_array(judge_unlabelled, "judge_unlabelled")
    if h.shape != j.shape:
        raise StatsInputError("judge", f"{j.size} judge labels for {h.size} human labels")
    n, big_n = int(h.size), int(u.size)
    warnings: list[str] = []
    if n < MIN_ITEMS:
        warnings.append(f"only {n} labelled items (< {MIN_ITEMS}): corrections are imprecise")
    if int(np.sum(~h)) < MIN_HUMAN_FAILS:
        warnings.append(f"only {int(np.sum(~h))} human FAILs (< {MIN_HUMAN_FAILS})")

    if big_n:
        judge_rate = _wilson_rate("judge_uncorrected", int(u.sum()), big_n, confidence)
    else:
        judge_rate = _undefined("judge_uncorrected", "no unlabelled items")
    if n:
        labels_only = _wilson_rate("labels_only", int(h.sum()), n, confidence)
    else:
        labels_only = _undefined("labels_only", "no labelled items")

    n_pos, n_neg = int(h.sum()), int((~h).sum())
    tpr = float(j[h].mean()) if n_pos else 0.0
    tnr = float((~j[~h]).mean()) if n_neg else 0.0
    # (fewer than MIN_PER_CLASS human passes or fails: rogan_gladen refuses, as the command does)
    rg = rogan_gladen(
        float(u.mean()) if big_n else 0.0, big_n, tpr, tnr, n_pos, n_neg, confidence=confidence
    )
    ppi = ppi_mean(h, j, u, lam=1.0, confidence=confidence, bounds=(0.0, 1.0))
    ppi_pp = ppi_mean(h, j, u, lam=None, confidence=confidence, bounds=(0.0, 1.0))
    # the judge's error rates are measured on the human passes (TPR) and fails (TNR): with fewer
    # than MIN_PER_CLASS of either the corrections lean on rates barely measured
    n_dis = int(np.sum(h != j))
    trust = min(1.0, n_pos / MIN_PER_CLASS, n_neg / MIN_PER_CLASS, n_dis / MIN_DISAGREEMENTS)
    whys = []
    if min(n_pos, n_neg) < MIN_PER_CLASS:
        whys.append(
            f"the labels hold {n_pos} human passes and {n_neg} human fails, fewer than "
            f"{MIN_PER_CLASS} of each to measure the judge's error rates"
        )
    if n_dis < MIN_DISAGREEMENTS:
        whys.append(
            f"the judge and the humans disagree on {n_dis} labelled items, fewer than "
            f"{MIN_DISAGREEMENTS} to measure the correction's own spread"
        )
    why = "; ".join(whys)
    ppi, ppi_pp = (widen_toward(r, labels_only, trust, why) for r in (ppi, ppi_pp))

    widths = {r.method: r.width for r in (rg, ppi, ppi_pp) if r.width is not None}
    narrowest = min(widths, key=lambda k: (widths[k], k)) if widths else None
    shown = {r.method: r.width for r in (labels_only, rg, ppi, ppi_pp) if r.width is not None}
    recommended = (
        min(shown, key=lambda k: (-MEASURED_COVERAGE[k], shown[k] or 0.0, k)) if shown else None
    )
    if narrowest is None:
        summary = "no corrected estimate is defined on these data"
    else:
        parts = ", ".join(f"{k} {w:.4f}" for k, w in sorted(widths.items(), key=lambda kv: kv[1]))
        summary = f"narrowest {confidence:.0%} interval: {narrowest} (widths: {parts})"
        if labels_only.width is not None:
            summary += f"; labels alone give width {labels_only.width:.4f}"
    if recommended is not None:
        summary = (
            f"recommended: {recommended} (best worst-case coverage measured on the calibration "
            f"grid, {MEASURED_COVERAGE[recommended]:.1%}); {summary}"
        )
    for r in (rg, ppi, ppi_pp):
        if r.estimate.value is None and r.estimate.note:
            warnings.append(f"{r.method}: {r.estimate.note}")
    return CorrectedPassRate(
        n_labelled=n,
        n_unlabelled=big_n,
        judge_rate=judge_rate,
        labels_only=labels_only,
        rogan_gladen=rg,
        ppi=ppi,
        ppi_plus_plus=ppi_pp,
        narrowest=narrowest,
        summary=summary,
        recommended=recommended,
        warnings=warnings,
    )


# --------------------------------------------------------------------------------------------
# The report of a calibration from files (`assay.label_files.calibrate_files`)
# --------------------------------------------------------------------------------------------

#: `kind` stamped into calibration files.
CALIBRATION_KIND = "assay.judge_calibration"
CALIBRATION_FORMAT = 1
