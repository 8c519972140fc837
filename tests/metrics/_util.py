"""Small builders shared by the metric tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.dataset import Entry
from assay.runs import Run


def E(eid: str, paths: list[Any], cat: str = "c", **kw: object) -> Entry:
    return Entry.model_validate(
        {"id": eid, "query": "q", "category": cat, "evidence_paths": paths, **kw}
    )


def R(rows: dict[str, list[str]]) -> Run:
    return Run.from_rows([{"id": k, "retrieved": v} for k, v in rows.items()])


def random_single_path(
    rng: np.random.Generator, n: int = 300
) -> tuple[list[Entry], Run, dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Entries with one path of single-chunk pieces, and a tie-free run of 30 distinct chunks each,
    as assay sees them (entries, run) and as trec_eval does (qrels, run)."""
    entries: list[Entry] = []
    qrels: dict[str, dict[str, int]] = {}
    rows: list[dict[str, Any]] = []
    trec_run: dict[str, dict[str, float]] = {}
    for q in range(n):
        docs = [f"d{j}" for j in rng.choice(60, size=30, replace=False)]
        rel = [f"d{j}" for j in rng.choice(60, size=int(rng.integers(1, 6)), replace=False)]
        entries.append(E(f"q{q}", [[[d] for d in rel]]))
        qrels[f"q{q}"] = {d: 1 for d in rel}
        scores = rng.permutation(len(docs)).astype(float) + rng.random()  # no ties
        order = np.argsort(-scores)
        rows.append(
            {
                "id": f"q{q}",
                "retrieved": [{"chunk_id": docs[i], "score": float(scores[i])} for i in order],
            }
        )
        trec_run[f"q{q}"] = {docs[i]: float(scores[i]) for i in range(len(docs))}
    return entries, Run.from_rows(rows), qrels, trec_run
