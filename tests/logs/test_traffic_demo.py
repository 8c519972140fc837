from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assay.logs.traffic_demo import analyst_phrasing, generate_traffic, run_logs_demo


def test_analyst_phrasing_is_seeded() -> None:
    q = "subscription and support revenue growth fiscal '22 Averix Technologies"
    a = analyst_phrasing(q, np.random.default_rng(3))
    assert a == analyst_phrasing(q, np.random.default_rng(3))
    outs = {analyst_phrasing(q, np.random.default_rng(s)) for s in range(20)}
    assert len(outs) > 5 and any("y/y" in o for o in outs)


def test_logs_demo_runs_the_loop(tmp_path: Path) -> None:
    lines: list[str] = []
    res = run_logs_demo(tmp_path, per_month=150, n_sample=20, log=lines.append)
    assert [x[:4] for x in lines] == ["1/6 ", "2/6 ", "3/6 ", "4/6 ", "5/6 ", "6/6 "]
    assert res.ingest.total("added") == 300 and res.ingest.total("bad") == 1
    d = json.loads((tmp_path / "report.json").read_text())
    assert [p["n"] for p in d["periods"]] == [150, 150]
    assert d["periods"][1]["drift"]["vs"] == "2026-09"
    assert d["periods"][1]["retrieval"]["matched"] > 0
    drafts = [json.loads(x) for x in (tmp_path / "fresh.jsonl").read_text().splitlines()]
    assert 0 < len(drafts) <= 20 and all(e["split"] == "fresh" for e in drafts)
    cands = [json.loads(x) for x in (tmp_path / "candidates.jsonl").read_text().splitlines()]
    assert all(c["metadata"]["failure_rules"] for c in cands)
    seasonal = json.loads((tmp_path / "seasonal.json").read_text())
    assert seasonal["since"] == "2026-09-01"
    n_flagged = len(seasonal["flagged"])
    assert n_flagged == len(res.seasonal.flagged) > 0
    assert f": {n_flagged} of " in lines[5]
    assert f"{len(seasonal['recheck'])} unanswerable or partial entries to re-check" in lines[5]


class _Fixed:
    def retrieve(self, query: str, *, as_of: object, k: int) -> list[dict[str, object]]:
        return [{"chunk_id": f"c{len(query) % 7}", "score": float(len(query) % 5)}]


def test_traffic_is_seeded() -> None:
    from assay.dataset import Entry

    entries = [
        Entry(id=f"e{i}", query=f"Averix revenue growth fiscal '2{i}", category=c)
        for i, c in enumerate(["numeric_lookup", "temporal", "comparison", "unanswerable"])
    ]
    a = generate_traffic(entries, _Fixed(), months=["2026-09", "2026-10"], per_month=50, seed=4)
    b = generate_traffic(entries, _Fixed(), months=["2026-09", "2026-10"], per_month=50, seed=4)
    c = generate_traffic(entries, _Fixed(), months=["2026-09", "2026-10"], per_month=50, seed=5)
    assert a == b and a != c
    assert [len(v) for v in a.values()] == [50, 50]
    assert all(x["ts"].startswith("2026-10") for x in a["2026-10"])


def test_logs_demo_runs_without_an_ocr_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A core install has no OCR: the room then has no scanned pages, so no label goes stale
    and the report can score the traffic that matches golden entries (make demo's case)."""
    import sys

    for module in ("pytesseract", "rapidocr_onnxruntime"):  # as on a core install
        monkeypatch.setitem(sys.modules, module, None)
    lines: list[str] = []
    res = run_logs_demo(tmp_path, per_month=400, n_sample=10, log=lines.append)
    assert [x[:4] for x in lines] == ["1/6 ", "2/6 ", "3/6 ", "4/6 ", "5/6 ", "6/6 "]
    assert res.report.periods[-1].retrieval["matched"] > 0
