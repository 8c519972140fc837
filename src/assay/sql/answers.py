"""A system's answer to a gold SQL entry: the query a run row holds (`read_system_sql`), the text
of a declined one, and what the gold SQL checks (`assay.checks.sql`) run under
(`sql_check_settings`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.judge.refusal import detect_refusal
from assay.sql.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT

__all__ = [
    "REFUSAL_TEXT",
    "SQL_CHECKS",
    "SqlCheckSettings",
    "SystemSql",
    "active_settings",
    "read_system_sql",
    "sql_check_settings",
]

SQL_CHECKS = ("sql_valid", "sql_safe", "exec_match", "test_suite_match", "sql_refusal_ok")
"""The gold SQL checks, in the order reports show them."""


REFUSAL_TEXT = "I cannot answer this from the database schema."
"""What `assay sql run` puts in a row's answer when the system declined."""


@dataclass(frozen=True)
class SqlCheckSettings:
    """Where entries' databases are (`base`: the dataset's folder) and the limits of a query."""

    base: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_rows: int = DEFAULT_MAX_ROWS


_SETTINGS: ContextVar[SqlCheckSettings | None] = ContextVar(
    "assay_sql_check_settings", default=None
)


def active_settings() -> SqlCheckSettings:
    """The settings of the innermost `sql_check_settings` block (defaults outside any)."""
    return _SETTINGS.get() or SqlCheckSettings()


@contextlib.contextmanager
def sql_check_settings(
    base: str | Path | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> Iterator[SqlCheckSettings]:
    """Checks run inside this block find databases under `base`, with this timeout and cap."""
    s = SqlCheckSettings(None if base is None else Path(base), timeout, max_rows)
    token = _SETTINGS.set(s)
    try:
        yield s
    finally:
        _SETTINGS.reset(token)


@dataclass(frozen=True)
class SystemSql:
    """The system's query for one entry (None when it declined) and its dialect."""

    sql: str | None
    dialect: str

    @property
    def declined(self) -> bool:
        return self.sql is None


_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_SQL_START = re.compile(
    r"^\s*(\(|select\b|with\b|values\b|insert\b|update\b|delete\b|merge\b|create\b|drop\b|"
    r"alter\b|attach\b|detach\b|copy\b|pragma\b|set\b|install\b|load\b|call\b|export\b|"
    r"describe\b|show\b|from\b|explain\b|truncate\b|grant\b|vacuum\b)",
    re.IGNORECASE,
)


def _from_text(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    m = _FENCE.search(text)
    body = m.group(1).strip() if m else text.strip()
    if _SQL_START.match(body):
        return body
    if detect_refusal(text).refused:
        return None
    return body


def read_system_sql(ctx: Any) -> SystemSql:
    """The system's SQL for the context's entry (module docs: where a row keeps it)."""
    entry = ctx.entry
    default = entry.sql.dialect if entry.sql is not None else "duckdb"
    row = getattr(ctx, "row", None)
    extra: dict[str, Any] = dict(getattr(row, "extra", None) or {})
    dialect = extra.get("dialect") or default
    if "sql" in extra:
        q = extra["sql"]
        return SystemSql(q if isinstance(q, str) and q.strip() else None, str(dialect))
    return SystemSql(_from_text(ctx.answer), str(dialect))
