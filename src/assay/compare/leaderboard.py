"""Compare several candidate runs with one baseline: a leaderboard.

Each candidate is compared with the baseline exactly as `assay.compare` compares two runs (the
same per-category rates, paired deltas with intervals, fixed and broken ids, McNemar on binary
metrics and Wilcoxon on graded ones, the same seeds), and then the Holm adjustment is taken over
*all of it* as one family: every candidate x every row (each category and overall) x every
metric. Looking at three candidates is three looks, and the adjusted p-values say so; each
candidate's `Comparison` in the leaderboard carries the family-wide ``p_holm``.

The ranking orders candidates by their overall value on the first metric (higher first; ties by
name). It is a reading aid, not a test: the deltas and their adjusted p-values are the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from assay._io import gc_paused
from assay.compare._reading import check_corpora, compare_in_use, open_inputs, run_tables
from assay.compare.comparison import Comparison, _num
from assay.compare.files import reading_notes, table_notes
from assay.compare.ledger import _record_comparison
from assay.compare.options import CompareOptions, RunsOptions
from assay.compare.paired import compare_scores, compare_series
from assay.compare.pairing import check_pair, pair_note, per_conversation
from assay.compare.render import _fmt_delta, _fmt_p, cluster_line, zero_key
from assay.compare.series import RunSeries
from assay.dataset import clustering_for
from assay.errors import UsageError
from assay.report import ReportMixin, Tabular
from assay.stats.clusters import Clustering
from assay.stats.multiple import holm_family

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset, FreshSession
    from assay.runs import Run
    from assay.score import RetrievalScores

__all__ = [
    "Leaderboard",
    "compare_many",
    "compare_many_files",
    "leaderboard_from_scores",
    "leaderboard_from_series",
    "run_names",
]


@dataclass
class Leaderboard(ReportMixin):
    """Several candidates against one baseline, one Holm family across all of them."""

    baseline: str
    names: list[str]
    comparisons: list[Comparison]
    metrics: list[str]
    k: int | None
    alpha: float
    notes: list[str] = field(default_factory=list)

    @property
    def family_size(self) -> int:
        return sum(
            1
            for cmp in self.comparisons
            for row in cmp.rows
            for mc in row.metrics.values()
            if not math.isnan(mc.p)
        )

    def ranking(self) -> list[int]:
        """Indices of the candidates, best overall value on the first metric first."""
        m = self.metrics[0]

        def key(i: int) -> tuple[float, str]:
            v = self.comparisons[i].overall.metrics[m].cand
            return (-(v if not math.isnan(v) else -math.inf), self.names[i])

        return sorted(range(len(self.names)), key=key)

    def to_dict(self) -> dict[str, Any]:
        first = self.comparisons[0]
        board = []
        for rank, i in enumerate(self.ranking(), start=1):
            cmp = self.comparisons[i]
            board.append(
                {
                    "rank": rank,
                    "run": self.names[i],
                    "run_hash": cmp.cand_run,
                    "overall": {
                        m: {
                            "value": _num(mc.cand),
                            "delta": mc.delta.to_dict(),
                            "up": len(mc.up),
                            "down": len(mc.down),
                            "p": _num(mc.p),
                            "p_holm": _num(mc.p_holm),
                            "significant": _significant(mc.p_holm, self.alpha),
                        }
                        for m, mc in cmp.overall.metrics.items()
                    },
                }
            )
        return {
            "schema": "assay.leaderboard/1",
            "k": self.k,
            "metrics": list(self.metrics),
            "alpha": self.alpha,
            "baseline": {"run": self.baseline, "run_hash": first.base_run},
            "dataset_version": first.dataset_version,
            "holm": {
                "family": "candidates x (categories + overall) x metrics",
                "size": self.family_size,
            },
            "leaderboard": board,
            "comparisons": {
                name: cmp.to_dict() for name, cmp in zip(self.names, self.comparisons, strict=True)
            },
            "notes": list(self.notes),
        }

    def _footer(self) -> list[str]:
        first = self.comparisons[0]
        return [
            f"baseline {self.baseline} ({first.base_run or '-'}) · dataset "
            f"{first.dataset_version or '-'}" + (f" · k={self.k}" if self.k else ""),
            f"Holm over one family of {self.family_size} tests (every candidate x category and "
            f"overall x metric); * = significant at alpha {self.alpha:g} after Holm.",
            f"What each column controls: a delta's CI is per cell (its own "
            f"{first.confidence:.0%}, not corrected for the other cells); p is the cell's own "
            f"test; p Holm is Holm-corrected across the one family of {self.family_size} tests; "
            "the stars mark p Holm below alpha; the rank orders values, not significance.",
            *([] if first.clustering is None else [cluster_line(first.clustering)]),
            *zero_key(
                mc.delta
                for c in self.comparisons
                for row in [*c.categories.values(), c.overall]
                for mc in row.metrics.values()
            ),
            *self.notes,
        ]

    def tabular(self) -> list[Tabular]:
        header = ["rank", "run"]
        for m in self.metrics:
            header += [m, f"{m} delta [CI]", f"{m} +/-", f"{m} p Holm"]
        board: list[list[str]] = []
        for rank, i in enumerate(self.ranking(), start=1):
            cmp = self.comparisons[i]
            cells = [str(rank), self.names[i]]
            for m in self.metrics:
                mc = cmp.overall.metrics[m]
                star = "*" if _significant(mc.p_holm, self.alpha) else ""
                cells += [
                    f"{mc.cand:.3f}",
                    _fmt_delta(mc.delta),
                    f"+{len(mc.up)} -{len(mc.down)}",
                    _fmt_p(mc.p_holm) + star,
                ]
            board.append(cells)
        base = self.comparisons[0].overall
        base_cells = ["-", f"{self.baseline} (baseline)"]
        for m in self.metrics:
            base_cells += [f"{base.metrics[m].base:.3f}", "", "", ""]
        board.append(base_cells)
        detail_header = ["category", "n", "run", "metric", "base", "cand", "delta [CI]", "+/-"]
        detail_header += ["p", "p Holm"]
        detail: list[list[str]] = []
        sections: set[int] = set()
        first = self.comparisons[0]
        for c, row0 in [*first.categories.items(), ("overall", first.overall)]:
            for name, cmp in zip(self.names, self.comparisons, strict=True):
                row = cmp.overall if c == "overall" else cmp.categories[c]
                for m, mc in row.metrics.items():
                    star = "*" if _significant(mc.p_holm, self.alpha) else ""
                    detail.append(
                        [
                            c,
                            str(row0.n),
                            name,
                            m,
                            f"{mc.base:.3f}",
                            f"{mc.cand:.3f}",
                            _fmt_delta(mc.delta),
                            f"+{len(mc.up)} -{len(mc.down)}",
                            _fmt_p(mc.p),
                            _fmt_p(mc.p_holm) + star,
                        ]
                    )
            sections.add(len(detail) - 1)
        return [
            Tabular(
                f"Leaderboard: {len(self.names)} candidates vs {self.baseline} (overall)",
                header,
                board,
                self._footer(),
                emphasis=set(),
            ),
            Tabular(
                "Per category: each candidate vs the baseline",
                detail_header,
                detail,
                emphasis={"overall"},
                sections=sections,
            ),
        ]


def _significant(p: float, alpha: float) -> bool:
    return not math.isnan(p) and p < alpha


def run_names(paths: Sequence[str | Path]) -> list[str]:
    """Short, distinct names for run files: the file stem, or the path where stems collide."""
    stems = [Path(p).stem for p in paths]
    return [
        stem if stems.count(stem) == 1 else str(p) for stem, p in zip(stems, paths, strict=True)
    ]


def compare_many(
    dataset: Dataset,
    base_run: Run,
    cand_runs: Sequence[Run],
    *,
    names: Sequence[str] | None = None,
    base_name: str = "baseline",
    chunks: ChunkTable | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: Sequence[ChunkTable | str | Path | None] | None = None,
    session: FreshSession | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Leaderboard:
    """Compare every candidate with the baseline; one Holm family across all of it.

    Each run's gold is resolved against its own chunk table, as in `assay.compare.compare_runs`
    (``base_chunks``, ``cand_chunks`` one per candidate, else what each run recorded, else
    ``chunks``), and a run whose hits its table does not know stops the leaderboard.

    ``metrics`` names any series (retrieval metrics, answer checks; `assay.compare.series`);
    ``by`` the rows. The baseline's series are computed once. The options are
    `CompareOptions` (``k``, ``seed``, ``n_resamples``, ...), as ``options`` and keywords. On a sealed fresh sample the whole leaderboard is
    one use of it (or part of the use the caller opened, ``session``:
    `assay.compare.open_inputs`, which the caller records).
    Runs on another corpus than the baseline's are refused unless each was read against its own
    chunk table, or ``allow_corpus_change`` (`assay.compare._reading.check_corpora`).
    """
    opts = CompareOptions.of(options, given)
    by_conv = check_pair(opts.pair) == "conversation"
    clusters = (
        None
        if by_conv
        else clustering_for(dataset.entries, opts.cluster, file=dataset.path or "<dataset>")
    )

    def paired(one: RunSeries) -> RunSeries:
        return per_conversation(one, dataset.entries) if by_conv else one

    labels = list(names) if names is not None else [f"run{i + 1}" for i in range(len(cand_runs))]
    own = list(cand_chunks) if cand_chunks is not None else [None] * len(cand_runs)
    if len(own) != len(cand_runs):
        raise UsageError(
            f"--cand-chunks: one chunk table per candidate ({len(cand_runs)}), not {len(own)}"
        )
    runs = [base_run, *cand_runs]
    run_labels = ["baseline", *(f"candidate {lb}" for lb in labels)]
    tables = run_tables(runs, [base_chunks, *own], run_labels, opts, chunks)
    notes = check_corpora(runs, tables, run_labels, opts)
    board, computed, use = compare_in_use(
        dataset,
        runs,
        tables,
        opts,
        lambda series, metric_names: leaderboard_from_series(
            paired(series[0]),
            [paired(one) for one in series[1:]],
            names=labels,
            base_name=base_name,
            clusters=clusters,
            options=replace(opts, metrics=metric_names),
        ),
        session,
    )
    for cmp, table in zip(board.comparisons, tables[1:], strict=True):
        cmp.dataset_path = dataset.path
        cmp.tables = {"baseline": tables[0].to_dict(), "candidate": table.to_dict()}
        cmp.tiers = None if dataset.tiers is None else dataset.tiers.to_dict()
        if use is not None:
            cmp.fresh = use.to_dict()
    if by_conv:
        board.notes.append(pair_note(dataset.entries))
    board.notes.extend(dataset.tier_notes())
    board.notes.extend(notes)
    board.notes.extend(reading_notes(computed))
    board.notes.extend(table_notes(runs, tables, run_labels))
    return board


def leaderboard_from_scores(
    base: RetrievalScores,
    cands: Sequence[RetrievalScores],
    *,
    names: Sequence[str],
    base_name: str = "baseline",
    clusters: Clustering | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Leaderboard:
    """The leaderboard of already scored runs (`compare_scores` per candidate, then Holm over
    every candidate x row x metric as one family)."""
    _check_names(cands, names)
    opts = CompareOptions.of(options, given)
    comparisons = [compare_scores(base, cand, clusters=clusters, options=opts) for cand in cands]
    return _board(comparisons, names, base_name)


def leaderboard_from_series(
    base: RunSeries,
    cands: Sequence[RunSeries],
    *,
    names: Sequence[str],
    base_name: str = "baseline",
    clusters: Clustering | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Leaderboard:
    """The leaderboard of runs' series (`assay.compare.series.series_for`): `compare_series`
    per candidate, then Holm over every candidate x row x series as one family."""
    _check_names(cands, names)
    opts = CompareOptions.of(options, given)
    comparisons = [compare_series(base, cand, clusters=clusters, options=opts) for cand in cands]
    return _board(comparisons, names, base_name)


def _check_names(cands: Sequence[Any], names: Sequence[str]) -> None:
    if not cands:
        raise UsageError("a leaderboard needs at least one candidate run")
    if len(names) != len(cands) or len(set(names)) != len(names):
        raise UsageError("give one distinct name per candidate run")


def _board(comparisons: list[Comparison], names: Sequence[str], base_name: str) -> Leaderboard:
    # one family: every candidate x row x metric (each comparison's own Holm is replaced)
    rows = [[mc.p for mc in row.metrics.values()] for cmp in comparisons for row in cmp.rows]
    adjusted = iter(holm_family(rows))
    family = sum(len(r) for r in rows)
    for cmp in comparisons:
        for row in cmp.rows:
            for mc, p in zip(row.metrics.values(), next(adjusted), strict=True):
                mc.p_holm = float(p)
        cmp.mark_too_few(family)  # a row too small for the whole family says so
        if len(comparisons) > 1:
            cmp.notes.append(
                f"Holm-adjusted over a leaderboard of {len(comparisons)} candidates (one family)."
            )
    first = comparisons[0]
    return Leaderboard(
        baseline=base_name,
        names=list(names),
        comparisons=comparisons,
        metrics=list(first.metrics),
        k=first.k,
        alpha=first.alpha,
    )


def compare_many_files(
    dataset: str | Path,
    base: str | Path,
    cands: Sequence[str | Path],
    *,
    chunks: str | Path | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: Sequence[ChunkTable | str | Path | None] | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Leaderboard:
    """Load a dataset, a baseline and several candidate runs, build the leaderboard and record
    each candidate's comparison in the dataset's ledger (each is a look at the data; the ledger
    correction multiplies the family-wide Holm p). ``record=False``: nothing in the ledger (the
    note names that switch as ``record_switch``, the command line's ``"--no-record"``).
    ``tiers``: the label tiers whose entries are compared (gold by default:
    `assay.dataset.tiers.select_tiers`). The options: `CompareOptions`."""
    opts = CompareOptions.of(options, given)
    labels = run_names([base, *cands])
    with gc_paused(), open_inputs(
        dataset, [base, *cands], chunks=chunks, level=opts.level, tiers=opts.tiers,
        command=opts.command, allow_reuse=opts.allow_reuse,
    ) as inputs:  # fmt: skip
        ds, (b, *cand_runs) = inputs.dataset, inputs.runs
        board = compare_many(
            ds, b, cand_runs, names=labels[1:], base_name=labels[0], chunks=inputs.chunks,
            base_chunks=base_chunks, cand_chunks=cand_chunks, session=inputs.session,
            options=opts,
        )  # fmt: skip
    if inputs.session.use is not None:
        for cmp in board.comparisons:
            cmp.fresh = inputs.session.use.to_dict()
    for cmp, run in zip(board.comparisons, cand_runs, strict=True):
        _record_comparison(cmp, ds, b, run, dataset, opts)
    numbers = [cmp.ledger_t for cmp in board.comparisons if cmp.ledger_t is not None]
    if numbers:
        board.notes.append(
            f"Recorded in the dataset's ledger as comparison(s) #{', #'.join(map(str, numbers))}: "
            "the JSON gives each candidate's ledger-corrected p (min(1, p_holm x t(t+1)))."
        )
    elif not opts.record:
        board.notes.append(
            f"Not recorded in the ledger ({opts.record_switch}): an exploratory look."
        )
    return board
