"""The ``sql`` group: gold SQL queries (sql_valid, sql_safe, exec_match, test_suite_match,
sql_refusal_ok)."""

from assay.sql import checks

__all__ = ["checks"]
