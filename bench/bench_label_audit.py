"""How well the label audit finds wrong gold on the room's routing set: for each seed, the
routing set (120 questions, 10 gold labels planted wrong), the reference router's scores, and
how many of the 10 the top 10% of the audit's ranking holds, with the class probabilities from
the router's scores alone, the out-of-fold query model alone, and both averaged (what
`assay routing --audit` uses). Prints each seed and the mean and minimum.

    PYTHONPATH=src .venv/bin/python bench/bench_label_audit.py [--seeds 20]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from cleanlab.rank import get_label_quality_scores

from assay.checks.routing import _oof_probs
from assay.dataset import load_dataset
from assay.synth.routing import generate_routing
from assay.systems.router import KeywordRouter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first", type=int, default=7)
    a = ap.parse_args()
    found: dict[str, list[int]] = {"router": [], "out-of-fold": [], "averaged": []}
    router = KeywordRouter()
    for seed in range(a.first, a.first + a.seeds):
        with tempfile.TemporaryDirectory() as d:
            planted = generate_routing(d, seed=seed)["planted"]
            entries = load_dataset(Path(d) / "routing.jsonl").entries
        labels = list(entries[0].expected_label.allowed)  # type: ignore[union-attr]
        y = np.array([labels.index(e.expected_label.label) for e in entries])  # type: ignore[union-attr]
        scores = [router.classify(e.query, labels=labels)["scores"] for e in entries]
        run = np.array([[s[lab] for lab in labels] for s in scores])
        oof = _oof_probs([e.query for e in entries], y, len(labels), 0)
        assert oof is not None
        top = max(10, -(-len(entries) // 10))
        row = []
        for name, probs in (("router", run), ("out-of-fold", oof), ("averaged", (run + oof) / 2)):
            order = np.argsort(get_label_quality_scores(y, probs), kind="stable")[:top]
            n = sum(entries[int(i)].id in planted for i in order)
            found[name].append(n)
            row.append(f"{name} {n}")
        print(f"seed {seed}: of {len(planted)} planted, in the top {top}: " + ", ".join(row))
    for name, v in found.items():
        print(f"{name:<12} mean {np.mean(v):.2f}, min {min(v)} (over {len(v)} seeds)")


if __name__ == "__main__":
    main()
