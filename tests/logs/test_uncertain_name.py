"""A golden set with a category named "uncertain" (the name of the traffic report's bucket of
placements below the confidence threshold) is refused naming the golden file, line and field, by
ingest and by the report. Attack: with such a golden set, traffic its neighbours placed in that
category at full confidence was reported as 100% uncertain, and the category's golden share was
dropped from the gap table (golden: null), exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import DataError
from assay.logs import category_shares, ingest_logs, traffic_report

from .conftest import write_jsonl

QUERIES = [
    ("What was revenue in 2019?", "uncertain"),
    ("Compare margins 2019 vs 2018", "comparison"),
]


def _golden(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"g{i}",
            "query": f"{q} #{i}",
            "category": c,
            "answerable": True,
            "reference_answer": "x",
        }
        for i, (q, c) in enumerate(QUERIES * 6)
    ]
    return write_jsonl(tmp_path / "golden.jsonl", rows)


def test_a_golden_category_named_uncertain_is_refused(tmp_path: Path) -> None:
    golden = _golden(tmp_path)
    log = write_jsonl(
        tmp_path / "l.jsonl",
        [{"ts": "2026-10-03T14:05:11Z", "query": f"What was revenue in {y}?"} for y in range(5)],
    )
    db = tmp_path / "st"
    with pytest.raises(DataError) as err:
        ingest_logs([log], db, golden=golden)
    (p,) = err.value.problems
    assert (p.file, p.line, p.field) == (str(golden), 1, "category")
    assert not db.exists()
    ingest_logs([log], db)
    for call in (traffic_report, category_shares):
        with pytest.raises(DataError, match="bucket of placements below"):
            call(db, golden=golden)
    res = CliRunner().invoke(app, ["logs", "report", str(db), "--golden", str(golden)])
    assert res.exit_code == 2 and f"{golden}:1" in res.output.replace("\n", ""), res.output
    # the same golden set with the category renamed is fine
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    for r in rows:
        r["category"] = r["category"].replace("uncertain", "revenue")
    fine = write_jsonl(tmp_path / "fine.jsonl", rows)
    rep = traffic_report(db, golden=fine)
    assert rep.to_dict()["category_shares"]["revenue"]["golden"] == 0.5
