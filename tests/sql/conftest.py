"""Fixtures: the default warehouse (seed 7, 6 companies, 3 fiscal years, 8 test-suite variants),
built once per session, and its dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlglot", reason="the sql extra is not installed")
pytest.importorskip("duckdb", reason="the sql extra is not installed")

from assay.dataset.io import Dataset, load_dataset
from assay.synth.warehouse_files import write_warehouse


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sql") / "wh"
    write_warehouse(out, seed=7, suite=8)
    return out


@pytest.fixture(scope="session")
def golden(warehouse: Path) -> Dataset:
    return load_dataset(warehouse / "golden.jsonl")
