"""The whole gate: `assay gate` end to end vs a plain script over the same files.

Generates a dataset of ``--entries`` entries (6 categories, 1-3 required chunks each, all of
label tier gold), one chunk table of ``--chunks`` chunks, and two runs of ``--hits`` hits per
entry (the candidate a perturbed baseline), then times, each as its own subprocess (wall time,
CPU time and peak RSS from ``os.wait4``; on a shared machine CPU time is the steadier figure):

* ``assay gate DATASET BASE CAND --chunks TABLE --no-record`` (complete@5 gated, recall@5
  compared beside it, as the gate does by default), with ``--python`` (default: this one) and
  the ``PYTHONPATH`` given by ``--assay`` (repeat it to time several releases in the same
  minutes: ``--assay new=src --assay old=/tmp/base/src``);
* a plain script: the same files read with the standard json module (no validation), scored with
  pytrec_eval (recall@5, so complete@5 on single-path entries is recall == 1), and scipy's
  exact binomial test on the discordant pairs of each category.

The fresh-sample registry is a private one holding one sealed sample of unrelated entries, as a
team's registry would: the gate's fresh-sample guard does its real work (an empty registry lets
it skip fingerprinting).

    .venv/bin/python bench/bench_gate.py [--entries 100000] [--repeat 1] [--million]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CATEGORIES = ("revenue", "risk", "segment", "guidance", "debt", "people")

PLAIN = r"""
import json, sys
from collections import defaultdict
import pytrec_eval
from scipy.stats import binomtest

dataset, base, cand, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
category, qrels = {}, {}
with open(dataset, encoding="utf-8") as fh:
    for line in fh:
        e = json.loads(line)
        category[e["id"]] = e["category"]
        qrels[e["id"]] = {c: 1 for path in e["evidence_paths"][:1] for piece in path for c in piece}
with open(sys.argv[5], encoding="utf-8") as fh:  # the chunk table: known ids
    known = {json.loads(line)["chunk_id"] for line in fh}
assert all(c in known for q in qrels.values() for c in q)

def read(path):
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            out[r["id"]] = {h["chunk_id"]: float(h["score"]) for h in r["retrieved"]}
    return out

evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}"})
complete = []
for path in (base, cand):
    res = evaluator.evaluate(read(path))
    complete.append({q: m[f"recall_{k}"] == 1.0 for q, m in res.items()})
b, c = complete
fixed, broken = defaultdict(int), defaultdict(int)
for q, cat in category.items():
    if b.get(q, False) != c.get(q, False):
        (fixed if c.get(q, False) else broken)[cat] += 1
for cat in sorted(set(category.values())):
    n = fixed[cat] + broken[cat]
    p = binomtest(fixed[cat], n, 0.5).pvalue if n else 1.0
    print(cat, fixed[cat], broken[cat], f"{p:.3g}")
"""


def generate(tmp: Path, n: int, n_chunks: int, hits: int, seed: int) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    paths = {
        "dataset": tmp / "golden.jsonl",
        "chunks": tmp / "chunks.jsonl",
        "base": tmp / "base.jsonl",
        "cand": tmp / "cand.jsonl",
    }
    with open(paths["chunks"], "w", encoding="utf-8") as fh:
        for i in range(n_chunks):
            row = {
                "chunk_id": f"c{i}",
                "doc_id": f"d{i // 50}",
                "pages": [1 + (i % 50) // 5],
                "text": f"chunk {i} of document {i // 50}: revenue rose {i % 97} percent",
            }
            fh.write(json.dumps(row) + "\n")
    gold = [rng.choice(n_chunks, size=int(rng.integers(1, 4)), replace=False) for _ in range(n)]
    with open(paths["dataset"], "w", encoding="utf-8") as fh:
        for i, g in enumerate(gold):
            row = {
                "id": f"q{i}",
                "query": f"What did document {int(g[0]) // 50} say about item {i}?",
                "category": CATEGORIES[i % len(CATEGORIES)],
                "evidence_paths": [[[f"c{int(c)}"] for c in g]],
                "label_tier": "gold",
            }
            fh.write(json.dumps(row) + "\n")
    base_hits = rng.integers(0, n_chunks, size=(n, hits))
    for i, g in enumerate(gold):  # the baseline finds the gold of most entries in its top 5
        if rng.random() < 0.7:
            base_hits[i, : len(g)] = g
    cand_hits = base_hits.copy()
    flip = rng.random(n) < 0.05  # the candidate loses or gains some entries' gold
    cand_hits[flip] = rng.integers(0, n_chunks, size=(int(flip.sum()), hits))
    gain = rng.random(n) < 0.04
    for i in np.flatnonzero(gain):
        cand_hits[i, : len(gold[i])] = gold[i]
    scores = np.round(np.linspace(1.0, 0.1, hits), 6)
    for key, table in (("base", base_hits), ("cand", cand_hits)):
        with open(paths[key], "w", encoding="utf-8") as fh:
            for i in range(n):
                hits_ = [
                    {"chunk_id": f"c{int(c)}", "score": float(s)}
                    for c, s in zip(table[i], scores, strict=True)
                ]
                fh.write(json.dumps({"id": f"q{i}", "retrieved": hits_}) + "\n")
    return paths


def seal_unrelated(tmp: Path, python: str, env: dict[str, str]) -> None:
    """Seal a small sample of unrelated entries in the private registry (``env`` names it)."""
    sample = tmp / "other_fresh.jsonl"
    with open(sample, "w", encoding="utf-8") as fh:
        for i in range(20):
            row = {
                "id": f"f{i}",
                "query": f"An unrelated question number {i} about cash flow",
                "category": "fresh",
                "evidence_paths": [[[f"zz{i}"]]],
            }
            fh.write(json.dumps(row) + "\n")
    assert env["ASSAY_FRESH_REGISTRY"].startswith(str(tmp))  # never the user's registry
    subprocess.run(
        [python, "-m", "assay.cli", "fresh", "seal", str(sample)],
        env=env,
        check=True,
        capture_output=True,
    )


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS in MB, exit code, output tail) of one subprocess."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = out.decode("utf-8", "replace").strip().splitlines()[-3:]
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, proc.returncode, "\n    ".join(tail)


def bench(size: int, args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench_gate_"))
    registry = tmp / "fresh.sqlite"
    t = time.perf_counter()
    files = generate(tmp, size, args.chunks, args.hits, args.seed)
    mb = sum(p.stat().st_size for p in files.values()) / 1e6
    print(
        f"\n{size:,} entries x {args.hits} hits, {args.chunks:,} chunks, 6 categories: "
        f"{mb:.0f} MB of files in {tmp} (made in {time.perf_counter() - t:.1f}s)"
    )
    releases = dict(a.split("=", 1) for a in args.assay)
    env0 = os.environ | {"ASSAY_FRESH_REGISTRY": str(registry), "NO_COLOR": "1"}
    # as installed: bytecode compiled once (an environment that writes none would compile
    # every module of every release on every run, a second or more that is not the gate's)
    env0.pop("PYTHONDONTWRITEBYTECODE", None)
    first = str(Path(next(iter(releases.values()))).resolve())
    seal_unrelated(tmp, args.python, env0 | {"PYTHONPATH": first})
    d, b, c, ch = (str(files[x]) for x in ("dataset", "base", "cand", "chunks"))
    plain = [args.python, "-c", PLAIN, d, b, c, str(args.k), ch]
    for pythonpath in releases.values():  # untimed: imports every module once
        env = env0 | {"PYTHONPATH": str(Path(pythonpath).resolve())}
        warm = [args.python, "-c", "import assay.cli._register, assay.compare, assay.score"]
        subprocess.run(warm, env=env, check=True)
    results: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(args.repeat):  # interleaved, so each release sees the same minutes
        for name, pythonpath in releases.items():
            env = env0 | {"PYTHONPATH": str(Path(pythonpath).resolve())}
            gate = [args.python, "-m", "assay.cli", "gate", d, b, c, "--chunks", ch]
            gate += ["--k", str(args.k), "--no-record", "--format", "json"]
            wall, cpu, rss, code, tail = timed(gate, env)
            if code not in (0, 1):
                sys.exit(f"assay gate ({name}) failed with exit {code}:\n    {tail}")
            results.setdefault(f"assay gate ({name})", []).append((wall, cpu, rss))
        wall, cpu, rss, code, tail = timed(plain, env0)
        if code != 0:
            sys.exit(f"the plain script failed:\n    {tail}")
        results.setdefault("plain json + pytrec_eval + scipy", []).append((wall, cpu, rss))
    ref = results["plain json + pytrec_eval + scipy"]
    # the best of the runs, and (with three or more) their median: on a shared machine the
    # best is one lucky run of each side, the median of interleaved runs the steadier figure
    for label, pick in (("best", min), ("median", statistics.median)):
        if label == "median" and args.repeat < 3:
            break
        print(f"  {label} of {args.repeat}:")
        ref_wall, ref_cpu, ref_rss = (pick(r[i] for r in ref) for i in range(3))
        for name, rows in results.items():
            wall, cpu, rss = (pick(r[i] for r in rows) for i in range(3))
            print(
                f"  {name:<34} {wall:6.2f} s wall {cpu:6.2f} s CPU {rss:6.0f} MB peak RSS   "
                f"(x{wall / ref_wall:.2f} wall, x{cpu / ref_cpu:.2f} CPU, x{rss / ref_rss:.2f} "
                "memory of the plain script)"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--million", action="store_true", help="also time 1,000,000 entries")
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--hits", type=int, default=10)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs of each side, interleaved (best; median from 3)"
    )
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--assay",
        action="append",
        default=[],
        metavar="NAME=PYTHONPATH",
        help="an assay release to time (repeatable); default: this checkout's src",
    )
    args = ap.parse_args()
    if not args.assay:
        args.assay = [f"this={Path(__file__).resolve().parents[1] / 'src'}"]
    print(
        "each side is its own subprocess: wall time, CPU time, peak RSS (os.wait4);",
        args.repeat,
        "interleaved runs of each",
    )
    for size in [args.entries, *([1_000_000] if args.million else [])]:
        bench(size, args)


if __name__ == "__main__":
    main()
