"""The DuckDB store's report against the report as it was computed before the store moved to
DuckDB, row for row, on the demo's traffic (`assay.logs.traffic_demo`, the default 1,500 queries a
month; October is the demo month, September its previous period for the drift).

The reference is the previous implementation, kept here: every record read by the
record-by-record reader (`read_log`), each `LogRecord.key` once, its category from the same
classifier, its abstention from the refusal check, and the per-period, per-category figures
summed in Python (`_Acc`, as the SQLite store's report did), with numpy's percentiles and the
Kolmogorov-Smirnov test of `assay.stats.drift`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.dataset import load_dataset
from assay.judge.refusal import detect_refusal
from assay.logs import LogRecord, normalize_query, read_log
from assay.logs.classify import Classifier, golden_pairs
from assay.logs.traffic_demo import run_logs_demo
from assay.stats.drift import ks_two_sample

pytestmark = pytest.mark.slow


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class _Acc:
    n: int = 0
    no_hits: int = 0
    answered: int = 0
    abstained: int = 0
    down: int = 0
    feedback_n: int = 0
    latency: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)

    def add(self, rec: LogRecord) -> None:
        self.n += 1
        self.no_hits += not rec.retrieved
        if rec.answer is not None:
            self.answered += 1
            self.abstained += detect_refusal(rec.answer).refused
        if rec.feedback is not None:
            self.feedback_n += 1
            self.down += rec.feedback == "down"
        if rec.latency_ms is not None:
            self.latency.append(rec.latency_ms)
        if rec.top_score is not None:
            self.scores.append(rec.top_score)

    def to_dict(self, total: int | None = None) -> dict[str, Any]:
        def pct(q: float) -> float | None:
            return float(np.percentile(self.latency, q)) if self.latency else None

        d: dict[str, Any] = {
            "n": self.n,
            "no_hits_rate": _rate(self.no_hits, self.n),
            "answered": self.answered,
            "abstain_rate": _rate(self.abstained, self.answered),
            "down_rate": _rate(self.down, self.n),
            "feedback_n": self.feedback_n,
            "down_share_of_feedback": _rate(self.down, self.feedback_n),
            "latency_p50": pct(50),
            "latency_p95": pct(95),
        }
        return d if total is None else {"share": _rate(self.n, total), **d}


def _reference(paths: list[Path], golden: Path, min_confidence: float = 0.0) -> dict[str, Any]:
    """`min_confidence`: a neighbour's or a rule's placement below it is the uncertain bucket."""
    ds = load_dataset(golden)
    clf = Classifier(golden_pairs(ds.entries))
    records: dict[str, LogRecord] = {}
    for p in paths:
        for rec in read_log(p):
            records.setdefault(rec.key(), rec)
    periods: dict[str, _Acc] = defaultdict(_Acc)
    cats: dict[str, dict[str, _Acc]] = defaultdict(lambda: defaultdict(_Acc))
    shares: dict[str, int] = defaultdict(int)
    matched: dict[str, int] = defaultdict(int)
    by_norm = defaultdict(list)
    for e in ds.entries:
        by_norm[normalize_query(e.query)].append(e)
    for rec in records.values():
        month = f"{rec.ts.year:04d}-{rec.ts.month:02d}"
        c = clf.classify(rec.query)
        unsure = c.method in ("nearest", "rule") and c.confidence < min_confidence
        cat = "uncertain" if unsure else c.category
        periods[month].add(rec)
        cats[month][cat].add(rec)
        shares[cat] += 1
        if any(
            e.as_of is None or e.as_of == rec.as_of
            for e in by_norm.get(normalize_query(rec.query), [])
        ):
            matched[month] += 1
    out: dict[str, Any] = {"n": len(records), "shares": shares, "periods": {}}
    prev = None
    for month in sorted(periods):
        acc = periods[month]
        drift = None
        if prev is not None:
            ks = ks_two_sample(acc.scores, prev)
            drift = None if ks is None else ks.to_dict()
        prev = acc.scores
        out["periods"][month] = {
            "stats": acc.to_dict(),
            "categories": {c: a.to_dict(acc.n) for c, a in sorted(cats[month].items())},
            "drift": drift,
            "matched": matched[month],
        }
    return out


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for k, v in want.items():
        if isinstance(v, float) and k.startswith("latency"):
            assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-9), k
        else:
            assert got[k] == v, k


def test_the_duckdb_report_is_the_previous_report_on_the_demo_month(tmp_path: Path) -> None:
    res = run_logs_demo(tmp_path, n_sample=5, log=lambda _line: None)
    paths = sorted((tmp_path / "logs").glob("*.jsonl"))
    rep = res.report
    assert rep.threshold is not None and rep.threshold.how == "held-out"
    want = _reference(paths, tmp_path / "room" / "golden.jsonl", rep.threshold.value)
    assert rep.uncertain == want["shares"].get("uncertain", 0)
    assert [p.period for p in rep.periods] == ["2026-09", "2026-10"]
    assert rep.n == want["n"] == 3000
    assert rep.traffic_shares == {c: n / want["n"] for c, n in sorted(want["shares"].items())}
    for p in rep.periods:
        ref = want["periods"][p.period]
        _same(p.stats, ref["stats"])
        assert p.categories.keys() == ref["categories"].keys()
        for c, row in ref["categories"].items():
            _same(p.categories[c], row)
        if ref["drift"] is None:
            assert p.drift is None
        else:
            assert p.drift is not None
            assert p.drift["statistic"] == pytest.approx(ref["drift"]["statistic"], rel=1e-12)
            assert p.drift["pvalue"] == pytest.approx(ref["drift"]["pvalue"], rel=1e-9)
        assert p.retrieval is not None and p.retrieval["matched"] == ref["matched"]
    assert rep.periods[1].stats["n"] == 1500  # the demo month, whole
