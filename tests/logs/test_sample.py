from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from assay.dataset import Entry
from assay.logs import ingest_logs, sample_month
from assay.logs.classify import tokens
from assay.logs.sample import NEAR_DUPLICATE, allocate

from .conftest import write_jsonl


def _jac(a: str, b: str) -> float:
    x, y = tokens(a), tokens(b)
    return len(x & y) / len(x | y)


def _month(tmp_path: Path) -> tuple[Path, Path]:
    rows: list[dict[str, Any]] = []

    def add(q: str, day: int, month: str = "2026-10") -> None:
        rows.append(
            {
                "ts": f"{month}-{day:02d}T10:{len(rows) % 60:02d}:00Z",
                "query": q,
                "as_of": f"2026-09-{day:02d}",
                "retrieved": [{"chunk_id": "secret-hit", "score": 3.0}],
                "answer": "secret answer",
                "feedback": "down",
            }
        )

    for i in range(50):  # numeric_lookup (a figure for a period)
        add(f"company{i} revenue FY{2000 + i}", 1 + i % 28)
    for i in range(30):  # comparison
        add(f"company{i} y/y growth fy{2000 + i}", 1 + i % 28)
    for i in range(10):  # near-duplicates of comparison queries (one extra word)
        add(f"company{i} y/y growth fy{2000 + i} now", 1 + i % 28)
    for i in range(20):  # temporal
        add(f"latest quarter figures for company{i}", 1 + i % 28)
    add("COMPANY0 revenue fy2000!", 1)  # the same query as one above, spelled differently
    for i in range(5):
        add(f"company{i} revenue FY{2000 + i}", 3, month="2026-11")  # another month
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    golden = write_jsonl(
        tmp_path / "golden.jsonl",
        [
            {
                "id": f"g{i}",
                "query": f"company{i} revenue FY{2000 + i}",
                "category": "numeric_lookup",
            }
            for i in range(40, 50)
        ],
    )
    db = tmp_path / "logs.db"
    ingest_logs([log], db, progress=False)
    return db, golden


def test_allocate_by_hand() -> None:
    assert allocate({"a": 50, "b": 30, "c": 20}, 20) == {"a": 10, "b": 6, "c": 4}
    assert allocate({"a": 1, "b": 98, "c": 1}, 10) == {"a": 1, "b": 8, "c": 1}
    assert allocate({"a": 2, "b": 0}, 10) == {"a": 2, "b": 0}
    assert allocate({"a": 5, "b": 5, "c": 5}, 2) == {"a": 1, "b": 1, "c": 0}


def test_sample_strata_exclusions_and_blindness(tmp_path: Path) -> None:
    db, golden = _month(tmp_path)
    out = tmp_path / "fresh.jsonl"
    rep = sample_month(db, "2026-10", n=20, seed=7, golden=golden, out=out)
    # 111 lines, one a respelling: 110 distinct queries in October
    assert rep.candidates == 110
    assert {s: v["candidates"] for s, v in rep.strata.items()} == {
        "numeric_lookup": 50, "comparison": 40, "temporal": 20
    }  # fmt: skip
    assert {s: v["allocated"] for s, v in rep.strata.items()} == {
        "numeric_lookup": 9, "comparison": 7, "temporal": 4
    }  # fmt: skip
    drafts = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(drafts) == 20
    cats = [d["category"] for d in drafts]
    assert cats.count("numeric_lookup") == 9 and cats.count("comparison") == 7
    for d in drafts:
        Entry.model_validate(d)
        assert d["source"] == "log" and d["split"] == "fresh"
        assert d["as_of"].startswith("2026-09-")  # from the log, not the ts
        blob = json.dumps(d)
        assert "secret" not in blob and "retrieved" not in blob and "feedback" not in blob
        # nothing from the main set
        assert all(_jac(d["query"], f"company{i} revenue FY{2000 + i}") < 1 for i in range(40, 50))
    for a, b in itertools.combinations(drafts, 2):
        assert _jac(a["query"], b["query"]) < NEAR_DUPLICATE
    # reproducible under the seed; another seed draws another sample
    again = sample_month(db, "2026-10", n=20, seed=7, golden=golden)
    assert [e["id"] for e in again.entries] == [d["id"] for d in drafts]
    other = sample_month(db, "2026-10", n=20, seed=8, golden=golden)
    assert [e["id"] for e in other.entries] != [d["id"] for d in drafts]


def test_sample_takes_what_there_is(tmp_path: Path) -> None:
    db, golden = _month(tmp_path)
    rep = sample_month(db, "2026-10", n=500, seed=1, golden=golden)
    # every distinct query except the 10 in the main set and one of each near-duplicate pair
    assert len(rep.entries) == 110 - 10 - 10
    assert rep.excluded_in_golden == 10 and rep.excluded_near_duplicates == 10
    assert sample_month(db, "2026-12", n=5).entries == []


def test_sample_refuses_a_bad_month(tmp_path: Path) -> None:
    db, _ = _month(tmp_path)
    from assay.errors import UsageError

    with pytest.raises(UsageError):
        sample_month(db, "2026-13", n=5)
