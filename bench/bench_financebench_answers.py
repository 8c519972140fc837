"""The reference filings pipeline's answers on FinanceBench's dev questions, by half.

Runs `assay.systems.filings.build(corpus, mode=..., answerer=...)` over the dev questions (each
with its `as_of`, the acceptance date of the filing it cites), then the deterministic checks
with the chunk table, and prints per half (A: where the rules were read; B: reported once) and
question type: numeric_correct (passes / decided), abstained_when_should_answer (over all the
questions of the half), and how many answers the facts answerer computed.

    ASSAY_CACHE_DIR=... PYTHONPATH=src .venv/bin/python bench/bench_financebench_answers.py \\
        --corpus fbcorpus/ --questions ../shared/financebench/questions_dev.jsonl \\
        [--mode full] [--answerer facts|extractive] [--encoder onnx-int8] [--out rows.jsonl]

Questions whose filing is not in the corpus are left out (their evidence cannot be read).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from assay.benchmarks.financebench import questions_dataset, split_halves
from assay.cache import RequestCache
from assay.corpus.chunks import load_chunks
from assay.dataset.io import Dataset
from assay.judge.checks import check_rows
from assay.runner import run_system


class _Replay:
    """The system, with the hits an earlier run retrieved for each question."""

    def __init__(self, system: Any, rows: Path) -> None:
        self.system = system
        self.hits: dict[str, list[str]] = {}
        for line in rows.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            self.hits[r["query"]] = r["retrieved"]

    def identity(self) -> dict[str, Any]:
        return {"replay": True, **self.system.identity()}

    def retrieve(self, query: str, *, as_of: Any, k: int) -> list[str]:
        return self.hits.get(query, [])[:k]

    def answer(self, query: str, *, as_of: Any, hits: Any) -> Any:
        return self.system.answer(query, as_of=as_of, hits=hits)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--questions", required=True, type=Path)
    ap.add_argument("--mode", default="full")
    ap.add_argument("--answerer", default=None, help="extractive | facts (default: the mode's)")
    ap.add_argument("--encoder", default=None, help="onnx-int8 | onnx-fp32 (default: torch)")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--half", choices=("A", "B", "all"), default="all")
    ap.add_argument("--out", type=Path, default=None, help="per-entry rows (JSONL)")
    ap.add_argument(
        "--reuse-hits",
        type=Path,
        default=None,
        help="rows written by --out of an earlier run: answer from their retrieved chunks "
        "instead of retrieving again (compares answerers on the same retrieval)",
    )
    args = ap.parse_args()

    from assay.systems.filings import build

    t0 = time.perf_counter()
    ds = questions_dataset(args.questions, args.corpus)
    questions = {e.id: {"question_type": e.category} for e in ds.entries}
    halves = split_halves(questions)
    chunks = load_chunks(args.corpus / "chunks.jsonl")
    docs = {c.doc_id for c in chunks}
    entries = [
        e
        for e in ds.entries
        if all(a.doc in docs for a in e.anchors())
        and (args.half == "all" or halves[e.id] == args.half)
    ]
    left_out = len(ds.entries) - len(entries)
    overrides: dict[str, Any] = {}
    if args.encoder:
        from assay.systems.filings.onnx_encoder import OnnxEncoder

        overrides["encoder"] = OnnxEncoder(
            variant=args.encoder.split("-")[-1], cache_dir=args.cache_dir
        )
    system: Any = build(
        args.corpus, mode=args.mode, answerer=args.answerer, cache_dir=args.cache_dir, **overrides
    )
    if args.reuse_hits is not None:
        system = _Replay(system, args.reuse_hits)
    run = run_system(
        Dataset(entries), system, k=5, cache=RequestCache(enabled=False), progress=False
    )
    rows, _ = check_rows(
        Dataset(entries),
        run,
        chunks=chunks,
        checks="numeric_correct,abstained_when_should_answer,numbers_verified",
    )
    by_id = {r["id"]: r for r in rows}
    table: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for e in entries:
        r = by_id.get(e.id, {})
        computed = bool(run.row(e.id).extra.get("trace", {}).get("formula")) if e.id in run else 0
        for key in (
            (halves[e.id], e.category),
            (halves[e.id], "all"),
            ("all", e.category),
            ("all", "all"),
        ):
            t = table[key]
            t["n"] += 1
            nc = r.get("numeric_correct")
            if nc is not None:
                t["decided"] += 1
                t["numeric_ok"] += bool(nc)
            t["abstained"] += bool(r.get("abstained_when_should_answer"))
            t["computed"] += bool(computed)
    print(
        "| half | question type | n | numeric_correct (pass / decided) | abstained when it should answer |"
    )
    print("|---|---|---:|---|---|")
    for (half, cat), t in sorted(table.items()):
        nc = (
            f"{t['numeric_ok'] / t['decided']:.3f} ({t['numeric_ok']} / {t['decided']})"
            if t["decided"]
            else "-"
        )
        ab = f"{t['abstained'] / t['n']:.3f} ({t['abstained']} / {t['n']})"
        print(f"| {half} | {cat} | {t['n']} | {nc} | {ab} |")
    print(
        f"\nmode {args.mode}, answerer {args.answerer or 'default'}; {len(entries)} questions "
        f"({left_out} left out: filing not in the corpus or other half); "
        f"{time.perf_counter() - t0:.0f} s"
    )
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as fh:
            for e in entries:
                row = run.row(e.id) if e.id in run else None
                fh.write(
                    json.dumps(
                        {
                            "id": e.id,
                            "half": halves[e.id],
                            "category": e.category,
                            "query": e.query,
                            "reference": e.reference_answer,
                            "answer": None if row is None else row.answer,
                            "retrieved": [] if row is None else [h.chunk_id for h in row.retrieved],
                            **{k: v for k, v in by_id.get(e.id, {}).items() if k not in ("id",)},
                        }
                    )
                    + "\n"
                )


if __name__ == "__main__":
    main()
