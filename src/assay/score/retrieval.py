"""Retrieval metrics over evidence paths, per entry and per category.

Definitions (for one answerable entry, `top` = the first k retrieved chunk ids):

* A *piece* is satisfied at rank r when one of its alternatives is retrieved at rank r (ranks
  count from 1 in rank order of the run; a chunk retrieved twice counts at its first rank).
* ``recall@k`` -- the best path's share of pieces satisfied within `top` (partial credit).
* ``complete@k`` -- 1 when some path has every piece satisfied within `top`, else 0.
* ``mrr`` -- 1 / rank of the first retrieved chunk that satisfies any piece of any path, over the
  whole retrieved list; 0 when none does.
* ``ndcg@k`` -- on the best path, each piece is one evidence *group*, credited once, at the rank
  where it is first satisfied: DCG = sum over satisfied pieces of gain / log2(rank + 1); the ideal
  DCG places the path's pieces at ranks 1..min(k, pieces) in decreasing gain. A piece's gain is the
  largest `relevance` of its alternatives (anchors may carry one; chunk ids and anchors without it
  have gain 1). When one chunk satisfies several pieces at once, nDCG is capped at 1 (the ideal
  assumes one piece per rank). With one path whose pieces each hold one chunk id this is exactly trec_eval's
  `ndcg_cut.k` (linear gain), as `recall@k` is `recall.k` and `mrr` is `recip_rank`.
* The *best path* is the one with the highest recall@k; ties go to the higher ndcg@k, then to the
  path listed first.

At ``level="page"`` every alternative and every retrieved chunk is mapped to its (doc, page)
keys, so a piece is satisfied when any chunk of a gold page is retrieved (top k still counts
chunks, not pages).

Unanswerable entries (no evidence paths, or ``answerable: false``) are excluded from retrieval
metrics and counted separately.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assay.corpus.chunks import ChunkTable
from assay.dataset.io import Dataset
from assay.dataset.schema import Anchor, Entry
from assay.errors import DataError, Problem
from assay.runs import Run
from assay.stats.interval import Interval

__all__ = [
    "METRICS",
    "CategoryRow",
    "GoldIndex",
    "RetrievalScores",
    "compute_metrics",
    "resolve_gold",
    "score_retrieval",
]

Level = Literal["chunk", "page"]
METRICS = ("recall", "complete", "mrr", "ndcg")
_NEVER = np.int64(1 << 40)


def _metric_name(m: str, k: int) -> str:
    return "mrr" if m == "mrr" else f"{m}@{k}"


@dataclass
class GoldIndex:
    """Gold evidence flattened to arrays: alternatives grouped by piece, pieces by path, paths by entry.

    `alt_keys` are item keys (chunk ids, or `doc#page` at page level); build once per dataset+index.
    """

    entry_ids: list[str]
    categories: list[str]
    alt_keys: list[str]
    alt_piece: npt.NDArray[np.int64]
    alt_gain: npt.NDArray[np.float64]
    piece_path: npt.NDArray[np.int64]
    path_entry: npt.NDArray[np.int64]
    level: Level = "chunk"
    unanswerable: dict[str, int] = field(default_factory=dict)
    _key_array: npt.NDArray[Any] | None = field(default=None, repr=False)
    _id_array: npt.NDArray[Any] | None = field(default=None, repr=False)

    def key_array(self) -> npt.NDArray[Any]:
        if self._key_array is None:
            self._key_array = np.asarray(self.alt_keys, dtype=str)
        return self._key_array

    def id_array(self) -> npt.NDArray[Any]:
        if self._id_array is None:
            self._id_array = np.asarray(self.entry_ids, dtype=str)
        return self._id_array


def _lookup(keys: npt.NDArray[Any], table: Sequence[str]) -> npt.NDArray[np.int64]:
    """Position of every key in `table` (first occurrence), -1 when absent; vectorised."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(table) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    arr = np.asarray(table, dtype=str)
    order = np.argsort(arr, kind="stable")
    srt = arr[order]
    pos = np.searchsorted(srt, keys)
    pos[pos >= len(srt)] = 0
    return np.where(srt[pos] == keys, order[pos], -1).astype(np.int64)


def _page_keys_of_anchor(a: Anchor, chunks: ChunkTable | None) -> list[str]:
    if a.page is not None:
        return [f"{a.doc}#{a.page}"]
    if chunks is None:
        return []
    from assay.corpus.align import resolve_anchor

    res = resolve_anchor(a, chunks)
    return sorted({k for cid in res.chunk_ids for k in chunks.page_keys(cid)})


def resolve_gold(
    entries: Sequence[Entry],
    *,
    chunks: ChunkTable | None = None,
    level: Level = "chunk",
    file: str = "<dataset>",
    lines: dict[str, int] | None = None,
) -> GoldIndex:
    """Map every alternative to item keys; refuse (DataError) when gold points at nothing.

    At chunk level, chunk ids must exist in `chunks` (when given) and anchors need `chunks` to be
    resolved. At page level, chunk ids need `chunks` to know their pages.
    """
    from assay.corpus.align import resolve_anchor

    lines = lines or {}
    problems: list[Problem] = []
    entry_ids: list[str] = []
    cats: list[str] = []
    alt_keys: list[str] = []
    alt_piece: list[int] = []
    alt_gain: list[float] = []
    piece_path: list[int] = []
    path_entry: list[int] = []
    anchor_cache: dict[Anchor, list[str]] = {}
    unanswerable: dict[str, int] = defaultdict(int)
    for e in entries:
        if not e.is_answerable:
            unanswerable[e.category] += 1
            continue
        ei = len(entry_ids)
        entry_ids.append(e.id)
        cats.append(e.category)
        line = lines.get(e.id)
        for pi, path in enumerate(e.evidence_paths):
            path_idx = len(path_entry)
            path_entry.append(ei)
            for qi, piece in enumerate(path):
                piece_idx = len(piece_path)
                piece_path.append(path_idx)
                n_before = len(alt_keys)
                gain = 1.0
                for ai, alt in enumerate(piece):
                    fld = f"evidence_paths.{pi}.{qi}.{ai}"
                    keys: list[str]
                    if isinstance(alt, str):
                        if chunks is not None and alt not in chunks:
                            problems.append(
                                Problem(
                                    file,
                                    line,
                                    fld,
                                    f"entry {e.id}: chunk id {alt!r} is not in the index",
                                )
                            )
                            continue
                        if level == "page":
                            if chunks is None:
                                raise DataError(
                                    Problem(
                                        file,
                                        line,
                                        fld,
                                        "page-level scoring of chunk ids needs the chunk table (--chunks)",
                                    )
                                )
                            keys = chunks.page_keys(alt)
                        else:
                            keys = [alt]
                    else:
                        if alt.relevance is not None:
                            gain = max(gain, float(alt.relevance)) if ai else float(alt.relevance)
                        if level == "page":
                            keys = _page_keys_of_anchor(alt, chunks)
                            if not keys:
                                problems.append(
                                    Problem(
                                        file,
                                        line,
                                        fld,
                                        f"entry {e.id}: anchor has no page and matches no chunk",
                                    )
                                )
                                continue
                        else:
                            if chunks is None:
                                raise DataError(
                                    Problem(
                                        file,
                                        line,
                                        fld,
                                        "anchors are resolved onto chunks: pass the chunk table (--chunks)",
                                    )
                                )
                            if alt not in anchor_cache:
                                anchor_cache[alt] = list(resolve_anchor(alt, chunks).chunk_ids)
                            keys = anchor_cache[alt]
                            if not keys:
                                where = f"{alt.doc} page {alt.page}" if alt.page else alt.doc
                                problems.append(
                                    Problem(
                                        file,
                                        line,
                                        fld,
                                        f"entry {e.id}: anchor matches no chunk of {where}",
                                    )
                                )
                                continue
                    for key in keys:
                        alt_keys.append(key)
                        alt_piece.append(piece_idx)
                if len(alt_keys) == n_before:
                    # every alternative failed; keep the piece unsatisfiable so arrays stay aligned
                    alt_keys.append("\x00unresolvable")
                    alt_piece.append(piece_idx)
                alt_gain.extend([gain] * (len(alt_keys) - n_before))
    if problems:
        raise DataError(problems)
    return GoldIndex(
        entry_ids,
        cats,
        alt_keys,
        np.asarray(alt_piece, dtype=np.int64),
        np.asarray(alt_gain, dtype=np.float64),
        np.asarray(piece_path, dtype=np.int64),
        np.asarray(path_entry, dtype=np.int64),
        level,
        dict(unanswerable),
    )


def _retrieved_arrays(
    gold: GoldIndex, run: Run, chunks: ChunkTable | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], list[str]]:
    """(entry index, rank 0-based, item code) for every retrieved item of every gold entry."""
    n = len(gold.entry_ids)
    row_of = np.fromiter(
        (run.index.get(eid, -1) for eid in gold.entry_ids), dtype=np.int64, count=n
    )
    present = row_of >= 0
    lo = np.where(present, run.offsets[np.maximum(row_of, 0)], 0)
    hi = np.where(present, run.offsets[np.maximum(row_of, 0) + 1], 0)
    lengths = hi - lo
    total = int(lengths.sum())
    ent = np.repeat(np.arange(n, dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = np.arange(total, dtype=np.int64) - starts
    src = np.repeat(lo, lengths) + pos
    codes = run.codes[src]
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


def _alt_entries(gold: GoldIndex) -> npt.NDArray[np.int64]:
    return gold.path_entry[gold.piece_path][gold.alt_piece]


def _alt_ranks_by_lookup(
    gold: GoldIndex,
    ret_entry: npt.NDArray[np.int64],
    ret_rank: npt.NDArray[np.int64],
    ret_code: npt.NDArray[np.int64],
    alt_code: npt.NDArray[np.int64],
    n_codes: int,
) -> npt.NDArray[np.int64]:
    """First rank of every gold alternative in its entry's hits: retrieved items looked up in
    the sorted gold keys (general: any list lengths, items expanded to pages)."""
    v = np.int64(max(n_codes, 1))
    gkeys = _alt_entries(gold) * v + alt_code
    gkeys = np.where(alt_code >= 0, gkeys, -1)
    ukeys = np.unique(gkeys[gkeys >= 0])
    best = np.full(len(ukeys), _NEVER, dtype=np.int64)
    if len(ukeys) and len(ret_code):
        rkeys = ret_entry * v + ret_code
        idx = np.searchsorted(ukeys, rkeys)
        idx[idx >= len(ukeys)] = 0
        hit = ukeys[idx] == rkeys
        np.minimum.at(best, idx[hit], ret_rank[hit])
    alt_rank = np.full(len(gkeys), _NEVER, dtype=np.int64)
    ok = gkeys >= 0
    alt_rank[ok] = best[np.searchsorted(ukeys, gkeys[ok])]
    return alt_rank


_BLOCK = 8_000_000  # gathered cells per block in the direct chunk-level path


def _alt_ranks_direct(
    gold: GoldIndex, run: Run, alt_code: npt.NDArray[np.int64], row_of: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Chunk level: compare each gold alternative with its own entry's hits (a gold entry has a
    handful of alternatives, a run has many hits: this touches only the rows gold points at)."""
    alt_row = row_of[_alt_entries(gold)]
    lo = np.where(alt_row >= 0, run.offsets[np.maximum(alt_row, 0)], 0)
    length = np.where(alt_row >= 0, run.offsets[np.maximum(alt_row, 0) + 1] - lo, 0)
    alt_rank = np.full(len(alt_code), _NEVER, dtype=np.int64)
    width = int(length.max()) if len(length) else 0
    if width == 0:
        return alt_rank
    step = max(1, _BLOCK // width)
    codes = run.codes
    diffs = np.diff(run.offsets)
    if len(diffs) and diffs.min() == diffs.max() == width and run.offsets[0] == 0:
        # every row has the same length: gather whole rows from a 2-D view (contiguous copies)
        rows2d = codes.reshape(-1, width)
        present = alt_row >= 0
        for start in range(0, len(alt_code), step):
            sl = slice(start, start + step)
            match = rows2d[np.maximum(alt_row[sl], 0)] == alt_code[sl, None]
            found = match.any(axis=1) & present[sl] & (alt_code[sl] >= 0)
            alt_rank[sl] = np.where(found, match.argmax(axis=1), _NEVER)
        return alt_rank
    cols = np.arange(width, dtype=np.int64)
    last = len(codes) - 1
    for start in range(0, len(alt_code), step):
        sl = slice(start, start + step)
        idx = lo[sl, None] + cols[None, :]
        valid = cols[None, :] < length[sl, None]
        match = (codes[np.minimum(idx, last)] == alt_code[sl, None]) & valid
        found = match.any(axis=1)
        first = match.argmax(axis=1)
        alt_rank[sl] = np.where(found & (alt_code[sl] >= 0), first, _NEVER)
    return alt_rank


def compute_metrics(
    gold: GoldIndex,
    ret_entry: npt.NDArray[np.int64],
    ret_rank: npt.NDArray[np.int64],
    ret_code: npt.NDArray[np.int64],
    vocab: Sequence[str],
    ks: Sequence[int],
) -> dict[str, npt.NDArray[np.float64]]:
    """Vectorised per-entry metrics; keys like 'recall@5', 'complete@5', 'ndcg@5', 'mrr'."""
    alt_code = _lookup(gold.key_array(), vocab)
    alt_rank = _alt_ranks_by_lookup(gold, ret_entry, ret_rank, ret_code, alt_code, len(vocab))
    return metrics_from_alt_ranks(gold, alt_rank, ks)


def metrics_from_alt_ranks(
    gold: GoldIndex, alt_rank: npt.NDArray[np.int64], ks: Sequence[int]
) -> dict[str, npt.NDArray[np.float64]]:
    """Per-entry metrics from the first rank (0-based, or a huge number) of every alternative."""
    n_entries = len(gold.entry_ids)
    piece_entry = gold.path_entry[gold.piece_path]
    n_pieces = len(gold.piece_path)
    piece_rank = np.full(n_pieces, _NEVER, dtype=np.int64)
    np.minimum.at(piece_rank, gold.alt_piece, alt_rank)
    piece_gain = np.zeros(n_pieces, dtype=np.float64)
    np.maximum.at(piece_gain, gold.alt_piece, gold.alt_gain)
    n_paths = len(gold.path_entry)
    pieces_per_path = np.bincount(gold.piece_path, minlength=n_paths).astype(np.float64)
    # ideal DCG positions: within each path, pieces sorted by gain descending
    order = np.lexsort((-piece_gain, gold.piece_path))
    path_start = np.cumsum(pieces_per_path.astype(np.int64)) - pieces_per_path.astype(np.int64)
    ideal_pos = np.empty(n_pieces, dtype=np.int64)
    ideal_pos[order] = np.arange(n_pieces, dtype=np.int64) - path_start[gold.piece_path[order]]
    out: dict[str, npt.NDArray[np.float64]] = {}
    entry_first = np.full(n_entries, _NEVER, dtype=np.int64)
    np.minimum.at(entry_first, piece_entry, piece_rank)
    out["mrr"] = np.where(entry_first < _NEVER, 1.0 / (entry_first + 1.0), 0.0)
    for k in ks:
        within = piece_rank < k
        sat = np.bincount(gold.piece_path, weights=within.astype(np.float64), minlength=n_paths)
        recall_p = sat / pieces_per_path
        disc = np.where(within, piece_gain / np.log2(piece_rank.clip(max=1 << 30) + 2.0), 0.0)
        dcg = np.bincount(gold.piece_path, weights=disc, minlength=n_paths)
        idisc = np.where(ideal_pos < k, piece_gain / np.log2(ideal_pos + 2.0), 0.0)
        idcg = np.bincount(gold.piece_path, weights=idisc, minlength=n_paths)
        ndcg_p = np.minimum(np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0), 1.0)
        # best path per entry: max recall, then max ndcg, then first listed
        pidx = np.arange(n_paths)
        order_p = np.lexsort((pidx, -ndcg_p, -recall_p, gold.path_entry))
        first = np.ones(n_paths, dtype=bool)
        first[1:] = gold.path_entry[order_p][1:] != gold.path_entry[order_p][:-1]
        best_path = np.empty(n_entries, dtype=np.int64)
        best_path[gold.path_entry[order_p][first]] = order_p[first]
        out[f"recall@{k}"] = recall_p[best_path]
        out[f"complete@{k}"] = (recall_p[best_path] >= 1.0).astype(np.float64)
        out[f"ndcg@{k}"] = ndcg_p[best_path]
    return out


def _binary_metric(name: str) -> bool:
    """complete@k is 0/1 per entry (a rate); the metrics registry will say this per metric."""
    return name.split("@", 1)[0] == "complete"


@dataclass
class CategoryRow:
    category: str
    n: int
    values: dict[str, float]
    unanswerable_n: int = 0
    ci: dict[str, Interval] = field(default_factory=dict)


@dataclass
class RetrievalScores:
    """Per-entry and per-category retrieval scores. Every aggregate comes with its rows."""

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
    ci_seed: int | None = None
    ci_rate: str | None = None
    categories: dict[str, CategoryRow] = field(default_factory=dict)
    overall: CategoryRow | None = None

    def __post_init__(self) -> None:
        if not self.categories:
            self._aggregate()

    @property
    def metric_names(self) -> list[str]:
        names = ["recall", "complete", "mrr", "ndcg"]
        return [_metric_name(m, self.k) for m in names]

    def _aggregate(self) -> None:
        names = sorted(set(self.categories_of) | set(self.unanswerable))
        code_of = {c: i for i, c in enumerate(names)}
        codes = np.fromiter(
            (code_of[c] for c in self.categories_of), dtype=np.int64, count=len(self.categories_of)
        )
        counts = np.bincount(codes, minlength=len(names))
        sums = {
            m: np.bincount(codes, weights=v, minlength=len(names))
            for m, v in self.per_entry.items()
        }
        for i, c in enumerate(names):
            n = int(counts[i])
            vals = {m: (float(sums[m][i] / n) if n else float("nan")) for m in self.per_entry}
            self.categories[c] = CategoryRow(c, n, vals, self.unanswerable.get(c, 0))
        n = len(self.ids)
        vals = {m: (float(self.per_entry[m].mean()) if n else float("nan")) for m in self.per_entry}
        self.overall = CategoryRow("overall", n, vals, sum(self.unanswerable.values()))

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Per-entry arrays aligned with `ids` (plus 'category')."""
        out: dict[str, npt.NDArray[Any]] = {
            "category": np.asarray(self.categories_of, dtype=object)
        }
        out.update(self.per_entry)
        return out

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [
            {"id": eid, "category": cat} | {m: float(self.per_entry[m][i]) for m in self.per_entry}
            for i, (eid, cat) in enumerate(zip(self.ids, self.categories_of, strict=True))
        ]

    def add_ci(
        self,
        *,
        seed: int = 0,
        n_resamples: int = 10_000,
        method: Literal["percentile", "bca"] = "percentile",
        confidence: float = 0.95,
        rate_ci: Literal["wilson", "clopper-pearson"] = "wilson",
    ) -> None:
        """Attach a confidence interval to every cell (an `assay.report.Interval`).

        A binary metric (complete@k) is a rate: its interval is Wilson's (``rate_ci``), which
        covers at small n and never collapses to a point when every entry passed. Graded metrics
        get a bootstrap CI (``method``) resampling entries within the category; a graded cell
        whose values are all 0 or all 1 is a rate too and gets ``rate_ci``.
        """
        from assay.stats.bootstrap import bootstrap_ci
        from assay.stats.proportion import rate_interval

        cats = np.asarray(self.categories_of, dtype=object)
        assert self.overall is not None
        for row in [*self.categories.values(), self.overall]:
            mask = np.ones(len(cats), dtype=bool) if row is self.overall else cats == row.category
            for m in self.per_entry:
                x = self.per_entry[m][mask]
                if len(x) == 0:
                    continue
                zero_one = bool(np.all((x == 0.0) | (x == 1.0)))
                if zero_one and (_binary_metric(m) or bool(np.all(x == x[0]))):
                    row.ci[m] = rate_interval(x, confidence=confidence, method=rate_ci)
                    continue
                # one stream per cell, so a cell's CI does not depend on which other cells exist
                rng = np.random.default_rng(
                    [seed, zlib.crc32(row.category.encode()), zlib.crc32(m.encode())]
                )
                row.ci[m] = bootstrap_ci(
                    x, rng=rng, n_resamples=n_resamples, confidence=confidence, method=method
                )
        self.ci_method, self.ci_seed, self.ci_rate = method, seed, rate_ci

    # ------------------------------------------------------------ formatting

    def to_dict(self) -> dict[str, Any]:
        def cell(row: CategoryRow) -> dict[str, Any]:
            d: dict[str, Any] = {"n": row.n}
            for m in self.per_entry:
                d[m] = None if np.isnan(row.values[m]) else round(row.values[m], 6)
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
            "ci": None
            if self.ci_method is None
            else {
                "method": self.ci_method,
                "rate_method": self.ci_rate,
                "seed": self.ci_seed,
                "confidence": 0.95,
            },
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def _table_rows(self) -> tuple[list[str], list[list[str]]]:
        metrics = [m for m in self.metric_names if m in self.per_entry]
        header = ["category", "n", *metrics, "unans."]
        body: list[list[str]] = []
        assert self.overall is not None
        for row in [*self.categories.values(), self.overall]:
            cells = [row.category, str(row.n)]
            for m in metrics:
                v = row.values[m]
                s = "-" if np.isnan(v) else f"{v:.3f}"
                ci = row.ci.get(m)
                if ci is not None and ci.low is not None and ci.high is not None:
                    s += f" [{ci.low:.2f}, {ci.high:.2f}]"
                cells.append(s)
            cells.append(str(row.unanswerable_n))
            body.append(cells)
        return header, body

    def to_markdown(self) -> str:
        header, body = self._table_rows()
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
        ]
        for r in body:
            if r[0] == "overall":
                r = [f"**{r[0]}**", *r[1:]]
            lines.append("| " + " | ".join(r) + " |")
        foot = (
            f"\nk={self.k}, level={self.level}, dataset {self.dataset_version}, run {self.run_hash}"
        )
        if self.ci_method:
            foot += f", {self._ci_words()}"
        return "\n".join(lines) + "\n" + foot + "\n"

    def _ci_words(self) -> str:
        rate = "Wilson" if self.ci_rate == "wilson" else str(self.ci_rate)
        return (
            f"95% CI: {rate} on binary metrics, bootstrap ({self.ci_method}, seed "
            f"{self.ci_seed}) on graded ones"
        )

    def to_table(self) -> Any:
        """A rich Table (print it with rich.console.Console)."""
        from rich.table import Table

        header, body = self._table_rows()
        t = Table(
            title=f"Retrieval @{self.k} ({self.level} level) per category", title_justify="left"
        )
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right", no_wrap=True, min_width=len(h))
        for r in body:
            t.add_row(
                *r,
                style="bold" if r[0] == "overall" else None,
                end_section=r[0] == body[-2][0] if len(body) > 1 else False,
            )
        t.caption = f"dataset {self.dataset_version} · run {self.run_hash}" + (
            f" · {self._ci_words()}" if self.ci_method else ""
        )
        return t


def score_retrieval(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    k: int = 5,
    ks: Sequence[int] | None = None,
    chunks: ChunkTable | None = None,
    level: Level = "chunk",
    allow_missing: bool = False,
    gold: GoldIndex | None = None,
) -> RetrievalScores:
    """Score a run against a dataset's evidence paths.

    Refuses (DataError) when gold points at chunks the index does not have, and when answerable
    entries are missing from the run (unless `allow_missing`, which scores them as retrieving
    nothing).
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = dataset.path if isinstance(dataset, Dataset) and dataset.path else "<dataset>"
    lines = dataset.lines if isinstance(dataset, Dataset) else None
    if gold is None:
        gold = resolve_gold(entries, chunks=chunks, level=level, file=file, lines=lines)
    row_of = _lookup(gold.id_array(), run.ids)
    missing = [gold.entry_ids[i] for i in np.flatnonzero(row_of < 0)]
    if missing and not allow_missing:
        shown = ", ".join(missing[:20]) + (
            f" ... (+{len(missing) - 20} more)" if len(missing) > 20 else ""
        )
        raise DataError(
            Problem(
                run.path or "<run>",
                None,
                "id",
                f"{len(missing)} answerable entries have no row in the run: {shown}",
            )
        )
    all_ks = sorted({k, *(ks or [])})
    if level == "chunk":
        alt_rank = _alt_ranks_direct(gold, run, _lookup(gold.key_array(), run.vocab), row_of)
        per_entry = metrics_from_alt_ranks(gold, alt_rank, all_ks)
    else:
        ent, rank, code, vocab = _retrieved_arrays(gold, run, chunks)
        per_entry = compute_metrics(gold, ent, rank, code, vocab, all_ks)
    return RetrievalScores(
        k=k,
        ks=all_ks,
        ids=gold.entry_ids,
        categories_of=gold.categories,
        per_entry={
            m: per_entry[m]
            for m in [
                *(f"{x}@{kk}" for kk in all_ks for x in ("recall", "complete", "ndcg")),
                "mrr",
            ]
        },
        unanswerable=dict(gold.unanswerable),
        dataset_version=dataset.version if isinstance(dataset, Dataset) else None,
        run_hash=run.hash or None,
        level=level,
        index_version=chunks.version if chunks is not None else None,
    )
