"""The traffic classifier trusts a FinanceBench import: each of its questions asked word for word
takes its own category (metrics-generated, domain-relevant, novel-generated), the built-in
wording rules stay off, and the report says how every query was classified.

Built from the FinanceBench dev split in `shared/financebench` (skipped where it is absent)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from assay.benchmarks.financebench.importer import import_dataset
from assay.dataset import load_dataset
from assay.logs import ingest_logs, traffic_report
from assay.logs.store import connect
from assay.logs.traffic_demo import analyst_phrasing

FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip

pytestmark = pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)

OTHER = ["hello", "what's the weather in Paris", "reset my password please"]


def test_verbatim_golden_questions_take_their_own_categories(tmp_path: Path) -> None:
    golden = tmp_path / "fb.jsonl"
    import_dataset(FB / "questions_dev.jsonl", out=golden, documents=FB / "documents.jsonl")
    entries = load_dataset(golden).entries
    assert {e.category for e in entries} == {
        "metrics-generated",
        "domain-relevant",
        "novel-generated",
    }
    rng = np.random.default_rng(5)
    lines = []
    for i, e in enumerate(entries):
        ts = f"2026-10-{1 + i % 28:02d}T10:{i % 60:02d}:00Z"
        lines.append({"ts": ts, "query": e.query, "session": "verbatim"})
        lines.append({"ts": ts, "query": analyst_phrasing(e.query, rng), "session": "typed"})
    lines += [{"ts": "2026-10-30T10:00:00Z", "query": q, "session": "other"} for q in OTHER]
    log = tmp_path / "traffic.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = tmp_path / "store"
    ingest_logs([log], store, golden=golden, progress=False)

    with connect(store) as con:
        rows = con.execute("SELECT query, session, category, method FROM queries").fetchall()
    own = {e.query: e.category for e in entries}
    verbatim = [r for r in rows if r[1] == "verbatim"]
    assert len(verbatim) == len(entries)
    # every golden question asked word for word: its own category, found by the golden match
    assert all(cat == own[q] and how == "golden" for q, _, cat, how in verbatim)
    # no built-in category anywhere: the import's taxonomy is the only one
    assert {r[2] for r in rows} <= set(own.values()) | {"other"}
    assert all(r[3] != "rule" for r in rows)

    rep = traffic_report(store, golden=golden)
    shares = rep.methods
    assert shares["golden"] >= len(entries) / len(rows)
    assert sum(shares.values()) == pytest.approx(1.0)
    by_method = Counter(r[3] for r in rows)
    assert shares == {m: n / len(rows) for m, n in by_method.items()}
    assert "How queries were classified" in rep.to_markdown()
    # traffic shares of the golden categories match what was asked (verbatim + typed + other)
    asked = Counter(own[q] for q, s, _, _ in rows if s == "verbatim")
    for cat, n in asked.items():
        assert rep.traffic_shares[cat] >= n / len(rows)


def test_the_built_in_rules_when_asked_for(tmp_path: Path) -> None:
    golden = tmp_path / "fb.jsonl"
    import_dataset(FB / "questions_dev.jsonl", out=golden, documents=FB / "documents.jsonl")
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps({"ts": "2026-10-01T10:00:00Z", "query": "3M revenue y/y"}) + "\n")
    ingest_logs([log], tmp_path / "a", golden=golden, progress=False)
    ingest_logs([log], tmp_path / "b", golden=golden, progress=False, rules=True)
    with connect(tmp_path / "a") as a, connect(tmp_path / "b") as b:
        q = "SELECT category, method FROM queries"
        assert a.execute(q).fetchone()[1] != "rule"
        assert b.execute(q).fetchone() == ("comparison", "rule")
