"""assay.sql: gold SQL, the text-to-SQL eval type.

An entry with `sql` gold (`assay.dataset.sqlgold.SqlGold`) is a question a system answers with a
query. What this package gives:

- `check_safe`, `parse_query`, `transpile` (`safety`): one statement, read-only, decided on
  sqlglot's tree before anything runs;
- `ReadOnlyDatabase`, `open_database` (`engine`): DuckDB and SQLite files opened read-only
  (DuckDB with external access off, SQLite in ``mode=ro``), every query under a timeout and a
  row cap;
- `match_results` (`match`): execution match under bag, set or ordered semantics, a float
  tolerance, with or without column order;
- `build_suite`, `load_suite` (`suite`): test-suite variants of a database (Zhong, Yu and Klein
  2020);
- the query a run row holds (`read_system_sql`) and the settings the gold SQL checks (the
  ``sql`` group of `assay.checks`) run under (`sql_check_settings`) (`answers`);
- `load_sql_system` (`systems`: the ``sql`` system kind, run by `assay.runner.run_system`) and
  the template baseline (`baseline`);
- `near_miss_study` (`evaluate`); `validate_dataset` (what `assay validate`
  runs: the gold layer's checks plus every gold query run and compared) (`gold`);
- `DatabaseSchema` (`schema`): tables, column roles, views and the versioned glossary;
- `load_postgres` (`postgres`): the warehouse in PostgreSQL.

sqlglot and duckdb are core dependencies (the `sql` extra names them too); importing this
package does not need them, the first parse or query does and says so if they are missing.
"""

from assay.sql.answers import REFUSAL_TEXT, SQL_CHECKS, read_system_sql, sql_check_settings
from assay.sql.engine import (
    QueryError,
    QueryResult,
    ReadOnlyDatabase,
    UnsafeQuery,
    engine_of,
    open_database,
)
from assay.sql.evaluate import NearMiss, NearMissStudy, near_miss_study
from assay.sql.gold import expected_result, validate_dataset, validate_sql_gold
from assay.sql.match import MatchVerdict, match_results
from assay.sql.safety import SafetyVerdict, SqlParseError, check_safe, parse_query, transpile
from assay.sql.schema import DatabaseSchema, Glossary, GlossaryTerm
from assay.sql.suite import Suite, SuiteSummary, build_suite, load_suite
from assay.sql.systems import SqlSystem, SqlSystemError, load_sql_system

__all__ = [
    "REFUSAL_TEXT",
    "SQL_CHECKS",
    "DatabaseSchema",
    "Glossary",
    "GlossaryTerm",
    "MatchVerdict",
    "NearMiss",
    "NearMissStudy",
    "QueryError",
    "QueryResult",
    "ReadOnlyDatabase",
    "SafetyVerdict",
    "SqlParseError",
    "SqlSystem",
    "SqlSystemError",
    "Suite",
    "SuiteSummary",
    "UnsafeQuery",
    "build_suite",
    "check_safe",
    "engine_of",
    "expected_result",
    "load_sql_system",
    "load_suite",
    "match_results",
    "near_miss_study",
    "open_database",
    "parse_query",
    "read_system_sql",
    "sql_check_settings",
    "transpile",
    "validate_dataset",
    "validate_sql_gold",
]
