"""`compare_series` pairs entries by id: when the series of the two runs hold the same ids in
the same order it takes that order as it is; otherwise the entries are every id of any series,
in the baseline's order then the candidate's, each series aligned to them by id (an id a series
lacks abstains). Both give what `compare_arrays` gives on the aligned arrays."""

from __future__ import annotations

import math

from assay.compare import compare_arrays
from assay.compare.paired import compare_series
from assay.compare.series import RunSeries, Series

NAN = math.nan
GROUPS = {"q1": "a", "q2": "a", "q3": "b", "q4": "b", "q5": "b"}


def _run(series: dict[str, dict[str, float]]) -> RunSeries:
    out = {
        m: Series(m, "binary", tuple(vals), [vals[i] for i in vals]) for m, vals in series.items()
    }
    return RunSeries(out, dict(GROUPS), k=5)


def test_one_order_is_taken_as_it_is() -> None:
    vals = {"q2": 1.0, "q1": 0.0, "q3": 1.0, "q4": 0.0}
    cand = {"q2": 0.0, "q1": 1.0, "q3": 1.0, "q4": 1.0}
    got = compare_series(_run({"hit": vals}), _run({"hit": cand}), seed=3)
    want = compare_arrays(
        ["q2", "q1", "q3", "q4"], ["a", "a", "b", "b"],
        {"hit": list(vals.values())}, {"hit": list(cand.values())},
        metrics=["hit"], kinds={"hit": "binary"}, k=5, seed=3,
    )  # fmt: skip
    assert got.to_dict() == want.to_dict()


def test_other_orders_and_ids_are_aligned_by_id() -> None:
    base = _run({"hit": {"q1": 1.0, "q2": 0.0, "q3": 1.0}, "ok": {"q5": 1.0, "q1": 0.0}})
    cand = _run({"hit": {"q3": 0.0, "q1": 1.0, "q2": 1.0, "q4": 1.0}, "ok": {"q1": 1.0}})
    got = compare_series(base, cand, seed=3)
    # the entries: the baseline's ids (hit, then ok), then the candidate's new ones
    ids = ["q1", "q2", "q3", "q5", "q4"]
    want = compare_arrays(
        ids, [GROUPS[i] for i in ids],
        {"hit": [1.0, 0.0, 1.0, NAN, NAN], "ok": [0.0, NAN, NAN, 1.0, NAN]},
        {"hit": [1.0, 1.0, 0.0, NAN, 1.0], "ok": [1.0, NAN, NAN, NAN, NAN]},
        metrics=["hit", "ok"], kinds={"hit": "binary", "ok": "binary"}, k=5, seed=3,
    )  # fmt: skip
    assert got.to_dict() == want.to_dict()
    assert got.overall.n == 5
