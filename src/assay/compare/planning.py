"""How many entries a golden set needs: the exact McNemar plan at the level compare and gate test.

`plan_sample` is what ``assay plan`` runs. Without runs it plans one category from the change to
detect and the share of entries that flip (given, or from the baseline rate assuming
independent outcomes). With a dataset and two runs it uses each category's observed flip rate on
the headline metric and says how far each category is from enough, and which categories are so
small that even every entry flipping one way could not be significant. The alpha per test is
the one compare and gate spend: Holm over (categories + the overall row) x metrics, times
N(N+1) for the dataset's N-th comparison in the ledger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.errors import UsageError
from assay.report import ReportMixin, Tabular

__all__ = ["SamplePlan", "plan_sample"]

_COLUMNS = (
    "category", "n_now", "rate", "discordant", "n_needed", "clusters_needed", "per_cluster",
    "power", "note",
)  # fmt: skip


@dataclass
class SamplePlan(ReportMixin):
    """Entries needed per category, with the family the alpha was split over."""

    delta: float
    alpha: float
    power: float
    family: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    # planned for clusters (an ICC and entries per cluster): the power is the exact McNemar's at
    # the effective size, and compare tests such entries with the clustered McNemar
    clustered: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "delta": self.delta,
            "alpha": self.alpha,
            "power": self.power,
            "family": self.family,
            "rows": self.rows,
        }

    def tabular(self) -> Tabular:
        cols = [c for c in _COLUMNS if any(c in r for r in self.rows)]
        test = (
            "clustered McNemar, planned as the exact McNemar at the effective size "
            "entries / design effect"
            if self.clustered
            else "exact McNemar"
        )
        title = (
            f"Entries per category to detect {self.delta:+g} in complete@k "
            f"({test}, alpha {self.alpha:g}, power {self.power:g})"
        )
        body = [[_cell(r.get(c)) for c in cols] for r in self.rows]
        return Tabular(title, cols, body, [self.family], emphasis=set())


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def plan_sample(
    *,
    delta: float,
    discordant: float | None = None,
    rate: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    categories: int = 1,
    metrics: int = 2,
    lifetime_comparisons: int | None = None,
    dataset: str | Path | None = None,
    base: str | Path | None = None,
    cand: str | Path | None = None,
    k: int = 5,
    icc: float | None = None,
    per_cluster: float | None = None,
    cluster: str | None = "auto",
    chunks: str | Path | None = None,
    level: Literal["chunk", "page"] = "chunk",
    skip_missing: bool = False,
    tiers: str | None = None,
) -> SamplePlan:
    """Plan the entries per category (see the module's docstring); ``dataset``, ``base`` and
    ``cand`` go together.

    ``icc`` and ``per_cluster``: entries come ``per_cluster`` to a document and their paired
    changes correlate ``icc`` within it; the entries needed grow by the design effect
    ``1 + (per_cluster - 1) icc`` and each row says how many clusters that is
    (`assay.stats.clusters.icc_oneway` estimates ``icc`` from a comparison's per-entry changes).

    With ``dataset``, ``base`` and ``cand``, entries are clustered as compare clusters them
    (``cluster``, default ``auto``: by evidence document when there is more than one entry per
    document; `assay.dataset.clustering`), and what is not given is estimated from the two runs:
    ``icc``, the one-way ANOVA intraclass correlation of the per-entry paired changes in the
    headline metric by cluster, and ``per_cluster``, the size-weighted mean cluster size
    ``sum m_k**2 / n`` (the one the design effect of unequal clusters uses). The rows then
    plan clusters and entries per cluster; ``power`` is the exact McNemar power at the
    effective size ``n_needed / deff``, which a clustered simulation with the cluster sign-flip
    test reproduces (``tests/stats/test_plan_icc.py``).

    ``lifetime_comparisons``: the number ``N`` of the comparison planned for, whose p-values
    the ledger multiplies by ``N (N + 1)``. By default the next one: the dataset's ledger count
    plus one with ``dataset``, else 1 (the first recorded comparison already doubles p, as the
    gate and the "p ledger" column do); 0 plans without the ledger (a gate judging within the
    comparison).

    ``chunks``, ``level``, ``skip_missing`` and ``tiers`` read the runs as compare reads them
    (the same entries: the label tiers compared, gold by default; gold that resolves only at
    page level, or entries whose gold the table lacks), so the observed rates, flips and
    clusters are those of the comparison planned for."""
    from assay.compare.comparison import row_size
    from assay.compare.ledger import ledger_count
    from assay.stats.plan import family_size, min_conclusive_n, plan_mcnemar

    if lifetime_comparisons is None:
        lifetime_comparisons = 1 + (ledger_count(dataset) if dataset is not None else 0)
    elif lifetime_comparisons == 0:
        lifetime_comparisons = None
    factor = (
        1 if lifetime_comparisons is None else lifetime_comparisons * (lifetime_comparisons + 1)
    )
    rows: list[dict[str, Any]] = []
    estimated: str | None = None
    if dataset is not None or base is not None or cand is not None:
        if dataset is None or base is None or cand is None:
            raise UsageError("--dataset, --base and --cand go together")
        observed, clustered = _observed(
            dataset, base, cand, k=k, cluster=cluster, chunks=chunks, level=level,
            skip_missing=skip_missing, tiers=tiers,
        )  # fmt: skip
        if clustered is not None:
            est_icc, est_m, words, changed = clustered
            estimated = (
                f"{words}; "
                + ("ICC given" if icc is not None else "ICC of the paired changes estimated")
                + (" and" if icc is None and per_cluster is None else "")
                + ("" if per_cluster is not None else " size-weighted mean cluster size")
                + " from the runs"
            )
            if icc is None and math.isnan(est_icc):  # one cluster: no spread between clusters
                estimated += "; one cluster: no ICC estimate, planned at ICC 1 (give --icc)"
                est_icc = 1.0
            elif icc is None and changed < FEW_CHANGED:
                # a correlation within clusters cannot be read off a handful of changes (one
                # changed entry alone in its cluster reads as ICC 1, two in two clusters as 0)
                estimated += (
                    f"; only {changed} entries changed between the runs, too few to estimate "
                    f"the ICC ({est_icc:.3g} from them): planned at ICC 1, the worst case "
                    "(give --icc)"
                )
                est_icc = 1.0
            icc = est_icc if icc is None else icc
            per_cluster = est_m if per_cluster is None else per_cluster
        n_cat = max(categories, len(observed))
        per_test = alpha / (family_size(n_cat, metrics) * factor)
        least = min_conclusive_n(per_test)
        for cat, (n_now, r, psi, k_now) in observed.items():
            row: dict[str, Any] = {"category": cat, "n_now": n_now, "rate": r}
            psi_used = discordant if discordant is not None else psi
            row["discordant"] = psi_used
            notes = []
            if k_now == 1:
                notes.append(
                    f"too few clusters to conclude: {row_size(n_now, 1)} is one draw (one "
                    f"cluster: no interval; need >= {least} clusters)"
                )
            elif k_now is not None and k_now < least:  # the clustered test's draws: clusters
                notes.append(
                    f"too few clusters to conclude: {row_size(n_now, k_now)}, even all {k_now} "
                    f"flipping one way give p = {2 * 0.5**k_now:.3g} > {per_test:.3g} (need >= "
                    f"{least} clusters)"
                )
            elif k_now is None and n_now < least:
                notes.append(
                    f"too few to conclude: even {n_now} of {n_now} flipping one way gives "
                    f"p = {2 * 0.5**n_now:.3g} > {per_test:.3g} (need n >= {least})"
                )
            if psi_used <= 0:
                row |= {"n_needed": None, "power": None}
                notes.append("no entry flipped between the runs; give --discordant")
            else:
                try:
                    res = plan_mcnemar(
                        delta=delta,
                        discordant=psi_used,
                        alpha=alpha,
                        power=power,
                        categories=n_cat,
                        metrics=metrics,
                        lifetime_comparisons=lifetime_comparisons,
                    )
                    row |= {"n_needed": res.n, "power": res.power}
                except ValueError as exc:
                    row |= {"n_needed": None, "power": None}
                    notes.append(str(exc))
            if notes:
                row["note"] = "; ".join(notes)
            rows.append(row)
    else:
        n_cat = categories
        res = plan_mcnemar(
            delta=delta,
            discordant=discordant,
            rate=rate,
            alpha=alpha,
            power=power,
            categories=categories,
            metrics=metrics,
            lifetime_comparisons=lifetime_comparisons,
        )
        rows.append({"category": "(each)", **res.to_dict(), "n_needed": res.n})
    per_cluster = 1.0 if per_cluster is None else per_cluster
    if icc is not None:
        if not 0.0 <= icc <= 1.0 or per_cluster < 1:
            raise UsageError("--icc must lie in [0, 1] and --per-cluster be at least 1")
        deff = 1.0 + (per_cluster - 1) * icc
        for row in rows:
            row["deff"] = deff
            if estimated is not None:
                row |= {"icc": icc, "per_cluster": per_cluster}
            if row.get("n_needed") is not None:
                row["n_needed"] = math.ceil(int(row["n_needed"]) * deff - 1e-9)
                row["clusters_needed"] = math.ceil(int(row["n_needed"]) / per_cluster - 1e-9)
    family = family_size(n_cat, metrics)
    text = (
        f"Holm over ({n_cat} categor{'y' if n_cat == 1 else 'ies'} + overall) x {metrics} "
        f"metric{'s' if metrics > 1 else ''} = {family} tests"
        + (
            f", comparison #{lifetime_comparisons} (ledger x{factor})"
            if lifetime_comparisons
            else ""
        )
        + f": alpha {alpha / (family * factor):.3g} per test"
        + (
            ""
            if icc is None
            else f"; {per_cluster:.3g} entries per cluster at ICC {icc:.3g}: design effect "
            f"{1.0 + (per_cluster - 1) * icc:.3g}"
        )
        + ("" if estimated is None else f" ({estimated})")
    )
    return SamplePlan(
        delta=delta, alpha=alpha, power=power, family=text, rows=rows, clustered=icc is not None
    )


#: Fewer entries than this changed between the runs: the ICC is not estimated from them.
FEW_CHANGED = 10


def _observed(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    k: int,
    cluster: str | None,
    chunks: str | Path | None = None,
    level: Literal["chunk", "page"] = "chunk",
    skip_missing: bool = False,
    tiers: str | None = None,
) -> tuple[dict[str, tuple[int, float, float, int | None]], tuple[float, float, str, int] | None]:
    """Per category: entries, the baseline's headline rate, the observed discordance and (when
    entries are clustered) the clusters the category's entries fall in; and,
    when entries are clustered, (the ICC of the paired changes, the size-weighted mean cluster
    size, the clustering in words, how many entries changed)."""
    import numpy as np

    from assay.dataset import clustering_for, open_dataset
    from assay.metrics import HEADLINE, parse
    from assay.runs import load_run
    from assay.score import score_retrieval
    from assay.stats.clusters import cluster_codes, icc_oneway
    from assay.stats.plan import observed_discordance

    ds = open_dataset(dataset, tiers)
    sb, sc = (
        score_retrieval(ds, load_run(r), k=k, chunks=chunks, level=level, skip_stale=skip_missing)
        for r in (base, cand)
    )
    order = {eid: i for i, eid in enumerate(sc.ids)}
    m = parse(HEADLINE, k=k).name
    cand_vals = sc.per_entry[m][[order[i] for i in sb.ids]]
    clusters = clustering_for(ds.entries, cluster, file=str(dataset))
    labels = None if clusters is None else clusters.labels(list(sb.ids))
    out: dict[str, tuple[int, float, float, int | None]] = {}
    for cat in sorted(set(sb.categories_of)):
        mask = [c == cat for c in sb.categories_of]
        psi, _ = observed_discordance(sb.per_entry[m][mask], cand_vals[mask])
        k_now = (
            None if labels is None else len({la for la, x in zip(labels, mask, strict=True) if x})
        )
        out[cat] = (int(sum(mask)), float(sb.per_entry[m][mask].mean()), psi, k_now)
    if clusters is None or labels is None:
        return out, None
    codes, n_clusters = cluster_codes(labels)
    sizes = np.bincount(codes).astype(np.float64)
    weighted = float(np.sum(sizes * sizes) / sizes.sum())
    change = cand_vals - sb.per_entry[m]
    icc = icc_oneway(change, labels) if n_clusters > 1 else math.nan  # one cluster: none
    changed = int(np.count_nonzero(change))
    return out, (icc, weighted, clusters.summary(list(sb.ids)).words(), changed)
