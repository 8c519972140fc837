"""One verdict per cell: every delta interval of a comparison excludes 0 exactly when the p
column (McNemar, Wilcoxon: the test the gate uses) is below 1 - confidence. The interval's far
end is the score interval's (``tests["score"]``); where that score test leaned the other way
about 0, the interval's end at 0 follows the p column and the note says so. "CI and p
disagree" cannot appear. No interval is a single point."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.compare import compare_arrays
from assay.report import Interval

THIRDS = np.arange(4) / 3


def _random_comparison(seed: int, confidence: float = 0.95):  # type: ignore[no-untyped-def]
    """Forty groups of 1 to 60 entries, each with its own share of moves and its own drift."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 61, size=40)
    ids, cats, base_c, cand_c, base_r, cand_r = [], [], [], [], [], []
    for g, size in enumerate(sizes):
        move = rng.uniform(0.0, 0.8)
        up = rng.uniform(0.2, 0.9)
        for i in range(int(size)):
            ids.append(f"g{g}-{i}")
            cats.append(f"g{g:02d}")
            b = rng.choice(THIRDS)
            c = b
            if rng.random() < move:
                step = rng.choice([1, 2, 3]) / 3 * (1 if rng.random() < up else -1)
                c = float(np.clip(b + step, 0.0, 1.0))
            base_r.append(b)
            cand_r.append(c)
            base_c.append(float(b == 1.0))
            cand_c.append(float(c == 1.0))
    return compare_arrays(
        ids,
        cats,
        {"complete@5": np.array(base_c), "recall@5": np.array(base_r)},
        {"complete@5": np.array(cand_c), "recall@5": np.array(cand_r)},
        n_permutations=200,
        confidence=confidence,
        seed=seed,
    )


@pytest.mark.parametrize(("seed", "confidence"), [(1, 0.95), (2, 0.95), (3, 0.90)])
def test_every_interval_agrees_with_the_test_it_inverts(seed: int, confidence: float) -> None:
    cmp = _random_comparison(seed, confidence)
    level = 1.0 - confidence
    cells = followed = 0
    for row in cmp.rows:
        for mc in row.metrics.values():
            d: Interval = mc.delta
            assert d.low is not None and d.high is not None
            assert d.high > d.low, (row.category, mc.metric, d)  # never a single point
            assert d.method in ("tango", "score")
            excludes = d.low > 0.0 or d.high < 0.0
            assert excludes == (mc.p < level), (row.category, mc.metric, d, mc.p)
            cells += 1
            # where the score test the far end inverts leaned the other way, the cell says so
            if excludes != (mc.tests["score"].pvalue < level):
                followed += 1
                assert d.note and "its end at 0 follows" in d.note, d.note
            else:
                assert "its end at 0 follows" not in (d.note or "")
    assert cells == 82 and followed > 0
    table = cmp.to_markdown()
    assert "CI and p disagree" not in table
    assert table.count("its end at 0 follows") == 0  # notes live in the JSON, not the table
    assert json.loads(cmp.to_json())["overall"]["metrics"]["recall@5"]["tests"]["score"]


def test_the_interval_follows_the_p_column_when_its_score_test_leans_the_other_way() -> None:
    # 8 of 30 entries move up by 1/3, none down: Wilcoxon p = 2/256, while the score test of the
    # mean change gives p = 0.10. The p column decides: the interval excludes 0, and says why.
    n = 30
    cmp = compare_arrays(
        [f"e{i}" for i in range(n)],
        ["x"] * n,
        {"recall@5": np.zeros(n)},
        {"recall@5": np.array([1 / 3] * 8 + [0.0] * (n - 8))},
        n_permutations=200,
    )
    mc = cmp.overall.metrics["recall@5"]
    assert mc.p == pytest.approx(2 / 256)
    assert mc.delta.low is not None and mc.delta.low > 0.0
    assert mc.tests["score"].pvalue == pytest.approx(0.1025, abs=1e-3)
    note = mc.delta.note or ""
    assert "only 8 entries moved" in note and "its end at 0 follows Wilcoxon" in note
    assert "score test of the mean change gave p = 0.102" in note
    assert "CI and p disagree" not in cmp.to_markdown()


def test_four_of_twelve_fixed_no_longer_excludes_zero_next_to_p_0125() -> None:
    # the cell: 4 fixed, none broken, of 12. Tango's interval excluded 0 (its score test
    # p = 0.0455) next to the exact McNemar p = 0.125; now the interval holds 0, as p says
    n = 12
    base = np.zeros(n)
    cand = np.array([1.0] * 4 + [0.0] * 8)
    cmp = compare_arrays([f"e{i}" for i in range(n)], ["x"] * n, {"complete@5": base},
                         {"complete@5": cand})  # fmt: skip
    mc = cmp.overall.metrics["complete@5"]
    assert mc.p == pytest.approx(0.125)
    assert mc.tests["score"].pvalue == pytest.approx(0.0455, abs=1e-4)
    assert mc.delta.low == 0.0 and mc.delta.high is not None and mc.delta.high > 0.5
    assert "exact McNemar (p = 0.125)" in (mc.delta.note or "")


def test_a_comparison_of_one_entry_is_not_a_point() -> None:
    # one entry, fixed: neither the binary nor the graded delta reads +1.000 [+1.000, +1.000]
    cmp = compare_arrays(
        ["e0"],
        ["x"],
        {"complete@5": np.array([0.0]), "recall@5": np.array([0.0])},
        {"complete@5": np.array([1.0]), "recall@5": np.array([1.0])},
        n_permutations=100,
    )
    for m in ("complete@5", "recall@5"):
        d = cmp.overall.metrics[m].delta
        assert d.value == 1.0 and d.low is not None and d.low < 0.0 and d.high == 1.0, (m, d)
    assert "[+1.000, +1.000]" not in cmp.to_markdown()
    # asked for a bootstrap, a delta with no variation still gets the score interval
    boot = compare_arrays(
        ["e0", "e1"],
        ["x", "x"],
        {"recall@5": np.array([0.0, 0.0])},
        {"recall@5": np.array([0.5, 0.5])},
        n_permutations=100,
        ci_method="percentile",
    )
    d = boot.overall.metrics["recall@5"].delta
    assert d.method == "score" and d.low is not None and d.low < 0.5 < d.high  # type: ignore[operator]
    assert "no variation" in (d.note or "")


def test_four_entries_moving_half_a_point_are_not_a_point() -> None:
    cmp = compare_arrays(
        [f"e{i}" for i in range(4)],
        ["x"] * 4,
        {"recall@5": np.zeros(4)},
        {"recall@5": np.full(4, 0.5)},
        n_permutations=100,
    )
    mc = cmp.overall.metrics["recall@5"]
    assert mc.p == pytest.approx(0.125)  # Wilcoxon, exact
    d = mc.delta
    assert d.value == pytest.approx(0.5) and d.low is not None and d.high is not None
    assert d.low < 0.0 < d.high  # p = 0.125: the interval holds 0, as it must
    assert "0.500 [0.50, 0.50]" not in cmp.to_markdown()


@pytest.mark.parametrize("ci_method", ["score", "percentile"])
def test_the_report_header_says_what_each_column_controls(ci_method: str) -> None:
    # every report, whatever the interval method: CIs per cell, p Holm across the family
    n = 12
    base = np.zeros(n)
    cand = np.array([1.0] * 4 + [0.0] * 8)
    cmp = compare_arrays([f"e{i}" for i in range(n)], ["x"] * n, {"complete@5": base},
                         {"complete@5": cand}, ci_method=ci_method)  # type: ignore[arg-type]  # fmt: skip
    md = cmp.to_markdown()
    assert "What each column controls: a delta's CI is per cell (its own 95%" in md
    assert "p Holm is Holm-corrected across the comparison's family" in md
    assert "p ledger" not in md.split("What each column controls")[1].split("\n")[0]


@pytest.mark.parametrize(
    ("binary_ci", "ci_method", "other"),
    [("newcombe", "score", "Newcombe"), ("bootstrap", "score", "paired bootstrap"),
     ("tango", "percentile", "paired bootstrap")],
)  # fmt: skip
def test_a_ci_that_is_not_the_p_columns_test_is_not_claimed_to_agree_with_it(
    binary_ci: str, ci_method: str, other: str
) -> None:
    # 5 of 13 fixed, none broken (the room's numeric lookups): McNemar p = 0.0625, while
    # Newcombe's and the bootstrap's intervals exclude 0. The footer must not promise one
    # verdict per cell there; it says the two can disagree and that the gate uses p.
    n = 13
    cmp = compare_arrays(
        [f"e{i}" for i in range(n)],
        ["x"] * n,
        {"complete@5": np.zeros(n), "recall@5": np.zeros(n)},
        {"complete@5": np.array([1.0] * 5 + [0.0] * 8),
         "recall@5": np.array([0.5] * 5 + [0.0] * 8)},
        n_permutations=200,
        binary_ci=binary_ci,
        ci_method=ci_method,  # type: ignore[arg-type]
    )  # fmt: skip
    mc = cmp.overall.metrics["complete@5"]
    assert mc.p == pytest.approx(0.0625)
    if binary_ci == "newcombe":  # the figure in docs/statistics.md
        assert (mc.delta.low, mc.delta.high) == pytest.approx((0.076, 0.645), abs=5e-4)
    md = " ".join(cmp.to_markdown().split())
    assert "One verdict per cell" not in md
    assert (
        f"Two tests per cell: the {other} CI is not the p column's test, so it can exclude 0 "
        "where p >= 0.05 or hold 0 where p < 0.05; the gate uses p" in md
    ), md
    default = compare_arrays(
        [f"e{i}" for i in range(n)], ["x"] * n, {"complete@5": np.zeros(n)},
        {"complete@5": np.array([1.0] * 5 + [0.0] * 8)}, n_permutations=200,
        binary_ci=binary_ci, ci_method=ci_method,  # type: ignore[arg-type]
    )  # fmt: skip
    # with only binary metrics, the graded method does not matter
    assert ("One verdict per cell" in default.to_markdown()) == (binary_ci == "tango")
