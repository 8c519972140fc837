"""The CI gate: a policy over a `Comparison` that passes or fails a change, category by category.

A category fails when its rate on the gated metric (``complete@k`` by default; any registered
metric of `assay.metrics`, e.g. ``hit@5`` or ``recall@5``) drops by more than
its margin (``max_drop``, absolute, or the category's entry in a margin file). The average is
never gated on its own: a change that improves the overall rate while breaking one category fails.
With ``require_significance`` a category fails only when the drop also has a Holm-adjusted
p-value at or below ``alpha``. A category too small for any paired test to reach significance
says so; without ``require_significance`` its drop still counts against the margin.

Exit codes (`GateResult.exit_code`, used by ``assay gate``): 0 pass, 1 a category regressed,
2 usage or data error (raised before a result exists).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.compare._core import (
    DEFAULT_METRICS,
    OVERALL,
    Comparison,
    MetricComparison,
    _fmt_delta,
    _num,
)
from assay.errors import DataError, Problem
from assay.metrics import parse, parse_list
from assay.report import ReportMixin, Tabular

__all__ = ["GatePolicy", "GateResult", "GateRow", "gate", "gate_files", "load_margins"]

_EPS = 1e-12


@dataclass(frozen=True)
class GatePolicy:
    max_drop: float = 0.02
    metric: str = "complete@5"
    margins: Mapping[str, float] = field(default_factory=dict)
    require_significance: bool = False
    alpha: float = 0.05

    def margin(self, category: str) -> float:
        return float(self.margins.get(category, self.margins.get("*", self.max_drop)))


@dataclass
class GateRow:
    category: str
    n: int
    metric: MetricComparison
    margin: float
    failed: bool
    verdict: str
    small_n: bool

    @property
    def drop(self) -> float:
        return self.metric.base - self.metric.cand

    def to_dict(self) -> dict[str, Any]:
        mc = self.metric
        return {
            "category": self.category,
            "n": self.n,
            "base": _num(mc.base),
            "cand": _num(mc.cand),
            "delta": mc.delta.to_dict(),
            "up": len(mc.up),
            "down": len(mc.down),
            "p": _num(mc.p),
            "p_holm": _num(mc.p_holm),
            "p_ledger": None if mc.p_ledger is None else _num(mc.p_ledger),
            "margin": _num(self.margin),
            "failed": self.failed,
            "small_n": self.small_n,
            "verdict": self.verdict,
        }


@dataclass
class GateResult(ReportMixin):
    passed: bool
    rows: list[GateRow]
    overall: GateRow
    policy: GatePolicy
    comparison: Comparison

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def failed_categories(self) -> list[str]:
        return [r.category for r in self.rows if r.failed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.gate/1",
            "passed": self.passed,
            "failed_categories": self.failed_categories,
            "metric": self.policy.metric,
            "max_drop": self.policy.max_drop,
            "margins": dict(self.policy.margins),
            "require_significance": self.policy.require_significance,
            "alpha": self.policy.alpha,
            "rows": [r.to_dict() for r in self.rows],
            "overall": self.overall.to_dict(),
            "comparison": self.comparison.to_dict(),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        binary = self.overall.metric.binary
        header = [
            "category",
            "n",
            "base",
            "cand",
            "delta [CI]",
            "fixed/broken" if binary else "up/down",
        ]
        header += ["p", "p Holm", "margin", "verdict"]
        body = []
        for r in [*self.rows, self.overall]:
            mc = r.metric
            body.append(
                [
                    r.category,
                    str(r.n),
                    f"{mc.base:.3f}",
                    f"{mc.cand:.3f}",
                    _fmt_delta(mc.delta),
                    f"{len(mc.up)}/{len(mc.down)}",
                    _p(mc.p),
                    _p(mc.p_holm),
                    "-" if r.category == OVERALL else f"{r.margin:.3f}",
                    r.verdict,
                ]
            )
        return header, body

    def tabular(self) -> Tabular:
        header, body = self._cells()
        return Tabular(f"assay gate on {self.policy.metric}: {self.headline()}", header, body)

    def headline(self) -> str:
        m = self.policy.metric
        if self.passed:
            return f"PASS: no category's {m} dropped by more than its margin."
        return f"FAIL: {m} regressed in {', '.join(self.failed_categories)}."

    def to_markdown(self) -> str:
        header, body = self._cells()
        icon = ":white_check_mark:" if self.passed else ":x:"
        out = [f"### assay gate {icon} {self.headline()}", ""]
        out.append("| " + " | ".join(header) + " |")
        out.append(
            "|" + "|".join("---" if h in ("category", "verdict") else "---:" for h in header) + "|"
        )
        for r in body:
            cells = [f"**{c}**" if r[0] == OVERALL and i == 0 else c for i, c in enumerate(r)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        pol = self.policy
        rule = f"fail when {pol.metric} drops by more than the margin (default {pol.max_drop:g})"
        if pol.require_significance:
            rule += f" and the drop is significant (Holm p <= {pol.alpha:g})"
        out.append(f"Rule: {rule}. The overall row is shown, not gated.  ")
        out.extend(f"{line}  " for line in self.comparison.header_lines())
        from assay.compare._core import _flip_lines

        flips = [ln for ln in _flip_lines(self.comparison, max_ids=20) if f" {pol.metric} " in ln]
        if flips:
            out += [
                "",
                "<details><summary>Entries that flipped</summary>",
                "",
                *flips,
                "",
                "</details>",
            ]
        return "\n".join(out) + "\n"

    def to_table(self) -> Any:
        from rich.table import Table

        header, body = self._cells()
        t = Table(
            title=f"assay gate on {self.policy.metric}: {self.headline()}", title_justify="left"
        )
        for h in header:
            t.add_column(h, justify="left" if h in ("category", "verdict") else "right")
        for r in body:
            style = "red" if r[-1].startswith("FAIL") else ("bold" if r[0] == OVERALL else None)
            t.add_row(*r, style=style, end_section=r[0] == body[-2][0])
        t.caption = "\n".join(self.comparison.header_lines())
        t.caption_justify = "left"
        return t


def _p(p: float | None) -> str:
    if p is None or math.isnan(p):
        return "-"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def load_margins(path: str | Path) -> dict[str, float]:
    """A JSON object ``{"category": max_drop, ..., "*": default}``; values are absolute drops."""
    p = Path(path)
    if not p.exists():
        raise DataError(Problem(str(p), None, None, "margin file not found"))
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(Problem(str(p), exc.lineno, None, f"bad JSON: {exc.msg}")) from None
    if not isinstance(data, dict):
        raise DataError(
            Problem(str(p), None, None, 'expected a JSON object {"category": max_drop}')
        )
    problems = [
        Problem(str(p), None, str(k), "margin must be a number in [0, 1]")
        for k, v in data.items()
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1
    ]
    if problems:
        raise DataError(problems)
    return {str(k): float(v) for k, v in data.items()}


def gate(comparison: Comparison, policy: GatePolicy) -> GateResult:
    """Apply ``policy`` to ``comparison``; the result's ``exit_code`` is 0 (pass) or 1 (fail).

    ``policy.metric`` is read by `assay.metrics.parse` (a bare cutoff family takes the
    comparison's k)."""
    from dataclasses import replace

    policy = replace(policy, metric=parse(policy.metric, k=comparison.k).name)
    if policy.metric not in comparison.metrics:
        raise ValueError(
            f"gated metric {policy.metric!r} was not compared (have {comparison.metrics})"
        )
    unknown = sorted(set(policy.margins) - set(comparison.categories) - {"*"})
    if unknown:
        raise DataError(
            Problem(
                "<margins>",
                None,
                ",".join(unknown),
                "margin given for a category the dataset does not have",
            )
        )
    rows: list[GateRow] = []
    for cat, row in comparison.categories.items():
        mc = row.metrics[policy.metric]
        margin = policy.margin(cat)
        drop = mc.base - mc.cand
        over = row.n > 0 and drop > margin + _EPS
        significant = not math.isnan(mc.p_holm) and mc.p_holm <= policy.alpha
        failed = over and (significant or not policy.require_significance)
        if row.n == 0:
            verdict = "no entries"
        elif failed:
            verdict = f"FAIL: dropped {drop:.3f} > {margin:.3f}"
            if row.small_n:
                verdict += " (n too small to tell from noise)"
            elif not significant:
                verdict += " (not significant)"
        elif over:
            verdict = f"pass: dropped {drop:.3f} > {margin:.3f} but not significant"
            if row.small_n:
                verdict += f" (n={row.n} is too small for any conclusion)"
        elif row.small_n:
            verdict = f"pass (n={row.n} is too small for any conclusion)"
        else:
            verdict = "pass"
        rows.append(GateRow(cat, row.n, mc, margin, failed, verdict, row.small_n))
    omc = comparison.overall.metrics[policy.metric]
    overall = GateRow(OVERALL, comparison.overall.n, omc, float("nan"), False, "(not gated)", False)
    return GateResult(not any(r.failed for r in rows), rows, overall, policy, comparison)


def gate_files(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    policy: GatePolicy | None = None,
    k: int = 5,
    reuse: bool = False,
    record: bool = True,
    **compare_kwargs: Any,
) -> GateResult:
    """Load, compare (the gated metric, complete@k and recall@k) and gate; what ``assay gate`` runs.

    ``policy.metric`` names a registered metric with its cutoff (``complete@5``, ``hit@5``); a
    bare name
    (``complete``) gets ``@k``. Once the gate has a result, the comparison is recorded in the
    dataset's ledger (once per distinct comparison; ``record=False`` for exploration), and a
    sealed fresh sample refuses a second use unless ``reuse``.
    """
    from dataclasses import replace

    from assay.compare._core import _load_and_compare, _record_comparison
    from assay.dataset.fresh import using

    policy = policy or GatePolicy(metric=DEFAULT_METRICS[0])
    metric = parse(policy.metric, k=k)
    policy = replace(policy, metric=metric.name)
    names = [m.name for m in parse_list([metric, *DEFAULT_METRICS], k=k)]
    compare_kwargs.setdefault("alpha", policy.alpha)
    chunks = compare_kwargs.pop("chunks", None)
    level = compare_kwargs.pop("level", "chunk")
    # the policy is checked against the comparison before anything is recorded: a gate that
    # stops on bad margins (exit 2) leaves no trace in the ledger or on a fresh sample (the
    # sample's use is recorded when this block completes)
    with using(dataset, command="gate", allow_reuse=reuse) as session:
        cmp, ds, b, c = _load_and_compare(
            dataset,
            base,
            cand,
            k=k,
            chunks=chunks,
            level=level,
            metrics=names,
            allow_reuse=reuse,
            command="gate",
            **compare_kwargs,
        )
        result = gate(cmp, policy)
    if session.use is not None:
        cmp.fresh = session.use.to_dict()
    _record_comparison(cmp, ds, b, c, dataset, command="gate", record=record, level=level)
    return result
