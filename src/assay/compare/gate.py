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
from typing import TYPE_CHECKING, Any, Unpack

from assay.compare import render
from assay.compare.comparison import Comparison, MetricComparison, _num
from assay.compare.options import CompareOptions, RunsOptions
from assay.compare.paired import DEFAULT_METRICS
from assay.compare.series import OVERALL, describe, series_names
from assay.errors import DataError, Problem
from assay.metrics import HEADLINE
from assay.report import ReportMixin, Tabular

if TYPE_CHECKING:
    from assay.corpus.chunks import ChunkTable

__all__ = [
    "DEFAULT_MAX_ABSTAIN",
    "GatePolicy",
    "GateResult",
    "GateRow",
    "gate",
    "gate_files",
    "load_margins",
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

    def rule(self) -> str:
        """The gate's rule in words, with how significance is judged when it is."""
        return render.gate_rule(self)

    def tabular(self) -> Tabular | list[Tabular]:
        return render.gate_tabular(self)

    def headline(self) -> str:
        return render.gate_headline(self)

    def to_markdown(self) -> str:
        return render.gate_markdown(self)

    def to_table(self) -> Any:
        return render.gate_table(self)


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
            Problem(
                "<margins>",
                None,
                ",".join(unknown),
                "margin given for a category the dataset does not have",
            )
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
    from assay.judge.registry import check_names, get_check

    known = set(check_names())
    items = list(entries)
    out: dict[str, frozenset[str]] = {}
    for name in names:
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
                verdict += " (n too small to tell from noise)"
            elif not significant:
                verdict += " (not significant)"
        elif over:
            verdict = f"pass: {moved} {drop:.3f} > {margin:.3f} but not significant"
            if row.small_n:
                verdict += f" (n={row.n} is too small for any conclusion)"
        elif ceiling is not None and total == 0 and mc.cand_decided:
            bound = _zero_bound(mc.cand_decided, policy.alpha)
            verdict = (
                f"pass: no {policy.metric} in {mc.cand_decided} entries (share affected < "
                f"{bound:.3f} at {1 - policy.alpha:g}, exact one-sided)"
            )
        elif row.small_n:
            verdict = f"pass (n={row.n} is too small for any conclusion)"
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


def gate_files(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    policy: GatePolicy | None = None,
    chunks: str | Path | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: ChunkTable | str | Path | None = None,
    require_certified: bool = False,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> GateResult:
    """Load, compare (the gated series; beside retrieval metrics also complete@k and recall@k)
    and gate; what ``assay gate`` runs.

    ``policy.metric`` (and ``policy.metrics``) name registered metrics with their cutoff
    (``complete@5``, ``hit@5``; a bare name such as ``complete`` gets ``@k``) or answer checks
    (``answer_correct``: pass the chunk table as ``chunks`` for checks that read cited text).
    Once the gate has a result, the comparison is recorded in the dataset's ledger (once per
    distinct comparison; ``record=False`` for exploration, which the report names as
    ``record_switch``, the command line's ``"--no-record"``), and a sealed fresh sample refuses
    a second use unless ``allow_reuse``. The options: `CompareOptions` (``alpha`` the policy's
    unless given; the series compared and the command, "gate", are the gate's own).

    Only the entries of label tier gold are compared unless the option ``tiers`` (e.g.
    ``"gold,silver"``) widens it (`assay.dataset.tiers.select_tiers`; the comparison's notes say
    what was left out, and a dataset with no entry of the tiers asked is refused).
    ``require_certified`` refuses (`DataError`, before anything is read or recorded) a dataset
    without a certificate, or changed since it was certified (`assay.certify.check_certified`).
    """
    if require_certified:
        from assay.certify import check_certified

        check_certified(dataset)

    from assay._io import gc_paused
    from assay.compare._reading import open_inputs
    from assay.compare.files import compare_runs
    from assay.compare.ledger import _record_comparison

    policy = policy or GatePolicy(metric=HEADLINE)
    opts = CompareOptions.of(options, given)
    k = opts.k
    gated = series_names(policy.gated, k=k)
    policy = replace(policy, metric=gated[0].name, metrics=tuple(g.name for g in gated[1:]))
    # the gated series, and with retrieval metrics only the default pair beside them (as the
    # gate has always compared); an answer check needs no retrieval scoring
    also = DEFAULT_METRICS if all(g.source == "metric" for g in gated) else ()
    names = [i.name for i in series_names([*(g.name for g in gated), *also], k=k)]
    alpha = opts.alpha if options is not None or "alpha" in given else policy.alpha
    opts = replace(opts, metrics=names, command="gate", alpha=alpha)
    # the policy is checked against the comparison before anything is recorded: a gate that
    # stops on bad margins (exit 2) leaves no trace in the ledger or on a fresh sample (the
    # sample's use is recorded when this block completes)
    with gc_paused(), open_inputs(
        dataset, [base, cand], chunks=chunks, level=opts.level, tiers=opts.tiers, command="gate",
        allow_reuse=opts.allow_reuse,
    ) as inputs:  # fmt: skip
        ds, (b, c) = inputs.dataset, inputs.runs
        cmp = compare_runs(
            ds, b, c, chunks=inputs.chunks, base_chunks=base_chunks, cand_chunks=cand_chunks,
            session=inputs.session, options=opts,
        )  # fmt: skip
        unrated = unrated_entries(ds.entries, [g.name for g in gated if g.source == "check"])
        gate(cmp, policy, unrated=unrated)  # a bad policy (exit 2) stops here, unrecorded
    if inputs.session.use is not None:
        cmp.fresh = inputs.session.use.to_dict()
    _record_comparison(cmp, ds, b, c, dataset, opts)
    # the verdict is taken once the comparison has its number in the ledger: significance is
    # judged on the ledger-corrected p unless policy.within_comparison
    return gate(cmp, policy, unrated=unrated)
