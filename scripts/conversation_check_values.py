"""Every check value on conversations, as JSON: run it with two source trees and compare the
files (`cmp`) to show that a change to the checks' speed changed none of their values.

Usage: PYTHONPATH=<tree>/src python scripts/conversation_check_values.py OUT.json WORK_DIR \
           [--financebench-module PATH] [--bench-entries N]

The values are each row `assay.judge.check_rows` gives (every registered check, the row's
numeric reason, key-fact recall, refusal and notes) and the conversation roll-up, on:

* the room's conversations (`generate_room(seed=11, companies=4, years=2)`, the filings system
  run over them with its own history and with none), built once into WORK_DIR and reused;
* the FinanceBench conversations of a test module that builds them (``answer_sets``,
  ``_dataset``, ``_run``, as tests/judge/test_financebench_conversations.py does), when given;
* the conversations of bench/bench_conversation_scoring.py (``--bench-entries``, 2,000).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from assay.cache import RequestCache
from assay.corpus import build_corpus, load_chunks
from assay.dataset import Dataset, load_dataset, parse_entries
from assay.judge import check_rows, check_run
from assay.judge.registry import check_names
from assay.runner import run_system
from assay.runs import Run, load_run
from assay.synth.generate import generate_room
from assay.systems.filings import build

CONVERSATION = ["kept_context", "no_contradiction", "clarified"]


def _room(work: Path) -> None:
    if (work / "none.jsonl").exists():
        return
    generate_room(work / "room", formats=("pdf",), seed=11, companies=4, years=2, scans=0)
    build_corpus(work / "room", meta=work / "room" / "documents.jsonl", out_dir=work / "corpus")
    ds = load_dataset(work / "room" / "conversations.jsonl")
    system = build(work / "corpus", mode="full", ranker="bm25", rerank=False)
    for mode in ("own", "none"):
        run_system(ds, system, history=mode, out=work / f"{mode}.jsonl", progress=False,
                   cache=RequestCache(work / "c.sqlite", enabled=False))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("--financebench-module", type=Path)
    ap.add_argument("--bench-entries", type=int, default=2000)
    a = ap.parse_args()
    out: dict[str, Any] = {}
    names = check_names()
    _room(a.work)
    ds = load_dataset(a.work / "room" / "conversations.jsonl")
    chunks = load_chunks(a.work / "corpus" / "chunks.jsonl")
    for mode in ("own", "none"):
        run = load_run(a.work / f"{mode}.jsonl")
        out[f"room/{mode}"] = check_rows(ds, run, chunks=chunks, checks=names)[0]
        report = check_run(ds, run, chunks=a.work / "corpus" / "chunks.jsonl",
                           checks=[*CONVERSATION, "answer_correct"], n_boot=200)  # fmt: skip
        assert report.conversations is not None
        out[f"room/{mode}/rollup"] = report.conversations.to_dict()
    if a.financebench_module is not None:
        spec = importlib.util.spec_from_file_location("fb_conversations", a.financebench_module)
        assert spec is not None and spec.loader is not None
        fb = importlib.util.module_from_spec(spec)
        sys.modules["fb_conversations"] = fb
        spec.loader.exec_module(fb)
        fds = fb._dataset()
        for kind, runs in fb.answer_sets().items():
            for name, answers in runs:
                run = (
                    Run.from_rows(
                        [{"id": i, "retrieved": [], "answer": t} for i, t in answers.items()]
                    )
                    if kind == "right"
                    else fb._run({}, answers)
                )
                out[f"fb/{kind}/{name}"] = check_rows(fds, run, checks=names)[0]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from bench_conversation_scoring import conversation_case

    lines, run = conversation_case(a.bench_entries, np.random.default_rng(0))
    entries, line_of, _ = parse_entries([(i + 1, x) for i, x in enumerate(lines)])
    bds = Dataset(entries, path="conv.jsonl", content_hash="3" * 64, lines=line_of)
    out["bench"] = check_rows(bds, run, checks=names)[0]
    report = check_run(bds, run, checks=CONVERSATION, n_boot=200, cluster="none")
    assert report.conversations is not None
    out["bench/rollup"] = report.conversations.to_dict()
    out["bench/rates"] = repr(report.rates)
    a.out.write_text(json.dumps(out, indent=0, sort_keys=True, default=repr))
    rows = sum(len(v) for v in out.values() if isinstance(v, list))
    print(f"{rows} rows of {len(names)} checks written to {a.out}")


if __name__ == "__main__":
    main()
