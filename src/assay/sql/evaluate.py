"""The near-miss study of test-suite matching.

(A run's queries are rated by `assay.judge.check_run`, what `assay check` and `assay sql check`
run: the gold SQL checks are registered checks, `assay.checks.sql`.)

`near_miss_study(dataset, near_misses)` runs planted wrong queries (`NearMiss`: an entry id, a
query that is wrong for it, and what kind of mistake it is) through exec_match on the original
database and through test_suite_match, and counts the wrong queries that single-database
execution passes and the test suite catches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.dataset import Dataset
from assay.errors import UsageError
from assay.judge.context import CheckContext
from assay.report import ReportMixin, Tabular
from assay.runs import RunRow
from assay.sql.answers import sql_check_settings
from assay.sql.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT
from assay.sql.gold import database_path
from assay.sql.suite import load_suite

__all__ = ["NearMiss", "NearMissStudy", "near_miss_study"]


def _context(entry: Any, row: RunRow | None, dataset: Dataset) -> CheckContext:
    return CheckContext(entry, None if row is None else row.answer, row=row, dataset=dataset)


@dataclass(frozen=True)
class NearMiss:
    """A planted wrong query for an entry, and the kind of mistake it makes."""

    entry_id: str
    sql: str
    kind: str
    note: str = ""


@dataclass
class NearMissStudy(ReportMixin):
    """Each planted query's verdicts on the original database and on the test suite."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    variants: int = 0

    @property
    def passed_single(self) -> int:
        return sum(1 for r in self.rows if r["exec_match"] is True)

    @property
    def caught_by_suite(self) -> int:
        """Wrong queries single-database execution passes and the test suite fails."""
        return sum(
            1 for r in self.rows if r["exec_match"] is True and r["test_suite_match"] is False
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "planted": len(self.rows),
            "variants": self.variants,
            "pass_single_database": self.passed_single,
            "caught_by_test_suite": self.caught_by_suite,
            "missed_by_both": sum(1 for r in self.rows if r["test_suite_match"] is True),
            "rows": self.rows,
        }

    def tabular(self) -> Tabular:
        return Tabular(
            title=(
                f"planted near-miss queries: {self.passed_single} of {len(self.rows)} pass "
                f"single-database execution; test-suite matching ({self.variants} variants) "
                f"catches {self.caught_by_suite}"
            ),
            header=["entry", "kind", "exec_match", "test_suite_match", "why"],
            rows=[
                [
                    r["id"],
                    r["kind"],
                    str(r["exec_match"]),
                    str(r["test_suite_match"]),
                    "; ".join(r["notes"]),
                ]
                for r in self.rows
            ],
        )


def near_miss_study(
    dataset: Dataset,
    near_misses: Iterable[NearMiss],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> NearMissStudy:
    """exec_match and test_suite_match of every planted query (module docs)."""
    base = Path(dataset.path).parent if dataset.path else None
    study = NearMissStudy()
    with sql_check_settings(base, timeout=timeout, max_rows=max_rows):
        for nm in near_misses:
            if nm.entry_id not in dataset.by_id:
                raise UsageError(f"near miss for {nm.entry_id}: no such entry in the dataset")
            entry = dataset.by_id[nm.entry_id]
            if entry.sql is None:
                raise UsageError(f"near miss for {nm.entry_id}: the entry has no sql gold")
            row = RunRow(nm.entry_id, [], answer=nm.sql, extra={"sql": nm.sql})
            ctx = _context(entry, row, dataset)
            single = ctx.outcome("exec_match")
            suite = ctx.outcome("test_suite_match")
            study.variants = len(load_suite(database_path(entry, base)).variants)
            study.rows.append(
                {
                    "id": nm.entry_id,
                    "kind": nm.kind,
                    "sql": nm.sql,
                    "exec_match": single.value,
                    "test_suite_match": suite.value,
                    "notes": [*single.notes, *suite.notes],
                }
            )
    return study
