"""Per-category pass rates of answer checks, with confidence intervals, as a Report.

A check's value per entry is True, False or None (abstained). For each category and overall, a
rate is passes / decided entries. A pass rate is a proportion, so its interval is Wilson's, with
Clopper-Pearson's when fewer than 4 decided entries passed or fewer than 4 failed
(`assay.stats.proportion.rate_ci`, as `assay score --ci` does): a bootstrap of a proportion
under-covers at small n and rare passes, and is a single point when every entry agrees. A graded
check (a value in [0, 1]) gets the score interval of a bounded mean
(`assay.stats.bounded.score_mean_interval`); a count check a percentile bootstrap over entries
(`assay.stats.bootstrap.bootstrap_ci`, `n_boot` replicates). Each (category, check) cell draws
from its own stream (`group_generator`, derived from one base seed drawn from the caller's
generator and the cell's name), so adding a category or a check never moves another cell's
interval. Abstentions are counted beside the rate, never folded in.

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

from assay._io import write_jsonl_atomic
from assay.report import Interval, ReportMixin, Tabular, undefined
from assay.report.interval import ONE_CLUSTER
from assay.stats.bootstrap import bootstrap_ci, group_generator
from assay.stats.bounded import graded_mean_interval
from assay.stats.clusters import (
    Clustering,
    ClusterSummary,
    cluster_mean_interval,
    cluster_rate_interval,
)
from assay.stats.proportion import rate_ci

__all__ = [
    "CI_METHOD",
    "CheckReport",
    "RateCell",
    "grouping_label",
    "mean_ci",
    "pass_rate_ci",
    "rate_table",
]

CI_METHOD = (
    "pass rates: Wilson (Clopper-Pearson below 4 passes or fails); graded checks: score "
    "interval of a bounded mean (exact below 4 values off the most common one); counts: percentile bootstrap over entries"
)


def pass_rate_ci(values: Sequence[bool], level: float = 0.95) -> Interval | None:
    """The interval of a pass rate (None without values): Wilson, Clopper-Pearson when fewer
    than 4 passed or fewer than 4 failed (`assay.stats.proportion.rate_ci`)."""
    if not values:
        return None
    return rate_ci(sum(bool(v) for v in values), len(values), confidence=level)


def mean_ci(
    values: Sequence[float],
    rng: np.random.Generator,
    n_boot: int = 1000,
    level: float = 0.95,
    *,
    kind: str = "graded",
) -> Interval | None:
    """The interval of the mean of a graded check's values (in [0, 1]: the score interval of a
    bounded mean, from one value on; exact when fewer than 4 values differ from the most
    common one, `assay.stats.bounded.graded_mean_interval`) or of a count check's (percentile bootstrap; None for
    fewer than 2)."""
    arr = np.asarray(values, dtype=float)
    # 0/1 values are a rate: graded_mean_interval gives its interval, with the exact fallback
    if kind == "graded" and arr.size and bool(np.all((arr >= 0.0) & (arr <= 1.0))):
        return graded_mean_interval(arr, confidence=level)
    if arr.size < 2:
        return None
    return bootstrap_ci(arr, rng=rng, n_resamples=n_boot, confidence=level)


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
                r, None, None, self.level, CI_METHOD, "too few decided entries: no interval"
            )
        one = self.ci.note if self.ci.note == ONE_CLUSTER else None  # the bounds are no interval
        return Interval(r, self.ci.low, self.ci.high, self.level, self.ci.method or CI_METHOD, one)

    def fmt(self) -> str:
        if self.rate is None:
            return f"- (abst {self.abstained})" if self.abstained else "-"
        s = f"{self.rate:.2f}"
        if self.ci is not None and self.ci.fmt_bounds(2):  # [low, high], or why there is none
            s += f" {self.ci.fmt_bounds(2)}"
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
    clusters: Clustering | None = None,
) -> dict[str, dict[str, RateCell]]:
    """{category (and "overall"): {check: RateCell}} from per-entry dicts with a `category`.

    `kinds` gives each check's kind (default binary): a binary cell is a pass rate (Wilson), a
    graded or count cell the mean value (score interval, or bootstrap for counts).

    ``clusters`` (entries that are not independent: questions on one document): a binary or
    graded cell treats a cluster as one draw (`assay.stats.clusters.cluster_rate_interval`,
    `cluster_mean_interval`); a count cell keeps its bootstrap over entries.
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
            decided = [r for r in sel if r.get(c) is not None]
            labels = None if clusters is None else clusters.labels([str(r["id"]) for r in decided])
            if kind == "binary":
                vals = [bool(r[c]) for r in decided]
                ci = (
                    pass_rate_ci(vals)
                    if labels is None or not vals
                    else cluster_rate_interval(np.asarray(vals, dtype=float), labels)
                )
                out[cat][c] = RateCell(len(vals), sum(vals), abst, ci)
            else:
                nums = [float(r[c]) for r in decided]
                graded = kind == "graded" and all(0.0 <= v <= 1.0 for v in nums)
                out[cat][c] = RateCell(
                    len(nums),
                    sum(1 for v in nums if v > 0),
                    abst,
                    cluster_mean_interval(nums, labels)
                    if labels is not None and nums and graded
                    else mean_ci(nums, cell_rng, n_boot, kind=kind),
                    kind=kind,
                    total=float(sum(nums)),
                )
    return out


def grouping_label(by: str) -> str:
    """The column header of rows grouped `by`: ``category``, ``role`` (``principal.role``),
    ``clearance``, a metadata key's own name."""
    return by.rsplit(".", 1)[-1]


Rates = dict[str, dict[str, RateCell]]


@dataclass
class CheckReport(ReportMixin):
    """Per-entry check values, rates per group of entries, and the entries to look at.

    `rates` are grouped `by` (``category`` by default; ``principal.role``: per role of the
    asking principal); `also` holds the rates of further groupings (by -> rates), each shown
    as its own table, headed by what groups its rows."""

    rows: list[dict[str, Any]]
    checks: list[str]
    rates: Rates
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    title: str = "Answer checks (pass rate [95% CI])"
    by: str = "category"
    also: dict[str, Rates] = field(default_factory=dict)
    # how entries were clustered (`assay.stats.clusters.ClusterSummary`); None: independent
    clustering: ClusterSummary | None = None
    # the checks rolled up per conversation (`assay.dataset.rollup`), when entries are turns
    conversations: Any = None

    def header_lines(self) -> list[str]:
        """What the tables' intervals assume: ``Clustered by document: 59 entries in 31
        clusters ...`` when entries were clustered; then the roll-up per conversation."""
        rolled = [] if self.conversations is None else self.conversations.lines()
        if self.clustering is None:
            return rolled
        w = self.clustering.words()
        return [
            *rolled,
            f"{w[0].upper()}{w[1:]}: each rate's CI treats a cluster as one draw (cluster "
            "Wilson at the effective size, cluster Clopper-Pearson below 4 effective passes or "
            "fails; graded checks: the score interval over the cluster means; counts: bootstrap "
            "over entries) (--cluster none: entries as independent).",
        ]

    @property
    def groupings(self) -> dict[str, Rates]:
        """Every grouping's rates, `by` first: {by: {row: {check: RateCell}}}."""
        return {self.by: self.rates, **self.also}

    def to_dict(self) -> dict[str, Any]:
        def plain(rates: Rates) -> dict[str, Any]:
            return {
                cat: {c: cell.to_dict() for c, cell in cells.items()}
                for cat, cells in rates.items()
            }

        return {
            "meta": self.meta,
            "warnings": self.warnings,
            "checks": list(self.checks),
            "by": self.by,
            "clustering": None if self.clustering is None else self.clustering.to_dict(),
            "conversations": None if self.conversations is None else self.conversations.to_dict(),
            "rates": plain(self.rates),
            "rates_by": {by: plain(rates) for by, rates in self.groupings.items()},
            "disagreements": self.disagreements,
            "rows": self.rows,
        }

    def _disagreement_lines(self) -> list[str]:
        return [
            f"{d['id']} ({d['category']}): {d['kind']}. {d.get('why', '')}"
            for d in self.disagreements
        ]

    def tabular(self) -> Tabular | list[Tabular]:
        tables = self._tables()
        return tables[0] if len(tables) == 1 else tables

    def _tables(self) -> list[Tabular]:
        """One table per grouping, headed by what groups its rows; the disagreements under the
        last."""
        groupings = self.groupings
        several = len(groupings) > 1
        out = []
        for by, rates in groupings.items():
            label = grouping_label(by)
            out.append(
                Tabular(
                    title=f"{self.title} by {label}" if several else self.title,
                    header=[label, *self.checks],
                    rows=[
                        [cat, *(cells[c].fmt() for c in self.checks)]
                        for cat, cells in rates.items()
                    ],
                )
            )
        if self.disagreements:
            out[-1].footer = [
                "Entries where faithfulness and correctness disagree:",
                *(f"  {line}" for line in self._disagreement_lines()),
            ]
        return out

    def _rates_tabular(self) -> Tabular:
        return self._tables()[0]

    def to_markdown(self) -> str:
        lines = [*(f"> {w}" for w in [*self.header_lines(), *self.warnings])]
        if self.warnings or self.header_lines():
            lines.append("")
        tables = self._tables()
        for i, t in enumerate(tables):
            if len(tables) > 1:
                lines += [f"**{t.title}**", ""]
            head = t.header
            lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
            lines += ["| " + " | ".join(row) + " |" for row in t.rows]
            if i < len(tables) - 1:
                lines.append("")
        if self.disagreements:
            lines += ["", "Entries where faithfulness and correctness disagree:", ""]
            lines += [f"- {line}" for line in self._disagreement_lines()]
        return "\n".join(lines) + "\n"

    def to_table(self) -> Any:
        """Rich tables, one per grouping (check columns wrap rather than truncate), then the
        disagreements."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        parts: list[Any] = [Text(line) for line in self.header_lines()]
        for t in self._tables():
            table = Table(title=t.title)
            table.add_column(t.header[0], no_wrap=True)
            for c in self.checks:
                # a header wraps between its words, never inside one ("contradicti / on")
                words = c.split("_")
                table.add_column(" ".join(words), overflow="fold", min_width=max(map(len, words)))
            for row in t.rows:
                table.add_row(*row, style="bold" if row[0] == "overall" else None)
            parts.append(table)
            if t.footer:
                parts.append(Text("\n".join(t.footer)))
        return parts[0] if len(parts) == 1 else Group(*parts)

    def write_rows(self, path: str | Path) -> None:
        """Write the per-entry values as JSONL (atomically), each row stamped with `_meta`:
        the dataset version, the run hash and the rest of the report's provenance."""
        ds = self.meta.get("dataset") or {}
        rn = self.meta.get("run") or {}
        stamp = {"dataset_version": ds.get("version"), "run_hash": rn.get("hash"), **self.meta}
        write_jsonl_atomic(path, ({**r, "_meta": stamp} for r in self.rows))
