"""`assay ledger show` and `assay ledger void`: the ledger keeps its history, append-only; a
voided comparison stays, with its reason, keeps its number and still counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import _rows, write_case
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.compare.ledger import (
    ledger_count,
    ledger_history,
    ledger_path,
    read_ledger,
    void_comparison,
)
from assay.errors import UsageError
from assay.runs import write_run

OUTCOMES = {"lookup": [(2, 2)] * 6 + [(0, 2)] * 3, "trend": [(1, 2)] * 4 + [(2, 1)] * 2}


def _compare(ds: Path, base: Path, cand: Path, *extra: str) -> dict[str, object]:
    res = CliRunner().invoke(
        app, ["compare", str(ds), str(base), str(cand), "--resamples", "200", "-f", "json", *extra]
    )
    assert res.exit_code == 0, res.output
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_void_appends_a_line_and_the_voided_comparison_still_counts(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    other = tmp_path / "other.jsonl"
    write_run(other, [dict(r, retrieved=r["retrieved"][::-1]) for r in _rows(OUTCOMES, 1)])
    _compare(ds, base, cand)
    before = ledger_path(ds).read_text()
    res = CliRunner().invoke(
        app, ["ledger", "void", str(ds), "1", "--reason", "candidate run made on the old index"]
    )
    assert res.exit_code == 0, res.output
    after = ledger_path(ds).read_text()
    assert after.startswith(before)  # append-only: the comparison's line is untouched
    assert ledger_count(ds) == 1 and len(read_ledger(ds)) == 2
    # the next comparison is #2: the voided one still counts
    second = _compare(ds, base, other)
    assert second["ledger"]["t"] == 2 and second["ledger"]["factor"] == 6  # type: ignore[index]
    # the voided comparison seen again keeps its number and says it was voided
    again = _compare(ds, base, cand)
    assert again["ledger"]["t"] == 1 and again["ledger"]["repeat"] is True  # type: ignore[index]
    assert any("voided in the ledger" in n for n in again["notes"])  # type: ignore[union-attr]
    hist = ledger_history(ds).to_dict()
    assert [r["t"] for r in hist["rows"]] == [1, 2] and hist["voided"] == 1
    assert hist["rows"][0]["void"]["reason"] == "candidate run made on the old index"
    assert hist["rows"][1]["void"] is None and hist["rows"][1]["smallest_p_holm"] is not None
    for fmt in ("table", "markdown"):
        res = CliRunner().invoke(app, ["ledger", "show", str(ds), "-f", fmt])
        assert res.exit_code == 0, res.output
        text = " ".join(res.stdout.split())
        assert "VOID: candidate run made on the old index" in text
        assert "2 comparison(s), 1 voided" in text and "still counts toward t" in text
    res = CliRunner().invoke(app, ["ledger", "show", str(ds), "-f", "json"])
    assert json.loads(res.stdout)["comparisons"] == 2


def test_void_refuses_what_it_cannot_void(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    with pytest.raises(UsageError, match="no ledger"):
        void_comparison(ds, 1, reason="x")
    _compare(ds, base, cand)
    with pytest.raises(UsageError, match=r"no comparison #5 \(the ledger has 1 to 1\)"):
        void_comparison(ds, 5, reason="x")
    with pytest.raises(UsageError, match="--reason is required"):
        void_comparison(ds, 1, reason="  ")
    void_comparison(ds, 1, reason="wrong dataset file")
    res = CliRunner().invoke(app, ["ledger", "void", str(ds), "1", "--reason", "again"])
    assert res.exit_code == 2 and "already voided" in res.output, res.output
    assert len(read_ledger(ds)) == 2
