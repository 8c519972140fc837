"""Check kinds (binary, graded, count), their validation, and the run row in the check context."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.judge.test_checks import _write

from assay.corpus import load_chunks
from assay.dataset import Entry, load_dataset
from assay.errors import UsageError
from assay.judge import CheckContext, Outcome, check, check_entry, check_run, get_check, unregister
from assay.judge.registry import CheckValueError, validate_value
from assay.runs import load_run
from assay.runs.model import Hit, RunRow


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "What was FY2018 capex (in USD millions)?",
        "category": "lookup",
        "reference_answer": "$1,577 million",
    }
    return Entry.model_validate({**base, **kw})


@pytest.fixture()
def registered() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for n in names:
        unregister(n)


def test_kinds_and_direction_are_recorded(registered: list[str]) -> None:
    @check("share_cited", kind="graded", default=False)
    def _share(ctx: CheckContext) -> float | None:
        """Share of the citations the chunk table knows."""
        return None if not ctx.citations else len(ctx.cited) / len(ctx.citations)

    @check("leaked", kind="count", default=False, higher_is_better=False, needs_answer=False)
    def _leaked(ctx: CheckContext) -> int | None:
        """Retrieved chunks the row marks as not permitted."""
        return None if ctx.row is None else len(ctx.row.extra.get("forbidden", []))

    registered += ["share_cited", "leaked"]
    assert get_check("answer_correct").kind == "binary"
    assert get_check("answer_correct").higher_is_better
    g, c = get_check("share_cited"), get_check("leaked")
    assert (g.kind, g.higher_is_better, g.needs_answer) == ("graded", True, True)
    assert (c.kind, c.higher_is_better, c.needs_answer) == ("count", False, False)
    assert g.description == "Share of the citations the chunk table knows."
    res = check_entry(
        entry(), "x", citations=["c1", "c2"], chunk_text={"c1": "t"}, checks="share_cited"
    )
    assert res.values == {"share_cited": 0.5}
    row = RunRow("e1", [Hit("c1", None)], "x", ["c1"], extra={"forbidden": ["c9", "c8"]})
    assert check_entry(entry(), "x", row=row, checks="leaked").values == {"leaked": 2}
    assert check_entry(entry(), "x", checks="leaked").values == {"leaked": None}


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("graded", 1.5, r"check 'bad' returned 1\.5: a graded check's value must lie in \[0, 1\]"),
        ("graded", -0.01, "must lie in"),
        ("graded", math.nan, "must lie in"),
        ("graded", True, "a graded check returns a float"),
        ("graded", "0.5", "a graded check returns a float"),
        ("count", -1, r"check 'bad' returned -1: a count check's value must not be negative"),
        ("count", 2.5, "a count check returns a non-negative int"),
        ("count", False, "a count check returns a non-negative int"),
        ("binary", 0.5, "a binary check returns True, False, None or an Outcome"),
        ("binary", 1, "a binary check returns"),
    ],
)
def test_a_value_outside_its_kind_is_a_clear_error_naming_the_check(
    registered: list[str], kind: str, value: object, message: str
) -> None:
    check("bad", kind=kind, default=False)(lambda ctx: value)  # type: ignore[arg-type, return-value]
    registered.append("bad")
    with pytest.raises(CheckValueError, match=message):
        check_entry(entry(), "x", checks="bad")
    # the same through an Outcome
    unregister("bad")
    check("bad", kind=kind, default=False)(lambda ctx: Outcome(value, ("n",)))  # type: ignore
    with pytest.raises(CheckValueError, match="'bad'"):
        check_entry(entry(), "x", checks="bad")
    # it is a UsageError, so the command line prints it and exits 2
    assert issubclass(CheckValueError, UsageError)


def test_valid_values_pass_and_are_normalised() -> None:
    assert validate_value("g", "graded", 1) == 1.0 and isinstance(
        validate_value("g", "graded", 1), float
    )
    assert validate_value("g", "graded", np.float32(0.25)) == 0.25
    assert validate_value("c", "count", np.int64(3)) == 3
    assert type(validate_value("c", "count", np.int64(3))) is int
    assert validate_value("b", "binary", np.bool_(True)) is True
    for kind in ("binary", "graded", "count"):
        assert validate_value("x", kind, None) is None


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown kind 'ordinal'"):
        check("ordinal_thing", kind="ordinal")(lambda ctx: 1)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        get_check("ordinal_thing")


def test_key_fact_recall_is_a_graded_check() -> None:
    e = entry(
        key_facts=[
            {"fact": "capex was $1,577 million", "critical": True},
            {"fact": "operating cash flow was $6,439 million", "critical": True},
        ]
    )
    c = get_check("key_fact_recall")
    assert c.kind == "graded" and not c.default
    res = check_entry(e, "Capex was $1,577 million.", checks="key_fact_recall")
    assert res.values == {"key_fact_recall": 0.5}
    assert res.to_dict()["key_fact_recall"] == 0.5
    assert check_entry(entry(), "x", checks="key_fact_recall").values == {"key_fact_recall": None}


def test_check_run_hands_each_check_its_run_row(tmp_path: Path, registered: list[str]) -> None:
    seen: dict[str, Any] = {}

    @check("row_seen", default=False)
    def _row(ctx: CheckContext) -> bool:
        seen[ctx.entry.id] = ctx.row
        return ctx.row is not None and ctx.row.answer == ctx.answer

    registered.append("row_seen")
    ds, run, ch = _write(tmp_path)
    rep = check_run(load_dataset(ds), load_run(run), chunks=load_chunks(ch), checks="row_seen")
    assert sorted(seen) == ["a", "b", "c"]
    assert seen["a"].citations == ["c1"] and [h.chunk_id for h in seen["a"].retrieved] == ["c1"]
    assert all(r["row_seen"] is True for r in rep.rows)


def test_count_and_graded_checks_run_over_a_run_and_rate_as_means(
    tmp_path: Path, registered: list[str]
) -> None:
    @check("extra_hits", kind="count", default=False, higher_is_better=False, needs_answer=False)
    def _extra(ctx: CheckContext) -> int | None:
        return None if ctx.row is None else int(ctx.row.extra.get("leaks", 0))

    registered.append("extra_hits")
    ds, _, _ = _write(tmp_path)
    run = tmp_path / "retrieval_only.jsonl"
    rows = [
        {"id": "a", "retrieved": ["c1"], "leaks": 2},
        {"id": "b", "retrieved": ["c1"], "leaks": 0},
        {"id": "c", "retrieved": ["c1"], "leaks": 1},
    ]
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = check_run(load_dataset(ds), load_run(run), checks="extra_hits,answer_correct", n_boot=200)
    by = {r["id"]: r for r in rep.rows}
    # the count check ran on rows without an answer; the answer check abstained there
    assert {i: r["extra_hits"] for i, r in by.items()} == {"a": 2, "b": 0, "c": 1}
    assert all(r["answer_correct"] is None for r in rep.rows)
    lookup = rep.rates["lookup"]["extra_hits"]
    assert lookup.rate == 1.0 and lookup.n == 2 and lookup.kind == "count"
    assert rep.rates["overall"]["extra_hits"].rate == 1.0
    d = rep.to_dict()["rates"]["overall"]["extra_hits"]
    assert d["sum"] == 3.0 and d["kind"] == "count" and d["n"] == 3
    assert d["interval"]["low"] <= 1.0 <= d["interval"]["high"]
    # without a check that reads the row, answer-less rows are skipped as before
    assert check_run(load_dataset(ds), load_run(run), checks="answer_correct").rows == []
