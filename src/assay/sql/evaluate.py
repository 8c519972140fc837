"""Running the gold SQL checks over a run, and the near-miss study of test-suite matching.

`check_sql_run(dataset, run)` rates `sql_valid`, `sql_safe`, `exec_match`, `test_suite_match` and
`sql_refusal_ok` per category with 95% bootstrap intervals (the same `CheckReport` as `assay
check`), over the entries with `sql` gold; the entries' databases are found beside the dataset.

`near_miss_study(dataset, near_misses)` runs planted wrong queries (`NearMiss`: an entry id, a
query that is wrong for it, and what kind of mistake it is) through exec_match on the original
database and through test_suite_match, and counts the wrong queries that single-database
execution passes and the test suite catches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.dataset.io import Dataset
from assay.errors import UsageError
from assay.judge.context import CheckContext
from assay.judge.registry import get_check
from assay.judge.report import CI_METHOD, CheckReport, rate_table
from assay.report import ReportMixin, Tabular
from assay.runs import Run, RunRow
from assay.sql.checks import SQL_CHECKS, sql_check_settings
from assay.sql.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT

__all__ = ["NearMiss", "NearMissStudy", "check_sql_run", "near_miss_study"]


def _context(entry: Any, row: RunRow | None, dataset: Dataset) -> CheckContext:
    return CheckContext(entry, None if row is None else row.answer, row=row, dataset=dataset)


def check_sql_run(
    dataset: Dataset,
    run: Run,
    *,
    checks: Sequence[str] = SQL_CHECKS,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
    seed: int = 0,
    n_boot: int = 1000,
) -> CheckReport:
    """The gold SQL checks on every entry with `sql` gold that the run answered (module docs)."""
    selected = [get_check(c).name for c in checks]
    base = Path(dataset.path).parent if dataset.path else None
    rows: list[dict[str, Any]] = []
    missing = 0
    with sql_check_settings(base, timeout=timeout, max_rows=max_rows):
        for entry in dataset.entries:
            if entry.sql is None:
                continue
            if entry.id not in run:
                missing += 1
                continue
            ctx = _context(entry, run.row(entry.id), dataset)
            values: dict[str, bool | None] = {}
            notes: list[str] = []
            for name in selected:
                out = ctx.run(get_check(name))
                values[name] = None if out.value is None else bool(out.value)
                notes.extend(out.notes)
            rows.append(
                {
                    "id": entry.id,
                    "category": entry.category,
                    **values,
                    "notes": list(dict.fromkeys(notes)),
                }
            )
    if not rows:
        raise UsageError(f"{dataset.path}: no entry with sql gold has a row in the run")
    warnings = [f"{missing} entries with sql gold have no row in the run"] if missing else []
    return CheckReport(
        rows=rows,
        checks=selected,
        rates=rate_table(rows, selected, np.random.default_rng(seed), n_boot),
        meta={
            "dataset": {"path": dataset.path, "version": dataset.version},
            "run": {"path": run.path, "hash": run.hash, "system": run.meta.get("system")},
            "limits": {"timeout_s": timeout, "max_rows": max_rows},
            "ci": {"method": CI_METHOD, "level": 0.95, "n_boot": n_boot},
        },
        warnings=warnings,
        title="Gold SQL checks (pass rate [95% CI])",
    )


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
    from assay.sql.gold import database_path
    from assay.sql.suite import load_suite

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
