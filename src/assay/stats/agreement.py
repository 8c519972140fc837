"""Agreement between experts: how far independent labels of the same items coincide.

Input is long format, one label per record: ``{"item": ..., "rater": ..., "label": ...}`` with an
optional ``"criterion"`` (several criteria are reported separately). Labels are booleans, numbers or
strings (one kind per criterion); ``null`` is a missing label. Items may have any number of raters
(missing data is allowed); an item counts towards agreement when at least two raters labelled it.

Statistics (each with an interval over items: by default Donner and Eliasziw's goodness-of-fit
interval for kappa and alpha on a binary scale, a score interval for unweighted kappa and nominal
alpha on a longer one and its weighted form for the weighted kappas and ordered alphas on a
longer ordered one (with a posterior interval for quadratic kappa and interval alpha), the
jackknife interval on the Fisher-z scale of
the statistic's range for the others, a Clopper-Pearson bound where the raters never disagree,
BCa where none applies; the jackknife for every figure, the delta-method, BCa or percentile
interval on request; see `agreement`):

- raw agreement: the mean over items of the share of agreeing rater pairs (Fleiss' P_o);
  for two raters, the share of items on which they agree
- Cohen's kappa, unweighted and with linear / quadratic weights; with more than two raters, the
  mean of the pairwise kappas (Light's kappa), every pair also reported on its own
- Fleiss' kappa (Gwet's formulation, which allows missing ratings)
- Krippendorff's alpha, nominal, ordinal, interval and ratio, from the coincidence matrix
- PABAK (prevalence- and bias-adjusted kappa, = Brennan-Prediger with K categories)
- Gwet's AC1
- specific agreement per category; for a binary scale, positive and negative agreement

Every statistic is a smooth function of sums over items of per-item features (category counts,
per-item coincidences, per-pair contingency cells). A bootstrap resample is a vector of item
multiplicities, so all resamples are one matrix product: ``multiplicities @ features``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri, stdtrit

from assay._registry import Registry
from assay.report import Interval, ReportMixin, Tabular, undefined
from assay.stats._errors import Issue, StatsInputError
from assay.stats._resample import (
    BCA,
    PERCENTILE,
    bca_or_percentile,
    check_confidence,
    clean,
    make_rng,
    percentile_interval,
    safe_ratio,
)

__all__ = [
    "AGREEMENT_KIND",
    "COEFFICIENTS",
    "INTERVAL_METHODS",
    "STATISTICS",
    "AgreementPanel",
    "AgreementResult",
    "Coefficient",
    "Disagreement",
    "LabelRecord",
    "PairAgreement",
    "Sums",
    "agreement",
    "agreement_by_criterion",
    "agreement_panel",
    "coefficient",
    "cohen_kappa",
    "describe_intervals",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "parse_labels",
]

FloatArray = NDArray[np.float64]
Label = bool | int | float | str
LabelKind = Literal["bool", "number", "text"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]

#: `kind` stamped into agreement reports (`assay.label_files.AgreementReport.to_dict`).
AGREEMENT_KIND = "assay.agreement"

#: Statistic keys in report order, with their display names (filled by `coefficient`).
STATISTICS: dict[str, str] = {}

_PAIR_STATS = ("n", "raw_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic")

#: Text labels read as the positive class of a binary scale (case-insensitive).
POSITIVE_WORDS = frozenset(
    {"pass", "passed", "yes", "y", "true", "correct", "relevant", "supported", "good", "ok"}
)

#: More distinct labels than this is not a rating scale (free text?): a StatsInputError.
MAX_CATEGORIES = 50

#: Paradox rule: explained when raw agreement >= this ...
PARADOX_RAW = 0.8
#: ... and kappa (Cohen for two raters, else Fleiss) is below this.
PARADOX_KAPPA = 0.6

#: Scarce-table rule: fewer disagreeing items than this, or (binary scale) fewer labels of the
#: rarer class than `SCARCE_RARE_LABELS`, on the items with two or more labels. There the
#: chance-corrected coefficients' jackknife, delta and bootstrap intervals under-cover
#: (`bench/bench_agreement_coverage.py`: down to 0.74-0.77 at 30 items and 0.86-0.88 at 50, prevalence
#: 0.95), and the result says so. The default's goodness-of-fit interval (binary scale) and score
#: and weighted score intervals (three or more labels) cover there (docs/agreement.md): no
#: message then.
SCARCE_DISAGREEMENTS = 5
SCARCE_RARE_LABELS = 15


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelRecord:
    """One rater's label of one item (label None = missing)."""

    item: str
    rater: str
    label: Label | None
    criterion: str | None = None
    line: int | None = None


def _label_kind(label: Label) -> LabelKind:
    if isinstance(label, bool):
        return "bool"
    if isinstance(label, int | float):
        return "number"
    return "text"


def parse_labels(
    rows: Iterable[Mapping[str, Any]] | Iterable[tuple[int, Mapping[str, Any]]],
) -> list[LabelRecord]:
    """Validate long-format label rows into `LabelRecord`s; every problem is collected.

    Rows are dicts with `item`, `rater`, `label` and optional `criterion`, or (line, dict) pairs.
    Item and rater ids are read as strings. A label is a boolean, a finite number, a string or
    null (missing). A rater labelling the same item twice under one criterion is an error.
    Problems raise one `StatsInputError` carrying every issue, each with its row's line (the
    given line, else the 1-based position); `assay.label_files.load_labels` names the file too.
    """
    problems: list[Issue] = []
    out: list[LabelRecord] = []
    seen: dict[tuple[str | None, str, str], int | None] = {}
    for pos, raw in enumerate(rows, start=1):
        line: int | None
        if isinstance(raw, tuple):
            line, row = raw
        else:
            line, row = pos, raw
        if not isinstance(row, Mapping):
            problems.append(Issue(None, "expected a JSON object", line))
            continue
        bad = False
        for key in ("item", "rater"):
            v = row.get(key)
            if v is None or isinstance(v, bool | dict | list) or (isinstance(v, str) and not v):
                problems.append(Issue(key, "required: a non-empty string or number", line))
                bad = True
        if "label" not in row:
            problems.append(Issue("label", "required (null for a missing label)", line))
            bad = True
        label = row.get("label")
        if label is not None and not isinstance(label, bool | int | float | str):
            problems.append(
                Issue(
                    "label",
                    f"must be a boolean, number or string, got {type(label).__name__}",
                    line,
                )
            )
            bad = True
        if isinstance(label, float) and not math.isfinite(label):
            problems.append(Issue("label", "must be finite", line))
            bad = True
        crit = row.get("criterion")
        if crit is not None and not isinstance(crit, str | int):
            problems.append(Issue("criterion", "must be a string", line))
            bad = True
        # other fields (timestamps, notes, entry ids) are allowed and ignored
        if bad:
            continue
        rec = LabelRecord(
            str(row["item"]), str(row["rater"]), label, None if crit is None else str(crit), line
        )
        seen_key = (rec.criterion, rec.item, rec.rater)
        if seen_key in seen:
            first = seen[seen_key]
            problems.append(
                Issue(
                    "rater",
                    f"rater {rec.rater!r} labelled item {rec.item!r} twice"
                    + (f" (first on line {first})" if first is not None else ""),
                    line,
                )
            )
            continue
        seen[seen_key] = line
        out.append(rec)
    if problems:
        raise StatsInputError.of(problems)
    return out


# --------------------------------------------------------------------------------------------
# The design: items x raters matrix of category codes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Design:
    items: list[str]
    raters: list[str]
    categories: list[Label]
    codes: NDArray[np.int64]  # items x raters, -1 = missing
    kind: LabelKind
    ordered: bool
    values: FloatArray | None  # numeric value of each category (interval, ratio)
    scale_given: bool = False  # categories named by the caller: weighted kappa uses the full scale


def _sort_key(v: Label) -> tuple[int, float, str]:
    if isinstance(v, bool | int | float):
        return (0, float(v), "")
    return (1, 0.0, v)


def _design(records: Sequence[LabelRecord], categories: Sequence[Label] | None) -> _Design:
    rated = [r for r in records if r.label is not None]
    kinds = {_label_kind(r.label) for r in rated if r.label is not None}
    if len(kinds) > 1:
        first = {
            k: next(r for r in rated if r.label is not None and _label_kind(r.label) == k)
            for k in kinds
        }
        raise StatsInputError.of(
            [
                Issue(
                    "label",
                    f"labels mix kinds ({', '.join(sorted(kinds))}): this one is {k}",
                    rec.line,
                )
                for k, rec in sorted(first.items())
            ]
        )
    kind: LabelKind = kinds.pop() if kinds else "text"
    if categories is not None:
        cats = list(categories)
        index = {c: i for i, c in enumerate(cats)}
        if len(index) != len(cats):
            raise StatsInputError("categories", "categories repeat")
        missing = [r for r in rated if r.label not in index]
        if missing:
            raise StatsInputError.of(
                [
                    Issue("label", f"{r.label!r} is not one of the categories {cats}", r.line)
                    for r in missing[:20]
                ]
            )
        ordered = True
    else:
        cats = sorted({r.label for r in rated if r.label is not None}, key=_sort_key)
        # two categories need no order: every ordinal or weighted statistic equals the nominal one
        ordered = kind in ("bool", "number") or len(cats) <= 2
    if len(cats) > MAX_CATEGORIES:
        raise StatsInputError(
            "label",
            f"{len(cats)} distinct labels (more than {MAX_CATEGORIES}): agreement needs a "
            "categorical or numeric scale, not free text",
        )
    index = {c: i for i, c in enumerate(cats)}
    items = sorted({r.item for r in rated})  # sorted: results do not depend on record order
    raters = sorted({r.rater for r in rated})
    item_ix = {it: i for i, it in enumerate(items)}
    rater_ix = {ra: i for i, ra in enumerate(raters)}
    codes = np.full((len(items), len(raters)), -1, dtype=np.int64)
    for r in rated:
        codes[item_ix[r.item], rater_ix[r.rater]] = index[r.label]  # type: ignore[index]
    values: FloatArray | None = None
    if cats and all(isinstance(c, bool | int | float) for c in cats):
        values = np.array([float(c) for c in cats], dtype=np.float64)
    return _Design(items, raters, cats, codes, kind, ordered, values, categories is not None)


# --------------------------------------------------------------------------------------------
# Per-item features and statistics from their (weighted) sums
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layout:
    k: int
    pairs: list[tuple[int, int]]
    f: FloatArray  # items x features

    # feature slices
    @property
    def s_pa(self) -> slice:  # sum over items with >= 2 ratings of P_i, and their count
        return slice(0, 2)

    @property
    def s_pi(self) -> slice:  # sum of per-item category proportions, and the item count
        return slice(2, 3 + self.k)

    @property
    def s_coinc(self) -> slice:
        start = 3 + self.k
        return slice(start, start + self.k * self.k)

    @property
    def s_spec(self) -> slice:
        start = 3 + self.k + self.k * self.k
        return slice(start, start + 2 * self.k)

    def s_pair(self, p: int) -> slice:
        start = 3 + 3 * self.k + self.k * self.k + p * self.k * self.k
        return slice(start, start + self.k * self.k)


def _features(codes: NDArray[np.int64], k: int, *, pairs: bool = True) -> _Layout:
    """Per-item features; ``pairs=False`` leaves out the per-pair contingency cells (the only
    part that grows with the square of the number of raters)."""
    n_items, n_raters = codes.shape
    counts = np.zeros((n_items, k), dtype=np.float64)
    for r in range(n_raters):
        ok = codes[:, r] >= 0
        np.add.at(counts, (np.flatnonzero(ok), codes[ok, r]), 1.0)
    m = counts.sum(axis=1)
    multi = m >= 2
    pairs_agree = (counts * (counts - 1.0)).sum(axis=1)
    p_i = safe_ratio(pairs_agree, m * (m - 1.0))
    p_i = np.where(multi, p_i, 0.0)
    props = counts / np.where(m > 0, m, 1.0)[:, None]
    coinc = counts[:, :, None] * counts[:, None, :]
    coinc[:, np.arange(k), np.arange(k)] -= counts
    coinc = coinc / np.where(multi, m - 1.0, 1.0)[:, None, None]
    coinc[~multi] = 0.0
    spec_num = counts * (counts - 1.0)
    spec_den = counts * (m[:, None] - 1.0)
    rater_pairs = list(itertools.combinations(range(n_raters), 2)) if pairs else []
    blocks = [
        p_i[:, None],
        multi[:, None].astype(np.float64),
        props,
        (m > 0)[:, None].astype(np.float64),
        coinc.reshape(n_items, k * k),
        spec_num,
        spec_den,
    ]
    for a, b in rater_pairs:
        both = (codes[:, a] >= 0) & (codes[:, b] >= 0)
        cell = np.zeros((n_items, k * k), dtype=np.float64)
        rows = np.flatnonzero(both)
        cell[rows, codes[rows, a] * k + codes[rows, b]] = 1.0
        blocks.append(cell)
    return _Layout(k, rater_pairs, np.concatenate(blocks, axis=1))


def _kappa_from_table(t: FloatArray, disagree: FloatArray) -> FloatArray:
    """Weighted kappa 1 - sum(v O) / sum(v E) over tables [..., K, K]; NaN where undefined."""
    n = t.sum(axis=(-2, -1))
    rows = t.sum(axis=-1)
    cols = t.sum(axis=-2)
    expected = rows[..., :, None] * cols[..., None, :]
    num = (disagree * t).sum(axis=(-2, -1)) * n
    den = (disagree * expected).sum(axis=(-2, -1))
    # a sum of non-negative terms: zero only when every term is (one label from both raters)
    return 1.0 - safe_ratio(num, den)


def _disagreement_weights(k: int, used: NDArray[np.int64] | None = None) -> dict[str, FloatArray]:
    """Disagreement weights over category positions: among all ``k`` categories, or among the
    ``used`` ones only (a pair's own scale; categories outside it never occur in its table)."""
    pos = np.arange(k, dtype=np.float64)
    span = k
    if used is not None:
        pos = np.zeros(k, dtype=np.float64)
        pos[used] = np.arange(used.size, dtype=np.float64)
        span = int(used.size)
    diff = np.abs(pos[:, None] - pos[None, :])
    scale = max(span - 1, 1)
    return {
        "cohen_kappa": 1.0 - np.eye(k),
        "cohen_kappa_linear": diff / scale,
        "cohen_kappa_quadratic": (diff / scale) ** 2,
    }


def _pair_weights(lay: _Layout, design: _Design) -> list[dict[str, FloatArray]]:
    """Each pair's disagreement weights, fixed from the full data (not per resample).

    Weighted kappa of raters A and B depends on A and B alone: positions are taken among the
    categories the two of them used, so a third rater's labels cannot change it (sklearn's
    ``cohen_kappa_score`` does the same). When the caller named the scale (``categories``),
    the full scale is used for every pair.
    """
    k = lay.k
    if design.scale_given or not lay.pairs:
        return [_disagreement_weights(k)] * len(lay.pairs)
    full = lay.f.sum(axis=0)
    out = []
    for p in range(len(lay.pairs)):
        t = full[lay.s_pair(p)].reshape(k, k)
        used = np.flatnonzero(t.sum(axis=0) + t.sum(axis=1) > 0)
        out.append(_disagreement_weights(k, used))
    return out


def _alpha(o: FloatArray, delta2: FloatArray) -> FloatArray:
    """Krippendorff's alpha from coincidence matrices o [..., K, K] and distances [..., K, K]."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    observed = (o * delta2).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta2).sum(axis=(-2, -1))
    # a sum of non-negative terms: exactly zero when no pairable values differ
    return 1.0 - safe_ratio((n - 1.0) * observed, expected)


def _ordinal_delta2(o: FloatArray) -> FloatArray:
    n_c = o.sum(axis=-1)  # [..., K]
    csum = np.cumsum(n_c, axis=-1)
    k = n_c.shape[-1]
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    before = np.concatenate([np.zeros((*n_c.shape[:-1], 1)), csum[..., :-1]], axis=-1)
    between = csum[..., hi] - before[..., lo]
    d = between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0
    out: FloatArray = d**2
    out[..., np.arange(k), np.arange(k)] = 0.0
    return out


def _value_delta2(values: FloatArray, level: Level) -> FloatArray:
    a, b = values[:, None], values[None, :]
    if level == "interval":
        return np.asarray((a - b) ** 2, dtype=np.float64)
    s = a + b
    ratio = np.divide(a - b, s, out=np.zeros_like(s), where=s != 0)
    return np.asarray(ratio**2, dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Coefficients: a registry of functions of the feature sums
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sums:
    """What a coefficient is computed from: sums over items of per-item features, for the data
    (one row) or for each bootstrap resample (one row per resample). Every array's first axis is
    that row; a coefficient returns one value per row, NaN where it is undefined.
    """

    k: int  # number of categories
    ordered: bool  # the scale has an order (numbers, booleans, or `categories` given)
    values: FloatArray | None  # numeric value of each category, when labels are numbers
    positive: int | None  # index of the positive category of a binary scale
    pa: FloatArray  # [B] raw agreement: mean share of agreeing rater pairs (Fleiss' P_o)
    pi: FloatArray  # [B, k] mean over items of each category's share of the item's labels
    coincidences: FloatArray  # [B, k, k] Krippendorff's coincidence matrix
    specific: FloatArray  # [B, k] specific agreement on each category
    pairs: list[dict[str, FloatArray]]  # per rater pair: n, raw_agreement, Cohen's kappas

    def undefined(self) -> FloatArray:
        """One NaN per row: the coefficient is undefined on these data."""
        return np.full(self.pa.shape[0], np.nan)


@dataclass(frozen=True, slots=True)
class Coefficient:
    """A registered agreement coefficient: its key, display name, computation and the reason
    it is undefined when it is (shown as the note)."""

    key: str
    name: str
    compute: Callable[[Sums], FloatArray]
    undefined: str
    #: The range the coefficient lies in, when it has one: its jackknife and delta-method
    #: intervals are built on the Fisher-z scale of that range (`_z_interval`); None = a plain
    #: t-interval.
    bounds: tuple[float, float] | None = None


def _register_plugin(key: str, c: object) -> None:
    assert isinstance(c, Coefficient)
    COEFFICIENTS.add(key, c)
    STATISTICS[key] = c.name


#: Every coefficient `agreement` reports, in report order; third-party coefficients plug in
#: through the ``assay.coefficients`` entry-point group (`assay._registry`).
COEFFICIENTS: Registry[Coefficient] = Registry(
    "agreement coefficient",
    group="assay.coefficients",
    item_type=Coefficient,
    register_item=_register_plugin,
)


def coefficient(
    key: str,
    name: str,
    *,
    undefined: str = "undefined on these data",
    bounds: tuple[float, float] | None = None,
) -> Callable[[Callable[[Sums], FloatArray]], Callable[[Sums], FloatArray]]:
    """Register an agreement coefficient: a function of `Sums` returning one value per row.

    Every statistic gets an interval over items for free: the delta-method interval (its
    linearized variance from the same function evaluated at the sums nudged by each item) and
    the bootstrap (resamples are rows of the same sums). ``undefined`` is the note shown when
    the value is NaN; ``bounds`` the range the coefficient lies in, if any ((-1, 1) for a
    kappa), on whose Fisher-z scale the delta-method interval is built.
    """

    def register(fn: Callable[[Sums], FloatArray]) -> Callable[[Sums], FloatArray]:
        COEFFICIENTS.add(key, Coefficient(key, name, fn, undefined, bounds))
        STATISTICS[key] = name
        return fn

    return register


def _light(name: str) -> Callable[[Sums], FloatArray]:
    """The mean of the pairwise Cohen's kappas (Light's kappa); one pair: that pair's kappa."""

    def compute(s: Sums) -> FloatArray:
        if not s.pairs:
            return s.undefined()
        stack = np.stack([ps[name] for ps in s.pairs])
        finite = np.isfinite(stack)
        tot = np.where(finite, stack, 0.0).sum(axis=0)
        return safe_ratio(tot, finite.sum(axis=0).astype(np.float64))

    return compute


_NO_PAIR = "no rater pair labelled shared items with more than one label"
_NO_VARIATION = "no variation among pairable labels"

_SHARE = (0.0, 1.0)
_KAPPA = (-1.0, 1.0)

coefficient(
    "raw_agreement", "raw agreement", undefined="no item has two or more labels", bounds=_SHARE
)(lambda s: s.pa)
coefficient("cohen_kappa", "Cohen's kappa", undefined=_NO_PAIR, bounds=_KAPPA)(
    _light("cohen_kappa")
)
coefficient(
    "cohen_kappa_linear", "Cohen's kappa (linear weights)", undefined=_NO_PAIR, bounds=_KAPPA
)(_light("cohen_kappa_linear"))
coefficient(
    "cohen_kappa_quadratic",
    "Cohen's kappa (quadratic weights)",
    undefined=_NO_PAIR,
    bounds=_KAPPA,
)(_light("cohen_kappa_quadratic"))


@coefficient(
    "fleiss_kappa",
    "Fleiss' kappa",
    undefined="every label is the same: chance agreement is 1",
    bounds=_KAPPA,
)
def _fleiss(s: Sums) -> FloatArray:
    # Gwet's formulation, which allows missing ratings
    pe = (s.pi**2).sum(axis=1)
    one = np.isclose(pe, 1.0, rtol=0.0, atol=1e-12)
    return safe_ratio(s.pa - pe, np.where(one, 0.0, 1.0 - pe))


@coefficient(
    "alpha_nominal", "Krippendorff's alpha (nominal)", undefined=_NO_VARIATION, bounds=_KAPPA
)
def _alpha_nominal(s: Sums) -> FloatArray:
    return _alpha(s.coincidences, (1.0 - np.eye(s.k))[None])


@coefficient(
    "alpha_ordinal", "Krippendorff's alpha (ordinal)", undefined=_NO_VARIATION, bounds=_KAPPA
)
def _alpha_ordinal(s: Sums) -> FloatArray:
    if not s.ordered:
        return s.undefined()
    return _alpha(s.coincidences, _ordinal_delta2(s.coincidences))


@coefficient(
    "alpha_interval", "Krippendorff's alpha (interval)", undefined=_NO_VARIATION, bounds=_KAPPA
)
def _alpha_interval(s: Sums) -> FloatArray:
    if s.values is None:
        return s.undefined()
    return _alpha(s.coincidences, _value_delta2(s.values, "interval")[None])


@coefficient("alpha_ratio", "Krippendorff's alpha (ratio)", undefined=_NO_VARIATION, bounds=_KAPPA)
def _alpha_ratio(s: Sums) -> FloatArray:
    if s.values is None:
        return s.undefined()
    return _alpha(s.coincidences, _value_delta2(s.values, "ratio")[None])


@coefficient("pabak", "PABAK", undefined="fewer than two categories", bounds=_KAPPA)
def _pabak(s: Sums) -> FloatArray:
    # Brennan-Prediger: chance agreement fixed at 1/K
    if s.k < 2:
        return s.undefined()
    return (s.k * s.pa - 1.0) / (s.k - 1)


@coefficient("gwet_ac1", "Gwet's AC1", undefined="fewer than two categories", bounds=_KAPPA)
def _gwet_ac1(s: Sums) -> FloatArray:
    if s.k < 2:
        return s.undefined()
    pe = (s.pi * (1.0 - s.pi)).sum(axis=1) / (s.k - 1)
    return safe_ratio(s.pa - pe, 1.0 - pe)


_NO_CLASS = "no label of this class on items with two or more labels"


@coefficient(
    "positive_agreement", "positive specific agreement", undefined=_NO_CLASS, bounds=_SHARE
)
def _positive(s: Sums) -> FloatArray:
    if s.k != 2 or s.positive is None:
        return s.undefined()
    return s.specific[:, s.positive]


@coefficient(
    "negative_agreement", "negative specific agreement", undefined=_NO_CLASS, bounds=_SHARE
)
def _negative(s: Sums) -> FloatArray:
    if s.k != 2 or s.positive is None:
        return s.undefined()
    return s.specific[:, 1 - s.positive]


def _pair_stats(sums: FloatArray, lay: _Layout, design: _Design) -> list[dict[str, FloatArray]]:
    k, b = lay.k, sums.shape[0]
    all_weights = _pair_weights(lay, design)
    out: list[dict[str, FloatArray]] = []
    for p in range(len(lay.pairs)):
        t = sums[:, lay.s_pair(p)].reshape(b, k, k)
        n_p = t.sum(axis=(1, 2))
        ps: dict[str, FloatArray] = {
            "n": n_p,
            "raw_agreement": safe_ratio(np.trace(t, axis1=1, axis2=2), n_p),
        }
        for name, v in all_weights[p].items():
            if name != "cohen_kappa" and not design.ordered:
                ps[name] = np.full(b, np.nan)
            else:
                ps[name] = _kappa_from_table(t, v[None])
        out.append(ps)
    return out


def _stats_from_sums(
    sums: FloatArray, lay: _Layout, design: _Design, positive: int | None
) -> tuple[dict[str, FloatArray], list[dict[str, FloatArray]]]:
    """Every registered coefficient (NaN = undefined) from feature sums [B, D], and the
    per-pair statistics."""
    k = lay.k
    b = sums.shape[0]
    spec = sums[:, lay.s_spec]
    pairs = _pair_stats(sums, lay, design)
    s = Sums(
        k=k,
        ordered=design.ordered,
        values=design.values,
        positive=positive,
        pa=safe_ratio(sums[:, 0], sums[:, 1]),
        pi=safe_ratio(sums[:, lay.s_pi][:, :k], sums[:, lay.s_pi][:, k : k + 1]),
        coincidences=sums[:, lay.s_coinc].reshape(b, k, k),
        specific=safe_ratio(spec[:, :k], spec[:, k:]),
        pairs=pairs,
    )
    out = {key: np.asarray(c.compute(s), dtype=np.float64) for key, c in COEFFICIENTS.items()}
    for c in range(k):
        out[f"specific:{c}"] = s.specific[:, c]
    return out, pairs


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Agreement of one pair of raters on the items both labelled."""

    rater_a: str
    rater_b: str
    n: int
    raw_agreement: Interval
    cohen_kappa: Interval
    cohen_kappa_linear: Interval
    cohen_kappa_quadratic: Interval

    def to_dict(self) -> dict[str, Any]:
        return {
            "rater_a": self.rater_a,
            "rater_b": self.rater_b,
            "n": self.n,
            "raw_agreement": self.raw_agreement.to_dict(),
            "cohen_kappa": self.cohen_kappa.to_dict(),
            "cohen_kappa_linear": self.cohen_kappa_linear.to_dict(),
            "cohen_kappa_quadratic": self.cohen_kappa_quadratic.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Disagreement:
    """An item the raters labelled differently: one row of the adjudication list."""

    item: str
    labels: dict[str, Label]  # rater -> label
    spread: float | None  # max - min category position (ordered scales), else None

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "labels": dict(self.labels), "spread": self.spread}


@dataclass(frozen=True, slots=True)
class AgreementResult(ReportMixin):
    """Agreement between raters on one criterion (a report: ``to_json``, ``to_table``,
    ``to_markdown``; tables list the first 20 items to adjudicate, JSON all of them)."""

    criterion: str | None
    n_items: int
    n_items_multi: int  # items with >= 2 labels: the ones agreement is measured on
    n_ratings: int
    raters: list[str]
    categories: list[Label]
    label_kind: LabelKind
    ordered: bool
    positive: Label | None
    statistics: dict[str, Interval]
    specific: dict[str, Interval]  # per category (str(label))
    pairs: list[PairAgreement]
    disagreements: list[Disagreement]
    messages: list[str]
    confidence: float
    n_resamples: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "n_items": self.n_items,
            "n_items_multi": self.n_items_multi,
            "n_ratings": self.n_ratings,
            "raters": list(self.raters),
            "categories": list(self.categories),
            "label_kind": self.label_kind,
            "ordered": self.ordered,
            "positive": self.positive,
            "statistics": {k: v.to_dict() for k, v in self.statistics.items()},
            "specific_agreement": {k: v.to_dict() for k, v in self.specific.items()},
            "pairs": [p.to_dict() for p in self.pairs],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "messages": list(self.messages),
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
        }

    def tabular(self) -> list[Tabular]:
        """The figures as plain tables (the statistics, each rater pair, the first 20 items to
        adjudicate); how they look is the report layer's business (`assay.label_files` renders the
        fuller `AgreementReport`)."""
        pct = f"{self.confidence:.0%} CI"
        title = (f"criterion {self.criterion!r}: " if self.criterion is not None else "") + (
            f"{self.n_items} items, {self.n_ratings} labels"
        )
        rows = [
            [STATISTICS[k], e.fmt_value(3), e.fmt_bounds(3), e.note or ""]
            for k, e in self.statistics.items()
        ]
        tables = [
            Tabular(title, ["statistic", "value", pct, "note"], rows, list(self.messages), set())
        ]
        if len(self.pairs) > 1:
            tables.append(
                Tabular(
                    "per rater pair",
                    ["rater A", "rater B", "n", "raw", "kappa", pct],
                    [
                        [
                            p.rater_a,
                            p.rater_b,
                            str(p.n),
                            p.raw_agreement.fmt_value(3),
                            p.cohen_kappa.fmt_value(3),
                            p.cohen_kappa.fmt_bounds(3),
                        ]
                        for p in self.pairs
                    ],
                    emphasis=set(),
                )
            )
        if self.disagreements:
            tables.append(
                Tabular(
                    f"to adjudicate: {len(self.disagreements)} items",
                    ["item", "labels"],
                    [
                        [d.item, ", ".join(f"{r}={v}" for r, v in d.labels.items())]
                        for d in self.disagreements[:20]
                    ],
                    emphasis=set(),
                )
            )
        return tables


def _why(name: str, design: _Design, positive: int | None, k: int) -> str:
    if (
        name in ("cohen_kappa_linear", "cohen_kappa_quadratic", "alpha_ordinal")
        and not design.ordered
    ):
        return "text labels have no order (pass `categories` in order to give one)"
    if name in ("alpha_interval", "alpha_ratio") and design.values is None:
        return "labels are not numbers"
    if name in ("positive_agreement", "negative_agreement"):
        if k != 2:
            return f"not a binary scale ({k} categories); see specific agreement per category"
        if positive is None:
            return "cannot tell which label is positive (pass `positive`)"
    if name in ("pabak", "gwet_ac1") and k < 2:
        return "only one label was used (pass `categories` to name the scale)"
    c = COEFFICIENTS.get(name)
    return c.undefined if c is not None else "undefined on these data"


#: `Interval.method` of the Fisher-z intervals: variance from the leave-one-item-out values,
#: or the linearized (delta-method) variance.
JACKKNIFE = "jackknife"
DELTA = "delta"
#: `Interval.method` where the raters never disagree (`_no_disagreement_bound`).
NO_DISAGREEMENT = "no-disagreement bound"

#: `Interval.method` of Donner and Eliasziw's goodness-of-fit interval (`_gof_interval`).
GOF = "goodness-of-fit"
#: `Interval.method` of the score interval of kappa on three or more labels (`_score_interval`).
SCORE = "score"
#: `Interval.method` of the score interval of the weighted kappas and ordered alphas on three or
#: more ordered labels (`_weighted_score_interval`).
WEIGHTED_SCORE = "weighted score"
#: `Interval.method` of quadratic kappa and interval alpha on three or more ordered labels: the
#: union of the weighted score interval and the posterior interval (`_posterior_interval`).
WEIGHTED_SCORE_POSTERIOR = "weighted score + posterior"

#: What each `Interval.method` of an agreement interval is, in words (reports name the interval
#: actually used from this: the workbench's agreement page, `assay certify`).
INTERVAL_METHODS: dict[str, str] = {
    GOF: "Donner-Eliasziw goodness-of-fit interval (kappa and alpha on a binary scale)",
    SCORE: (
        "score interval under the common-correlation model (kappa and nominal alpha on three "
        "or more labels)"
    ),
    WEIGHTED_SCORE: (
        "score interval of the weighted kappa under the common-correlation model (weighted "
        "kappas and ordered alphas on three or more ordered labels)"
    ),
    WEIGHTED_SCORE_POSTERIOR: (
        "union of the weighted score interval and the Dirichlet(1/2) posterior interval of the "
        "two raters' table (quadratic kappa and interval alpha on three or more ordered labels)"
    ),
    JACKKNIFE: "jackknife interval over items on the Fisher-z scale",
    DELTA: "delta-method interval on the Fisher-z scale",
    NO_DISAGREEMENT: "Clopper-Pearson bound of the disagreement rate (the raters never disagree)",
    BCA: "BCa bootstrap over items",
    PERCENTILE: "percentile bootstrap over items",
}


def describe_intervals(methods: Iterable[str]) -> str:
    """The intervals named by their `Interval.method`s, in a fixed order: "goodness-of-fit
    interval (...); jackknife ..." (methods without a description are named as they are)."""
    order = list(INTERVAL_METHODS)
    seen = sorted(
        {m for m in methods if m},
        key=lambda m: (order.index(m) if m in order else len(order), m),
    )
    return "; ".join(INTERVAL_METHODS.get(m, m) for m in seen)


#: The intervals `agreement` gives: see its docstring.
IntervalMethod = Literal["gof", "jackknife", "delta", "bca", "percentile"]

#: The chance-corrected coefficients that, on a binary scale, estimate the intraclass kappa of
#: the common-correlation model (Cohen's kappa, weighted or not, equals the unweighted one with
#: two categories; every level of alpha equals the nominal one): they get the goodness-of-fit
#: interval under ``interval="gof"``.
_INTRACLASS = frozenset(
    {
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "fleiss_kappa",
        "alpha_nominal",
        "alpha_ordinal",
        "alpha_interval",
        "alpha_ratio",
    }
)

#: On a scale of three or more labels, the coefficients that estimate the common-correlation
#: model's kappa: they get the score interval (`_score_interval`) under ``interval="gof"``. The
#: weighted kappas and the ordered alphas (on an ordered scale) get its weighted form
#: (`_weighted_score_interval`, with the weights of `_ordered_weights`).
_UNWEIGHTED = frozenset({"cohen_kappa", "fleiss_kappa", "alpha_nominal"})

#: The squared-distance coefficients: the weighted score interval alone under-covers them on
#: scarce tables when wrong grades are near misses and a far grade is rare (0.853 at n = 30;
#: `bench/bench_agreement_coverage.py --categories 3 --numeric --adjacent`): their population
#: value rests on a far grade the sample often lacks. They get the union with the posterior
#: interval (`_posterior_interval`, `bench/bench_agreement_nearmiss.py`).
_SQUARED = frozenset({"cohen_kappa_quadratic", "alpha_interval"})
#: Draws of the posterior interval (`_posterior_interval`): its ends move by about 0.01 between
#: seeds at n = 30.
POSTERIOR_DRAWS = 4000

#: Step of the numerical derivative along one item's features, in units of that item.
_STEP = 1e-2


def _influence(
    lay: _Layout, design: _Design, positive: int | None
) -> tuple[dict[str, FloatArray], list[dict[str, FloatArray]]]:
    """Every statistic's influence value per item: ``u_i = n d/dt g(S + t f_i)`` at t = 0.

    g is the statistic as a function of the feature sums S; the derivative is the five-point
    central difference, error of order (step / n)^4 (about 1e-12 for these rational functions;
    a small step would let rounding differ with the order of the raters). The linearized variance
    ``sum (u_i - mean u)^2 / (n (n - 1))`` is the delta-method variance over items: for Fleiss'
    kappa, Gwet's AC1 and Brennan-Prediger it is Gwet's (2014) variance, which irrCAC reports
    (equal to 1e-9 on complete data, tested); any registered coefficient gets one for free.
    """
    total = lay.f.sum(axis=0)
    n = lay.f.shape[0]
    weights = ((-2.0, 1.0), (-1.0, -8.0), (1.0, 8.0), (2.0, -1.0))
    stencil = np.concatenate([total + t * _STEP * lay.f for t, _ in weights])
    values, pair_values = _stats_from_sums(stencil, lay, design, positive)
    scale = n / (12.0 * _STEP)

    def derivative(v: FloatArray) -> FloatArray:
        parts = v.reshape(len(weights), n)
        return np.asarray(sum(c * parts[j] for j, (_, c) in enumerate(weights)) * scale)

    return (
        {key: derivative(v) for key, v in values.items()},
        [{key: derivative(v) for key, v in ps.items()} for ps in pair_values],
    )


def _linearized_se(influence: FloatArray) -> float | None:
    """The delta-method standard error from influence values (None when any is undefined)."""
    n = influence.size
    if n < 2 or not np.all(np.isfinite(influence)):
        return None
    return float(np.sqrt(((influence - influence.mean()) ** 2).sum() / (n * (n - 1.0))))


def _no_disagreement_bound(
    design: _Design, lay: _Layout, positive: int | None, confidence: float
) -> tuple[dict[str, FloatArray], list[dict[str, FloatArray]], str] | None:
    """Every statistic at the worst disagreement rate the data allow, when there is none.

    When no item's labels differ the jackknife and delta variances are 0, and a bootstrap
    resample never disagrees either: no interval. But 0 disagreements out of n items only
    bounds the rate of disagreement by Clopper-Pearson's ``r = 1 - ((1 - c) / 2)^(1 / n)``
    (one-sided, c the confidence). The statistics are evaluated on the data plus ``n r / (1 - r)``
    items on which the first rater gives the most common label and every other rater the next
    most common one: their values are one end of the interval, the estimate the other (for raw
    agreement with two raters, exactly Clopper-Pearson's lower bound). None when some labels do
    differ, fewer than two labels were used, or no item has two labels.
    """
    codes = design.codes
    multi = (codes >= 0).sum(axis=1) >= 2
    n_multi = int(multi.sum())
    k = len(design.categories)
    if n_multi == 0 or k < 2:
        return None
    rows = codes[multi]
    first = np.where(rows >= 0, rows, -1).max(axis=1)
    if np.any((rows >= 0) & (rows != first[:, None])):
        return None
    order = np.argsort(-np.bincount(codes[codes >= 0], minlength=k), kind="stable")
    pseudo = np.full((1, codes.shape[1]), int(order[1]), dtype=np.int64)
    pseudo[0, 0] = int(order[0])
    rate = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / n_multi)
    weight = n_multi * rate / (1.0 - rate)
    extra = _features(pseudo, lay.k, pairs=bool(lay.pairs)).f[0]
    stats, pair_stats = _stats_from_sums(
        (lay.f.sum(axis=0) + weight * extra)[None], lay, design, positive
    )
    note = (
        f"the raters never disagree on these {n_multi} items: the other end is the value with "
        f"{weight:.1f} more items in disagreement (the Clopper-Pearson bound of the "
        "disagreement rate)"
    )
    return stats, pair_stats, note


def _jackknife_se(jack: FloatArray) -> float | None:
    """The jackknife standard error from the leave-one-item-out values (None when any is
    undefined: an item whose removal leaves the statistic undefined)."""
    n = jack.size
    if n < 2 or not np.all(np.isfinite(jack)):
        return None
    return float(np.sqrt((n - 1.0) / n * ((jack - jack.mean()) ** 2).sum()))


def _z_interval(
    value: float,
    se: float | None,
    n: int,
    bounds: tuple[float, float] | None,
    confidence: float,
) -> tuple[float, float] | None:
    """``value -+ t se`` on the Fisher-z scale of ``bounds``.

    With bounds (lo, hi) the value is mapped to x in (-1, 1) and the interval built on atanh(x)
    with the standard error carried by the derivative, then mapped back: it stays inside the
    range and is asymmetric near its ends, where a kappa's sampling distribution is skewed
    (for a share in [0, 1], half the logit). The quantile is Student's t with n - 1 degrees of
    freedom (n items). None where it is undefined: zero or undefined variance (no
    disagreement, an item whose removal leaves the statistic undefined) or the value at an end
    of its range.
    """
    if se is None or not se > 0.0 or n < 2:
        return None
    q = float(stdtrit(n - 1, 0.5 + confidence / 2.0))
    if bounds is None:
        return value - q * se, value + q * se
    lo, hi = bounds
    half = (hi - lo) / 2.0
    x = (value - lo) / half - 1.0
    if not -1.0 < x < 1.0:
        return None
    z, sz = math.atanh(x), se / half / (1.0 - x * x)
    return (
        lo + half * (math.tanh(z - q * sz) + 1.0),
        lo + half * (math.tanh(z + q * sz) + 1.0),
    )


def _bisect_edge(f: Callable[[float], float], outside: float, inside: float) -> float:
    """The edge of ``{x: f(x) <= 0}`` between `inside` (in it) and `outside` (maybe not): where
    f(outside) <= 0, `outside` itself; else bisection to 1e-12 (f may be infinite outside)."""
    if f(outside) <= 0.0:
        return outside
    a, b = outside, inside
    while abs(a - b) > 1e-12:
        mid = (a + b) / 2.0
        if f(mid) <= 0.0:
            b = mid
        else:
            a = mid
    return b


def _gof_interval(
    n00: float, nd: float, n11: float, confidence: float, *, t_dof: int | None = None
) -> tuple[float, float] | None:
    """Donner and Eliasziw's (1992) goodness-of-fit interval for the intraclass kappa of a binary
    scale.

    Two raters' labels of n items fall in three cells: both negative (n00), discordant (nd), both
    positive (n11). Under the common-correlation model with positive rate pi and kappa k the cell
    probabilities are ``(1 - pi)^2 + k v``, ``2 v (1 - k)``, ``pi^2 + k v`` (``v = pi (1 - pi)``).
    With pi at its estimate ``(2 n11 + nd) / 2n``, the interval is every k whose Pearson
    chi-square of the three cells is at most the critical value: a test inverted with the
    variance at each hypothesised kappa (not at the estimate), which is what keeps it covering
    when the rarer label is seen a handful of times. The critical value is the chi-square(1)
    quantile as published, or with `t_dof` the square of Student's t quantile with that many
    degrees of freedom (F(1, t_dof)), the small-sample version `agreement` uses (n - 1, as the
    jackknife interval's t quantile): on two raters its exact coverage is at least 0.941 over
    the grid of `bench/bench_agreement_exact.py`, the chi-square's 0.918 (at n = 20). Its centre
    is ``1 - nd / (2 n v)`` (Scott's pi, Fleiss' kappa of two raters). The cells may be
    fractional (`_pair_table`). None where pi is 0 or 1 or there are fewer than two items.
    """
    n = n00 + nd + n11
    if n < 2.0:
        return None
    pi = (2.0 * n11 + nd) / (2.0 * n)
    v = pi * (1.0 - pi)
    if not v > 1e-12:
        return None
    if t_dof is None:
        crit = float(ndtri(0.5 + confidence / 2.0)) ** 2
    else:
        crit = float(stdtrit(t_dof, 0.5 + confidence / 2.0)) ** 2
    obs = (n00, nd, n11)

    def excess(k: float) -> float:
        chi = 0.0
        probs = ((1.0 - pi) ** 2 + k * v, 2.0 * v * (1.0 - k), pi * pi + k * v)
        for o, p in zip(obs, probs, strict=True):
            e = n * p
            if e <= 1e-300:
                if o > 0.0:
                    return math.inf
                continue
            chi += (o - e) ** 2 / e
        return chi - crit

    centre = 1.0 - nd / (2.0 * n * v)
    floor = max(-(1.0 - pi) / pi, -pi / (1.0 - pi))
    return _bisect_edge(excess, floor, centre), _bisect_edge(excess, 1.0, centre)


def _model_variance(pi: FloatArray, kappa: float) -> float:
    """n times the large-sample variance of Fleiss' kappa of two raters' table when the labels
    follow the common-correlation model with category rates `pi` and kappa `kappa`: each item's
    pair of labels is (j, j) with probability ``P_jj = pi_j^2 + kappa pi_j (1 - pi_j)`` and (j,
    l), j != l, with ``P_jl = (1 - kappa) pi_j pi_l``. The delta method on that table: with
    ``p_e = sum pi_j^2`` and ``c = 1 - kappa``, the gradient of kappa in cell (j, l) is ``g_jl =
    ([j = l] - c (pi_j + pi_l)) / (1 - p_e)`` and the variance ``sum P g^2 - (sum P g)^2``, here
    summed in closed form from ``S2 = sum pi^2`` and ``S3 = sum pi^3`` (the table's margins are
    pi). On two categories this is Bloch and Kraemer's (1989) variance of the intraclass kappa;
    at kappa 0, Fleiss, Nee and Landis's (1979) null variance (both tested)."""
    s2 = float((pi * pi).sum())
    s3 = float((pi * pi * pi).sum())
    c = 1.0 - kappa
    d = 1.0 - s2
    agree = s2 + kappa * d  # sum P_jj
    mean = (agree - 2.0 * c * s2) / d  # sum P g
    diag_pi = s3 + kappa * (s2 - s3)  # sum_j P_jj pi_j
    both = 2.0 * s3 + 2.0 * (c * s2 * s2 + kappa * s3)  # sum P (pi_j + pi_l)^2
    square = (agree - 4.0 * c * diag_pi + c * c * both) / (d * d)  # sum P g^2
    return max(square - mean * mean, 0.0)


def _score_interval(
    table: FloatArray, confidence: float, *, t_dof: int
) -> tuple[float, float] | None:
    """A score-type interval for Fleiss' kappa on a scale of three or more labels, from two
    raters' table of n items (`_pair_matrix`: cells may be fractional, rows and columns in the
    scale's order).

    Every k with ``(kappa_hat - k)^2 <= t^2 V(pi_hat, k) / n``, where V is `_model_variance` at
    the observed category rates and the hypothesised k (not at the estimate: as in the
    goodness-of-fit interval of a binary scale, this is what keeps it covering when a label is
    seen a handful of times) and t Student's quantile with `t_dof` degrees of freedom. The
    centre is Fleiss' kappa of the symmetrised table (Scott's pi); the range is the model's,
    ``[max_j -pi_j / (1 - pi_j), 1]``, unused categories left out. Coverage in
    docs/agreement.md (`bench/bench_agreement_coverage.py --categories 3`). None where fewer
    than two categories were used or there are fewer than two items.
    """
    n = float(table.sum())
    if n < 2.0:
        return None
    p = table / n
    pi = (p.sum(axis=0) + p.sum(axis=1)) / 2.0
    pi = pi[pi > 1e-12]
    if pi.size < 2:
        return None
    p_e = float((pi * pi).sum())
    centre = (float(np.trace(p)) - p_e) / (1.0 - p_e)
    crit = float(stdtrit(t_dof, 0.5 + confidence / 2.0)) ** 2

    def excess(k: float) -> float:
        return (centre - k) ** 2 - crit * _model_variance(pi, k) / n

    floor = float(np.max(-pi / (1.0 - pi)))
    return _bisect_edge(excess, floor, centre), _bisect_edge(excess, 1.0, centre)


def _weighted_variance(
    p: FloatArray, w: FloatArray, *, margins: Literal["pooled", "own"] = "pooled"
) -> float:
    """n times the large-sample (delta-method) variance of a weighted kappa ``1 - sum(w P) /
    sum(w a b^T)`` of a k x k table of cell probabilities `p` (summing to 1), `w` the symmetric
    disagreement weights (0 on the diagonal).

    ``margins="own"``: a and b are the table's row and column margins, Cohen's weighted kappa,
    and this is Fleiss, Cohen and Everitt's (1969) variance (statsmodels' ``cohens_kappa``
    ``var_kappa`` times n, tested to 1e-12). ``"pooled"``: a = b = the mean of the two margins,
    the weighted form of Scott's pi (Fleiss' kappa of two raters; with w = 1 - I it is
    `_model_variance` on the common-correlation model's table). The gradient in cell (j, l) is
    ``-(w_jl - (1 - kappa) ((w b)_j + (w^T a)_l)) / D_e`` and the variance ``sum P g^2 - (sum P
    g)^2``. NaN where the expected disagreement D_e is 0."""
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    if margins == "pooled":
        rows = cols = (rows + cols) / 2.0
    d_e = float(rows @ w @ cols)
    if not d_e > 1e-15:
        return math.nan
    kappa = 1.0 - float((w * p).sum()) / d_e
    g = -(w - (1.0 - kappa) * ((w @ cols)[:, None] + (w.T @ rows)[None, :])) / d_e
    mean = float((p * g).sum())
    return max(float((p * g * g).sum()) - mean * mean, 0.0)


def _weighted_score_interval(
    table: FloatArray, w: FloatArray, confidence: float, *, t_dof: int
) -> tuple[float, float] | None:
    """A score-type interval for a weighted kappa (or an ordered alpha: a weighted kappa whose
    weights are its distances) on a scale of three or more labels, from two raters' table of n
    items (`_pair_matrix`, cells may be fractional) and the disagreement weights `w`.

    The extension of `_score_interval` to weights: every k with ``(kappa_hat - k)^2 <= t^2
    V(T(k)) / n``, where ``T(k) = pi pi^T + k (diag(pi) - pi pi^T)`` is the common-correlation
    model's table at the observed category rates pi (whose weighted kappa is k, whatever the
    weights) and V `_weighted_variance` with pooled margins, taken at the hypothesised k, not at
    the estimate. With w = 1 - I it is `_score_interval`. The centre is the weighted kappa of
    the pooled table (weighted Scott's pi); the range ``[max_j -pi_j / (1 - pi_j), 1]``, unused
    categories left out. None where fewer than two categories were used, every used pair of
    categories has weight 0, or there are fewer than two items.
    """
    n = float(table.sum())
    if n < 2.0:
        return None
    p = table / n
    pi = (p.sum(axis=0) + p.sum(axis=1)) / 2.0
    used = pi > 1e-12
    if int(used.sum()) < 2:
        return None
    pi, wu = pi[used], w[np.ix_(used, used)]
    d_e = float(pi @ wu @ pi)
    if not d_e > 1e-12:
        return None
    centre = 1.0 - float((w * p).sum()) / d_e
    crit = float(stdtrit(t_dof, 0.5 + confidence / 2.0)) ** 2
    # T(k) = A + k B and the gradient g(k) = a0 + k a1 (`_weighted_variance` at T(k), whose
    # kappa is k) are linear in k: the variance sum T g^2 - (sum T g)^2 is a polynomial, summed
    # once here (the brute-force inversion tests write the variance out cell by cell)
    big_a = np.outer(pi, pi)
    big_b = np.diag(pi) - big_a
    u = (wu @ pi)[:, None] + (wu @ pi)[None, :]
    a0, a1 = (u - wu) / d_e, -u / d_e
    s2 = [
        float((big_a * a0 * a0).sum()),
        float((2.0 * big_a * a0 * a1 + big_b * a0 * a0).sum()),
        float((big_a * a1 * a1 + 2.0 * big_b * a0 * a1).sum()),
        float((big_b * a1 * a1).sum()),
    ]
    s1 = [
        float((big_a * a0).sum()),
        float((big_a * a1 + big_b * a0).sum()),
        float((big_b * a1).sum()),
    ]

    def variance(k: float) -> float:
        second = s2[0] + k * (s2[1] + k * (s2[2] + k * s2[3]))
        first = s1[0] + k * (s1[1] + k * s1[2])
        return max(second - first * first, 0.0)

    def excess(k: float) -> float:
        return (centre - k) ** 2 - crit * variance(k) / n

    floor = float(np.max(-pi / (1.0 - pi)))
    return _bisect_edge(excess, floor, centre), _bisect_edge(excess, 1.0, centre)


def _posterior_interval(
    table: FloatArray,
    w: FloatArray,
    confidence: float,
    seed: int,
    *,
    full_scale: bool,
    draws: int = POSTERIOR_DRAWS,
) -> tuple[float, float] | None:
    """The equal-tailed posterior interval of a weighted kappa (pooled margins, the centre of
    `_weighted_score_interval`) under Jeffreys' Dirichlet(1/2) prior on the cells of two raters'
    table (`_pair_matrix`, symmetric, cells may be fractional), from `draws` draws.

    Each item gives an unordered pair of labels, so the cells are the k (k + 1) / 2 pairs {j, l}
    with counts ``n_jj`` and ``n_jl + n_lj``. Each draw is a vector of their probabilities from
    Dirichlet(counts + 1/2) and its weighted kappa ``1 - sum(w P) / (pi^T w pi)``, pi its
    margins; the interval is the draws' ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
    quantiles. The half count in every cell gives weight to pairs the table lacks: with squared
    distances a far grade weighs four times a near one, and the population's coefficient rests
    on it where the sample may not show it (near misses with a rare far grade), which an
    interval built on the observed table alone misses (docs/agreement.md). With `full_scale`
    (the scale was given) every category of the scale is drawn, used or not; otherwise the
    categories the table uses. The draws come from `seed` and a hash of the table and weights:
    the same table gives the same interval. None where fewer than two categories are drawn, no
    two of them are apart, or there are fewer than two items.
    """
    if float(table.sum()) < 2.0:
        return None
    keep = (table.sum(axis=0) + table.sum(axis=1) > 1e-12) | full_scale
    t, wk = table[np.ix_(keep, keep)], w[np.ix_(keep, keep)]
    k = t.shape[0]
    if k < 2 or not np.any(wk > 0.0):
        return None
    wk = wk / wk.max()  # the kappa does not change; proportional weights share their draws
    rows, cols = np.triu_indices(k)
    counts = np.where(rows == cols, t[rows, cols], t[rows, cols] + t[cols, rows])
    # each cell's share of the margins (half to each of its two categories off the diagonal)
    share = np.zeros((rows.size, k))
    np.add.at(share, (np.arange(rows.size), rows), 0.5)
    np.add.at(share, (np.arange(rows.size), cols), 0.5)
    # hashed at 1e-9 (and -0 as 0): a table summed in another order of items is the same table
    canonical = np.round(t, 9) + 0.0
    digest = hashlib.blake2b(canonical.tobytes() + wk.tobytes(), digest_size=8).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
    cells = rng.standard_gamma(counts + 0.5, size=(draws, rows.size))
    cells /= cells.sum(axis=1, keepdims=True)
    pi = cells @ share
    kappa = 1.0 - safe_ratio(cells @ wk[rows, cols], ((pi @ wk) * pi).sum(axis=1))
    kappa = kappa[np.isfinite(kappa)]
    if kappa.size < 2:
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(kappa, [tail, 1.0 - tail])
    return float(low), float(high)


def _ordered_weights(
    design: _Design, lay: _Layout, point: dict[str, FloatArray]
) -> dict[str, FloatArray]:
    """The disagreement weights of each weighted kappa and ordered alpha that is defined on these
    data (an ordered scale), for `_weighted_score_interval`: the kappas' category-position weights
    (among the categories used, or the scale given, as `_pair_weights`), the alphas' distances
    (ordinal ones at the data's category counts)."""
    k = lay.k
    total = lay.f.sum(axis=0)
    used = None
    if not design.scale_given:
        counts = total[lay.s_pi][:k]
        used = np.flatnonzero(counts > 0)
    kappa_w = _disagreement_weights(k, used)
    coinc = total[lay.s_coinc].reshape(1, k, k)
    out = {
        "cohen_kappa_linear": kappa_w["cohen_kappa_linear"],
        "cohen_kappa_quadratic": kappa_w["cohen_kappa_quadratic"],
        "alpha_ordinal": _ordinal_delta2(coinc)[0],
    }
    if design.values is not None:
        out["alpha_interval"] = _value_delta2(design.values, "interval")
        out["alpha_ratio"] = _value_delta2(design.values, "ratio")
    return {name: np.ascontiguousarray(w) for name, w in out.items() if np.isfinite(point[name][0])}


def _pair_matrix(codes: NDArray[np.int64], k: int) -> FloatArray:
    """Two raters' k x k table (symmetric) from the labels of every item with m >= 2 labels,
    each item counted once, split over its rater pairs (``c c^T - diag(c)`` over ``m (m -
    1)``, c its label counts): `_pair_table` on any scale."""
    counts = np.zeros((codes.shape[0], k), dtype=np.float64)
    for c in range(k):
        counts[:, c] = (codes == c).sum(axis=1)
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep], m[keep]
    w = counts / (m * (m - 1.0))[:, None]
    return np.asarray(w.T @ counts - np.diag(w.sum(axis=0)), dtype=np.float64)


def _pair_table(codes: NDArray[np.int64]) -> tuple[float, float, float]:
    """The three cells of `_gof_interval` from the labels of a binary scale (codes 0/1, -1
    missing): each item with m >= 2 labels, y of them positive, counts once, split over its
    rater pairs (both negative ``(m - y)(m - y - 1) / m(m - 1)``, discordant ``2 y (m - y) /
    m(m - 1)``, both positive ``y (y - 1) / m(m - 1)``). For two raters this is their table; with
    more, n stays the number of items (not of pairs, which are not independent), so the
    interval is wider than the two-rater one would be on as many pairs."""
    m = (codes >= 0).sum(axis=1).astype(np.float64)
    y = (codes == 1).sum(axis=1).astype(np.float64)
    keep = m >= 2
    m, y = m[keep], y[keep]
    pairs = m * (m - 1.0)
    return (
        float(((m - y) * (m - y - 1.0) / pairs).sum()),
        float((2.0 * y * (m - y) / pairs).sum()),
        float((y * (y - 1.0) / pairs).sum()),
    )


def _resample_sums(
    lay: _Layout, rng: np.random.Generator, n_resamples: int, block: int = 256
) -> FloatArray:
    n = lay.f.shape[0]
    out = np.empty((n_resamples, lay.f.shape[1]), dtype=np.float64)
    p = np.full(n, 1.0 / n)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        w = rng.multinomial(n, p, size=stop - start).astype(np.float64)
        out[start:stop] = w @ lay.f
    return out


def _positive_index(design: _Design, positive: Label | None) -> int | None:
    cats = design.categories
    if len(cats) != 2:
        return None
    if positive is not None:
        return cats.index(positive) if positive in cats else None
    if design.kind == "bool":
        return cats.index(True) if True in cats else None
    if design.kind == "number":
        return 1 if set(map(float, cats)) == {0.0, 1.0} else None
    hits = [i for i, c in enumerate(cats) if str(c).strip().lower() in POSITIVE_WORDS]
    return hits[0] if len(hits) == 1 else None


def agreement(
    records: Sequence[LabelRecord] | Sequence[Mapping[str, Any]],
    *,
    criterion: str | None = None,
    categories: Sequence[Label] | None = None,
    positive: Label | None = None,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    max_disagreements: int | None = None,
    interval: IntervalMethod = "gof",
) -> AgreementResult:
    """Agreement between raters on one criterion, every statistic with a CI over items.

    `records`: `LabelRecord`s or dicts (item, rater, label[, criterion]). With `criterion`, only
    that criterion's records are used; without it, records must all share one criterion (use
    `agreement_by_criterion` otherwise). `categories` fixes the scale and its order (needed for
    ordinal statistics of text labels, and for AC1/PABAK when a category went unused).
    `positive` names the positive label of a binary scale (default: True, 1, or "pass"/"yes"/...).
    `rng`: Generator or seed (None = seed 0). Undefined statistics have value None and a note.
    `interval`: ``"gof"`` (default: on a binary scale, Cohen's and Fleiss' kappa and alpha get
    Donner and Eliasziw's goodness-of-fit interval, `_gof_interval`, with each item counted
    once, `_pair_table`; on three or more labels, unweighted Cohen's and Fleiss' kappa and
    nominal alpha get the score interval of `_score_interval`, items counted once likewise, and
    on three or more ordered labels the weighted kappas and the ordinal, interval and ratio
    alphas its weighted form, `_weighted_score_interval`, quadratic kappa and interval alpha its
    union with the posterior interval of `_posterior_interval`, whose draws are seeded from a
    child of `rng` and the table; every other figure the jackknife),
    ``"jackknife"`` (the jackknife
    variance over items, on the Fisher-z scale of the coefficient's range with a t quantile,
    see `_z_interval`, for every figure), ``"delta"`` (the
    same with the coefficient's linearized variance: Gwet's for Fleiss' kappa and AC1, Fleiss,
    Cohen and Everitt's for Cohen's kappa; narrower, and lower coverage where the rare label is
    scarce); where either is undefined (no variance: no disagreement; an item whose removal
    leaves the statistic undefined; the value at an end of its range) the BCa interval;
    ``"bca"`` (bias-corrected and
    accelerated bootstrap, the acceleration from the leave-one-item-out values, percentile
    where BCa is undefined) or ``"percentile"``; each interval's ``method`` says which was used.
    Their coverage, measured by ``bench/bench_agreement_coverage.py`` (and exactly for two
    raters by ``bench/bench_agreement_exact.py``), is in docs/agreement.md; where the interval
    used under-covers on tables with the rare label seen on a handful of items (every method
    but the default's goodness-of-fit, score and weighted score intervals) a message says so.

    Disagreements are listed for adjudication, widest spread first on ordered scales, then by
    item id (string order): deterministic.
    """
    check_confidence(confidence, n_resamples)
    recs = _as_records(records)
    crits = {r.criterion for r in recs}
    if criterion is not None:
        recs = [r for r in recs if r.criterion == criterion]
    elif len(crits) > 1:
        raise StatsInputError(
            "criterion",
            f"labels carry {len(crits)} criteria: choose one, or use agreement_by_criterion",
        )
    else:
        criterion = next(iter(crits)) if crits else None
    design = _design(recs, categories)
    gen = make_rng(rng)
    k = len(design.categories)
    lay = _features(design.codes, max(k, 1))
    if positive is not None and positive not in design.categories:
        raise StatsInputError(
            "positive", f"{positive!r} is not among the labels {design.categories}"
        )
    pos = _positive_index(design, positive)
    n_items = len(design.items)
    n_multi = int(((design.codes >= 0).sum(axis=1) >= 2).sum())
    messages: list[str] = []

    point_stats, point_pairs = _stats_from_sums(lay.f.sum(axis=0, keepdims=True), lay, design, pos)
    if n_items:
        boot_sums = _resample_sums(lay, gen, n_resamples)
        boot_stats, boot_pairs = _stats_from_sums(boot_sums, lay, design, pos)
        # leave-one-item-out sums, for the BCa acceleration
        jack_stats, jack_pairs = _stats_from_sums(lay.f.sum(axis=0) - lay.f, lay, design, pos)
        if interval == DELTA:
            infl_stats, infl_pairs = _influence(lay, design, pos)
        else:
            infl_stats, infl_pairs = jack_stats, jack_pairs  # not read
        no_dis = _no_disagreement_bound(design, lay, pos, confidence)
    else:
        boot_stats = {key: np.full(0, np.nan) for key in point_stats}
        boot_pairs = [{key: np.full(0, np.nan) for key in ps} for ps in point_pairs]
        jack_stats, jack_pairs = boot_stats, boot_pairs
        infl_stats, infl_pairs = boot_stats, boot_pairs
        no_dis = None

    # one interval per table (the kappas and alphas of a binary scale share it): the three
    # cells of a binary scale (goodness-of-fit) or the k x k cells of a longer one (score)
    gof_memo: dict[tuple[tuple[float, ...], bytes], tuple[float, float] | None] = {}
    # quadratic kappa and interval alpha add the posterior interval, its draws seeded from the
    # caller's generator (a child: the bootstrap's stream is left as it was) and the table
    post_memo: dict[tuple[tuple[float, ...], bytes], tuple[float, float] | None] = {}
    post_seed = int(gen.spawn(1)[0].integers(2**63))

    def est(
        name: str,
        point: FloatArray,
        reps: FloatArray,
        why: str,
        jack: FloatArray,
        infl: FloatArray,
        bounds: tuple[float, float] | None,
        worst: FloatArray | None,
        table: tuple[float, ...] | None = None,
        weights: FloatArray | None = None,
    ) -> Interval:
        v = clean(float(point[0]))
        if v is None:
            return undefined(f"undefined: {why}", level=confidence, method=interval)
        if interval == "percentile":
            low, high, note = percentile_interval(reps, confidence, what=name)
            return Interval(v, low, high, confidence, PERCENTILE, note)
        if interval == "gof" and table is not None:
            key = (table, b"" if weights is None else weights.tobytes())
            if key not in gof_memo:
                dof = max(round(sum(table)) - 1, 1)
                if len(table) == 3:
                    gof_memo[key] = _gof_interval(*table, confidence, t_dof=dof)
                elif weights is None:
                    gof_memo[key] = _score_interval(
                        np.reshape(table, (k, k)), confidence, t_dof=dof
                    )
                else:
                    gof_memo[key] = _weighted_score_interval(
                        np.reshape(table, (k, k)), weights, confidence, t_dof=dof
                    )
            gof = gof_memo[key]
            if gof is not None:
                # centred on the intraclass kappa (weighted: the pooled table's): Cohen's kappa
                # and alpha differ from it by a marginal-homogeneity term and a small-sample
                # factor, so their value is kept inside
                method = GOF if len(table) == 3 else SCORE if weights is None else WEIGHTED_SCORE
                low, high = min(gof[0], v), max(gof[1], v)
                if weights is not None and name in _SQUARED:
                    # quadratic kappa and interval alpha weigh alike up to a factor: one draw
                    scaled = weights / max(float(weights.max()), 1e-300)
                    post_key = (table, scaled.tobytes())
                    if post_key not in post_memo:
                        post_memo[post_key] = _posterior_interval(
                            np.reshape(table, (k, k)),
                            scaled,
                            confidence,
                            post_seed,
                            full_scale=design.scale_given,
                        )
                    post = post_memo[post_key]
                    if post is not None:
                        method = WEIGHTED_SCORE_POSTERIOR
                        low, high = min(low, post[0]), max(high, post[1])
                return Interval(v, low, high, confidence, method, None)
        if interval in (JACKKNIFE, DELTA, "gof"):
            se = _linearized_se(infl) if interval == DELTA else _jackknife_se(jack)
            z = _z_interval(v, se, jack.size, bounds, confidence)
            if z is not None:
                method = DELTA if interval == DELTA else JACKKNIFE
                return Interval(v, z[0], z[1], confidence, method, None)
            other = None if worst is None or no_dis is None else clean(float(worst[0]))
            if other is not None and other != v and no_dis is not None:
                low, high = min(other, v), max(other, v)
                return Interval(v, low, high, confidence, NO_DISAGREEMENT, no_dis[2])
        low, high, note, used = bca_or_percentile(reps, v, jack, confidence, what=name)
        return Interval(v, low, high, confidence, used, note)

    binary = k == 2 and n_multi > 0
    longer = k > 2 and n_multi > 0
    table: tuple[float, ...] | None = None
    if binary:
        table = _pair_table(design.codes)
    elif longer:
        table = tuple(_pair_matrix(design.codes, k).ravel().tolist())
    model_based = _INTRACLASS if binary else _UNWEIGHTED
    # on an ordered scale of three or more labels, the weighted kappas and the ordered alphas get
    # the weighted score interval, with their disagreement weights at the data
    ordered_weights = (
        _ordered_weights(design, lay, point_stats) if longer and design.ordered else {}
    )
    statistics: dict[str, Interval] = {}
    for name in STATISTICS:
        statistics[name] = est(
            name,
            point_stats[name],
            boot_stats[name],
            _why(name, design, pos, k),
            jack_stats[name],
            infl_stats[name],
            COEFFICIENTS[name].bounds,
            None if no_dis is None else no_dis[0][name],
            table if name in model_based or name in ordered_weights else None,
            ordered_weights.get(name),
        )
    if len(design.raters) > 2:
        for name in ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"):
            e = statistics[name]
            if e.value is not None:
                note = f"mean of pairwise Cohen's kappas over {len(lay.pairs)} rater pairs (Light's kappa)"
                statistics[name] = replace(e, note="; ".join(x for x in (note, e.note) if x))
    specific = {
        str(c): est(
            f"specific agreement on {c!r}",
            point_stats[f"specific:{i}"],
            boot_stats[f"specific:{i}"],
            f"no {c!r} label on items with two or more labels",
            jack_stats[f"specific:{i}"],
            infl_stats[f"specific:{i}"],
            _SHARE,
            None if no_dis is None else no_dis[0][f"specific:{i}"],
        )
        for i, c in enumerate(design.categories)
    }
    pairs: list[PairAgreement] = []
    total = lay.f.sum(axis=0) if binary or longer else None
    all_pair_weights = _pair_weights(lay, design)
    for p, (a, b) in enumerate(lay.pairs):
        n_p = int(point_pairs[p]["n"][0])
        if n_p == 0:
            continue
        pair_table: tuple[float, ...] | None = None
        if total is not None:
            t = total[lay.s_pair(p)].reshape(lay.k, lay.k)
            if binary:
                pair_table = (float(t[0, 0]), float(t[0, 1] + t[1, 0]), float(t[1, 1]))
            else:
                pair_table = tuple(((t + t.T) / 2.0).ravel().tolist())
        vals = {
            name: est(
                name,
                point_pairs[p][name],
                boot_pairs[p][name],
                _why(name, design, pos, k),
                jack_pairs[p][name],
                infl_pairs[p][name],
                _SHARE if name == "raw_agreement" else _KAPPA,
                None if no_dis is None else no_dis[1][p][name],
                pair_table if name in model_based or name in ordered_weights else None,
                all_pair_weights[p][name] if name in ordered_weights else None,
            )
            for name in _PAIR_STATS[1:]
        }
        pairs.append(PairAgreement(design.raters[a], design.raters[b], n_p, **vals))

    disagreements = _disagreements(design)
    if max_disagreements is not None:
        disagreements = disagreements[:max_disagreements]

    # messages: degenerate cases and the prevalence paradox
    if n_items == 0:
        messages.append("no labels: nothing to measure")
    elif n_multi == 0:
        messages.append(
            "every item has a single label (one rater per item): agreement is undefined; "
            "have a second expert label at least some items blind"
        )
    if k == 1:
        messages.append(
            f"every label is {design.categories[0]!r}: raw agreement is "
            f"{statistics['raw_agreement'].fmt()}, but chance-corrected coefficients are undefined "
            "(no variation to correct for chance); pass `categories` to name the full scale"
        )
    if interval != "gof":
        scarce = _scarce_message(design)
    else:
        # the goodness-of-fit and score intervals cover on scarce tables; a weighted kappa or
        # ordered alpha whose weighted score interval is undefined falls back on the jackknife,
        # which does not (docs/agreement.md)
        left = [STATISTICS[n] for n in ordered_weights if statistics[n].method == JACKKNIFE]
        scarce = _scarce_message(design, " and ".join(left)) if left else None
    if scarce:
        messages.append(scarce)
    paradox = _paradox_message(statistics, design, pos, len(design.raters))
    if paradox:
        messages.append(paradox)
    return AgreementResult(
        criterion=criterion,
        n_items=n_items,
        n_items_multi=n_multi,
        n_ratings=int((design.codes >= 0).sum()),
        raters=list(design.raters),
        categories=list(design.categories),
        label_kind=design.kind,
        ordered=design.ordered,
        positive=design.categories[pos] if pos is not None else None,
        statistics=statistics,
        specific=specific,
        pairs=pairs,
        disagreements=disagreements,
        messages=messages,
        confidence=confidence,
        n_resamples=n_resamples,
    )


def _scarce_message(design: _Design, what: str = "kappa and alpha") -> str | None:
    """The warning for tables on which the interval-over-items methods of a chance-corrected
    coefficient under-cover (`SCARCE_DISAGREEMENTS`, `SCARCE_RARE_LABELS`); None otherwise.
    Under the default interval it is given only for a weighted kappa or ordered alpha left on the
    jackknife (`what` names them; its weighted score interval undefined): the goodness-of-fit
    (binary scale), score and weighted score (longer scales; with the posterior interval for
    quadratic kappa and interval alpha) intervals cover there."""
    codes = design.codes[(design.codes >= 0).sum(axis=1) >= 2]
    k = len(design.categories)
    if codes.shape[0] == 0 or k < 2:
        return None
    rated = codes >= 0
    first = np.where(rated, codes, -1).max(axis=1)
    n_dis = int((rated & (codes != first[:, None])).any(axis=1).sum())
    shares = np.bincount(codes[rated], minlength=k)
    rare = int(shares.min()) if k == 2 else None
    why = []
    if n_dis < SCARCE_DISAGREEMENTS:
        why.append(f"the raters disagree on {n_dis} item(s)")
    if rare is not None and rare < SCARCE_RARE_LABELS:
        why.append(
            f"the rarer label {design.categories[int(shares.argmin())]!r} was given {rare} time(s)"
        )
    if not why:
        return None
    return (
        f"few disagreements or rare labels ({' and '.join(why)}, on {codes.shape[0]} items): "
        f"the intervals of {what} are less sure than they look; on such tables they "
        "covered the true value as little as 74% of the time in simulation, not 95% "
        "(docs/agreement.md); label more items, or more of the rare class"
    )


def _paradox_message(
    statistics: dict[str, Interval],
    design: _Design,
    pos: int | None,
    n_raters: int,
) -> str | None:
    raw = statistics["raw_agreement"].value
    key = "cohen_kappa" if n_raters == 2 else "fleiss_kappa"
    kappa = statistics[key].value
    if raw is None or kappa is None or raw < PARADOX_RAW or kappa >= PARADOX_KAPPA:
        return None
    codes = design.codes[design.codes >= 0]
    shares = np.bincount(codes, minlength=len(design.categories)) / max(codes.size, 1)
    top = int(np.argmax(shares))
    # chance agreement implied by kappa = (po - pe) / (1 - pe)  =>  pe = (po - kappa) / (1 - kappa)
    pe = (raw - kappa) / (1.0 - kappa)
    name = STATISTICS[key]
    parts = [
        f"prevalence paradox: raw agreement is high ({raw:.2f}) but {name} is low ({kappa:.2f}). "
        f"One label dominates ({design.categories[top]!r} is {shares[top]:.0%} of all labels), so "
        f"the agreement expected by chance is already {pe:.2f} and kappa measures agreement only "
        f"in the small room above it: a few disagreements on the rare label pull it down."
    ]
    alt = [
        f"{STATISTICS[s]} {statistics[s].value:.2f}"
        for s in ("pabak", "gwet_ac1")
        if statistics[s].value is not None
    ]
    if alt:
        parts.append(
            f"Coefficients that do not tie chance agreement to prevalence read higher: {', '.join(alt)}."
        )
    p_val, n_val = statistics["positive_agreement"].value, statistics["negative_agreement"].value
    if p_val is not None and n_val is not None and pos is not None:
        parts.append(
            f"Report positive and negative agreement side by side: on {design.categories[pos]!r} the "
            f"raters agree {p_val:.2f}, on {design.categories[1 - pos]!r} only {n_val:.2f}; "
            "the rare class is where the labels need work (see the items to adjudicate)."
        )
    else:
        parts.append(
            "Look at specific agreement per category: the rare class is where the labels disagree."
        )
    return " ".join(parts)


def _disagreements(design: _Design) -> list[Disagreement]:
    out: list[tuple[float, str, Disagreement]] = []
    for i, item in enumerate(design.items):
        row = design.codes[i]
        got = row[row >= 0]
        if got.size < 2 or np.all(got == got[0]):
            continue
        labels = {
            design.raters[r]: design.categories[int(row[r])] for r in np.flatnonzero(row >= 0)
        }
        spread = float(got.max() - got.min()) if design.ordered else None
        out.append((-(spread or 0.0), item, Disagreement(item, labels, spread)))
    out.sort(key=lambda t: (t[0], t[1]))
    return [d for _, _, d in out]


def _as_records(records: Sequence[LabelRecord] | Sequence[Mapping[str, Any]]) -> list[LabelRecord]:
    out: list[LabelRecord] = []
    rows: list[tuple[int, Mapping[str, Any]]] = []
    for pos, r in enumerate(records, start=1):
        if isinstance(r, LabelRecord):
            out.append(r)
        elif isinstance(r, Mapping):
            rows.append((pos, r))
        else:
            raise StatsInputError(
                None, f"expected a label record, got {type(r).__name__}", line=pos
            )
    if rows and out:
        raise StatsInputError(None, "mix of LabelRecord objects and dicts")
    return out or parse_labels(rows)


def agreement_by_criterion(
    records: Sequence[LabelRecord] | Sequence[Mapping[str, Any]],
    *,
    categories: Sequence[Label] | None = None,
    positive: Label | None = None,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    max_disagreements: int | None = None,
) -> dict[str | None, AgreementResult]:
    """`agreement` for each criterion present (records without one under None), in sorted order.

    One Generator is drawn from criterion after criterion, so results are reproducible.
    """
    recs = _as_records(records)
    gen = make_rng(rng)
    crits = sorted({r.criterion for r in recs}, key=lambda c: (c is not None, c or ""))
    return {
        c: agreement(
            [r for r in recs if r.criterion == c],
            criterion=c,
            categories=categories,
            positive=positive,
            rng=gen,
            n_resamples=n_resamples,
            confidence=confidence,
            max_disagreements=max_disagreements,
        )
        for c in crits
    }


# --------------------------------------------------------------------------------------------
# The workbench panel
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgreementPanel:
    """Agreement per criterion (all raters) and per annotator pair, ready to render."""

    criteria: dict[str, AgreementResult]

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for name, res in self.criteria.items():
            rows.append(
                {
                    "criterion": name,
                    "n_items": res.n_items,
                    "n_items_multi": res.n_items_multi,
                    "raters": res.raters,
                    "headline": _headline(res),
                    "statistics": {k: v.to_dict() for k, v in res.statistics.items()},
                    "pairs": [p.to_dict() for p in res.pairs],
                    "n_disagreements": len(res.disagreements),
                    "disagreements": [d.to_dict() for d in res.disagreements],
                    "messages": res.messages,
                }
            )
        return {"criteria": rows}


def _headline(res: AgreementResult) -> dict[str, Any]:
    """The one coefficient to show first: Cohen's kappa for two raters, else Krippendorff's alpha."""
    key = "cohen_kappa" if len(res.raters) == 2 else "alpha_nominal"
    if res.ordered and len(res.categories) > 2:
        key = "cohen_kappa_quadratic" if len(res.raters) == 2 else "alpha_ordinal"
    return {"statistic": key, "name": STATISTICS[key], **res.statistics[key].to_dict()}


def agreement_panel(
    labels: Sequence[Mapping[str, Any]] | Sequence[LabelRecord],
    *,
    criterion_key: str = "criterion",
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    max_disagreements: int | None = 50,
) -> AgreementPanel:
    """Agreement per criterion and per annotator pair with CIs, for the workbench.

    `labels`: dicts with item, rater, label and the criterion under `criterion_key` (missing or
    None = "(all)"), or `LabelRecord`s. Returns a panel whose `to_dict()` is JSON-ready.
    """
    if all(isinstance(r, LabelRecord) for r in labels):
        recs = [r for r in labels if isinstance(r, LabelRecord)]
    else:
        rows = []
        for r in labels:
            if not isinstance(r, Mapping):
                continue
            row = {k: r.get(k) for k in ("item", "rater", "label") if k in r}
            row["criterion"] = r.get(criterion_key)
            rows.append(row)
        recs = parse_labels(rows)
    by = agreement_by_criterion(
        recs,
        rng=rng,
        n_resamples=n_resamples,
        confidence=confidence,
        max_disagreements=max_disagreements,
    )
    return AgreementPanel({("(all)" if c is None else c): res for c, res in by.items()})


# --------------------------------------------------------------------------------------------
# Point-value helpers over plain arrays (no bootstrap)
# --------------------------------------------------------------------------------------------


def _matrix_records(reliability: Sequence[Sequence[Any]] | NDArray[Any]) -> list[LabelRecord]:
    """Records from a raters x items matrix; None or NaN = missing."""
    recs: list[LabelRecord] = []
    for r, row in enumerate(reliability):
        for i, v in enumerate(row):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            if isinstance(v, np.generic):
                v = v.item()
            recs.append(LabelRecord(str(i), f"r{r:04d}", v))
    return recs


def _numeric_design(
    reliability: Sequence[Sequence[Any]] | NDArray[Any], categories: Sequence[Label] | None
) -> _Design | None:
    """Fast path for a numeric raters x items matrix (NaN = missing); None when not numeric."""
    if categories is not None:
        return None
    try:
        arr = np.asarray(reliability, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2 or np.asarray(reliability).dtype.kind not in "iuf":
        return None
    data = arr.T  # items x raters
    data = data[~np.all(np.isnan(data), axis=1)]  # items nobody rated carry no information
    present = ~np.isnan(data)
    values = np.unique(data[present])
    codes = np.full(data.shape, -1, dtype=np.int64)
    codes[present] = np.searchsorted(values, data[present])
    cats: list[Label] = [int(v) if float(v).is_integer() else float(v) for v in values]
    return _Design(
        items=[str(i) for i in range(data.shape[0])],
        raters=[f"r{r:04d}" for r in range(data.shape[1])],
        categories=cats,
        codes=codes,
        kind="number",
        ordered=True,
        values=values.astype(np.float64),
    )


def _point(
    reliability: Sequence[Sequence[Any]] | NDArray[Any],
    name: str,
    categories: Sequence[Label] | None = None,
) -> float | None:
    design = _numeric_design(reliability, categories)
    if design is None:
        design = _design(_matrix_records(reliability), categories)
    k = max(len(design.categories), 1)
    lay = _features(design.codes, k, pairs=name.startswith("cohen_kappa"))
    stats, _ = _stats_from_sums(lay.f.sum(axis=0, keepdims=True), lay, design, None)
    return clean(float(stats[name][0]))


def _coincidences(codes: NDArray[np.int64], k: int) -> FloatArray:
    """Krippendorff's coincidence matrix: ``sum_i (n_ic n_ik - [c = k] n_ic) / (m_i - 1)``.

    Time and memory are linear in items x raters (one pass to count, one k x k product).
    """
    n_items = codes.shape[0]
    ok = codes >= 0
    rows = np.nonzero(ok)[0]
    flat = np.bincount(rows * k + codes[ok], minlength=n_items * k)
    counts = flat.reshape(n_items, k).astype(np.float64)
    m = counts.sum(axis=1)
    multi = m >= 2
    c = counts[multi]
    weighted = c / (m[multi] - 1.0)[:, None]
    o = weighted.T @ c
    o[np.arange(k), np.arange(k)] -= weighted.sum(axis=0)
    return np.asarray(o, dtype=np.float64)


def cohen_kappa(
    rater_a: Sequence[Any],
    rater_b: Sequence[Any],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[Label] | None = None,
) -> float | None:
    """Cohen's kappa of two raters (None/NaN = missing; pairs with a missing label are skipped).

    Weighted kappa uses category positions (|i - j| or (i - j)^2 over the sorted categories, or
    `categories` in the order given), as sklearn's `cohen_kappa_score` does. None when undefined.
    """
    name = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    return _point([list(rater_a), list(rater_b)], name, categories)


def fleiss_kappa(
    reliability: Sequence[Sequence[Any]] | NDArray[Any],
    *,
    categories: Sequence[Label] | None = None,
) -> float | None:
    """Fleiss' kappa of a raters x items matrix (None/NaN = missing, Gwet's formulation)."""
    return _point(reliability, "fleiss_kappa", categories)


def gwet_ac1(
    reliability: Sequence[Sequence[Any]] | NDArray[Any],
    *,
    categories: Sequence[Label] | None = None,
) -> float | None:
    """Gwet's AC1 of a raters x items matrix (None/NaN = missing)."""
    return _point(reliability, "gwet_ac1", categories)


def krippendorff_alpha(
    reliability: Sequence[Sequence[Any]] | NDArray[Any],
    *,
    level: Level = "nominal",
    categories: Sequence[Label] | None = None,
) -> float | None:
    """Krippendorff's alpha of a raters x items matrix (None/NaN = missing) via coincidences.

    Matches the `krippendorff` package to 1e-9 at every level; time and memory are linear in
    items x raters (`bench/bench_krippendorff.py` times it against the package).
    """
    design = _numeric_design(reliability, categories)
    if design is None:
        design = _design(_matrix_records(reliability), categories)
    k = max(len(design.categories), 1)
    o = _coincidences(design.codes, k)[None]
    if level == "nominal":
        delta2 = (1.0 - np.eye(k))[None]
    elif level == "ordinal":
        if not design.ordered:
            return None
        delta2 = _ordinal_delta2(o)
    else:
        if design.values is None:
            return None
        delta2 = _value_delta2(design.values, level)[None]
    return clean(float(_alpha(o, delta2)[0]))
