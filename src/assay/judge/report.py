"""Per-category pass rates of binary checks, with bootstrap confidence intervals, as a Report.

A check's value per entry is True, False or None (abstained). For each category and overall, a
rate is passes / decided entries with a 95% percentile-bootstrap CI over entries
(`assay.stats.bootstrap.bootstrap_ci`, entries resampled with replacement, `n_boot` replicates);
a cell whose entries all passed or all failed gets Wilson's interval instead, as `assay score
--ci` does (a bootstrap of equal values is a single point, and the truth is not).
Each (category, check) cell draws from its own stream (`group_generator`, derived from one base
seed drawn from the caller's generator and the cell's name), so adding a category or a check
never moves another cell's interval. Abstentions are counted beside the rate, never folded in.

`CheckReport` implements the Report protocol (`assay.report`): `to_dict` (full precision, each
rate's interval as `Interval.to_dict()`), `to_json`, `to_table`, `to_markdown`; `write_rows`
writes the per-entry values (JSONL, each row stamped with the report's provenance).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.report import Interval, ReportMixin, Tabular, undefined
from assay.stats.bootstrap import bootstrap_ci, group_generator
from assay.stats.proportion import rate_interval

__all__ = ["CI_METHOD", "CheckReport", "RateCell", "mean_ci", "percentile_ci", "rate_table"]

CI_METHOD = "percentile bootstrap over entries"


def percentile_ci(
    values: Sequence[bool], rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95
) -> Interval | None:
    """Percentile-bootstrap CI of the mean of 0/1 values (None for fewer than 2 values); Wilson's
    interval when every value is the same (the bootstrap would give a single point)."""
    if len(values) < 2:
        return None
    if all(v == values[0] for v in values):
        return rate_interval(np.asarray(values, dtype=float), confidence=level)
    return bootstrap_ci(
        np.asarray(values, dtype=float), rng=rng, n_resamples=n_boot, confidence=level
    )


def mean_ci(
    values: Sequence[float], rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95
) -> Interval | None:
    """Percentile-bootstrap CI of the mean of graded or count values (None for fewer than 2)."""
    if len(values) < 2:
        return None
    return bootstrap_ci(
        np.asarray(values, dtype=float), rng=rng, n_resamples=n_boot, confidence=level
    )


@dataclass(frozen=True, slots=True)
class RateCell:
    """One (category, check) cell: decided entries, passes, abstentions and the rate's CI.

    For a graded or count check (`kind`), `total` is the sum of the decided values and the
    "rate" is their mean (a mean share, or a mean count); `passed` is the number of entries with
    a value above 0.
    """

    n: int
    passed: int
    abstained: int
    ci: Interval | None
    level: float = 0.95
    kind: str = "binary"
    total: float | None = None

    @property
    def rate(self) -> float | None:
        if not self.n:
            return None
        if self.kind != "binary" and self.total is not None:
            return self.total / self.n
        return self.passed / self.n

    @property
    def interval(self) -> Interval:
        """The rate with its interval (undefined when every entry abstained)."""
        r = self.rate
        if r is None:
            why = f"every entry abstained ({self.abstained})" if self.abstained else "no entries"
            return undefined(f"undefined: {why}", level=self.level, method=CI_METHOD)
        if self.ci is None:
            return Interval(
                r, None, None, self.level, CI_METHOD, "fewer than 2 decided entries: no interval"
            )
        return Interval(r, self.ci.low, self.ci.high, self.level, self.ci.method or CI_METHOD)

    def fmt(self) -> str:
        if self.rate is None:
            return f"- (abst {self.abstained})" if self.abstained else "-"
        s = f"{self.rate:.2f}"
        if self.ci is not None and self.ci.low is not None and self.ci.high is not None:
            s += f" [{self.ci.low:.2f}, {self.ci.high:.2f}]"
        s += f" n={self.n}"
        if self.abstained:
            s += f" abst={self.abstained}"
        return s

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rate": self.rate,
            "interval": self.interval.to_dict(),
            "n": self.n,
            "passed": self.passed,
            "abstained": self.abstained,
        }
        if self.kind != "binary":
            out["kind"] = self.kind
            out["sum"] = self.total
        return out


def rate_table(
    rows: Sequence[Mapping[str, Any]],
    checks: Sequence[str],
    rng: np.random.Generator,
    n_boot: int = 1000,
    *,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, dict[str, RateCell]]:
    """{category (and "overall"): {check: RateCell}} from per-entry dicts with a `category`.

    `kinds` gives each check's kind (default binary): a binary cell is a pass rate, a graded or
    count cell the mean value, each with its percentile-bootstrap CI.
    """
    kinds = kinds or {}
    cats = sorted({str(r["category"]) for r in rows})
    base = int(rng.integers(0, 2**31 - 1))
    out: dict[str, dict[str, RateCell]] = {}
    for cat in [*cats, "overall"]:
        sel = [r for r in rows if cat == "overall" or r["category"] == cat]
        out[cat] = {}
        for c in checks:
            abst = sum(1 for r in sel if r.get(c) is None)
            cell_rng = group_generator(base, f"{cat}\x1f{c}")
            kind = kinds.get(c, "binary")
            if kind == "binary":
                vals = [bool(r[c]) for r in sel if r.get(c) is not None]
                out[cat][c] = RateCell(
                    len(vals), sum(vals), abst, percentile_ci(vals, cell_rng, n_boot)
                )
            else:
                nums = [float(r[c]) for r in sel if r.get(c) is not None]
                out[cat][c] = RateCell(
                    len(nums),
                    sum(1 for v in nums if v > 0),
                    abst,
                    mean_ci(nums, cell_rng, n_boot),
                    kind=kind,
                    total=float(sum(nums)),
                )
    return out


@dataclass
class CheckReport(ReportMixin):
    """Per-entry check values, per-category rates, and the entries to look at."""

    rows: list[dict[str, Any]]
    checks: list[str]
    rates: dict[str, dict[str, RateCell]]
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    title: str = "Answer checks (pass rate [95% CI])"

    def to_dict(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "warnings": self.warnings,
            "checks": list(self.checks),
            "rates": {
                cat: {c: cell.to_dict() for c, cell in cells.items()}
                for cat, cells in self.rates.items()
            },
            "disagreements": self.disagreements,
            "rows": self.rows,
        }

    def _disagreement_lines(self) -> list[str]:
        return [
            f"{d['id']} ({d['category']}): {d['kind']}. {d.get('why', '')}"
            for d in self.disagreements
        ]

    def tabular(self) -> Tabular | list[Tabular]:
        return self._rates_tabular()

    def _rates_tabular(self) -> Tabular:
        footer = []
        if self.disagreements:
            footer = [
                "Entries where faithfulness and correctness disagree:",
                *(f"  {line}" for line in self._disagreement_lines()),
            ]
        return Tabular(
            title=self.title,
            header=["category", *self.checks],
            rows=[
                [cat, *(cells[c].fmt() for c in self.checks)] for cat, cells in self.rates.items()
            ],
            footer=footer,
        )

    def to_markdown(self) -> str:
        head = ["category", *self.checks]
        lines = [*(f"> {w}" for w in self.warnings)]
        if self.warnings:
            lines.append("")
        lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for cat, cells in self.rates.items():
            lines.append("| " + " | ".join([cat, *(cells[c].fmt() for c in self.checks)]) + " |")
        if self.disagreements:
            lines += ["", "Entries where faithfulness and correctness disagree:", ""]
            lines += [f"- {line}" for line in self._disagreement_lines()]
        return "\n".join(lines) + "\n"

    def to_table(self) -> Any:
        """A rich table (check columns wrap rather than truncate), then the disagreements."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        t = self._rates_tabular()
        table = Table(title=t.title)
        table.add_column("category", no_wrap=True)
        for c in self.checks:
            table.add_column(c.replace("_", " "), overflow="fold")
        for row in t.rows:
            table.add_row(*row, style="bold" if row[0] == "overall" else None)
        if not t.footer:
            return table
        return Group(table, Text("\n".join(t.footer)))

    def write_rows(self, path: str | Path) -> None:
        """Write the per-entry values as JSONL (atomically), each row stamped with `_meta`:
        the dataset version, the run hash and the rest of the report's provenance."""
        from assay._io import write_jsonl_atomic

        ds = self.meta.get("dataset") or {}
        rn = self.meta.get("run") or {}
        stamp = {"dataset_version": ds.get("version"), "run_hash": rn.get("hash"), **self.meta}
        write_jsonl_atomic(path, ({**r, "_meta": stamp} for r in self.rows))
