from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def known_month(
    month_start: dt.datetime, n: int, *, seed: int, no_hits: int, down: int, refusals: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A month of log lines whose rates are known by construction: the first `no_hits` lines
    retrieve nothing, lines [0, down) get feedback down (the rest up or none), lines
    [n - refusals, n) answer with a refusal, every line answers; latencies are a permutation of
    1..n ms (so p50 and p95 are numpy's percentiles of 1..n)."""
    rng = np.random.default_rng(seed)
    lat = rng.permutation(np.arange(1, n + 1))
    lines = []
    for i in range(n):
        hits = (
            []
            if i < no_hits
            else [{"chunk_id": f"c{i % 7}", "score": float(rng.uniform(5, 15))}, f"c{(i + 1) % 7}"]
        )
        answer = (
            "I'm sorry, but the provided filings do not contain that information."
            if i >= n - refusals
            else f"Revenue was ${i},000 million in fiscal 2025."
        )
        lines.append(
            {
                "ts": (month_start + dt.timedelta(hours=i)).isoformat().replace("+00:00", "Z"),
                "query": f"query number {i} about revenue FY2025",
                "retrieved": hits,
                "answer": answer,
                "feedback": "down" if i < down else ("up" if i % 2 else None),
                "latency_ms": float(lat[i]),
                "session": f"s{i % 5}",
            }
        )
    expected = {
        "n": n,
        "no_hits_rate": no_hits / n,
        "abstain_rate": refusals / n,
        "down_rate": down / n,
        "latency_p50": float(np.percentile(np.arange(1, n + 1), 50)),
        "latency_p95": float(np.percentile(np.arange(1, n + 1), 95)),
    }
    return lines, expected


@pytest.fixture
def two_months(tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    oct_lines, oct_exp = known_month(
        dt.datetime(2026, 10, 1, tzinfo=dt.UTC), 200, seed=1, no_hits=14, down=23, refusals=9
    )
    nov_lines, nov_exp = known_month(
        dt.datetime(2026, 11, 1, tzinfo=dt.UTC), 120, seed=2, no_hits=30, down=6, refusals=12
    )
    path = write_jsonl(tmp_path / "traffic.jsonl", oct_lines + nov_lines)
    return path, {"2026-10": oct_exp, "2026-11": nov_exp}
