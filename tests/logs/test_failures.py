from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import UsageError
from assay.logs import find_failures, ingest_logs

from .conftest import write_jsonl

REFUSAL = "I'm sorry, but the provided filings do not contain that information."


def _log(tmp_path: Path) -> tuple[Path, Path]:
    rows: list[dict[str, Any]] = []

    def add(q: str, **kw: Any) -> None:
        rows.append(
            {
                "ts": f"2026-10-{1 + len(rows):02d}T09:00:00Z",
                "query": q,
                "retrieved": [{"chunk_id": "c", "score": 10.0}],
                "answer": "Revenue was $5 million.",
                **kw,
            }
        )

    add("kestrel deposits fy2025", feedback="down")  # A: down
    add("Kestrel deposits FY2025?", answer=REFUSAL)  # A again (same normalised query): abstained
    add("averix rpo last fye", retrieved=[])  # B: no hits
    add("averix rpo last fye please", retrieved=[])  # B': near-duplicate of B (4/5 tokens)
    add("weird low score query", retrieved=[{"chunk_id": "c", "score": 0.5}])  # C: low score
    add("averix ein", feedback="down")  # D: already in the main set
    add("fine query one")
    add("fine query two", feedback="up")
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    golden = write_jsonl(
        tmp_path / "golden.jsonl", [{"id": "g1", "query": "AVERIX EIN", "category": "x"}]
    )
    db = tmp_path / "logs.db"
    ingest_logs([log], db, progress=False)
    return db, golden


def test_failures_dedup_with_rule_names(tmp_path: Path) -> None:
    db, golden = _log(tmp_path)
    out = tmp_path / "candidates.jsonl"
    rep = find_failures(db, min_score=1.0, golden=golden, out=out)
    assert rep.considered == 8 and rep.failing == 6
    assert rep.by_rule == {"down": 2, "abstained": 1, "no_hits": 2, "low_score": 1}
    assert rep.excluded_in_golden == 1
    drafts = [json.loads(x) for x in out.read_text().splitlines()]
    got = {
        d["query"]: (d["metadata"]["failure_rules"], d["metadata"]["occurrences"]) for d in drafts
    }
    assert got == {
        "kestrel deposits fy2025": (["down", "abstained"], 2),
        "averix rpo last fye": (["no_hits"], 2),
        "weird low score query": (["low_score"], 1),
    }
    assert all(d["source"] == "log" and "retrieved" not in json.dumps(d) for d in drafts)
    assert all(d["label_tier"] == "draft" for d in drafts)  # nobody has labelled them: never gated
    only_down = find_failures(db, rules=["down"])
    assert [e["query"] for e in only_down.entries] == ["kestrel deposits fy2025", "averix ein"]
    assert only_down.min_score is None


def test_default_low_score_threshold_is_the_5th_percentile(tmp_path: Path) -> None:
    db, _ = _log(tmp_path)
    rep = find_failures(db, rules=["low_score"])
    # top-1 scores: 10 x5 and 0.5 -> numpy's 5th percentile
    import numpy as np

    assert rep.min_score == pytest.approx(float(np.percentile([10.0] * 5 + [0.5], 5)))
    assert [e["query"] for e in rep.entries] == ["weird low score query"]


def test_unknown_rule_is_refused(tmp_path: Path) -> None:
    db, _ = _log(tmp_path)
    with pytest.raises(UsageError, match="unknown failure rule"):
        find_failures(db, rules=["slow"])
