"""Planted near misses: test-suite matching catches what single-database execution misses."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from assay.dataset import Dataset
from assay.sql.evaluate import NearMiss, near_miss_study

ROOT = Path(__file__).resolve().parents[2]


def _planted(warehouse: Path) -> list[NearMiss]:
    out = []
    for line in (warehouse / "near_misses.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        out.append(NearMiss(d["entry_id"], d["sql"], d["kind"], d["note"]))
    return out


def test_test_suite_catches_what_one_database_misses(golden: Dataset, warehouse: Path) -> None:
    planted = _planted(warehouse)
    kinds = Counter(p.kind for p in planted)
    assert kinds == {"wrong join": 4, "missing filter": 12, "wrong fiscal year": 18}
    study = near_miss_study(golden, planted)
    assert study.variants == 8
    # every planted query is wrong, yet returns the gold rows on the warehouse ...
    assert [r["id"] for r in study.rows if r["exec_match"] is not True] == []
    # ... and the test suite tells every one apart
    assert [r["id"] for r in study.rows if r["test_suite_match"] is not False] == []
    assert study.passed_single == study.caught_by_suite == len(planted) == 34
    for r in study.rows:
        assert any(n.startswith("caught on variant-") for n in r["notes"]), r
    d = study.to_dict()
    assert (d["planted"], d["pass_single_database"], d["caught_by_test_suite"]) == (34, 34, 34)


def test_the_docs_report_the_measured_counts(golden: Dataset, warehouse: Path) -> None:
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    block = text.split("<!-- near-miss:start -->")[1].split("<!-- near-miss:end -->")[0]
    row = next(ln for ln in block.strip().splitlines() if re.match(r"^\| \d", ln))
    planted, single, caught, missed = (int(x) for x in re.findall(r"\d+", row))
    study = near_miss_study(golden, _planted(warehouse))
    assert (planted, single, caught) == (
        len(study.rows),
        study.passed_single,
        study.caught_by_suite,
    )
    assert missed == sum(1 for r in study.rows if r["test_suite_match"] is True)


def test_each_kind_is_wrong_for_a_stated_reason(golden: Dataset, warehouse: Path) -> None:
    """The three kinds the issue names, one example each, read as an analyst would."""
    by_kind: dict[str, NearMiss] = {}
    for p in _planted(warehouse):
        by_kind.setdefault(p.kind, p)
    assert "JOIN customers" in by_kind["wrong join"].sql  # an inner join, no LEFT
    assert "status" not in by_kind["missing filter"].sql
    assert "period_end BETWEEN" in by_kind["wrong fiscal year"].sql
