"""Retrieval scoring over evidence paths, per entry and per category.

The metrics themselves are registered values in `assay.metrics` (recall@k, complete@k, mrr,
ndcg@k, hit@k, precision@k, ...; each family's file defines it). This module resolves gold onto
item keys, finds the first rank of every gold alternative in the run, builds the shared
`assay.metrics.Context` once and lets every requested metric read it.

Ranks count from 1 in the run's list order; a chunk retrieved twice counts at its first rank. A
piece is satisfied when one of its alternatives is retrieved; an entry is scored on its best path
(the highest recall@k, then nDCG@k, then the path listed first).

At ``level="page"`` every alternative and every retrieved chunk is mapped to its (doc, page)
keys, so a piece is satisfied when any chunk of a gold page is retrieved (top k still counts
chunks, not pages).

Unanswerable entries (no evidence paths, or ``answerable: false``) are excluded from retrieval
metrics and counted separately.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from assay.corpus import ChunkTable
from assay.dataset import Dataset, Entry
from assay.errors import DataError
from assay.gold import GoldIndex, Level, resolve_gold
from assay.metrics import Metric, default_metrics, parse_list
from assay.metrics.context import NEVER, Context, evaluate
from assay.report import Interval, ReportMixin, Tabular, markdown_table, rich_table
from assay.runs import Run
from assay.stats.clusters import (
    Clustering,
    ClusterSummary,
    cluster_mean_interval,
)

if TYPE_CHECKING:
    from assay.dataset import ConversationRollup, FreshSession, TierReport
    from assay.runs.corpus import RunTable
from assay.score._ranks import Hits, first_ranks, gold_codes, rows_of

__all__ = [
    "BY_KEYS",
    "CategoryRow",
    "PathDiagnostics",
    "RetrievalScores",
    "UnknownRetrieved",
    "ci_words",
    "compute_metrics",
    "regroup",
    "resolve_for",
    "score_retrieval",
]


def _retrieved_arrays(
    gold: GoldIndex, run: Run, chunks: ChunkTable | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], list[str]]:
    """(entry index, rank 0-based, item code) for every retrieved item of every gold entry."""
    n = len(gold.entry_ids)
    row_of = rows_of(gold.entry_ids, run.ids, run.index)
    present = row_of >= 0
    last = len(run.offsets) - 1  # an empty run has offsets [0]
    lo = np.where(present, run.offsets[np.clip(row_of, 0, last)], 0)
    hi = np.where(present, run.offsets[np.clip(row_of + 1, 0, last)], 0)
    lengths = hi - lo
    total = int(lengths.sum())
    starts = np.cumsum(lengths) - lengths
    ent = np.repeat(np.arange(n, dtype=np.int64), lengths)
    width = int(lengths[0]) if n else 0
    if n and bool(np.all(lengths == width)):  # every row as long: positions repeat
        pos = np.tile(np.arange(width, dtype=np.int64), n)
    else:
        pos = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    shift = lo - starts
    if n and bool(np.all(shift == shift[0])):  # the rows in order, one after another
        codes = run.codes[int(shift[0]) : int(shift[0]) + total]
    else:
        codes = run.codes[np.arange(total, dtype=np.int64) + np.repeat(shift, lengths)]
    if gold.level == "chunk":
        return ent, pos, codes, run.vocab
    # page level: expand every chunk code into its page keys
    if chunks is None:
        raise DataError("page-level scoring needs the chunk table (--chunks)")
    page_vocab: dict[str, int] = {}
    chunk_pages: list[list[int]] = [
        [page_vocab.setdefault(k, len(page_vocab)) for k in chunks.page_keys(cid)]
        for cid in run.vocab
    ]
    counts = np.fromiter((len(p) for p in chunk_pages), dtype=np.int64, count=len(chunk_pages))
    flat = np.fromiter((c for p in chunk_pages for c in p), dtype=np.int64, count=int(counts.sum()))
    cstart = np.cumsum(counts) - counts
    per = counts[codes]
    ent2 = np.repeat(ent, per)
    pos2 = np.repeat(pos, per)
    base = np.repeat(cstart[codes], per)
    off = np.arange(len(ent2), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    codes2 = flat[base + off]
    return ent2, pos2, codes2, list(page_vocab)


def _alt_ranks(gold: GoldIndex, vocab: Sequence[str], hits: Hits) -> npt.NDArray[np.int64]:
    """First rank (0-based, `NEVER` when not retrieved) of every gold alternative in its entry's
    hits, searched once per distinct (entry, key) pair of the gold."""
    code = gold_codes(gold.key_ids, gold.pair_key, vocab)
    return first_ranks(gold.pair_entry, code, hits)[gold.alt_pair]


def _context(gold: GoldIndex, vocab: Sequence[str], hits: Hits) -> Context:
    """The metrics' shared context: the ranks of the gold's alternatives and of its alternatives
    judged not relevant (graded 0; only bpref reads them)."""
    judged = None
    if gold.judged_keys:
        ids = {key: i for i, key in enumerate(dict.fromkeys(gold.judged_keys))}
        key = np.fromiter(map(ids.__getitem__, gold.judged_keys), dtype=np.int64)
        judged = (
            gold.judged_entry,
            first_ranks(gold.judged_entry, gold_codes(ids, key, vocab), hits),
        )
    return Context(gold, _alt_ranks(gold, vocab, hits), judged)


def compute_metrics(
    gold: GoldIndex,
    ret_entry: npt.NDArray[np.int64],
    ret_rank: npt.NDArray[np.int64],
    ret_code: npt.NDArray[np.int64],
    vocab: Sequence[str],
    ks: Sequence[int],
    *,
    metrics: Sequence[Metric] | None = None,
) -> dict[str, npt.NDArray[np.float64]]:
    """Vectorised per-entry metrics from retrieved (entry, rank, item code) arrays; keys like
    'recall@5', 'mrr'. Default: the default score table's metrics at every cutoff in `ks`."""
    hits = Hits.from_triples(ret_entry, ret_rank, ret_code, len(vocab), len(gold.entry_ids))
    return evaluate(
        _context(gold, vocab, hits), _default_selection(ks) if metrics is None else metrics
    )


def _default_selection(ks: Sequence[int]) -> list[Metric]:
    """The default table's metrics: each cutoff family at every k, then those without a cutoff."""
    cut = [m for kk in ks for m in default_metrics(kk) if m.k is not None]
    return cut + [m for m in default_metrics(1) if m.k is None]


@dataclass
class CategoryRow:
    category: str
    n: int
    values: dict[str, float]
    unanswerable_n: int = 0
    ci: dict[str, Interval] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UnknownRetrieved:
    """Hits of a run whose chunk id the chunk table does not know (not an error: counted, shown)."""

    hits: int
    distinct: int
    examples: tuple[str, ...] = ()

    @classmethod
    def count(cls, run: Run, chunks: ChunkTable) -> UnknownRetrieved:
        known = map(chunks.by_id.__contains__, run.vocab)  # the table's index, at C speed
        unknown = ~np.fromiter(known, dtype=bool, count=len(run.vocab))
        hits = int(unknown[run.codes].sum()) if len(run.codes) else 0
        ids = [run.vocab[i] for i in np.flatnonzero(unknown)]
        return cls(hits, len(ids), tuple(sorted(ids)[:5]))

    def to_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "distinct": self.distinct, "examples": list(self.examples)}

    def note(self) -> str:
        return (
            f"{self.hits} retrieved hits ({self.distinct} distinct ids, e.g. "
            f"{', '.join(self.examples)}) are not in the chunk table: was the run made on another index?"
        )


@dataclass(frozen=True)
class PathDiagnostics:
    """Where every gold piece was found: per entry its best path at cutoff ``k`` (as the
    metrics choose it: highest recall@k, then nDCG@k, then first listed), and per piece of every
    path the 1-based rank of its first retrieved alternative (None when never retrieved)."""

    k: int
    best_path: npt.NDArray[np.int64]  # per entry: global path index
    path_start: npt.NDArray[np.int64]  # per entry: its first path's global index
    path_entry: npt.NDArray[np.int64]
    piece_path: npt.NDArray[np.int64]
    piece_rank: npt.NDArray[np.int64]  # 0-based, NEVER when unsatisfied

    @classmethod
    def from_context(cls, ctx: Context, k: int) -> PathDiagnostics:
        counts = ctx.paths_per_entry  # paths are grouped by entry: an entry's first path
        start = (np.cumsum(counts) - counts).astype(np.int64)
        return cls(k, ctx.best_path(k), start, ctx.path_entry, ctx.piece_path, ctx.piece_rank)

    def row(self, i: int) -> dict[str, Any]:
        """``best_path`` (index into the entry's evidence_paths), ``missing`` (indices of the best
        path's pieces not satisfied in the top k) and ``ranks`` (per path, per piece: 1-based
        rank or None)."""
        lo = int(self.path_start[i])
        hi = int(self.path_start[i + 1]) if i + 1 < len(self.path_start) else len(self.path_entry)
        p_lo, p_hi = np.searchsorted(self.piece_path, [lo, hi])
        ranks: list[list[int | None]] = [[] for _ in range(hi - lo)]
        for q in range(int(p_lo), int(p_hi)):
            r = int(self.piece_rank[q])
            ranks[int(self.piece_path[q]) - lo].append(None if r >= NEVER else r + 1)
        best = int(self.best_path[i]) - lo
        missing = [j for j, r in enumerate(ranks[best]) if r is None or r > self.k]
        return {"best_path": best, "missing": missing, "ranks": ranks}


def _category_rows(
    names: Sequence[str],
    codes: npt.NDArray[np.int64],
    per_entry: dict[str, npt.NDArray[np.float64]],
    unanswerable: dict[str, int],
) -> tuple[dict[str, CategoryRow], CategoryRow]:
    """One row per name (the mean of its entries' values; ``codes`` gives every entry's name)
    and the overall row."""
    categories: dict[str, CategoryRow] = {}
    counts = np.bincount(codes, minlength=len(names))
    sums = {m: np.bincount(codes, weights=v, minlength=len(names)) for m, v in per_entry.items()}
    for i, c in enumerate(names):
        n = int(counts[i])
        vals = {m: (float(sums[m][i] / n) if n else float("nan")) for m in per_entry}
        categories[c] = CategoryRow(c, n, vals, unanswerable.get(c, 0))
    n = len(codes)
    vals = {m: (float(per_entry[m].mean()) if n else float("nan")) for m in per_entry}
    return categories, CategoryRow("overall", n, vals, sum(unanswerable.values()))


@dataclass
class RetrievalScores(ReportMixin):
    """Per-entry and per-category retrieval scores. Every aggregate comes with its rows.

    ``per_entry`` maps every computed metric's name to one value per entry (aligned with
    ``ids``); ``metrics`` names the ones the tables show (by default the default score table's
    metrics at ``k``). A category's value is the mean over its entries.
    """

    k: int
    ks: list[int]
    ids: list[str]
    categories_of: list[str]
    per_entry: dict[str, npt.NDArray[np.float64]]
    unanswerable: dict[str, int]
    dataset_version: str | None = None
    run_hash: str | None = None
    level: Level = "chunk"
    index_version: str | None = None
    ci_method: str | None = None
    clustering: ClusterSummary | None = None
    ci_seed: int | None = None
    ci_rate: str | None = None
    categories: dict[str, CategoryRow] = field(default_factory=dict)
    overall: CategoryRow | None = None
    metrics: list[str] = field(default_factory=list)
    fresh: dict[str, Any] | None = None  # the use of a sealed fresh sample this scoring recorded
    excluded: dict[str, str] = field(default_factory=dict)  # entry id -> why its gold is stale
    excluded_kinds: dict[str, str] = field(default_factory=dict)  # entry id -> the stale kind
    skip_stale: bool = False
    unknown_retrieved: UnknownRetrieved | None = None  # None without a chunk table
    paths: PathDiagnostics | None = field(default=None, repr=False)  # per-entry row diagnostics
    by: str = "category"  # what the rows group by: category, or an entry metadata key
    room: str | None = None  # the synthetic room's version, when every entry names the same one
    # entry id -> how it changed since the run was made (scored anyway: --allow-changed-entries)
    changed: dict[str, str] = field(default_factory=dict)
    # the chunk table the run was read against and how it is bound (`assay.runs.corpus.RunTable`)
    table: dict[str, Any] | None = None
    table_notes: list[str] = field(default_factory=list)
    # the run's index and the dataset's index_version, when they differ (runs.binding)
    index_mismatch: dict[str, str] | None = None
    # the label tiers the entries were selected by (`assay.dataset.tiers.TierReport`)
    tiers: TierReport | None = None
    # the scores rolled up per conversation, when entries are conversations' turns
    conversations: ConversationRollup | None = None

    def __post_init__(self) -> None:
        if not self.categories:
            self._aggregate()

    @property
    def metric_names(self) -> list[str]:
        """The metrics the tables show, in order."""
        if self.metrics:
            return list(self.metrics)
        return [m.name for m in default_metrics(self.k) if m.name in self.per_entry]

    def _aggregate(self) -> None:
        names = sorted(set(self.categories_of) | set(self.unanswerable))
        self.categories, self.overall = _category_rows(
            names, self.category_codes(names), self.per_entry, self.unanswerable
        )

    def category_codes(self, names: Sequence[str]) -> npt.NDArray[np.int64]:
        """Per entry: the position of its row (its category, or what ``by`` groups on) in
        ``names``, -1 when it is not there."""
        code_of = {c: i for i, c in enumerate(names)}
        return np.fromiter(
            map(code_of.get, self.categories_of, repeat(-1)),
            dtype=np.int64,
            count=len(self.categories_of),
        )

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Per-entry arrays aligned with `ids` (plus 'category')."""
        out: dict[str, npt.NDArray[Any]] = {
            "category": np.asarray(self.categories_of, dtype=object)
        }
        out.update(self.per_entry)
        return out

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One dict per entry: id, category, every metric, and (when scored here) the best path
        at ``k``, the pieces of it missing from the top k and the rank of every gold piece."""
        out = [
            {"id": eid, "category": cat} | {m: float(self.per_entry[m][i]) for m in self.per_entry}
            for i, (eid, cat) in enumerate(zip(self.ids, self.categories_of, strict=True))
        ]
        if self.paths is not None:
            for i, row in enumerate(out):
                row.update(self.paths.row(i))
        return out

    def add_ci(
        self,
        *,
        seed: int = 0,
        n_resamples: int = 10_000,
        method: Literal["score", "percentile", "bca"] = "score",
        confidence: float = 0.95,
        rate_ci: Literal["auto", "wilson", "clopper-pearson"] = "auto",
        clusters: Clustering | None = None,
    ) -> None:
        """Attach a confidence interval to every cell (an `assay.report.Interval`).

        ``clusters`` (`assay.stats.clusters.Clustering`): entries in one cluster (questions on
        one document) are not independent; a rate cell then gets `cluster_rate_interval`, a
        graded one `cluster_mean_interval`, and the footer says how entries were clustered.

        A binary metric (complete@k) is a rate: its interval is ``rate_ci`` (``"auto"``: Wilson,
        Clopper-Pearson when fewer than 4 entries passed or failed), which covers at small n and
        never collapses to a point when every entry passed. A graded metric in [0, 1] gets the
        score interval for a bounded mean (``method="score"``, `assay.stats.bounded`: Wilson's
        interval generalised, never a point, covering 94-97% on mrr-like cells with 80-92%
        zeros at n = 8-50), or a bootstrap CI (``"percentile"``, ``"bca"``) resampling entries
        within the category; a graded cell whose values are all 0 or 1 is a rate and gets
        ``rate_ci`` (with its Clopper-Pearson fallback for rare events).
        """
        from assay.stats.bootstrap import bootstrap_ci
        from assay.stats.bounded import graded_mean_interval

        assert self.overall is not None
        rows = [*self.categories.values(), self.overall]
        codes = self.category_codes([r.category for r in rows[:-1]])
        for i, row in enumerate(rows):
            mask = np.ones(len(codes), dtype=bool) if row is self.overall else codes == i
            labels = None if clusters is None else np.asarray(clusters.labels(self.ids))[mask]
            for m in self.per_entry:
                x = self.per_entry[m][mask]
                if len(x) == 0:
                    continue
                if labels is not None and bool(np.all((x >= 0.0) & (x <= 1.0))):
                    row.ci[m] = cluster_mean_interval(x, labels, confidence=confidence)
                    continue
                # 0/1 values are a rate whatever the metric's declared kind (recall@k with one
                # piece per entry, mrr at k=1): graded_mean_interval routes them to the rate
                # interval, with its exact fallback; other cells in [0, 1] get the score
                # interval, exact when fewer than 4 values differ from the most common one
                zero_one = bool(np.all((x == 0.0) | (x == 1.0)))
                if zero_one or (method == "score" and bool(np.all((x >= 0.0) & (x <= 1.0)))):
                    row.ci[m] = graded_mean_interval(x, confidence=confidence, rate_method=rate_ci)
                    continue
                # one stream per cell, so a cell's CI does not depend on which other cells exist
                rng = np.random.default_rng(
                    [seed, zlib.crc32(row.category.encode()), zlib.crc32(m.encode())]
                )
                boot: Literal["percentile", "bca"] = "percentile" if method == "score" else method
                row.ci[m] = bootstrap_ci(
                    x, rng=rng, n_resamples=n_resamples, confidence=confidence, method=boot
                )
        self.ci_method, self.ci_seed, self.ci_rate = method, seed, rate_ci
        self.clustering = None if clusters is None else clusters.summary(self.ids)

    # ------------------------------------------------------------ formatting

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (full precision; an empty category's value is None)."""

        def cell(row: CategoryRow) -> dict[str, Any]:
            d: dict[str, Any] = {"n": row.n}
            for m in self.per_entry:
                d[m] = None if np.isnan(row.values[m]) else row.values[m]
                if m in row.ci:
                    d[f"{m}_ci"] = row.ci[m].to_dict()
            d["unanswerable_n"] = row.unanswerable_n
            return d

        assert self.overall is not None
        return {
            "k": self.k,
            "level": self.level,
            "categories": {c: cell(r) for c, r in self.categories.items()},
            "overall": cell(self.overall),
            "unanswerable_n": self.overall.unanswerable_n,
            "dataset_version": self.dataset_version,
            "index_version": self.index_version,
            "run_hash": self.run_hash,
            "by": self.by,
            "room": self.room,
            "ci": None
            if self.ci_method is None
            else {
                "method": self.ci_method,
                "rate_method": self.ci_rate,
                "seed": self.ci_seed,
                "confidence": 0.95,
            },
            "excluded_stale_gold": {"n": len(self.excluded), "entries": dict(self.excluded)},
            "fresh": self.fresh,
            "changed_entries": {"n": len(self.changed), "entries": dict(self.changed)},
            "index_mismatch": self.index_mismatch,
            "unknown_retrieved": None
            if self.unknown_retrieved is None
            else self.unknown_retrieved.to_dict(),
            "chunk_table": self.table,
            "tiers": None if self.tiers is None else self.tiers.to_dict(),
            "clustering": None if self.clustering is None else self.clustering.to_dict(),
            "conversations": None if self.conversations is None else self.conversations.to_dict(),
        }

    def notes(self) -> list[str]:
        """What a reader of the table must know beside it: entries left out, unknown hits."""
        out: list[str] = [] if self.tiers is None else [self.tiers.line()]
        if self.conversations is not None:
            out.extend(self.conversations.lines())
        if self.clustering is not None:
            out.append(
                f"{self.clustering.words()[0].upper()}{self.clustering.words()[1:]}: each "
                "cell's CI treats a cluster as one draw (--cluster none: entries as independent)."
            )
        out.extend(self.table_notes)
        if self.skip_stale or self.excluded:
            from assay.gold.resolve import skipped_note

            out.append(skipped_note(self.excluded, self.excluded_kinds))
        if self.unknown_retrieved is not None and self.unknown_retrieved.hits:
            out.append(self.unknown_retrieved.note())
        if self.changed:
            from assay.runs.binding import changed_note

            out.append(changed_note(list(self.changed)))
        if self.index_mismatch is not None:
            out.append(f"note: {self.index_mismatch['message']}")
        return out

    def tabular(self) -> Tabular:
        """One row per category and the overall row; each cell the mean (with its CI if any)."""
        metrics = [m for m in self.metric_names if m in self.per_entry]
        header = [self.by, "n", *metrics, "unans."]
        body: list[list[str]] = []
        assert self.overall is not None
        for row in [*self.categories.values(), self.overall]:
            cells = [row.category, str(row.n)]
            for m in metrics:
                v = row.values[m]
                s = "-" if np.isnan(v) else f"{v:.3f}"
                ci = row.ci.get(m)
                if ci is not None and ci.fmt_bounds(2):  # [low, high], or why there is none
                    s += f" {ci.fmt_bounds(2)}"
                cells.append(s)
            cells.append(str(row.unanswerable_n))
            body.append(cells)
        foot = (
            f"k={self.k}, level={self.level}, dataset {self.dataset_version}, run {self.run_hash}"
        )
        if self.ci_method:
            foot += f", {self._ci_words()}"
        return Tabular(
            title=f"Retrieval @{self.k} ({self.level} level) per {self.by}",
            header=header,
            rows=body,
            footer=[foot, *self.notes()],
            sections={len(body) - 2} if len(body) > 1 else set(),
        )

    def to_markdown(self) -> str:
        """The table (untitled, as pull-request comments show it), then the footer."""
        t = self.tabular()
        rows = [[f"**{r[0]}**", *r[1:]] if r[0] in t.emphasis else r for r in t.rows]
        return markdown_table(t.header, rows) + "\n" + "\n\n".join(t.footer) + "\n"

    def _ci_words(self) -> str:
        return ci_words(
            self.ci_method, self.ci_seed, self.ci_rate, clustered=self.clustering is not None
        )

    def to_table(self) -> Any:
        """A rich Table (print it with rich.console.Console)."""
        t = rich_table(self.tabular())
        t.caption = f"dataset {self.dataset_version} · run {self.run_hash}" + (
            f" · {self._ci_words()}" if self.ci_method else ""
        )
        t.caption += "".join(f"\n{n}" for n in self.notes())
        return t


def ci_words(
    method: str | None, seed: int | None, rate: str | None, *, clustered: bool = False
) -> str:
    """How a score table's intervals were drawn, in words (its footer; the explorer's overview
    says the same from a bundle's ``ci`` record: ``method``, ``seed``, ``rate_method``, and
    whether its scores carry a ``clustering``).

    ``clustered``: the cells were drawn treating a cluster as one draw (`RetrievalScores.add_ci`
    with ``clusters``), which replaces both the rate method and the graded one: binary cells
    (and graded cells whose values are all 0 or 1) get `cluster_rate_interval`, the others
    `cluster_mean_interval`, whatever ``method`` and ``rate`` were asked for."""
    if clustered:
        return (
            "95% CI, each cluster one draw: cluster Wilson at the effective size (cluster "
            "Clopper-Pearson below 4 effective passes or fails) on binary metrics and on graded "
            "cells whose values are all 0 or 1, the score interval over the cluster means (never "
            "narrower than the entries') on other graded ones"
        )
    rate_words = {
        "auto": "Wilson (Clopper-Pearson below 4 passes or fails)",
        "wilson": "Wilson",
        "clopper-pearson": "Clopper-Pearson",
    }.get(str(rate), str(rate))
    graded = (
        "the score interval of a bounded mean (exact below 4 values off the most common one)"
        if method == "score"
        else f"bootstrap ({method}, seed {seed})"
    )
    return (
        f"95% CI: {rate_words} on binary metrics and on graded cells whose values are all 0 or 1, "
        f"{graded} on other graded ones"
    )


def score_retrieval(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    k: int = 5,
    ks: Sequence[int] | None = None,
    chunks: ChunkTable | str | Path | RunTable | None = None,
    level: Level = "chunk",
    allow_missing: bool = False,
    skip_stale: bool = False,
    gold: GoldIndex | None = None,
    metrics: str | Sequence[str | Metric] | None = None,
    allow_reuse: bool = False,
    by: str = "category",
    allow_changed_entries: bool = False,
    allow_corpus_change: bool = False,
    session: FreshSession | None = None,
) -> RetrievalScores:
    """Score a run against a dataset's evidence paths.

    The run is read against the chunk table it was made on (`assay.runs.corpus.bind_run`): the
    one its metadata records, whether or not ``chunks`` is given; ``chunks`` (a table, its path,
    or an already bound `RunTable`) is needed only for runs that recorded none. A table whose
    content fingerprint differs from the recorded one is refused (`DataError`) unless
    ``allow_corpus_change``; a run that recorded none and whose hits carry no chunk text is
    scored and called unbound in the notes; a run most of whose hits the table does not know
    was made on another index and is refused. ``table`` says which table was read and how.

    A run is bound to its dataset: rows made for an entry whose query or `as_of` changed since
    are refused (`assay.runs.binding.ChangedEntriesError`, naming every such entry) unless
    ``allow_changed_entries``, which scores them and says so in ``changed`` and the notes.

    When the dataset is (or holds entries of) a sealed fresh sample, the scoring is one use of
    it: a second use is refused (`FreshReuseError`) unless ``allow_reuse``, and the use is
    recorded once the scores are computed (`assay.dataset.fresh.using`); ``fresh`` says so.
    A scoring that is part of a use the caller opened (``session``: a comparison, a gate,
    `assay.compare.open_inputs`) guards nothing itself; the caller reports the use.

    ``metrics`` names what to compute (``"recall@5,hit@5,mrr"``, a list of names or `Metric`
    values; a bare cutoff family such as ``"recall"`` takes ``k``); the tables show them in that
    order. By default: recall, complete and nDCG at ``k`` and at every cutoff in ``ks``, and MRR;
    the tables show those at ``k``.

    Refuses (DataError) when gold is stale -- names chunks or documents the chunk table lacks,
    anchors no chunk holds, chunks changed since they were labelled (`assay.gold.resolve_gold`)
    -- unless `skip_stale`, which leaves those entries out and names them in `excluded`; and
    when answerable entries are missing from the run or their rows carry no `retrieved` (a
    text-to-SQL row; unless `allow_missing`, which scores them as retrieving nothing). With a chunk table, retrieved ids it does not know are counted in
    `unknown_retrieved`.
    """
    from assay.dataset import fresh
    from assay.runs.binding import check_binding, index_mismatch
    from assay.runs.corpus import bind_run

    changed = check_binding(dataset, run, allow_changed=allow_changed_entries)
    # hits the table does not know are counted here (`unknown_retrieved`), not refused: a
    # comparison refuses a run made on another index (`assay.compare`)
    bound = bind_run(run, given=chunks, allow_change=allow_corpus_change, max_share=1.0)

    def score() -> RetrievalScores:
        return _score(
            dataset, run, k=k, ks=ks, chunks=bound.table, level=level,
            allow_missing=allow_missing, skip_stale=skip_stale, gold=gold, metrics=metrics,
        )  # fmt: skip

    if session is not None:
        scores = score()
    else:
        with fresh.using(dataset, command="score", allow_reuse=allow_reuse, runs=[run.hash]) as own:
            scores = score()
        if own.use is not None:
            scores.fresh = own.use.to_dict()
    scores.changed = {c.id: c.message for c in changed}
    scores.table = None if bound.table is None else bound.to_dict()
    scores.table_notes = bound.notes(run)
    scores.index_mismatch = index_mismatch(dataset, run)
    scores.tiers = dataset.tiers if isinstance(dataset, Dataset) else None
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = dataset.path if isinstance(dataset, Dataset) and dataset.path else "<dataset>"
    return regroup(scores, entries, by, file=str(file)) if by != "category" else scores


def conversation_rollup(
    scores: RetrievalScores, entries: Sequence[Entry], *, turns: bool | None = None
) -> ConversationRollup | None:
    """The shown metrics rolled up per conversation (`assay.dataset.rollup`): the mean per
    conversation, and for a binary metric (complete@k) the share of conversations whose every
    scored turn passes; None when no scored entry is a conversation's turn. `turns`: whether
    any entry is a turn, when known (`GoldIndex.conversations`, recorded once per dataset);
    else the entries are looked at."""
    from assay.dataset import has_conversations, rollup
    from assay.metrics import parse

    if not (has_conversations(entries) if turns is None else turns):
        return None
    names = [m for m in scores.metric_names if m in scores.per_entry]
    binary = []
    for m in names:
        try:
            if parse(m).binary:
                binary.append(m)
        except ValueError:
            continue
    columns = {m: scores.per_entry[m].tolist() for m in names}
    return rollup(scores.ids, columns, entries, binary=binary)


def _room_version(room: Any) -> str | None:
    """'assay-synth/2.0' of an entry whose metadata.room is 'assay-synth/2.0/seed7/c6y3'."""
    return "/".join(str(room).split("/")[:2]) if room else None


def _room_versions(entries: Sequence[Entry]) -> set[str | None]:
    """The distinct room versions of the entries (None for an entry that names no room)."""
    raw = map(dict.get, map(attrgetter("metadata"), entries), repeat("room"))
    try:
        distinct = set(raw)  # one C-level pass; a room is a string (or absent) in practice
    except TypeError:  # an unhashable metadata.room
        distinct = {0.5}  # read them one by one below
    if all(r is None or isinstance(r, str) for r in distinct):
        return {_room_version(r) for r in distinct}
    return {_room_version(e.metadata.get("room")) for e in entries}


BY_KEYS = ("category", "source", "format", "messiness")
"""Common ways to slice the rows; any entry field or ``metadata.FIELD`` works as well."""


def regroup(
    scores: RetrievalScores, entries: Sequence[Entry], by: str, *, file: str = "<dataset>"
) -> RetrievalScores:
    """The same per-entry scores with rows grouped by `by`: "category", "source", any
    single-valued entry field, or a metadata key ("format", "messiness", "metadata.FIELD"; see
    `assay.dataset.groups`; an entry without the value falls in "(none)"), so "recall on scans"
    is one row."""
    from assay.dataset import groups

    key = groups(entries, by, file=file)
    unanswerable: dict[str, int] = {}
    for e in entries:
        if not e.is_answerable:
            unanswerable[key[e.id]] = unanswerable.get(key[e.id], 0) + 1
    return dataclasses.replace(
        scores,
        categories_of=[key.get(i, "(none)") for i in scores.ids],
        unanswerable=unanswerable,
        categories={},
        overall=None,
        by=by,
    )


def resolve_for(
    dataset: Dataset | Sequence[Entry], chunks: ChunkTable | None, level: Level, skip_stale: bool
) -> GoldIndex:
    """The dataset's gold resolved on ``chunks`` at ``level`` (`assay.gold.resolve_gold`,
    problems named at the dataset's file and lines): what every run read against that table
    shares, so a comparison resolves it once per table."""
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = dataset.path if isinstance(dataset, Dataset) and dataset.path else "<dataset>"
    lines = dataset.lines if isinstance(dataset, Dataset) else None
    return resolve_gold(
        entries, chunks=chunks, level=level, file=file, lines=lines, skip_stale=skip_stale
    )


def _score(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    k: int,
    ks: Sequence[int] | None,
    chunks: ChunkTable | None,
    level: Level,
    allow_missing: bool,
    skip_stale: bool,
    gold: GoldIndex | None,
    metrics: str | Sequence[str | Metric] | None,
) -> RetrievalScores:
    if k < 1:
        raise ValueError("k must be >= 1")
    if metrics is not None and ks:
        raise ValueError("give either metrics (each with its cutoff) or ks, not both")
    chosen = parse_list(metrics, k=k) if metrics is not None else None
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = dataset.path if isinstance(dataset, Dataset) and dataset.path else "<dataset>"
    if gold is None:
        gold = resolve_for(dataset, chunks, level, skip_stale)
    if not len(gold.entry_ids):
        unanswerable = sum(not e.is_answerable for e in entries)
        raise DataError(
            f"no answerable entry to score ({len(entries)} entries, {unanswerable} "
            "unanswerable" + (", the rest left out as stale)" if skip_stale else ")"),
            file=file,
        )
    row_of = rows_of(gold.entry_ids, run.ids, run.index)
    missing = [gold.entry_ids[i] for i in np.flatnonzero(row_of < 0)]
    if missing and not allow_missing:
        shown = ", ".join(missing[:20]) + (
            f" ... (+{len(missing) - 20} more)" if len(missing) > 20 else ""
        )
        raise DataError(
            f"{len(missing)} answerable entries have no row in the run: {shown}",
            file=run.path or "<run>",
            field="id",
        )
    if run.unretrieved and not allow_missing:  # a row that says nothing of retrieval
        problems = run.retrieval_problems(gold.entry_ids)
        if problems:
            raise DataError(problems)
    if chosen is None:
        all_ks = sorted({k, *(ks or [])})
        selection = _default_selection(all_ks)
    else:
        selection = chosen
        all_ks = sorted({m.k for m in chosen if m.k is not None}) or [k]
    if level == "chunk":
        hits = Hits.from_run(run.offsets, run.codes, len(run.vocab), row_of)
        vocab: Sequence[str] = run.vocab
    else:
        ent, rank, code, vocab = _retrieved_arrays(gold, run, chunks)
        hits = Hits.from_triples(ent, rank, code, len(vocab), len(gold.entry_ids))
    ctx = _context(gold, vocab, hits)
    per_entry = evaluate(ctx, selection)
    # rows from the gold's category codes (computed once per dataset, not once per run)
    names = sorted(set(gold.category_names) | set(gold.unanswerable))
    position = np.asarray([names.index(c) for c in gold.category_names], dtype=np.int64)
    categories, overall = _category_rows(
        names, position[gold.category_code], per_entry, dict(gold.unanswerable)
    )
    scores = RetrievalScores(
        k=k,
        ks=all_ks,
        ids=gold.entry_ids,
        categories_of=gold.categories,
        per_entry=per_entry,
        unanswerable=dict(gold.unanswerable),
        categories=categories,
        overall=overall,
        dataset_version=dataset.version if isinstance(dataset, Dataset) else None,
        run_hash=run.hash or None,
        level=level,
        index_version=chunks.version if chunks is not None else None,
        metrics=[] if chosen is None else [m.name for m in chosen],
        excluded=dict(gold.excluded),
        excluded_kinds=dict(gold.excluded_kinds),
        skip_stale=skip_stale,
        unknown_retrieved=None if chunks is None else UnknownRetrieved.count(run, chunks),
        paths=PathDiagnostics.from_context(ctx, k),
        room=_single_room(gold.rooms, entries),
    )
    scores.conversations = conversation_rollup(scores, entries, turns=gold.conversations)
    return scores


def _single_room(rooms: frozenset[str | None] | None, entries: Sequence[Entry]) -> str | None:
    """The room version every entry names (None when they name none, or several); read from
    the gold's record of the rooms when it has one."""
    versions = _room_versions(entries) if rooms is None else {_room_version(r) for r in rooms}
    return versions.pop() if len(versions) == 1 else None
