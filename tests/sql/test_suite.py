"""Test-suite variants keep the schema, the keys and the gold's meaning, and change the rest."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.dataset import Dataset
from assay.errors import UsageError
from assay.sql.engine import open_database
from assay.sql.match import match_results
from assay.sql.schema import DatabaseSchema
from assay.sql.store import read_tables
from assay.sql.suite import build_suite, load_suite, perturb, shift_date
from assay.synth.warehouse import WAREHOUSE_SCHEMA


def test_shift_date_keeps_month_ends() -> None:
    assert shift_date(dt.date(2024, 6, 30), 1) == dt.date(2024, 7, 31)
    assert shift_date(dt.date(2024, 1, 31), 1) == dt.date(2024, 2, 29)
    assert shift_date(dt.date(2023, 11, 30), 3) == dt.date(2024, 2, 29)
    assert shift_date(dt.date(2024, 3, 15), -3) == dt.date(2023, 12, 15)
    assert shift_date(dt.date(2024, 7, 1), 7) == dt.date(2025, 2, 1)


def _integrity(schema: DatabaseSchema, rows: dict[str, list[dict[str, object]]]) -> None:
    keys = {}
    for t in schema.tables:
        assert t.key is not None
        ks = [r[t.key.name] for r in rows[t.name]]
        assert len(ks) == len(set(ks)), f"{t.name}: duplicate keys"
        keys[t.name] = set(ks)
    for t in schema.tables:
        for c in t.columns:
            if c.role == "ref" and c.references:
                target = c.references.split(".")[0]
                bad = [r[c.name] for r in rows[t.name] if r[c.name] is not None]
                assert set(bad) <= keys[target], f"{t.name}.{c.name} dangles"


def test_variants_keep_keys_and_references(warehouse: Path) -> None:
    rows = read_tables(warehouse / "warehouse.duckdb", WAREHOUSE_SCHEMA)
    _integrity(WAREHOUSE_SCHEMA, rows)
    for seed in range(5):
        variant, log = perturb(WAREHOUSE_SCHEMA, rows, np.random.default_rng([3, seed]))
        _integrity(WAREHOUSE_SCHEMA, variant)
        assert log["clones"] >= 1 and log["bare"] == 1
        assert len(variant["companies"]) == len(rows["companies"]) + log["clones"] + 1
        # every fiscal period still ends on a month end, a quarter after the one before
        for p in variant["fiscal_periods"]:
            end = p["period_end"]
            assert (end + dt.timedelta(days=1)).day == 1
    again, log2 = perturb(WAREHOUSE_SCHEMA, rows, np.random.default_rng([3, 0]))
    first, log1 = perturb(WAREHOUSE_SCHEMA, rows, np.random.default_rng([3, 0]))
    assert log1 == log2 and again == first  # seeded: the same variant


def test_every_gold_query_runs_on_every_variant(golden: Dataset, warehouse: Path) -> None:
    suite = load_suite(warehouse / "warehouse.duckdb")
    assert len(suite.variants) == 8
    for variant in suite.variants:
        db = open_database(variant)
        for e in golden.entries:
            assert e.sql is not None
            for q in e.sql.queries:
                db.execute(q, dialect=e.sql.dialect)


def test_equivalent_gold_queries_agree_on_every_variant(golden: Dataset, warehouse: Path) -> None:
    """The variants keep the meaning of the gold: queries stated as equivalent stay equal."""
    suite = load_suite(warehouse / "warehouse.duckdb")
    several = [e for e in golden.entries if e.sql is not None and len(e.sql.queries) > 1]
    assert len(several) >= 20
    differ = 0
    for variant in suite.variants:
        db = open_database(variant)
        for e in several:
            assert e.sql is not None
            first = db.execute(e.sql.queries[0])
            for q in e.sql.queries[1:]:
                m = match_results(
                    first,
                    db.execute(q),
                    semantics=e.sql.semantics.value,
                    tolerance=e.sql.float_tolerance,
                )
                assert m.ok, (variant.name, e.id, m.reason)
            # and the variant does change what the gold returns
            assert e.sql.result is not None
            stored = db.execute(e.sql.queries[0])
            differ += stored.rows != tuple(tuple(r) for r in e.sql.result.rows)
    assert differ > len(several)  # most answers move on most variants


def test_suite_is_refused_when_the_database_changed(warehouse: Path, tmp_path: Path) -> None:
    shutil.copy(warehouse / "warehouse.duckdb", tmp_path / "w.duckdb")
    shutil.copy(warehouse / "warehouse.schema.json", tmp_path / "w.schema.json")
    with pytest.raises(UsageError, match="no test suite"):
        load_suite(tmp_path / "w.duckdb")
    summary = build_suite(tmp_path / "w.duckdb", k=2, seed=1)
    assert summary.variants == 2 and len(load_suite(tmp_path / "w.duckdb").variants) == 2
    manifest = json.loads((tmp_path / "w.suite" / "suite.json").read_text())
    assert manifest["k"] == 2 and manifest["source"] == "w.duckdb"
    with (tmp_path / "w.duckdb").open("ab") as fh:
        fh.write(b"\0" * 16)  # another version of the file
    with pytest.raises(UsageError, match="another version"):
        load_suite(tmp_path / "w.duckdb")
    with pytest.raises(UsageError, match="at least one variant"):
        build_suite(tmp_path / "w.duckdb", k=0)
