"""The report layer: one interval shape, four renderings that agree."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from assay.report import Interval, Report, ReportMixin, Tabular, json_ready, render, undefined


@dataclass
class _Toy(ReportMixin):
    values: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.values, "ci": Interval(0.5, 0.25, 0.75, method="wilson")}

    def tabular(self) -> Tabular:
        rows = [[k, f"{v:.3f}"] for k, v in self.values.items()]
        return Tabular("toy", ["category", "value"], rows, footer=["a footer"])


def test_interval_json_shape_is_the_same_everywhere() -> None:
    d = Interval(0.1234567890123, 0.1, 0.2, method="wilson").to_dict()
    assert list(d) == ["value", "low", "high", "level", "method", "note"]
    assert d["value"] == 0.1234567890123  # full precision
    u = undefined("no entries in this category")
    assert u.to_dict()["value"] is None and u.fmt() == "undefined" and not u.defined
    assert Interval(float("nan")).to_dict()["value"] is None
    assert Interval(0.5, None, None).fmt() == "0.500"
    assert Interval(0.5, 0.41, 0.72).fmt() == "0.500 [0.41, 0.72]"


def test_json_ready_cleans_numpy_and_nan() -> None:
    out = json_ready(
        {"a": np.float64(0.25), "b": float("nan"), "c": (1, np.int64(2)), "d": math.inf}
    )
    assert out == {"a": 0.25, "b": None, "c": [1, 2], "d": None}


def test_mixin_renders_four_ways() -> None:
    toy = _Toy({"lookup": 0.123456789, "overall": 0.5})
    assert isinstance(toy, Report)
    assert json.loads(toy.to_json())["values"]["lookup"] == 0.123456789
    md = render(toy, "markdown")
    assert "| **overall** | 0.500 |" in md and "a footer" in md
    table = render(toy, "table")
    assert "lookup" in table and "0.123" in table
    with pytest.raises(ValueError, match="unknown format"):
        render(toy, "xml")
