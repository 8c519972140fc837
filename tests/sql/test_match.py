"""Execution match: bag, set and ordered semantics, float tolerance, column order."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.sql.engine import QueryResult
from assay.sql.match import match_results, values_equal


def R(cols: list[str], rows: list[list[Any]]) -> QueryResult:
    return QueryResult(tuple(cols), tuple(tuple(r) for r in rows))


def test_bag_set_ordered() -> None:
    gold = R(["a"], [[1], [2], [2]])
    assert match_results(gold, R(["x"], [[2], [1], [2]]), semantics="bag").ok
    assert not match_results(gold, R(["x"], [[2], [1], [1]]), semantics="bag").ok
    assert not match_results(gold, R(["x"], [[1], [2]]), semantics="bag").ok
    assert match_results(gold, R(["x"], [[2], [1]]), semantics="set").ok
    assert not match_results(gold, R(["x"], [[2], [1], [2]]), semantics="ordered").ok
    assert match_results(gold, R(["x"], [[1], [2], [2]]), semantics="ordered").ok


def test_tolerance_and_types() -> None:
    assert values_equal(0.1 + 0.2, 0.3, 1e-9)
    assert values_equal(5, 5.0, 0.0)
    assert values_equal(1_000_000_000, 1_000_000_500, 1e-6)
    assert not values_equal(1_000_000_000, 1_000_002_000, 1e-6)
    assert not values_equal(True, 1, 1e-6)  # a boolean is not a number here
    assert not values_equal("5", 5, 1e-6)
    assert values_equal(None, None, 0.0) and not values_equal(None, 0, 0.0)
    gold = R(["v"], [[3.125]])
    assert match_results(gold, R(["v"], [[3.1250001]]), tolerance=1e-6).ok
    assert not match_results(gold, R(["v"], [[3.13]]), tolerance=1e-6).ok


def test_column_order() -> None:
    gold = R(["t", "v"], [["A", 1], ["B", 2]])
    swapped = R(["v", "t"], [[1, "A"], [2, "B"]])
    assert match_results(gold, swapped).ok
    assert not match_results(gold, swapped, column_order=True).ok
    assert not match_results(gold, R(["t"], [["A"], ["B"]])).ok  # a column missing
    # a permutation must hold for every row at once
    crossed = R(["x", "y"], [[1, 1], [2, 2]])
    assert not match_results(R(["x", "y"], [[1, 2], [2, 1]]), crossed).ok


rows_st = st.lists(
    st.tuples(st.integers(-5, 5), st.sampled_from(["a", "b", "c"]), st.none() | st.floats(0, 10)),
    min_size=0,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(rows=rows_st, seed=st.integers(0, 2**16))
def test_properties(rows: list[tuple[Any, ...]], seed: int) -> None:
    """Shuffling rows never breaks a bag match; permuting columns never breaks it unless the
    column order matters; a changed value always breaks it."""
    rng = np.random.default_rng(seed)
    gold = R(["i", "s", "f"], [list(r) for r in rows])
    order = rng.permutation(len(rows)).tolist()
    shuffled = R(["i", "s", "f"], [list(rows[j]) for j in order])
    assert match_results(gold, shuffled, semantics="bag").ok
    assert match_results(gold, shuffled, semantics="set").ok
    perm = [2, 0, 1]
    moved = R(["f", "i", "s"], [[r[j] for j in perm] for r in rows])
    assert match_results(gold, moved).ok
    if rows:
        changed = [list(r) for r in rows]
        changed[0][0] = 99
        assert not match_results(gold, R(["i", "s", "f"], changed), semantics="bag").ok


def test_diff_results_pairs_rows_and_aligns_columns() -> None:
    from assay.sql.match import diff_results

    gold = QueryResult(("region", "n"), (("NA", 2), ("EMEA", 1), ("APAC", 3.0)))
    # columns swapped, one value off, one row extra, APAC within tolerance
    got = QueryResult(("n", "region"), ((2, "NA"), (2, "EMEA"), (3.0000001, "APAC"), (1, "X")))
    d = diff_results(gold, got, tolerance=1e-6)
    assert not d.verdict.ok and d.order == (1, 0) and d.common == 2
    assert d.only_gold == (("EMEA", 1),)
    assert d.only_system == (("EMEA", 2), ("X", 1))
    # with column order fixed, no column is moved and nothing pairs
    fixed = diff_results(gold, got, column_order=True)
    assert fixed.order == (0, 1) and fixed.common == 0
    # set semantics drop duplicates first; different widths pair nothing
    dup = QueryResult(("region", "n"), (("NA", 2), ("NA", 2), ("EMEA", 1), ("APAC", 3.0)))
    same = diff_results(gold, dup, semantics="set")
    assert same.verdict.ok and same.only_gold == () and same.only_system == ()
    wide = diff_results(gold, QueryResult(("a",), (("NA",),)))
    assert wide.order is None and wide.common == 0 and len(wide.only_gold) == 3
