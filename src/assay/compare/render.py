"""How a comparison reads: the report header, the table's cells, Markdown and the rich table,
the flipped entries, and the number formats that `assay compare`, the gate and the leaderboard
share; and the gate's verdict in the same forms. The report methods of `Comparison`
(``header_lines``, ``to_markdown``, ``to_table``) and `assay.compare.gate.GateResult`
(``headline``, ``rule``, ``to_markdown``, ``to_table``) are these functions."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assay.compare.series import OVERALL
from assay.report import Interval, Tabular
from assay.stats.clusters import EXACT_CLUSTERS, ClusterSummary
from assay.stats.multiple import ledger_factor

if TYPE_CHECKING:
    from assay.compare.comparison import Comparison, MetricComparison
    from assay.compare.gate import GateResult

__all__ = ["cluster_line", "delta_ci_words"]


def _fmt_p(p: float | None) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


def delta_ci_words(cmp: Mapping[str, Any]) -> str:
    """How a comparison's delta intervals were drawn, in words, from its `Comparison.to_dict`
    (``ci_method``, ``binary_ci``, ``n_resamples``, ``seed``, ``confidence``): what `assay
    compare` prints and the explorer's comparison page says."""
    clustering = cmp.get("clustering")
    if clustering:
        summary = ClusterSummary(**clustering)
        return (
            f"{cmp['confidence']:.0%} CI: inverting each cell's cluster-level test (clustered "
            f"McNemar on binary metrics, cluster sign-flip on graded ones; {summary.words()})"
        )
    method = "percentile" if cmp["ci_method"] == "score" else cmp["ci_method"]
    boot = f"paired bootstrap ({method}, {cmp['n_resamples']} resamples, seed {cmp['seed']})"
    binary = {"tango": "Tango score", "newcombe": "Newcombe"}.get(cmp["binary_ci"], boot)
    graded = (
        "the score interval of the mean difference (Tango's, extended to graded values)"
        if cmp["ci_method"] == "score"
        else boot
    )
    return f"{cmp['confidence']:.0%} CI: {binary} on binary metrics, {graded} on graded ones"


def header_lines(cmp: Comparison) -> list[str]:
    """What the report says above (or under) its table: how intervals and p-values were drawn,
    the runs, the ledger number, the fresh-sample use and the comparison's notes."""
    cis = delta_ci_words(
        {
            "ci_method": cmp.ci_method,
            "binary_ci": cmp.binary_ci,
            "n_resamples": cmp.n_resamples,
            "seed": cmp.seed,
            "confidence": cmp.confidence,
            "clustering": None if cmp.clustering is None else cmp.clustering.to_dict(),
        }
    )
    lines = [] if cmp.clustering is None else [cluster_line(cmp.clustering)]
    tests = (
        f"{cis}; p: McNemar exact on binary metrics, Wilcoxon over moved entries on graded ones"
        if cmp.clustering is None
        else f"{cis}; p: the same test"
    )
    lines += [
        f"dataset {cmp.dataset_version or '-'} · baseline run {cmp.base_run or '-'} · "
        f"candidate run {cmp.cand_run or '-'}" + (f" · k={cmp.k}" if cmp.k else ""),
        f"{tests}; Holm across categories and overall x metrics.",
    ]
    if cmp.clustering is None and (cmp.binary_ci == "tango" or cmp.ci_method == "score"):
        lines.append(
            f"One verdict per cell: a delta's CI excludes 0 exactly when its p < "
            f"{1 - cmp.confidence:.2g} (the p column's test decides the CI's end at 0; the "
            "CI's far end is the score interval's, JSON tests.score)."
        )
    lines.append(
        f"What each column controls: a delta's CI is per cell (its own {cmp.confidence:.0%}, not corrected "
        "for the other cells); p is the cell's own test; p Holm is Holm-corrected across "
        "the comparison's family"
        + (", p ledger also for the dataset's earlier comparisons" if cmp.ledger_t else "")
        + "; the gate judges significance on the corrected p."
    )
    overall = cmp.overall.metrics
    counts = [m for m, mc in overall.items() if mc.kind == "count"]
    if counts:
        lines.append(
            f"Counts ({', '.join(counts)}): exact one-sided sign test, entries that moved "
            "the harmful way against those that moved the other way (a fall is never "
            "evidence of harm)."
        )
    worse_down = [m for m, mc in overall.items() if not mc.higher_is_better]
    if worse_down:
        lines.append(f"Lower is better on {', '.join(worse_down)}: +/- count falls/rises.")
    for m, mc in overall.items():
        if mc.abstained:
            lines.append(
                f"{m}: {_decided(mc)} ({len(mc.abstained)} entries left out: abstained in "
                f"either run); {mc.n} pairs tested."
            )
    if cmp.ledger_t is not None:
        again = (
            ", seen again (the same runs, metrics, k and grouping are one comparison, counted once)"
            if cmp.ledger_repeat
            else ""
        )
        lines.append(
            f"Comparison #{cmp.ledger_t} recorded against this dataset "
            f"({cmp.ledger_t - 1} before it){again}: ledger-corrected p = min(1, p_holm x "
            f"{ledger_factor(cmp.ledger_t)}) (alpha-spending, docs/statistics.md)."
        )
    if cmp.fresh is not None:
        lines.append(_fresh_line(cmp.fresh))
    lines.extend(cmp.notes)
    return lines


def table_cells(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """The comparison's table: its header and one row of cells per (row, series)."""
    header = [cmp.by, "n", "metric", "base", "cand", "delta [CI]", "+/-", "p", "p Holm"]
    if cmp.ledger_t is not None:
        header.append("p ledger")
    header.append("note")
    body: list[list[str]] = []
    for row in cmp.rows:
        for i, (m, mc) in enumerate(row.metrics.items()):
            d = mc.delta
            cells = [
                row.category if i == 0 else "",
                str(row.n) if i == 0 else "",
                m,
                f"{mc.base:.3f}",
                f"{mc.cand:.3f}",
                _fmt_delta(d),
                f"+{len(mc.up)} -{len(mc.down)}",
                _fmt_p(mc.p),
                _fmt_p(mc.p_holm),
            ]
            if cmp.ledger_t is not None:
                cells.append(_fmt_p(mc.p_ledger))
            note = [row.note] if i == 0 and row.note else []
            if mc.abstained is not None:  # a check: how many it decided leads its row
                note.insert(0, _decided(mc))
            if mc.abstained:
                note.append(f"{len(mc.abstained)} abstained")
            cells.append("; ".join(note))
            body.append(cells)
    return header, body


def tabular(cmp: Comparison) -> Tabular:
    header, body = table_cells(cmp)
    return Tabular("Paired comparison: candidate vs baseline", header, body, cmp.header_lines())


def to_markdown(cmp: Comparison, *, max_ids: int = 20) -> str:
    header, body = table_cells(cmp)
    out = ["| " + " | ".join(header) + " |"]
    out.append(
        "|" + "|".join("---" if h in (cmp.by, "metric", "note") else "---:" for h in header) + "|"
    )
    out.extend("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body)
    out.append("")
    out.append("`+/-`: entries fixed/broken (binary) or improved/worsened (graded).")
    out.append("")
    out.extend(f"{line}  " for line in cmp.header_lines())
    flips = _flip_lines(cmp, max_ids=max_ids)
    if flips:
        out.append("")
        out.append("<details><summary>Entries that flipped</summary>")
        out.append("")
        out.extend(flips)
        out.append("")
        out.append("</details>")
    return "\n".join(out) + "\n"


def to_table(cmp: Comparison) -> Any:
    """A rich Table (print with rich.console.Console)."""
    from rich.table import Table

    header, body = table_cells(cmp)
    t = Table(title="Paired comparison: candidate vs baseline", title_justify="left")
    for h in header:
        t.add_column(h, justify="left" if h in ("category", "metric", "note") else "right")
    n_metrics = len(cmp.metrics)
    for i, r in enumerate(body):
        last_of_row = (i + 1) % n_metrics == 0
        t.add_row(*r, end_section=last_of_row, style="bold" if i >= len(body) - n_metrics else None)
    flips = _flip_lines(cmp, max_ids=20)
    caption = cmp.header_lines()
    if flips:
        caption += ["Entries that flipped:", *flips]
    t.caption = "\n".join(caption)
    t.caption_justify = "left"
    return t


def cluster_line(c: ClusterSummary) -> str:
    """The report header's line on clustering: how many entries in how many clusters, and
    which test gives each cell its p and CI."""
    return (
        f"{c.words()[0].upper()}{c.words()[1:]} (largest {c.largest}): p and CI of each cell "
        "from one cluster-level test, the clustered McNemar (Obuchowski's statistic) on binary "
        "metrics and the cluster sign-flip on graded ones, exact with at most "
        f"{EXACT_CLUSTERS} clusters, else seeded Monte Carlo; the CI inverts the same test "
        "(--cluster none: entries as independent)."
    )


def _fmt_delta(d: Interval) -> str:
    """``+0.030 [-0.040, +0.105]``; ``-`` when undefined."""
    if d.value is None:
        return "-"
    if d.low is None or d.high is None:
        return f"{d.value:+.3f}"
    return f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"


def _fresh_line(fresh: dict[str, Any]) -> str:
    uses = fresh.get("uses", 0)
    name = fresh.get("name", "fresh sample")
    if uses <= 1:
        return f"Fresh sample {name}: first use (use 1), an honest held-out measurement."
    return (
        f"WARNING fresh sample {name}: use {uses}. It has been measured before; "
        "its p-values are no longer those of an untouched sample."
    )


def _flip_lines(cmp: Comparison, *, max_ids: int) -> list[str]:
    lines: list[str] = []
    for row in cmp.categories.values():
        for m, mc in row.metrics.items():
            if mc.kind == "graded" or not (mc.up or mc.down):
                continue
            labels = ("fixed", "broken") if mc.binary else ("improved", "worsened")
            for label, ids in zip(labels, (mc.up, mc.down), strict=True):
                if ids:
                    shown = ", ".join(ids[:max_ids]) + (
                        f" ... (+{len(ids) - max_ids})" if len(ids) > max_ids else ""
                    )
                    lines.append(f"- {row.category} {m} {label} ({len(ids)}): {shown}")
    return lines


def _decided(mc: MetricComparison) -> str:
    """ "decided n of N": the pairs a check decided in both runs, of the entries it was run on."""
    left = len(mc.abstained or ())
    return f"decided {mc.n} of {mc.n + left}"


# the gate's report (`assay.compare.gate.GateResult`)


def gate_cells(result: GateResult) -> tuple[list[str], list[list[str]]]:
    binary = result.overall.metric.binary
    header = [
        "category",
        "n",
        "base",
        "cand",
        "delta [CI]",
        "fixed/broken" if binary else "up/down",
    ]
    ledger = result.comparison.ledger_t is not None
    header += ["p", "p Holm", *(["p ledger"] if ledger else []), "margin", "verdict"]
    body = []
    for r in [*result.rows, result.overall]:
        mc = r.metric
        body.append(
            [
                r.category,
                str(r.n),
                f"{mc.base:.3f}",
                f"{mc.cand:.3f}",
                _fmt_delta(mc.delta),
                f"{len(mc.up)}/{len(mc.down)}",
                _fmt_p_short(mc.p),
                _fmt_p_short(mc.p_holm),
                *([_fmt_p_short(mc.p_ledger)] if ledger else []),
                "-" if r.category == OVERALL else f"{r.margin:.3f}",
                # a check's row leads with how many entries it decided
                r.verdict if mc.abstained is None else f"{_decided(mc)}: {r.verdict}",
            ]
        )
    return header, body


def gate_rule(result: GateResult) -> str:
    """The gate's rule in words, with how significance is judged when it is."""
    pol = result.policy
    moves = "drops" if result.overall.metric.higher_is_better else "rises"
    rule = f"fail when {pol.metric} {moves} by more than the margin (default {pol.max_drop:g})"
    if result.overall.metric.abstained is not None:
        rule += (
            f", or when it abstains on more than {pol.max_abstain:g} of a row's entries "
            "(the overall row included)"
        )
    if result.overall.ceiling is not None:
        rule += (
            f", or when the candidate's total {pol.metric} in a row exceeds "
            f"{result.overall.ceiling} (exact counts; never averaged away)"
        )
    if pol.require_significance:
        rule += f" and the change is significant ({pol.significance_rule(result.comparison)})"
    return f"Rule: {rule}. The overall row is shown, not gated on its change."


def gate_tabular(result: GateResult) -> Tabular | list[Tabular]:
    tabs = []
    for part in result.parts:
        header, body = gate_cells(part)
        title = f"assay gate on {part.policy.metric}: {gate_headline(part)}"
        cl = part.comparison.clustering
        lines = [gate_rule(part), *([] if cl is None else [cluster_line(cl)])]
        tabs.append(Tabular(title, header, body, lines))
    return tabs[0] if len(tabs) == 1 else tabs


def gate_headline(result: GateResult) -> str:
    m = result.policy.metric
    if result.metric_passed:
        moved = "dropped" if result.overall.metric.higher_is_better else "rose"
        return f"PASS: no category's {m} {moved} by more than its margin."
    said = []
    if regressed := [r.category for r in result.rows if r.failed and r.too_few is None]:
        said.append(f"{m} regressed in {', '.join(regressed)}")
    if left := [r for r in [*result.rows, result.overall] if r.too_few is not None]:
        said.append(
            f"{m} abstained on too many entries in "
            + ", ".join(
                f"{r.category} ({r.too_few[0]} of {r.too_few[1]})" for r in left if r.too_few
            )
        )
    return f"FAIL: {'; '.join(said)}."


def gate_markdown(result: GateResult) -> str:
    if result.others:
        icon = ":white_check_mark:" if result.passed else ":x:"
        verdict = (
            "PASS on every gated series."
            if result.passed
            else "FAIL: " + "; ".join(f"{m} in {c}" for m, c in result.failures) + "."
        )
        out = [f"## assay gate {icon} {verdict}", ""]
        return "\n".join(out) + "\n" + "\n".join(_gate_markdown(p) for p in result.parts)
    return _gate_markdown(result)


def _gate_markdown(result: GateResult) -> str:
    header, body = gate_cells(result)
    icon = ":white_check_mark:" if result.metric_passed else ":x:"
    out = [f"### assay gate {icon} {gate_headline(result)}", ""]
    out.append("| " + " | ".join(header) + " |")
    out.append(
        "|" + "|".join("---" if h in ("category", "verdict") else "---:" for h in header) + "|"
    )
    for r in body:
        cells = [f"**{c}**" if r[0] == OVERALL and i == 0 else c for i, c in enumerate(r)]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    pol = result.policy
    out.append(f"{gate_rule(result)}  ")
    out.extend(f"{line}  " for line in result.comparison.header_lines())
    flips = [ln for ln in _flip_lines(result.comparison, max_ids=20) if f" {pol.metric} " in ln]
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


def gate_table(result: GateResult) -> Any:
    if result.others:
        from rich.console import Group

        return Group(*(_gate_table(p) for p in result.parts))
    return _gate_table(result)


def _gate_table(result: GateResult) -> Any:
    from rich.table import Table

    header, body = gate_cells(result)
    t = Table(
        title=f"assay gate on {result.policy.metric}: {gate_headline(result)}", title_justify="left"
    )
    for h in header:
        t.add_column(h, justify="left" if h in ("category", "verdict") else "right")
    for r in body:
        style = "red" if r[-1].startswith("FAIL") else ("bold" if r[0] == OVERALL else None)
        t.add_row(*r, style=style, end_section=r[0] == body[-2][0])
    t.caption = "\n".join([gate_rule(result), *result.comparison.header_lines()])
    t.caption_justify = "left"
    return t


def _fmt_p_short(p: float | None) -> str:
    if p is None or math.isnan(p):
        return "-"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"
