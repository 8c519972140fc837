"""The filings pipeline's answers on the synthetic room, where the truth is known by construction.

Generates a room (or reads one), builds its corpus, runs the filings pipeline over the golden set
with each answerer asked for (`--answerer`, repeatable; default facts and extractive), and prints
per category the deterministic checks' answer_correct and numbers_verified (pass / decided), and
refusal_ok over the entries that should be refused (expected behaviour abstain or refuse) and
conflict_handling over the planted conflicts; then each of issue 38's room targets (answer_correct
>= 0.80 on comparison, temporal and conflict entries -- where answer_correct abstains on every
conflict entry, conflict_handling stands for it --, refusal_ok >= 0.90 on entries that should be
refused, numeric lookups 113 of 113) with met / missed. Run it under the previous release's
PYTHONPATH in the same minutes to compare, so
the facts answerer (XBRL company facts, which `assay corpus build` copies from the room's xbrl/
into the corpus, statement facts, formulas) can be
compared with the extractive one on the same retrieval.

    PYTHONPATH=src .venv/bin/python bench/bench_room_answers.py [--seed 7] [--companies 6]
        [--years 3] [--mode full] [--lexical] [--answerer facts --answerer extractive]

`--lexical` runs the full pipeline without the dense model (as `make demo` does); without it the
dense model is used (the `dense` extra).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from assay.cache import RequestCache
from assay.corpus import build_corpus, load_chunks
from assay.dataset import ExpectedBehavior, load_dataset
from assay.judge.checking import check_rows
from assay.runner import run_system
from assay.synth.generate import generate_room
from assay.systems.filings import build

CHECKS = ("answer_correct", "numbers_verified", "refusal_ok", "conflict_handling")
TARGETS = (
    ("comparison answer_correct >= 0.80", "comparison", "answer_correct", 0.80),
    ("temporal answer_correct >= 0.80", "temporal", "answer_correct", 0.80),
    ("conflict conflict_handling >= 0.80", "conflict", "conflict_handling", 0.80),
    ("should refuse refusal_ok >= 0.90", "should refuse", "refusal_ok", 0.90),
    ("numeric_lookup answer_correct all", "numeric_lookup", "answer_correct", 1.0),
)


def _cell(t: dict[str, int], check: str) -> str:
    n = t[check + "_n"]
    return f"{t[check] / n:.3f} ({t[check]} / {n})" if n else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--companies", type=int, default=6)
    ap.add_argument("--years", type=int, default=3)
    ap.add_argument("--mode", default="full")
    ap.add_argument("--lexical", action="store_true", help="no dense model (BM25 ranker)")
    ap.add_argument("--answerer", action="append", default=None)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the room and corpus here")
    args = ap.parse_args()
    answerers = args.answerer or ["facts", "extractive"]
    with tempfile.TemporaryDirectory() as tmp:
        base = args.workdir or Path(tmp)
        room, corpus = base / "room", base / "corpus"
        t0 = time.perf_counter()
        if not (room / "golden.jsonl").exists():
            generate_room(
                room, seed=args.seed, companies=args.companies, years=args.years,
                formats=("html", "pdf"),
            )  # fmt: skip
        if not (corpus / "chunks.jsonl").exists():
            build_corpus(room, meta=room / "documents.jsonl", out_dir=corpus)
        print(f"room and corpus ready in {time.perf_counter() - t0:.1f} s")
        ds = load_dataset(room / "golden.jsonl")
        chunks = load_chunks(corpus / "chunks.jsonl")
        overrides: dict[str, Any] = {"ranker": "bm25", "rerank": False} if args.lexical else {}
        table: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for name in answerers:
            t1 = time.perf_counter()
            system = build(corpus, mode=args.mode, answerer=name, **overrides)
            run = run_system(ds, system, k=5, cache=RequestCache(enabled=False), progress=False)
            rows, _ = check_rows(ds, run, chunks=chunks, checks=",".join(CHECKS))
            refuse = (ExpectedBehavior.abstain, ExpectedBehavior.refuse)
            for r in rows:
                cats = [r["category"], "overall"]
                if ds.by_id[r["id"]].behavior() in refuse:
                    cats.append("should refuse")
                for cat in cats:
                    t = table[(name, cat)]
                    for check in CHECKS:
                        if r.get(check) is not None:
                            t[check + "_n"] += 1
                            t[check] += bool(r[check])
            print(f"{name}: {len(rows)} answers in {time.perf_counter() - t1:.1f} s")
    print("\n| answerer | category | " + " | ".join(f"{c} (pass / decided)" for c in CHECKS) + " |")
    print("|---|---|" + "---|" * len(CHECKS))
    for (name, cat), t in sorted(
        table.items(), key=lambda kv: (kv[0][0], kv[0][1] in ("overall", "should refuse"), kv[0][1])
    ):
        print(f"| {name} | {cat} | " + " | ".join(_cell(t, c) for c in CHECKS) + " |")
    print("\n| answerer | target | measured | met |")
    print("|---|---|---|---|")
    for name in answerers:
        for label, cat, check, goal in TARGETS:
            t = table[(name, cat)]
            n = t[check + "_n"]
            rate = t[check] / n if n else None
            met = rate is not None and (rate >= goal if goal < 1 else t[check] == n)
            print(f"| {name} | {label} | {_cell(t, check)} | {'yes' if met else 'NO'} |")
    print(
        f"\nroom seed {args.seed}, {args.companies} companies x {args.years} years; mode "
        f"{args.mode}{' (lexical)' if args.lexical else ''}"
    )


if __name__ == "__main__":
    main()
