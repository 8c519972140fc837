"""The `sql` gold of an entry: gold queries, their dialect and database, the expected result and
how a system's result is compared with it.

An entry that carries `sql` is a text-to-SQL question. Its gold is one query or several
equivalent ones (written in `dialect`), run against `database` (a path relative to the dataset
file). `result` is the expected result (`columns` and `rows`); when it is left out, the first gold
query's result on the database is the expected one. `semantics` says how rows compare (`bag`:
as a multiset, `set`: duplicates ignored, `ordered`: in order), `float_tolerance` how close two
numbers must be (relative, with the same absolute floor), and `column_order` whether the columns
must come in the gold's order (otherwise any permutation of the columns may match).

A question the schema cannot answer has no gold query (`queries: []`) and its entry's
`expected_behavior` is `refuse` (or `abstain`); `missing` may say what the schema lacks.

Executing the gold is `assay.sql`'s business (`assay validate` runs every gold query read-only
and compares it with the stored result); this module only states the shape.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

__all__ = ["MatchRule", "SqlGold", "SqlResult", "SqlSemantics"]

JsonScalar = str | int | float | bool | None


class MatchRule(TypedDict):
    """How a system's result is compared with the gold: the keywords of
    `assay.sql.match.match_results` and `diff_results`."""

    semantics: str
    tolerance: float
    column_order: bool


class SqlSemantics(StrEnum):
    bag = "bag"
    set = "set"
    ordered = "ordered"


class SqlResult(BaseModel):
    """A query result as JSON: column names and rows (dates as ISO strings)."""

    model_config = ConfigDict(extra="forbid")

    columns: list[str]
    rows: list[list[JsonScalar]]

    @field_validator("rows")
    @classmethod
    def _rows_as_wide_as_columns(
        cls, rows: list[list[JsonScalar]], info: ValidationInfo
    ) -> list[list[JsonScalar]]:
        width = len(info.data.get("columns") or [])
        for i, r in enumerate(rows):
            if len(r) != width:
                raise ValueError(f"row {i} has {len(r)} values for {width} columns")
        return rows


class SqlGold(BaseModel):
    """Gold for a text-to-SQL question (see the module docs)."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(
        default_factory=list,
        description="one gold query or several equivalent ones; [] for a question the schema "
        "cannot answer",
    )
    dialect: str = Field(default="duckdb", min_length=1, description="sqlglot dialect name")
    database: str | None = Field(
        default=None, min_length=1, description="database file, relative to the dataset file"
    )
    result: SqlResult | None = Field(
        default=None, description="expected result; computed from the first query when absent"
    )
    semantics: SqlSemantics = SqlSemantics.bag
    float_tolerance: float = Field(default=1e-6, ge=0.0, le=1.0)
    column_order: bool = False
    missing: str | None = Field(
        default=None, description="what the schema lacks (for unanswerable questions)"
    )
    glossary_version: str | None = None

    def match_rule(self) -> MatchRule:
        """This gold's semantics, tolerance and column order, as `match_results(gold, pred,
        **g.match_rule())` takes them."""
        return MatchRule(
            semantics=self.semantics.value,
            tolerance=self.float_tolerance,
            column_order=self.column_order,
        )

    @field_validator("queries")
    @classmethod
    def _queries_not_blank(cls, qs: list[str]) -> list[str]:
        for i, q in enumerate(qs):
            if not q.strip():
                raise ValueError(f"query {i} is empty")
        return qs
