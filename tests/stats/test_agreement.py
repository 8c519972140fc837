"""Worked figures, degenerate cases, the bootstrap and input handling of assay.stats.agreement."""

from __future__ import annotations

import json
import math
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.stats import agreement as ag
from assay.stats._errors import StatsInputError
from assay.stats.agreement import (
    STATISTICS,
    agreement,
    agreement_by_criterion,
    agreement_panel,
)


def two_raters(both_pass: int, a_only: int, b_only: int, both_fail: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cells = [
        ((True, True), both_pass),
        ((True, False), a_only),
        ((False, True), b_only),
        ((False, False), both_fail),
    ]
    i = 0
    for (a, b), count in cells:
        for _ in range(count):
            rows += [
                {"item": f"i{i:03d}", "rater": "A", "label": a},
                {"item": f"i{i:03d}", "rater": "B", "label": b},
            ]
            i += 1
    return rows


def test_worked_kappa_057() -> None:
    # A passes 70, B passes 60, both pass 55, both fail 25, of 100
    res = agreement(two_raters(55, 15, 5, 25), n_resamples=200)
    assert round(res.statistics["cohen_kappa"].value or 0, 2) == 0.57
    assert res.statistics["raw_agreement"].value == pytest.approx(0.80)


def test_worked_prevalence_paradox() -> None:
    res = agreement(two_raters(88, 4, 4, 4), n_resamples=200)
    s = {k: round(v.value, 2) for k, v in res.statistics.items() if v.value is not None}
    assert s["raw_agreement"] == 0.92
    assert s["cohen_kappa"] == 0.46
    assert s["pabak"] == 0.84
    assert s["gwet_ac1"] == 0.91
    assert s["positive_agreement"] == 0.96
    assert s["negative_agreement"] == 0.50
    assert res.positive is True
    paradox = [m for m in res.messages if m.startswith("prevalence paradox")]
    assert len(paradox) == 1
    assert "0.92" in paradox[0] and "0.46" in paradox[0] and "PABAK 0.84" in paradox[0]
    assert len(res.disagreements) == 8


def test_no_paradox_message_when_kappa_fine() -> None:
    res = agreement(two_raters(45, 3, 2, 50), n_resamples=50)
    assert not any("paradox" in m for m in res.messages)


RELEVANCE = [  # items x raters A, B, C; relevance 0-3, None = not graded (gaps)
    [3, 3, 2],
    [2, 2, None],
    [0, 1, 0],
    [1, 1, 2],
    [3, 2, 3],
    [0, 0, None],
    [2, 3, 2],
    [1, None, 1],
    [3, 3, 3],
    [0, 1, 1],
    [2, 1, 2],
    [None, 2, 3],
    [1, 0, 1],
    [3, 3, None],
    [2, 2, 1],
    [0, 0, 0],
]


def test_worked_ordinal_alpha_well_above_nominal() -> None:
    recs = [
        {"item": f"q{i:02d}", "rater": r, "label": v}
        for i, row in enumerate(RELEVANCE)
        for r, v in zip("ABC", row, strict=True)
    ]
    res = agreement(recs, n_resamples=300)
    nominal = res.statistics["alpha_nominal"].value
    ordinal = res.statistics["alpha_ordinal"].value
    assert nominal is not None and ordinal is not None
    assert ordinal > nominal + 0.3  # 0.81 vs 0.39: the raters are off by one grade, not random
    matrix = np.array(
        [[np.nan if v is None else v for v in row] for row in RELEVANCE], dtype=float
    ).T
    for level in ("nominal", "ordinal"):
        assert res.statistics[f"alpha_{level}"].value == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement=level), abs=1e-9
        )
    # three raters: Cohen is the mean over the three pairs, each pair reported
    assert len(res.pairs) == 3
    assert "Light" in (res.statistics["cohen_kappa"].note or "")
    pair_mean = np.mean([p.cohen_kappa.value for p in res.pairs])
    assert res.statistics["cohen_kappa"].value == pytest.approx(pair_mean)
    # disagreements: widest spread first, then by item id
    spreads = [d.spread for d in res.disagreements]
    assert spreads == sorted(spreads, reverse=True)


def test_bootstrap_replicate_equals_statistic_on_resampled_items() -> None:
    """The weighted-sum bootstrap gives exactly what recomputing on the resampled items gives."""
    recs = [
        {"item": f"q{i:02d}", "rater": r, "label": v}
        for i, row in enumerate(RELEVANCE)
        for r, v in zip("ABC", row, strict=True)
    ]
    parsed = ag.parse_labels(recs)
    design = ag._design(parsed, None)
    lay = ag._features(design.codes, len(design.categories))
    w = np.random.default_rng(3).multinomial(
        len(design.items), [1 / len(design.items)] * len(design.items)
    )
    rep, _ = ag._stats_from_sums((w @ lay.f)[None], lay, design, None)
    dup = [
        {"item": f"{it}#{c}", "rater": r.rater, "label": r.label}
        for idx, it in enumerate(design.items)
        for c in range(int(w[idx]))
        for r in parsed
        if r.item == it
    ]
    direct = agreement(dup, n_resamples=1, categories=design.categories)
    for name in ("raw_agreement", "fleiss_kappa", "alpha_ordinal", "alpha_interval", "gwet_ac1"):
        assert rep[name][0] == pytest.approx(direct.statistics[name].value, abs=1e-12)


def test_seeded_reproducible_and_intervals_bracket() -> None:
    rows = two_raters(40, 10, 8, 42)
    a = agreement(rows, rng=9, n_resamples=300)
    b = agreement(rows, rng=np.random.default_rng(9), n_resamples=300)
    assert a.to_dict() == b.to_dict()
    # the goodness-of-fit interval (the default) and the jackknife do not depend on the seed;
    # the bootstrap does
    assert agreement(rows, rng=10, n_resamples=300).to_dict() == a.to_dict()
    assert a.statistics["cohen_kappa"].method == "goodness-of-fit"
    assert a.statistics["gwet_ac1"].method == "jackknife"
    boot = agreement(rows, rng=9, n_resamples=300, interval="bca")
    assert boot.to_dict() == agreement(rows, rng=9, n_resamples=300, interval="bca").to_dict()
    assert (
        agreement(rows, rng=10, n_resamples=300, interval="bca").statistics["cohen_kappa"]
        != boot.statistics["cohen_kappa"]
    )
    for e in a.statistics.values():
        if e.value is not None and e.low is not None and e.high is not None:
            assert e.low - 1e-12 <= e.value <= e.high + 1e-12


def test_one_label_only_is_defined_with_message() -> None:
    rows = two_raters(30, 0, 0, 0)
    res = agreement(rows, n_resamples=50)
    assert res.statistics["raw_agreement"].value == 1.0
    for key in ("cohen_kappa", "fleiss_kappa", "alpha_nominal", "gwet_ac1", "pabak"):
        assert res.statistics[key].value is None
        assert (res.statistics[key].note or "").startswith("undefined")
    assert any("every label is True" in m for m in res.messages)
    # naming the scale makes AC1 and PABAK defined (both 1.0)
    named = agreement(rows, n_resamples=50, categories=[False, True])
    assert named.statistics["gwet_ac1"].value == 1.0 and named.statistics["pabak"].value == 1.0


def test_one_rater_per_item_is_defined_with_message() -> None:
    rows = [{"item": f"i{i}", "rater": "AB"[i % 2], "label": i % 3 == 0} for i in range(20)]
    res = agreement(rows, n_resamples=50)
    assert res.n_items_multi == 0
    assert all(v.value is None and v.note for v in res.statistics.values())
    assert any("single label" in m for m in res.messages)
    assert res.pairs == [] and res.disagreements == []


def test_empty_and_missing_labels() -> None:
    res = agreement([], n_resamples=10)
    assert res.n_items == 0 and any("no labels" in m for m in res.messages)
    rows = [*two_raters(10, 2, 2, 10), {"item": "i000", "rater": "C", "label": None}]
    assert agreement(rows, n_resamples=10).raters == ["A", "B"]


def test_text_labels_order_and_positive_word() -> None:
    rows = [
        {"item": r["item"], "rater": r["rater"], "label": "PASS" if r["label"] else "FAIL"}
        for r in two_raters(20, 3, 2, 15)
    ]
    res = agreement(rows, n_resamples=50)
    assert res.positive == "PASS" and res.statistics["positive_agreement"].value is not None
    # two categories need no order: ordinal and weighted statistics equal the nominal ones
    assert res.statistics["alpha_ordinal"].value == pytest.approx(
        res.statistics["alpha_nominal"].value
    )
    assert res.statistics["cohen_kappa_quadratic"].value == pytest.approx(
        res.statistics["cohen_kappa"].value
    )
    assert res.statistics["alpha_interval"].value is None
    assert "not numbers" in (res.statistics["alpha_interval"].note or "")
    # three unordered text categories: no ordinal statistics until an order is given
    three = [dict(r, label="MAYBE") if r["item"] in ("i000", "i001") else r for r in rows]
    res3 = agreement(three, n_resamples=20)
    assert res3.statistics["alpha_ordinal"].value is None
    assert "no order" in (res3.statistics["alpha_ordinal"].note or "")
    ordered = agreement(three, n_resamples=20, categories=["FAIL", "MAYBE", "PASS"])
    assert ordered.statistics["alpha_ordinal"].value is not None
    odd = [dict(r, label={"PASS": "good-ish", "FAIL": "meh"}[r["label"]]) for r in rows]
    unknown = agreement(odd, n_resamples=20)
    assert unknown.statistics["positive_agreement"].value is None
    assert "positive" in (unknown.statistics["positive_agreement"].note or "")
    assert (
        agreement(odd, n_resamples=20, positive="good-ish").statistics["positive_agreement"].value
    )
    with pytest.raises(StatsInputError, match="positive"):
        agreement(odd, positive="PASS")


def test_criteria_separate_and_required_choice() -> None:
    rows = [dict(r, criterion="faithful") for r in two_raters(30, 2, 2, 10)]
    rows += [dict(r, criterion="correct") for r in two_raters(20, 8, 8, 10)]
    with pytest.raises(StatsInputError, match="criteria"):
        agreement(rows)
    by = agreement_by_criterion(rows, n_resamples=50)
    assert list(by) == ["correct", "faithful"]
    assert by["faithful"].n_items == 44 and by["faithful"].criterion == "faithful"
    only = agreement(rows, criterion="correct", n_resamples=50)
    assert only.n_items == 46


def test_panel_per_criterion_and_pair() -> None:
    rows = [
        {"entry_id": f"e{i}", "item": f"e{i}", "rater": r, "label": (i + j) % 4 != 0, "field": c}
        for i in range(30)
        for j, r in enumerate(["ann", "bob", "cyd"])
        for c in ("evidence", "answer")
    ]
    panel = agreement_panel(rows, criterion_key="field", rng=1, n_resamples=100)
    d = panel.to_dict()
    json.dumps(d)  # JSON-ready
    assert [c["criterion"] for c in d["criteria"]] == ["answer", "evidence"]
    first = d["criteria"][0]
    assert len(first["pairs"]) == 3 and first["headline"]["statistic"] == "alpha_nominal"
    assert {p["rater_a"] + p["rater_b"] for p in first["pairs"]} == {"annbob", "anncyd", "bobcyd"}
    assert all(p["cohen_kappa"]["low"] is not None for p in first["pairs"])


def test_parse_errors_name_line_and_field() -> None:
    rows = [
        {"item": "a", "rater": "x", "label": True},
        {"item": "a", "rater": "x", "label": False},
        {"rater": "y", "label": True},
        {"item": "b", "rater": "y", "label": [1]},
    ]
    with pytest.raises(StatsInputError) as exc:
        ag.parse_labels(rows)
    where = {(i.line, i.field) for i in exc.value.issues}
    assert where == {(2, "rater"), (3, "item"), (4, "label")}
    assert (
        str(exc.value).splitlines()[0]
        == "line 2: rater: rater 'x' labelled item 'a' twice (first on line 1)"
    )
    with pytest.raises(StatsInputError, match="line 7: item"):  # (line, row) pairs keep their line
        ag.parse_labels([(7, {"rater": "y", "label": True})])
    mixed = [{"item": "a", "rater": "x", "label": 1}, {"item": "a", "rater": "y", "label": "one"}]
    with pytest.raises(StatsInputError, match="mix kinds"):
        agreement(mixed)
    with pytest.raises(StatsInputError, match="not one of the categories"):
        agreement([{"item": "a", "rater": "x", "label": "maybe"}], categories=["no", "yes"])


labels_strategy = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from("ABC"), st.one_of(st.none(), st.integers(0, 3))),
    max_size=40,
    unique_by=lambda t: (t[0], t[1]),
)


@settings(max_examples=60, deadline=None)
@given(labels_strategy)
def test_never_nan_never_crash_and_bounded(triples: list[tuple[int, str, int | None]]) -> None:
    rows = [{"item": i, "rater": r, "label": v} for i, r, v in triples]
    res = agreement(rows, n_resamples=20)
    for key in STATISTICS:
        e = res.statistics[key]
        assert e.value is None or math.isfinite(e.value)
        if e.value is None:
            assert e.note
        if (
            key in ("raw_agreement", "positive_agreement", "negative_agreement")
            and e.value is not None
        ):
            assert 0.0 <= e.value <= 1.0
        if e.value is not None and key not in ("pabak",):
            assert e.value <= 1.0 + 1e-12


@settings(max_examples=40, deadline=None)
@given(labels_strategy, st.randoms(use_true_random=False))
def test_invariant_to_record_order_and_rater_names(
    triples: list[tuple[int, str, int | None]], rnd: Any
) -> None:
    rows = [{"item": i, "rater": r, "label": v} for i, r, v in triples]
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    renamed = [dict(r, rater={"A": "z", "B": "y", "C": "x"}[r["rater"]]) for r in shuffled]
    a = agreement(rows, n_resamples=5)
    b = agreement(renamed, n_resamples=5)
    for key in STATISTICS:
        ea, eb = a.statistics[key], b.statistics[key]
        assert (ea.value is None) == (eb.value is None)
        for va, vb in ((ea.value, eb.value), (ea.low, eb.low), (ea.high, eb.high)):
            if va is not None and vb is not None:
                assert va == pytest.approx(vb, abs=1e-12)


# ------------------------------------------------- the jackknife interval (the default before)


def test_jackknife_interval_is_fisher_z_of_the_leave_one_out_variance() -> None:
    # worked by hand: the leave-one-item-out kappas, their jackknife variance, atanh and back
    from scipy import stats

    rows = two_raters(14, 3, 2, 11)  # 30 items
    res = agreement(rows, n_resamples=200, interval="jackknife")
    n = 30
    for key in ("cohen_kappa", "fleiss_kappa", "alpha_nominal", "gwet_ac1", "raw_agreement"):
        e = res.statistics[key]
        assert e.method == "jackknife" and e.value is not None
        loo = []
        for drop in range(n):
            kept = [r for r in rows if r["item"] != f"i{drop:03d}"]
            v = agreement(kept, n_resamples=10).statistics[key].value
            assert v is not None
            loo.append(v)
        jack = np.array(loo)
        se = math.sqrt((n - 1) / n * ((jack - jack.mean()) ** 2).sum())
        lo, hi = (0.0, 1.0) if key == "raw_agreement" else (-1.0, 1.0)
        x = (e.value - lo) / ((hi - lo) / 2) - 1
        sz = se / ((hi - lo) / 2) / (1 - x * x)
        q = stats.t.ppf(0.975, n - 1)
        back = [lo + (hi - lo) / 2 * (math.tanh(math.atanh(x) + s * q * sz) + 1) for s in (-1, 1)]
        assert (e.low, e.high) == pytest.approx(back, abs=1e-12), key


def test_no_disagreement_gives_the_clopper_pearson_bound() -> None:
    # perfect agreement on 30 items: the jackknife variance is 0 and every bootstrap resample
    # agrees perfectly too, so there used to be no interval at all. 0 disagreements in 30 bound
    # the disagreement rate by 1 - 0.025^(1/30) (Clopper-Pearson): raw agreement's lower end is
    # exactly that, and each coefficient's is its value with that many more disagreements
    res = agreement(two_raters(12, 0, 0, 18), n_resamples=200, interval="jackknife")
    raw = res.statistics["raw_agreement"]
    assert raw.method == "no-disagreement bound"
    assert (raw.low, raw.high) == pytest.approx((0.025 ** (1 / 30), 1.0), abs=1e-12)
    w = 30 * (1 - 0.025 ** (1 / 30)) / 0.025 ** (1 / 30)  # items added in disagreement
    # Cohen's kappa of the table [[12, w], [0, 18]] (first rater the common label, False)
    n = 30 + w
    po = 30 / n
    pe = ((12 / n) * (12 + w) / n) + ((18 + w) / n) * (18 / n)
    kappa = res.statistics["cohen_kappa"]
    assert kappa.value == 1.0 and kappa.method == "no-disagreement bound"
    assert kappa.low == pytest.approx((po - pe) / (1 - pe), abs=1e-12) and kappa.high == 1.0
    assert res.pairs[0].cohen_kappa.low == pytest.approx(kappa.low, abs=1e-12)


def test_interval_stays_in_the_coefficients_range() -> None:
    # a near-perfect table: the symmetric interval would pass 1; on the z scale it cannot
    res = agreement(two_raters(20, 1, 0, 9), n_resamples=200, interval="jackknife")
    for key in ("raw_agreement", "cohen_kappa", "fleiss_kappa", "alpha_nominal", "pabak"):
        e = res.statistics[key]
        assert e.method == "jackknife", key
        assert e.low is not None and e.high is not None and e.value is not None
        assert e.low < e.value < e.high < 1.0, key
        assert e.value + (e.value - e.low) > 1.0  # asymmetric: the symmetric one would pass 1


def test_scarce_tables_say_their_intervals_under_cover() -> None:
    # 30 items, the rare label given 4 times, 2 disagreements: no interval reached 0.93 on such
    # tables in simulation (docs/agreement.md), and the result says so
    scarce = agreement(two_raters(1, 1, 1, 27), n_resamples=200, interval="jackknife")
    msg = [m for m in scarce.messages if m.startswith("few disagreements or rare labels")]
    assert len(msg) == 1
    assert "disagree on 2 item(s)" in msg[0] and "given 4 time(s)" in msg[0]
    balanced = agreement(two_raters(12, 3, 3, 12), n_resamples=200, interval="jackknife")
    assert not any(m.startswith("few disagreements") for m in balanced.messages)
    # the goodness-of-fit interval (the default on a binary scale) covers on such tables
    # (tests/stats/test_agreement_gof.py): no warning
    default = agreement(two_raters(1, 1, 1, 27), n_resamples=200)
    assert default.statistics["fleiss_kappa"].method == "goodness-of-fit"
    assert not any(m.startswith("few disagreements") for m in default.messages)
