"""A golden set with a category literally named "other" or "uncertain" (issue 40). "other" is
the classifier's bucket of queries with no evidence (method none, confidence 0): with a golden
category of that name, those queries were counted as firm placements in it, past the
confidence threshold, and the gap table compared the bucket with the golden category's share.
Both names are refused, naming the golden file, line and field, by ingest, the report and
`category_shares`; the threshold applies to a neighbour's placement in any category."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import DataError
from assay.logs import category_shares, ingest_logs, traffic_report
from assay.logs.classify import OTHER, UNCERTAIN, Classifier, Threshold

from .conftest import write_jsonl

QUERIES = [
    ("What was revenue in 2019?", "revenue"),
    ("Compare margins 2019 vs 2018", "comparison"),
    ("Tell me about the weather on Mars", "other"),
]


NONSENSE = ["Zebra quokka xylophone", "Quokka yak", "Xylophone zebra", "Yak yak", "Ibex okapi"]


def _golden(tmp_path: Path, name: str) -> Path:
    rows = [
        {
            "id": f"g{i}",
            "query": f"{q} #{i}",
            "category": name if c == "other" else c,
            "answerable": True,
            "reference_answer": "x",
        }
        for i, (q, c) in enumerate(QUERIES * 4)
    ]
    return write_jsonl(tmp_path / f"golden-{name}.jsonl", rows)


@pytest.mark.parametrize("name", [OTHER, UNCERTAIN])
def test_a_golden_category_named_like_a_bucket_is_refused(tmp_path: Path, name: str) -> None:
    golden = _golden(tmp_path, name)
    log = write_jsonl(
        tmp_path / "l.jsonl",
        [{"ts": "2026-10-03T14:05:11Z", "query": q} for q in NONSENSE],
    )
    db = tmp_path / "st"
    with pytest.raises(DataError) as err:
        ingest_logs([log], db, golden=golden)
    (p,) = err.value.problems
    assert (p.file, p.line, p.field) == (str(golden), 3, "category")
    assert repr(name) in p.message and "rename this category" in p.message
    assert not db.exists()
    ingest_logs([log], db)
    for call in (traffic_report, category_shares):
        with pytest.raises(DataError, match="rename this category"):
            call(db, golden=golden)
    res = CliRunner().invoke(app, ["logs", "report", str(db), "--golden", str(golden)])
    text = res.output.replace("\n", "")
    assert res.exit_code == 2 and f"{golden}:3" in text and "internal error" not in text, text


def test_queries_with_no_evidence_are_not_a_golden_category_once_renamed(tmp_path: Path) -> None:
    golden = _golden(tmp_path, "offtopic")
    log = write_jsonl(
        tmp_path / "l.jsonl",
        [{"ts": "2026-10-03T14:05:11Z", "query": q} for q in NONSENSE],
    )
    db = tmp_path / "st"
    ingest_logs([log], db, golden=golden)
    shares = category_shares(db, golden=golden)
    # no evidence: the classifier's bucket, not the golden's "offtopic" category
    assert shares.shares == {OTHER: 1.0}
    rows = json.loads(traffic_report(db, golden=golden).to_json())["category_shares"]
    assert rows["offtopic"]["traffic"] == 0.0 and rows[OTHER]["golden"] in (None, 0.0)


def test_the_threshold_applies_to_a_neighbours_placement_in_any_category() -> None:
    clf = Classifier([(q, c) for q, c in QUERIES * 3], rules=False)
    got = clf.classify("weather forecast for Venus")
    assert got.method == "nearest"
    t = Threshold(1.0, "option")
    assert t.uncertain(got.method, got.confidence)
    assert not t.uncertain("none", 0.0) and not t.uncertain("golden", 0.5)
