"""Tiny datasets and runs with chosen per-entry outcomes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from assay.runs import write_run

Outcomes = Mapping[str, Sequence[tuple[int, int]]]
"""category -> [(baseline pieces found, candidate pieces found)], each 0, 1 or 2 of 2 pieces."""

CaseFactory = Callable[..., tuple[Path, Path, Path]]


def _rows(outcomes: Outcomes, which: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for cat, pairs in outcomes.items():
        for i, pair in enumerate(pairs):
            eid = f"{cat}-{i:03d}"
            found = [f"{eid}-a", f"{eid}-b"][: pair[which]]
            fill = [f"noise-{j}" for j in range(6 - len(found))]
            rows.append({"id": eid, "retrieved": found + fill})
    return rows


def write_case(
    directory: Path, outcomes: Outcomes, name: str = "golden"
) -> tuple[Path, Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ds = directory / f"{name}.jsonl"
    with open(ds, "w", encoding="utf-8") as fh:
        for cat, pairs in outcomes.items():
            for i in range(len(pairs)):
                eid = f"{cat}-{i:03d}"
                entry = {
                    "id": eid,
                    "query": f"question {eid}",
                    "category": cat,
                    "evidence_paths": [[[f"{eid}-a"], [f"{eid}-b"]]],
                    "metadata": {"fact_id": f"fact-{i // 3}"},
                }
                fh.write(json.dumps(entry) + "\n")
    base = directory / "base.jsonl"
    cand = directory / "cand.jsonl"
    write_run(base, _rows(outcomes, 0))
    write_run(cand, _rows(outcomes, 1))
    return ds, base, cand


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    def make(outcomes: Outcomes, name: str = "golden") -> tuple[Path, Path, Path]:
        return write_case(tmp_path, outcomes, name)

    return make
