"""Per-category pass rates of binary checks, with bootstrap confidence intervals.

A check's value per entry is True, False or None (abstained). For each category and overall, a
rate is passes / decided entries with a 95% percentile-bootstrap CI over entries
(`assay.stats.bootstrap.bootstrap_ci`, entries resampled with replacement, `n_boot` replicates).
Each (category, check) cell draws from its own stream (`group_generator`, derived from one base
seed drawn from the caller's generator and the cell's name), so adding a category or a check
never moves another cell's interval. Abstentions are counted beside the rate, never folded in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.stats.bootstrap import bootstrap_ci, group_generator
from assay.stats.interval import Interval

__all__ = ["CheckReport", "RateCell", "percentile_ci", "rate_table"]


def percentile_ci(
    values: Sequence[bool], rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95
) -> Interval | None:
    """Percentile-bootstrap CI of the mean of 0/1 values (None for fewer than 2 values)."""
    if len(values) < 2:
        return None
    return bootstrap_ci(
        np.asarray(values, dtype=float), rng=rng, n_resamples=n_boot, confidence=level
    )


@dataclass(frozen=True, slots=True)
class RateCell:
    n: int
    passed: int
    abstained: int
    ci: Interval | None

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None

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
        r = self.rate
        return {
            "rate": None if r is None else round(r, 4),
            "ci": None if self.ci is None else self.ci.to_dict(),
            "n": self.n,
            "passed": self.passed,
            "abstained": self.abstained,
        }


def rate_table(
    rows: Sequence[Mapping[str, Any]],
    checks: Sequence[str],
    rng: np.random.Generator,
    n_boot: int = 1000,
) -> dict[str, dict[str, RateCell]]:
    """{category (and "overall"): {check: RateCell}} from per-entry dicts with a `category`."""
    cats = sorted({str(r["category"]) for r in rows})
    base = int(rng.integers(0, 2**31 - 1))
    out: dict[str, dict[str, RateCell]] = {}
    for cat in [*cats, "overall"]:
        sel = [r for r in rows if cat == "overall" or r["category"] == cat]
        out[cat] = {}
        for c in checks:
            vals = [bool(r[c]) for r in sel if r.get(c) is not None]
            abst = sum(1 for r in sel if r.get(c) is None)
            cell_rng = group_generator(base, f"{cat}\x1f{c}")
            out[cat][c] = RateCell(
                len(vals), sum(vals), abst, percentile_ci(vals, cell_rng, n_boot)
            )
    return out


@dataclass
class CheckReport:
    """Per-entry check values, per-category rates, and the entries to look at."""

    rows: list[dict[str, Any]]
    checks: list[str]
    rates: dict[str, dict[str, RateCell]]
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "warnings": self.warnings,
            "rates": {
                cat: {c: cell.to_dict() for c, cell in cells.items()}
                for cat, cells in self.rates.items()
            },
            "disagreements": self.disagreements,
            "rows": self.rows,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

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
            for d in self.disagreements:
                lines.append(f"- {d['id']} ({d['category']}): {d['kind']}. {d.get('why', '')}")
        return "\n".join(lines) + "\n"
