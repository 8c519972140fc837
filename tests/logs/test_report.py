from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import ks_2samp

from assay.logs import category_shares, ingest_logs, traffic_report
from assay.logs.classify import UNCERTAIN


def test_rates_are_the_known_ones(two_months: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    path, expected = two_months
    db = tmp_path / "logs.db"
    ingest_logs([path], db, progress=False)
    rep = traffic_report(db)
    d = json.loads(rep.to_json())
    assert [p["period"] for p in d["periods"]] == ["2026-10", "2026-11"]
    for p in d["periods"]:
        exp = expected[p["period"]]
        for key, value in exp.items():
            assert p[key] == pytest.approx(value, abs=1e-12), (p["period"], key)
        assert sum(c["n"] for c in p["categories"].values()) == p["n"]
    assert d["periods"][0]["drift"] is None
    # drift: KS of top-1 scores, checked against scipy
    lines = [json.loads(x) for x in path.read_text().splitlines()]

    def tops(month: str) -> list[float]:
        return [
            max(h["score"] for h in r["retrieved"] if isinstance(h, dict))
            for r in lines
            if r["ts"].startswith(month) and r["retrieved"]
        ]

    ref = ks_2samp(tops("2026-11"), tops("2026-10"), method="exact")  # small periods: the exact p
    drift = d["periods"][1]["drift"]
    assert drift["vs"] == "2026-10"
    assert drift["statistic"] == pytest.approx(float(ref.statistic))
    assert drift["pvalue"] == pytest.approx(float(ref.pvalue))
    # one pair of consecutive periods: Holm over a family of one
    assert drift["family"] == 1 and drift["pvalue_holm"] == pytest.approx(drift["pvalue"])
    got = category_shares(db)
    assert sum(got.shares.values()) == pytest.approx(1.0)
    assert got.shares == pytest.approx(rep.confident_shares)
    assert got.uncertain == rep.uncertain
    assert d["category_shares"].keys() == set(got.shares) | (
        {UNCERTAIN} if got.uncertain else set()
    )
    md = rep.to_markdown()
    assert "2026-11" in md and "Category share" in md


def test_weeks(two_months: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    path, _ = two_months
    db = tmp_path / "logs.db"
    ingest_logs([path], db, progress=False)
    rep = traffic_report(db, by="week")
    assert all(p.period[4:6] == "-W" for p in rep.periods)
    assert sum(p.stats["n"] for p in rep.periods) == 320


def test_retrieval_on_matching_traffic(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {"id": "g1", "query": "AVER revenue FY2025", "category": "numeric_lookup",
                 "evidence_paths": [[["c1"]]]},
                {"id": "g2", "query": "AVER latest quarter revenue", "category": "temporal",
                 "as_of": "2026-10-05", "evidence_paths": [[["c2"]]]},
            ]
        )
        + "\n"
    )  # fmt: skip
    rows = [
        # matches g1 (case and punctuation differ); c1 at rank 1
        {"ts": "2026-10-02T09:00:00Z", "query": "aver revenue, FY2025", "retrieved": ["c1", "x"]},
        # matches g1; c1 not retrieved
        {"ts": "2026-10-03T09:00:00Z", "query": "AVER revenue FY2025", "retrieved": ["x", "y"]},
        # matches g2 only with the right as_of
        {"ts": "2026-10-05T09:00:00Z", "query": "AVER latest quarter revenue",
         "retrieved": ["y", "c2"]},
        {"ts": "2026-10-06T09:00:00Z", "query": "AVER latest quarter revenue",
         "retrieved": ["c2"]},
        {"ts": "2026-10-07T09:00:00Z", "query": "something else", "retrieved": ["c1"]},
    ]  # fmt: skip
    log = tmp_path / "l.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "logs.db"
    ingest_logs([log], db, golden=golden, progress=False)
    rep = traffic_report(db, golden=golden, k=5)
    r = rep.periods[0].retrieval
    assert r is not None and r["matched"] == 3
    cats = r["categories"]
    assert cats["numeric_lookup"]["n"] == 2
    assert cats["numeric_lookup"]["recall@5"] == pytest.approx(0.5)
    assert cats["temporal"]["n"] == 1
    assert cats["temporal"]["recall@5"] == pytest.approx(1.0)
    assert cats["temporal"]["ndcg@5"] == pytest.approx(1 / np.log2(3))
    assert rep.golden_shares == {"numeric_lookup": 0.5, "temporal": 0.5}


def test_drift_is_holm_adjusted_over_every_pair_of_periods(tmp_path: Path) -> None:
    import datetime as dt

    from statsmodels.stats.multitest import multipletests

    from tests.logs.conftest import known_month, write_jsonl

    lines: list[dict[str, Any]] = []
    for month, seed in ((9, 1), (10, 2), (11, 3), (12, 4)):
        start = dt.datetime(2026, month, 1, tzinfo=dt.UTC)
        lines += known_month(start, 60, seed=seed, no_hits=3, down=2, refusals=1)[0]
    db = tmp_path / "logs.db"
    ingest_logs([write_jsonl(tmp_path / "t.jsonl", lines)], db, progress=False)
    rep = traffic_report(db)
    tested = [p.drift for p in rep.periods if p.drift is not None]
    assert len(tested) == 3  # Oct vs Sep, Nov vs Oct, Dec vs Nov: three tests, one family
    want = multipletests([d["pvalue"] for d in tested], method="holm")[1]
    assert [d["pvalue_holm"] for d in tested] == pytest.approx(list(want))
    assert all(d["family"] == 3 for d in tested)
