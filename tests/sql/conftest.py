"""Fixtures: the default warehouse (seed 7, 6 companies, 3 fiscal years, 8 test-suite variants),
built once per session, and its dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlglot", reason="the sql extra is not installed")
pytest.importorskip("duckdb", reason="the sql extra is not installed")

from assay.dataset import Dataset, load_dataset
from assay.runs import Run
from assay.synth.warehouse_files import write_warehouse


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sql") / "wh"
    write_warehouse(out, seed=7, suite=8)
    return out


@pytest.fixture(scope="session")
def golden(warehouse: Path) -> Dataset:
    return load_dataset(warehouse / "golden.jsonl")


def sql_run(dataset: Dataset, system: Any, *, out: Path | None = None, **options: Any) -> Run:
    """A text-to-SQL system (a spec after ``sql-``, or an object) run by the general runner
    with no request cache, as `assay sql run` runs it."""
    from assay.cache import RequestCache
    from assay.runner import run_system

    spec = f"sql-{system}" if isinstance(system, str) else system
    return run_system(
        dataset, spec, options=options, cache=RequestCache(enabled=False), out=out,
        progress=False,
    )  # fmt: skip
