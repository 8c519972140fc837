"""Agent and router checks at scale: the tool-call checks and label_correct on 100,000 entries,
timed next to the retrieval scorer on 100,000 entries in the same run.

Each side is timed end to end from loaded objects (dataset and run in memory), best of
``--repeat``: `check_run` with the five tool-call checks on entries with ``expected_tool_calls``
(2-3 expected calls each; the run's rows make 2-4 calls, a tenth of them wrong), `check_run`
with ``label_correct`` on entries with ``expected_label``, and `score_retrieval` (recall@5,
complete@5, mrr, ndcg@5) on entries with chunk-id gold and 10 hits. Prints seconds, entries per
second and the ratio to the retrieval scorer.

    PYTHONPATH=src .venv/bin/python bench/bench_agent_checks.py [--entries 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from assay.dataset import Dataset, Entry
from assay.judge.checking import check_run
from assay.runs import Run
from assay.score import score_retrieval

TOOLS = ("search_filings", "calculator", "fetch_table", "send_email")


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def tool_case(n: int, rng: np.random.Generator) -> tuple[Dataset, Run]:
    entries, rows = [], []
    for i in range(n):
        calls = [
            {
                "name": "search_filings",
                "arguments": {"company": f"C{i % 97}", "period": f"FY{2015 + i % 9}"},
            },
            {
                "name": "calculator",
                "arguments": {"op": "div", "a": {"approx": float(i % 50), "abs": 0.5}},
            },
        ]
        if i % 3 == 0:
            calls.append({"name": "fetch_table", "arguments": {"table": {"pattern": "^income.*"}}})
        entries.append(
            Entry.model_validate(
                {
                    "id": f"t{i}",
                    "query": f"question {i}",
                    "category": f"c{i % 6}",
                    "answerable": False,
                    "expected_tool_calls": {
                        "calls": calls,
                        "ordered": i % 2 == 0,
                        "forbidden": ["send_email"],
                    },
                }
            )
        )
        made = [
            {
                "name": c["name"],
                "arguments": {
                    k: (
                        v["approx"]
                        if isinstance(v, dict) and "approx" in v
                        else ("income_2023" if isinstance(v, dict) else v)
                    )
                    for k, v in c["arguments"].items()
                },
            }
            for c in calls
        ]
        if rng.random() < 0.1:
            made[0]["arguments"]["period"] = "FY1999"
        if rng.random() < 0.05:
            made.append({"name": "send_email", "arguments": {"to": "x"}})
        rows.append({"id": f"t{i}", "tool_calls": made})
    return Dataset(entries, path="tools.jsonl", content_hash="0" * 64), Run.from_rows(rows)


def label_case(n: int, rng: np.random.Generator) -> tuple[Dataset, Run]:
    labs = ["10-K", "10-Q", "8-K", "DEF 14A"]
    entries, rows = [], []
    for i in range(n):
        g = labs[i % 4]
        entries.append(
            Entry.model_validate(
                {
                    "id": f"r{i}",
                    "query": f"q {i}",
                    "category": f"c{i % 6}",
                    "answerable": False,
                    "expected_label": {"label": g, "allowed": labs},
                }
            )
        )
        rows.append(
            {"id": f"r{i}", "label": g if rng.random() < 0.85 else labs[int(rng.integers(4))]}
        )
    return Dataset(entries, path="routing.jsonl", content_hash="1" * 64), Run.from_rows(rows)


def retrieval_case(n: int, rng: np.random.Generator) -> tuple[Dataset, Run]:
    entries, rows = [], []
    for i in range(n):
        gold = f"d{i % 5000}#{i % 7}"
        entries.append(
            Entry.model_validate(
                {
                    "id": f"q{i}",
                    "query": f"q {i}",
                    "category": f"c{i % 6}",
                    "evidence_paths": [[[gold]]],
                }
            )
        )
        hits = [
            f"d{int(x)}#{int(y)}"
            for x, y in zip(rng.integers(0, 5000, 10), rng.integers(0, 7, 10), strict=True)
        ]
        if rng.random() < 0.6:
            hits[int(rng.integers(10))] = gold
        rows.append({"id": f"q{i}", "retrieved": list(dict.fromkeys(hits))})
    return Dataset(entries, path="ret.jsonl", content_hash="2" * 64), Run.from_rows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.entries
    ret_ds, ret_run = retrieval_case(n, rng)
    tool_ds, tool_run = tool_case(n, rng)
    lab_ds, lab_run = label_case(n, rng)
    t_ret = _best(lambda: score_retrieval(ret_ds, ret_run, k=5), a.repeat)
    tool_checks = "tool_selection,tool_arguments,tool_order,forbidden_tool,trajectory_match"
    t_tool = _best(
        lambda: check_run(tool_ds, tool_run, checks=tool_checks, n_boot=200, cluster="none"),
        a.repeat,
    )
    t_lab = _best(
        lambda: check_run(lab_ds, lab_run, checks="label_correct", n_boot=200, cluster="none"),
        a.repeat,
    )
    print(f"{n:,} entries each, best of {a.repeat}")
    print(f"{'':<32}{'seconds':>10}{'entries/s':>14}{'vs retrieval':>14}")
    for name, t in (
        ("retrieval scorer (4 metrics)", t_ret),
        ("tool-call checks (5)", t_tool),
        ("label_correct", t_lab),
    ):
        print(f"{name:<32}{t:>10.2f}{n / t:>14,.0f}{t / t_ret:>13.1f}x")


if __name__ == "__main__":
    main()
