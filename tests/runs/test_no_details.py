"""What a gate holds and never reads is not made per row: a bare run's rows share one read-only
empty dict of details (`assay.runs.model.NO_DETAILS`), and a dataset indexes its entries
by id only when something looks one up."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from assay.dataset import load_dataset, select_tiers
from assay.runs import Run, _fast, load_run
from assay.runs.model import NO_DETAILS


def _bare_run(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            hits = [{"chunk_id": f"c{i}-{j}", "score": 1.0 - j / 10} for j in range(10)]
            fh.write(json.dumps({"id": f"q{i}", "retrieved": hits}) + "\n")
    return path


def test_a_bare_run_shares_one_empty_mapping_of_details(tmp_path: Path) -> None:
    path = _bare_run(tmp_path / "run.jsonl", 1200)
    assert path.stat().st_size >= _fast._MIN_BYTES  # read by the fast path
    run = load_run(path)
    assert len(run.details) == 1200
    assert all(d is NO_DETAILS for d in run.details)
    assert run.details[7] == {} and not run.details[7] and dict(run.details[7]) == {}
    with pytest.raises(TypeError):
        run.details[7]["answer"] = "shared by every row"
    row = run.row("q7")
    assert row.extra == {} and row.answer is None and len(row.retrieved or []) == 10


def test_the_shared_details_stay_one_when_copied_or_pickled() -> None:
    run = Run(["a", "b"], np.array([0, 1, 1]), np.array([0]), ["c1"])
    assert run.details == [{}, {}] and all(d is NO_DETAILS for d in run.details)
    again = pickle.loads(pickle.dumps(run))
    assert all(d is NO_DETAILS for d in again.details)
    assert copy.deepcopy(NO_DETAILS) is NO_DETAILS and repr(NO_DETAILS) == "{}"
    assert again.row("a").retrieved is not None


def test_a_dataset_indexes_its_entries_by_id_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    rows = [
        {"id": f"q{i}", "query": f"question {i}", "category": "c", "label_tier": "gold"}
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ds = load_dataset(path)
    assert "by_id" not in vars(ds)  # a gate never looks an entry up: it is not built
    selected = select_tiers(ds)[0]
    assert "by_id" not in vars(selected)
    assert selected.by_id["q1"] is selected.entries[1]
    assert list(ds.by_id) == ["q0", "q1", "q2"]
