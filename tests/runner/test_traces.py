"""Retrieval traces: a system's candidate pool before and after reranking reaches the run row,
through the cache and the JSONL run file, whichever way the system hands it over."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from assay.cache import RequestCache
from assay.dataset import Entry
from assay.runner import run_system
from assay.runs import load_run
from assay.systems import SystemCallError

ENTRIES = [Entry(id="a", query="qa", category="x"), Entry(id="b", query="qb", category="x")]
POOL = ["p3", "p1", "p2"]


class ReturnsTrace:
    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> dict[str, Any]:
        return {
            "hits": ["p1", "p2"][:k],
            "trace": {
                "candidates": [{"chunk_id": c, "score": 3.0 - i} for i, c in enumerate(POOL)],
                "reranked": ["p1", "p2", "p3"],
                "note": query,
            },
        }


class TraceMethod:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dt.date | None, int]] = []

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[str]:
        return ["p1"]

    def trace(self, query: str, *, as_of: dt.date | None, k: int) -> dict[str, Any]:
        self.calls.append((query, as_of, k))
        return {"candidates": POOL}

    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
        return {"answer": "x", "trace": {"prompt_tokens": 12}}


class BadPool(ReturnsTrace):
    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> dict[str, Any]:
        return {"hits": ["p1"], "trace": {"candidates": ["p1", {"score": 1.0}]}}


def test_a_trace_returned_with_the_hits_round_trips_through_the_run_file(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    out = tmp_path / "run.jsonl"
    run = run_system(ENTRIES, ReturnsTrace(), k=2, cache=cache, out=out, progress=False)
    assert run.hits("a") == ["p1", "p2"]
    want = {
        "candidates": [
            {"chunk_id": "p3", "score": 3.0},
            {"chunk_id": "p1", "score": 2.0},
            {"chunk_id": "p2", "score": 1.0},
        ],
        "reranked": [{"chunk_id": "p1"}, {"chunk_id": "p2"}, {"chunk_id": "p3"}],
        "note": "qa",
    }
    assert run.row("a").extra["trace"] == want
    assert load_run(out).row("a").extra["trace"] == want
    again = run_system(ENTRIES, ReturnsTrace(), k=2, cache=cache, progress=False)
    assert again.meta["cache_hits"] == 2 and again.row("a").extra["trace"] == want


def test_a_trace_method_is_called_after_retrieve_and_merged_with_the_answer_trace() -> None:
    system = TraceMethod()
    entries = [Entry(id="a", query="qa", category="x", as_of=dt.date(2024, 3, 31))]
    run = run_system(entries, system, k=4, cache=RequestCache(enabled=False), progress=False)
    assert system.calls == [("qa", dt.date(2024, 3, 31), 4)]
    assert run.row("a").extra["trace"] == {
        "prompt_tokens": 12,
        "candidates": [{"chunk_id": c} for c in POOL],
    }


def test_a_bad_hit_in_a_pool_names_the_entry_and_the_field() -> None:
    with pytest.raises(SystemCallError, match=r"entry a: .*trace\.candidates\.1"):
        run_system(ENTRIES, BadPool(), k=2, cache=RequestCache(enabled=False), progress=False)
