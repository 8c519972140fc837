"""The CI gate: a policy over a `Comparison` that passes or fails a change, category by category.

A category fails when its rate on the gated series (``complete@k`` by default; any registered
metric of `assay.metrics`, e.g. ``hit@5`` or ``recall@5``, or any registered answer check, e.g.
``answer_correct``) drops by more than its margin (``max_drop``, absolute, or the category's
entry in a margin file). On a series where lower is better (an error check, a count of leaks) a
*rise* beyond the margin fails. Several gated series (``GatePolicy.metrics``) are gated each,
and the comparison they come from holds them all in one Holm family. The average is
never gated on its own: a change that improves the overall rate while breaking one category fails.
With ``require_significance`` a category fails only when the drop is also significant: its
ledger-corrected p-value (Holm within the comparison, times ``t (t + 1)`` for the dataset's
``t``-th comparison: `assay.compare.ledger`) at or below ``alpha``, so the ledger's promise (at
most alpha chance of any false alarm over the dataset's life) covers the gate too. With
``within_comparison`` the gate uses the Holm p of this comparison alone, as it used to, and says
so: over 8 comparisons such a gate fails a harmless change far more often than alpha. A
comparison kept out of the ledger (``record=False``) has no ledger p, and the gate says it fell
back to Holm. A category too small for any paired test to reach significance after the
correction says so; without ``require_significance`` its drop still counts against the margin.

A count of harms with a *ceiling* (the ``leak`` check's is 0; ``max_count``, ``assay gate
--max-leaks N``, sets it for the gated counts) is gated on the candidate alone as well: a row
fails when the candidate's total count exceeds the ceiling, whatever the base run did and however
many entries the row has, so a leak is never averaged away (nor dropped with a pair the base
abstained on); the ceiling replaces the margin for such a count. The counts are exact: one leaked chunk is a total of 1 > 0. A row with no harm
reports the exact one-sided upper bound on the share of entries that could still be affected
(Clopper-Pearson at zero events: ``1 - alpha ** (1 / n)``); the paired one-sided sign test
against the base is reported beside it.

A gate cannot vouch for entries its check did not decide. When a gated check abstains (in either
run) on more than ``max_abstain`` (default 0.5; ``assay gate --max-abstain``) of a category's
entries, that category fails, and so does the gate when the check abstains on more than that
share of all the entries it would gate (the overall row): an answer check that can decide 14 of
49 entries must not pass a broken answerer on the strength of those 14. The verdict says which
check abstained on how many of how many. This is a failure (exit 1), not bad input (exit 2): the
dataset and runs are well formed, the gate simply has too little evidence to pass; a dataset
whose entries carry what the check needs (key facts, a reference answer it can read), or an
explicit ``max_abstain`` of 1 for a check rated over a subset of entries by design (the error
checks on entries that should abstain), lets it pass again. Retrieval metrics never abstain.

Exit codes (`GateResult.exit_code`, used by ``assay gate``): 0 pass, 1 a category regressed (or
a gated check abstained on too many entries), 2 usage or data error (raised before a result
exists).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay._io import json_loads
from assay.compare.comparison import (
    Comparison,
    MetricComparison,
    _decided,
    _flip_lines,
    _num,
    row_size,
)
from assay.compare.render import _fmt_delta, cluster_line, zero_key
from assay.compare.series import OVERALL, describe
from assay.errors import DataError, Problem
from assay.metrics import HEADLINE
from assay.report import ReportMixin, Tabular

__all__ = [
    "DEFAULT_MAX_ABSTAIN",
    "GatePolicy",
    "GateResult",
    "GateRow",
    "gate",
    "load_margins",
    "unrated_entries",
]

_EPS = 1e-12
DEFAULT_MAX_ABSTAIN = 0.5


@dataclass(frozen=True)
class GatePolicy:
    """What fails a change: a drop in ``metric`` (and in each of ``metrics``, when given) larger
    than the category's margin, optionally only when significant after Holm."""

    max_drop: float = 0.02
    metric: str = f"{HEADLINE}@5"
    margins: Mapping[str, float] = field(default_factory=dict)
    require_significance: bool = False
    alpha: float = 0.05
    metrics: tuple[str, ...] = ()
    within_comparison: bool = False
    max_count: int | None = None  # the ceiling of gated counts of harms (None: each check's own)
    max_abstain: float = DEFAULT_MAX_ABSTAIN  # largest share of a row's entries left undecided

    def margin(self, category: str) -> float:
        return float(self.margins.get(category, self.margins.get("*", self.max_drop)))

    def significance_p(self, mc: MetricComparison) -> float:
        """The p-value a drop must have at or below ``alpha`` to count as significant: the
        ledger-corrected one, or Holm's within the comparison (``within_comparison``, or a
        comparison not recorded in the ledger)."""
        if self.within_comparison or mc.p_ledger is None:
            return mc.p_holm
        return mc.p_ledger

    def significance_rule(self, comparison: Comparison) -> str:
        """How significance is judged, in words (printed with every gate that uses it)."""
        a = f"{self.alpha:g}"
        if self.within_comparison:
            return (
                f"Holm p <= {a} within this comparison only (--within-comparison): the "
                "dataset's earlier comparisons are not counted"
            )
        if comparison.ledger_t is None:
            return (
                f"Holm p <= {a} within this comparison: not recorded in the ledger, so no "
                "ledger-corrected p exists"
            )
        t = comparison.ledger_t
        return (
            f"ledger-corrected p <= {a}, i.e. Holm p x {t * (t + 1)} as comparison #{t} of this "
            "dataset; --within-comparison would use Holm alone"
        )

    @property
    def gated(self) -> list[str]:
        """Every gated series, ``metric`` first, repeats dropped."""
        return list(dict.fromkeys([self.metric, *self.metrics]))


@dataclass
class GateRow:
    category: str
    n: int
    metric: MetricComparison
    margin: float
    failed: bool
    verdict: str
    small_n: bool
    p_gate: float = float("nan")  # the p the significance rule used
    ceiling: int | None = None  # a count of harms: the candidate's total may not exceed it
    too_few: tuple[int, int] | None = None  # failed as abstained on (this many, of so many)

    @property
    def drop(self) -> float:
        """How far the series moved the worse way (a fall, or a rise where lower is better)."""
        mc = self.metric
        return mc.base - mc.cand if mc.higher_is_better else mc.cand - mc.base

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
            "p_gate": _num(self.p_gate),
            "margin": _num(self.margin),
            "failed": self.failed,
            "small_n": self.small_n,
            "verdict": self.verdict,
        } | (
            {}
            if self.ceiling is None
            else {
                "ceiling": self.ceiling,
                "cand_total": _num(mc.cand_total),
                "cand_positive_ids": list(mc.cand_positive),
            }
        )


@dataclass
class GateResult(ReportMixin):
    """The gate's verdict on ``policy.metric`` (``rows``, ``overall``) and, when the policy
    gates several series, one more result per further series in ``others``; ``passed`` is
    False when any of them failed."""

    passed: bool
    rows: list[GateRow]
    overall: GateRow
    policy: GatePolicy
    comparison: Comparison
    others: list[GateResult] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def failed_categories(self) -> list[str]:
        """The failed rows; the overall row fails only when the check abstained on too many."""
        return [r.category for r in [*self.rows, self.overall] if r.failed]

    @property
    def metric_passed(self) -> bool:
        """This series' own verdict (``passed`` is every gated series')."""
        return not self.failed_categories

    @property
    def parts(self) -> list[GateResult]:
        """One result per gated series, the policy's ``metric`` first."""
        return [self, *self.others]

    @property
    def failures(self) -> list[tuple[str, str]]:
        """(series, category) of every failed category of every gated series."""
        return [(p.policy.metric, c) for p in self.parts for c in p.failed_categories]

    def _own(self) -> dict[str, Any]:
        return {
            "passed": self.metric_passed,
            "failed_categories": self.failed_categories,
            "metric": self.policy.metric,
            "rows": [r.to_dict() for r in self.rows],
            "overall": self.overall.to_dict(),
        }

    def to_dict(self) -> dict[str, Any]:
        failed = list(dict.fromkeys(c for _, c in self.failures))
        out: dict[str, Any] = {
            "schema": "assay.gate/1",
            "passed": self.passed,
            "failed_categories": failed,
            "metric": self.policy.metric,
            "max_drop": self.policy.max_drop,
            "margins": dict(self.policy.margins),
            "require_significance": self.policy.require_significance,
            "significance": self.policy.significance_rule(self.comparison),
            "within_comparison": self.policy.within_comparison,
            "alpha": self.policy.alpha,
            "max_abstain": self.policy.max_abstain,
            "rows": [r.to_dict() for r in self.rows],
            "overall": self.overall.to_dict(),
        }
        if self.others:
            out["metrics"] = [p.policy.metric for p in self.parts]
            out["gates"] = [p._own() for p in self.parts]
        out["comparison"] = self.comparison.to_dict()
        return out

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
        ledger = self.comparison.ledger_t is not None
        header += ["p", "p Holm", *(["p ledger"] if ledger else []), "margin", "verdict"]
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
                    *([_p(mc.p_ledger)] if ledger else []),
                    "-" if r.category == OVERALL else f"{r.margin:.3f}",
                    # a check's row leads with how many entries it decided
                    r.verdict if mc.abstained is None else f"{_decided(mc)}: {r.verdict}",
                ]
            )
        return header, body

    def rule(self) -> str:
        """The gate's rule in words, with how significance is judged when it is."""
        pol = self.policy
        moves = "drops" if self.overall.metric.higher_is_better else "rises"
        rule = f"fail when {pol.metric} {moves} by more than the margin (default {pol.max_drop:g})"
        if self.overall.metric.abstained is not None:
            rule += (
                f", or when it abstains on more than {pol.max_abstain:g} of a row's entries "
                "(the overall row included)"
            )
        if self.overall.ceiling is not None:
            rule += (
                f", or when the candidate's total {pol.metric} in a row exceeds "
                f"{self.overall.ceiling} (exact counts; never averaged away)"
            )
        if pol.require_significance:
            rule += f" and the change is significant ({pol.significance_rule(self.comparison)})"
        return f"Rule: {rule}. The overall row is shown, not gated on its change."

    def tabular(self) -> Tabular | list[Tabular]:
        tabs = []
        for part in self.parts:
            header, body = part._cells()
            title = f"assay gate on {part.policy.metric}: {part.headline()}"
            cl = part.comparison.clustering
            deltas = (r.metric.delta for r in [*part.rows, part.overall])
            lines = [part.rule(), *([] if cl is None else [cluster_line(cl)]), *zero_key(deltas)]
            tabs.append(Tabular(title, header, body, lines))
        return tabs[0] if len(tabs) == 1 else tabs

    def headline(self) -> str:
        m = self.policy.metric
        if self.metric_passed:
            moved = "dropped" if self.overall.metric.higher_is_better else "rose"
            return f"PASS: no category's {m} {moved} by more than its margin."
        said = []
        if regressed := [r.category for r in self.rows if r.failed and not _abstained(r)]:
            said.append(f"{m} regressed in {', '.join(regressed)}")
        if left := [r for r in [*self.rows, self.overall] if _abstained(r)]:
            said.append(
                f"{m} abstained on too many entries in "
                + ", ".join(
                    f"{r.category} ({r.too_few[0]} of {r.too_few[1]})" for r in left if r.too_few
                )
            )
        return f"FAIL: {'; '.join(said)}."

    def to_markdown(self) -> str:
        if self.others:
            icon = ":white_check_mark:" if self.passed else ":x:"
            verdict = (
                "PASS on every gated series."
                if self.passed
                else "FAIL: " + "; ".join(f"{m} in {c}" for m, c in self.failures) + "."
            )
            out = [f"## assay gate {icon} {verdict}", ""]
            return "\n".join(out) + "\n" + "\n".join(p._markdown() for p in self.parts)
        return self._markdown()

    def _markdown(self) -> str:
        header, body = self._cells()
        icon = ":white_check_mark:" if self.metric_passed else ":x:"
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
        out.append(f"{self.rule()}  ")
        out.extend(f"{line}  " for line in self.comparison.header_lines([self.policy.metric]))
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
        if self.others:
            from rich.console import Group

            return Group(*(p._table() for p in self.parts))
        return self._table()

    def _table(self) -> Any:
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
        t.caption = "\n".join([self.rule(), *self.comparison.header_lines([self.policy.metric])])
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
        raise DataError("margin file not found", file=p)
    data = json_loads(p.read_text(encoding="utf-8"), p)
    if not isinstance(data, dict):
        raise DataError('expected a JSON object {"category": max_drop}', file=p)
    problems = [
        Problem(str(p), None, str(k), "margin must be a number in [0, 1]")
        for k, v in data.items()
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1
    ]
    if problems:
        raise DataError(problems)
    return {str(k): float(v) for k, v in data.items()}


def gate(
    comparison: Comparison,
    policy: GatePolicy,
    *,
    unrated: Mapping[str, Collection[str]] | None = None,
) -> GateResult:
    """Apply ``policy`` to ``comparison``; the result's ``exit_code`` is 0 (pass) or 1 (fail).

    Each gated name is read by `assay.compare.series.describe` (a bare cutoff family takes the
    comparison's k; an answer check by its name) and must be among the compared series.
    ``unrated`` maps a gated check to the entries it does not rate by design (`unrated_entries`):
    its abstentions there count neither way against ``policy.max_abstain``."""

    gated = [describe(m, k=comparison.k).name for m in policy.gated]
    policy = replace(policy, metric=gated[0], metrics=tuple(gated[1:]))
    for m in gated:
        if m not in comparison.metrics:
            raise ValueError(f"gated metric {m!r} was not compared (have {comparison.metrics})")
    unknown = sorted(set(policy.margins) - set(comparison.categories) - {"*"})
    if unknown:
        raise DataError(
            "margin given for a category the dataset does not have",
            file="<margins>",
            field=",".join(unknown),
        )
    out = unrated or {}
    parts = [
        _gate_one(comparison, replace(policy, metric=m), frozenset(out.get(m, ()))) for m in gated
    ]
    first = parts[0]
    first.policy = policy
    first.others = parts[1:]
    first.passed = all(p.passed for p in parts)
    return first


def _ceiling(policy: GatePolicy, mc: MetricComparison, k: int | None) -> int | None:
    """The ceiling of a gated count of harms (None: the series has none)."""
    if mc.kind != "count" or mc.higher_is_better:
        return None
    if policy.max_count is not None:
        return policy.max_count
    return describe(policy.metric, k=k).ceiling


def _zero_bound(n: int, alpha: float) -> float:
    """Exact one-sided upper bound on a rate after 0 events in ``n`` (Clopper-Pearson)."""
    return float(1.0 - alpha ** (1.0 / n))


def unrated_entries(entries: Iterable[Any], names: Iterable[str]) -> dict[str, frozenset[str]]:
    """For each registered check among ``names`` that rates only some entries by design (its
    ``rates``), the ids of the entries it does not rate."""
    wanted = list(names)
    if not wanted:  # a gate on metrics alone: the check registry stays unread
        return {}
    from assay.judge.registry import check_names, get_check

    known = set(check_names())
    items = list(entries)
    out: dict[str, frozenset[str]] = {}
    for name in wanted:
        rates = get_check(name).rates if name in known else None
        if rates is not None:
            out[name] = frozenset(str(e.id) for e in items if not rates(e))
    return out


def _gate_one(comparison: Comparison, policy: GatePolicy, unrated: frozenset[str]) -> GateResult:
    rows: list[GateRow] = []
    omc = comparison.overall.metrics[policy.metric]
    ceiling = _ceiling(policy, omc, comparison.k)
    for cat, row in comparison.categories.items():
        mc = row.metrics[policy.metric]
        margin = policy.margin(cat)
        drop = mc.base - mc.cand if mc.higher_is_better else mc.cand - mc.base
        moved = "dropped" if mc.higher_is_better else "rose"
        # a count with a ceiling is gated on the candidate's total alone (below), not its change
        over = mc.n > 0 and drop > margin + _EPS and ceiling is None
        p_gate = policy.significance_p(mc)
        significant = not math.isnan(p_gate) and p_gate <= policy.alpha
        failed = over and (significant or not policy.require_significance)
        total = mc.cand_total or 0.0
        if ceiling is not None and total > ceiling + _EPS:
            shown = ", ".join(mc.cand_positive[:5]) + (" ..." if len(mc.cand_positive) > 5 else "")
            verdict = f"FAIL: {int(total)} {policy.metric} > {ceiling} allowed ({shown})"
            rows.append(
                GateRow(cat, row.n, mc, margin, True, verdict, row.small_n, p_gate, ceiling)
            )
            continue
        why, too_few = _too_few(policy, mc, row.n, unrated)
        if too_few:
            rows.append(
                GateRow(cat, row.n, mc, margin, True, why, row.small_n, p_gate, ceiling, too_few)
            )
            continue
        if row.n == 0 or mc.n == 0:
            verdict = "no entries" if row.n == 0 else "every entry abstained"
            if row.n and set(mc.abstained or ()) <= unrated:
                verdict = f"not rated: {policy.metric} rates none of these entries"
        elif failed:
            verdict = f"FAIL: {moved} {drop:.3f} > {margin:.3f}"
            if row.small_n:
                verdict += f" ({row_size(row.n, row.clusters)} too small to tell from noise)"
            elif not significant:
                verdict += " (not significant)"
        elif over:
            verdict = f"pass: {moved} {drop:.3f} > {margin:.3f} but not significant"
            if row.small_n:
                verdict += f" ({row_size(row.n, row.clusters)} is too small for any conclusion)"
        elif ceiling is not None and total == 0 and mc.cand_decided:
            bound = _zero_bound(mc.cand_decided, policy.alpha)
            verdict = (
                f"pass: no {policy.metric} in {mc.cand_decided} entries (share affected < "
                f"{bound:.3f} at {1 - policy.alpha:g}, exact one-sided)"
            )
        elif row.small_n:
            verdict = f"pass ({row_size(row.n, row.clusters)} is too small for any conclusion)"
        else:
            verdict = "pass"
        rows.append(GateRow(cat, row.n, mc, margin, failed, verdict, row.small_n, p_gate, ceiling))
    n_all = comparison.overall.n
    why, too_few = _too_few(policy, omc, n_all, unrated)
    overall = GateRow(
        OVERALL, n_all, omc, float("nan"), bool(too_few), why or "(not gated)", False,
        ceiling=ceiling, too_few=too_few,
    )  # fmt: skip
    passed = not any(r.failed for r in [*rows, overall])
    return GateResult(passed, rows, overall, policy, comparison)


def _abstained(row: GateRow) -> bool:
    return row.too_few is not None


def _too_few(
    policy: GatePolicy, mc: MetricComparison, n: int, unrated: frozenset[str]
) -> tuple[str, tuple[int, int] | None]:
    """A failing verdict, with (abstained, rated), when the gated check abstained on more than
    ``policy.max_abstain`` of the entries of a row (``n``) that it rates; ("", None) otherwise,
    and always for a series that never abstains."""
    abstained = set(mc.abstained or ())
    n -= len(abstained & unrated)
    left = len(abstained - unrated)
    if n == 0 or left / n <= policy.max_abstain + _EPS:
        return "", None
    verdict = (
        f"FAIL: {policy.metric} abstained on {left} of {n} entries it rates "
        f"({left / n:.0%} > max-abstain {policy.max_abstain:.0%}): too few decided to vouch"
    )
    return verdict, (left, n)
