"""to_pandas() on every report: built from its table rows, numbers as floats, CIs split."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from assay.compare import compare_arrays
from assay.compare.gate import GatePolicy, gate
from assay.dataset import load_dataset, split_entries
from assay.report import Report, ReportMixin, Tabular
from assay.runs import load_run
from assay.score import score_retrieval
from tests.conftest import write_case

OUTCOMES = {"lookup": [(2, 2)] * 6 + [(0, 2)] * 4, "trend": [(1, 2)] * 3 + [(2, 0)] * 2}


def test_retrieval_scores_frame_splits_intervals(tmp_path: Path) -> None:
    ds, base, _ = write_case(tmp_path, OUTCOMES)
    scores = score_retrieval(load_dataset(ds), load_run(base), k=5)
    scores.add_ci(seed=1, n_resamples=200)
    df = scores.to_pandas()
    assert list(df["category"]) == ["lookup", "trend", "overall"]
    assert df["n"].tolist() == [10.0, 5.0, 15.0]
    lookup = scores.categories["lookup"]
    assert df.loc[0, "complete@5"] == pytest.approx(lookup.values["complete@5"], abs=5e-4)
    ci = lookup.ci["complete@5"]
    assert df.loc[0, "complete@5 low"] == pytest.approx(ci.low, abs=5e-3)
    assert df.loc[0, "complete@5 high"] == pytest.approx(ci.high, abs=5e-3)
    assert df["complete@5"].dtype == np.float64


def test_comparison_and_gate_frames() -> None:
    rng = np.random.default_rng(4)
    n = 60
    ids = [f"e{i}" for i in range(n)]
    cats = ["a" if i % 2 else "b" for i in range(n)]
    b = (rng.random(n) < 0.5).astype(float)
    c = np.where(rng.random(n) < 0.3, 1.0 - b, b)
    cmp = compare_arrays(ids, cats, {"complete@5": b}, {"complete@5": c}, n_resamples=200)
    assert isinstance(cmp, Report)
    df = cmp.to_pandas()
    assert list(df["category"]) == ["a", "b", "overall"]
    assert df["p Holm"].tolist() == pytest.approx(
        [r.metrics["complete@5"].p_holm for r in cmp.rows], abs=5e-4
    )
    assert df["delta [CI] low"].tolist() == pytest.approx(
        [r.metrics["complete@5"].delta.low for r in cmp.rows], abs=5e-4
    )
    result = gate(cmp, GatePolicy(metric="complete@5"))
    gdf = result.to_pandas()
    assert list(gdf["verdict"].str[:4]) == [r.verdict[:4] for r in [*result.rows, result.overall]]


def test_split_and_several_tables(example_entry: dict[str, object]) -> None:
    from assay.dataset import Entry

    entries = [
        Entry.model_validate(example_entry | {"id": f"e{i}", "category": "ab"[i % 2]})
        for i in range(10)
    ]
    df = split_entries(entries, test_size=0.5, seed=0).to_pandas()
    assert df["stratum"].tolist() == ["a", "b", "all"]
    assert df["n"].tolist() == [5.0, 5.0, 10.0]

    class Two(ReportMixin):
        def to_dict(self) -> dict[str, object]:
            return {}

        def tabular(self) -> list[Tabular]:
            return [
                Tabular("first", ["x", "v"], [["a", "1"], ["b", "-"]]),
                Tabular("second", ["x", "w"], [["c", "text"]]),
            ]

    two = Two().to_pandas()
    assert two["table"].tolist() == ["first", "first", "second"]
    assert two["v"].iloc[0] == 1.0 and np.isnan(two["v"].iloc[1])
    assert two["w"].iloc[2] == "text"


def test_missing_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    class One(ReportMixin):
        def tabular(self) -> Tabular:
            return Tabular("t", ["a"], [["1"]])

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"assay\[pandas\]"):
        One().to_pandas()
