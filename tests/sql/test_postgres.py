"""The warehouse in PostgreSQL: loaded with COPY, every gold query transpiled gives its result.

Needs a server: set ASSAY_TEST_PG_URL (a database the test may create schemas in)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from assay.dataset import Dataset
from assay.sql.engine import QueryError, QueryResult, UnsafeQuery
from assay.sql.match import match_results
from assay.sql.postgres import libpq_url

PG_URL = os.environ.get("ASSAY_TEST_PG_URL")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_PG_URL to test on PostgreSQL"),
]


def test_load_and_run_every_gold_query(golden: Dataset, warehouse: Path) -> None:
    pytest.importorskip("psycopg")
    import psycopg

    from assay.sql.postgres import load_postgres, query_postgres

    assert PG_URL is not None
    name = f"wh_{secrets.token_hex(4)}"
    try:
        summary = load_postgres(warehouse / "warehouse.duckdb", PG_URL, schema_name=name)
        assert summary.tables["facts"] > 1000 and summary.views == ["current_facts"]
        n = 0
        for e in golden.entries:
            assert e.sql is not None
            for q in e.sql.queries:
                got = query_postgres(PG_URL, q, schema_name=name)
                assert e.sql.result is not None
                m = match_results(
                    QueryResult.from_dict(e.sql.result.model_dump()),
                    got,
                    semantics=e.sql.semantics.value,
                    tolerance=e.sql.float_tolerance,
                    column_order=e.sql.column_order,
                )
                assert m.ok, (e.id, m.reason)
                n += 1
        assert n >= 248
        with pytest.raises(UnsafeQuery):
            query_postgres(PG_URL, "DELETE FROM customers", schema_name=name)
        # a function that writes passes the syntax check; the read-only connection refuses it
        with psycopg.connect(libpq_url(PG_URL)) as con:
            con.execute(
                f"CREATE FUNCTION {name}.bump() RETURNS int LANGUAGE sql AS "
                f"$$ DELETE FROM {name}.customers; SELECT 1 $$".encode()
            )
        with pytest.raises(QueryError, match="read-only"):
            query_postgres(PG_URL, "SELECT bump() AS one", schema_name=name)
        count = query_postgres(PG_URL, "SELECT COUNT(*) AS n FROM customers", schema_name=name)
        assert count.rows == ((summary.tables["customers"],),)  # nothing was deleted
        with pytest.raises(QueryError) as info:
            query_postgres(
                PG_URL,
                "SELECT COUNT(*) AS n FROM generate_series(1, 200000000) AS a",
                schema_name=name,
                timeout=0.3,
            )
        assert info.value.kind == "timeout"
    finally:
        with psycopg.connect(libpq_url(PG_URL)) as con:
            con.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE".encode())


def test_libpq_url_takes_the_sqlalchemy_spelling() -> None:
    assert libpq_url("postgresql+psycopg://u@h:5/db") == "postgresql://u@h:5/db"
    assert libpq_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert libpq_url("host=h dbname=db") == "host=h dbname=db"
