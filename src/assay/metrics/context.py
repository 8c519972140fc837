"""The per-entry context every metric reads: computed once per (gold, alt ranks), cached per cutoff.

Gold is flattened to arrays (alternatives grouped by piece, pieces by path, paths by entry; see
`assay.gold.GoldIndex`). The scorer finds the first rank (0-based; `NEVER` when not
retrieved) of every alternative in its entry's hits; from there:

* every alternative has its own gain (its grade, `assay.dataset.schema.Entry.grade`; grade-0
  alternatives are not in the gold at all: they satisfy nothing);
* a piece is satisfied at the first rank of any of its alternatives (``piece_rank``); its ideal
  gain (``piece_gain``) is the largest gain of its alternatives;
* a path's recall@k is its share of pieces satisfied within the top k; its nDCG@k credits each
  piece once, with the largest gain / log2(rank + 1) among its alternatives retrieved in the top
  k (the grade of the chunk actually retrieved, not the piece's best), against the ideal of the
  path's pieces at ranks 1..min(k, pieces) in decreasing ideal gain; capped at 1 when one chunk
  satisfies several pieces;
* the *best path* of an entry at cutoff k has the highest recall@k, then the highest nDCG@k,
  then is the one listed first.

A metric family reads what it needs (``ctx.recall(k)``, ``ctx.on_best_path(...)``,
``ctx.first_rank``, ``ctx.alt_rank`` ...); what several families share is computed once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from assay.metrics._registry import Metric, MetricError

__all__ = ["NEVER", "Context", "GoldArrays", "evaluate"]

NEVER = np.int64(1 << 40)
"""The rank of an alternative that was not retrieved (larger than any real rank)."""


class GoldArrays(Protocol):
    """What the context needs of the gold: `assay.gold.GoldIndex` has it."""

    @property
    def entry_ids(self) -> Sequence[str]: ...

    @property
    def alt_piece(self) -> NDArray[np.int64]: ...

    @property
    def alt_gain(self) -> NDArray[np.float64]: ...

    @property
    def piece_path(self) -> NDArray[np.int64]: ...

    @property
    def path_entry(self) -> NDArray[np.int64]: ...


class Context:
    """Arrays shared by every metric of one scoring, built once from the alternatives' ranks."""

    def __init__(
        self,
        gold: GoldArrays,
        alt_rank: NDArray[np.int64],
        judged: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    ) -> None:
        alt_rank = np.asarray(alt_rank, dtype=np.int64)
        if alt_rank.shape != gold.alt_piece.shape:
            raise ValueError(
                f"alt_rank has shape {alt_rank.shape}; the gold has {len(gold.alt_piece)} alternatives"
            )
        self.n_entries = len(gold.entry_ids)
        self.alt_rank = alt_rank
        #: the alternatives graded 0 (judged not relevant): each one's entry and first rank
        #: (NEVER when not retrieved); none when not given
        empty = np.zeros(0, dtype=np.int64)
        self.judged_entry: NDArray[np.int64] = empty if judged is None else np.asarray(judged[0])
        self.judged_rank: NDArray[np.int64] = empty if judged is None else np.asarray(judged[1])
        self.alt_piece = gold.alt_piece
        self.piece_path = gold.piece_path
        self.path_entry = gold.path_entry
        self.n_pieces = len(gold.piece_path)
        self.n_paths = len(gold.path_entry)
        #: entry of every piece (of every alternative: `alt_entry`)
        self.piece_entry = gold.path_entry[gold.piece_path]
        #: first rank (0-based, NEVER when unsatisfied) of every piece
        self.piece_rank = np.full(self.n_pieces, NEVER, dtype=np.int64)
        np.minimum.at(self.piece_rank, gold.alt_piece, alt_rank)
        #: ideal gain of every piece: the largest gain of its alternatives
        self.alt_gain = np.asarray(gold.alt_gain, dtype=np.float64)
        self.piece_gain = np.zeros(self.n_pieces, dtype=np.float64)
        np.maximum.at(self.piece_gain, gold.alt_piece, self.alt_gain)
        # every alternative has its piece's gain (the usual case: every gain 1): the piece's
        # credit is then its gain at the rank where it is first satisfied
        self._flat_gain = bool(np.all(self.alt_gain == self.piece_gain[gold.alt_piece]))
        self.pieces_per_path = np.bincount(gold.piece_path, minlength=self.n_paths).astype(
            np.float64
        )
        # ideal DCG positions: within each path, pieces sorted by gain descending (stable)
        per_path = self.pieces_per_path.astype(np.int64)
        path_start = np.cumsum(per_path) - per_path
        same = gold.piece_path[1:] == gold.piece_path[:-1]
        grouped = bool(np.all(gold.piece_path[1:] >= gold.piece_path[:-1]))
        if grouped and bool(np.all(~same | (self.piece_gain[1:] <= self.piece_gain[:-1]))):
            # already in that order (the usual case: every gain 1): no sort
            self.ideal_pos = np.arange(self.n_pieces, dtype=np.int64) - path_start[gold.piece_path]
        else:
            order = np.lexsort((-self.piece_gain, gold.piece_path))
            self.ideal_pos = np.empty(self.n_pieces, dtype=np.int64)
            self.ideal_pos[order] = (
                np.arange(self.n_pieces, dtype=np.int64) - path_start[gold.piece_path[order]]
            )
        #: paths per entry, and whether paths are grouped by entry in entry order
        self.paths_per_entry = np.bincount(gold.path_entry, minlength=self.n_entries)
        self._paths_sorted = bool(np.all(gold.path_entry[1:] >= gold.path_entry[:-1]))
        #: first rank at which any piece of any path of the entry is satisfied (NEVER if none)
        self.first_rank = np.full(self.n_entries, NEVER, dtype=np.int64)
        np.minimum.at(self.first_rank, self.piece_entry, self.piece_rank)
        self._within: dict[int, NDArray[np.bool_]] = {}
        self._hits: dict[int, NDArray[np.int64]] = {}
        self._recall: dict[int, NDArray[np.float64]] = {}
        self._ndcg: dict[int, NDArray[np.float64]] = {}
        self._best: dict[int, NDArray[np.int64]] = {}
        self._entry_recall: dict[int, NDArray[np.float64]] = {}
        self._gains: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    @cached_property
    def alt_entry(self) -> NDArray[np.int64]:
        """Entry of every alternative."""
        return self.piece_entry[self.alt_piece]

    def _hit(self, k: int) -> NDArray[np.int64]:
        """The pieces satisfied within the top k (indices, in order)."""
        if k not in self._hits:
            self._hits[k] = np.flatnonzero(self.within(k))
        return self._hits[k]

    def within(self, k: int) -> NDArray[np.bool_]:
        """Per piece: satisfied within the top k."""
        if k not in self._within:
            self._within[k] = self.piece_rank < k
        return self._within[k]

    def path_recall(self, k: int) -> NDArray[np.float64]:
        """Per path: share of its pieces satisfied within the top k."""
        if k not in self._recall:
            hit = self._hit(k)
            sat = np.bincount(self.piece_path[hit], minlength=self.n_paths).astype(np.float64)
            self._recall[k] = sat / self.pieces_per_path
        return self._recall[k]

    def path_ndcg(self, k: int) -> NDArray[np.float64]:
        """Per path: nDCG@k with each piece one group, credited once (with the grade of the
        alternative retrieved), capped at 1."""
        if k not in self._ndcg:
            if self._gains is None:  # every cutoff shares the discounted gains
                gain = self.piece_gain
                self._gains = (
                    gain / np.log2(self.piece_rank.clip(max=1 << 30) + 2.0),
                    gain / np.log2(self.ideal_pos + 2.0),
                )
            at_rank, ideal = self._gains
            hit = self._hit(k)  # the pieces that count (summing only them adds no rounding)
            if self._flat_gain:
                credit = at_rank[hit]
            else:  # the best discounted gain among the piece's alternatives in the top k
                ok = np.flatnonzero(self.alt_rank < k)
                best = np.zeros(self.n_pieces, dtype=np.float64)
                np.maximum.at(
                    best,
                    self.alt_piece[ok],
                    self.alt_gain[ok] / np.log2(self.alt_rank[ok] + 2.0),
                )
                credit = best[hit]
            dcg = np.bincount(self.piece_path[hit], weights=credit, minlength=self.n_paths).astype(
                np.float64, copy=False
            )  # (no hit at all: bincount gives integers)
            idisc = np.where(self.ideal_pos < k, ideal, 0.0)
            idcg = np.bincount(self.piece_path, weights=idisc, minlength=self.n_paths)
            self._ndcg[k] = np.minimum(
                np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0), 1.0
            )
        return self._ndcg[k]

    def best_path(self, k: int) -> NDArray[np.int64]:
        """Per entry: its best path at cutoff k (max recall@k, then max nDCG@k, then first)."""
        if k not in self._best:
            if self._paths_sorted:
                # an entry with one path: that path; rank only the paths of the others
                counts = self.paths_per_entry
                best = np.cumsum(counts) - counts
                pidx = np.flatnonzero(counts[self.path_entry] > 1)
            else:
                best = np.empty(self.n_entries, dtype=np.int64)
                pidx = np.arange(self.n_paths)
            if len(pidx):
                ent = self.path_entry[pidx]
                order = pidx[
                    np.lexsort((pidx, -self.path_ndcg(k)[pidx], -self.path_recall(k)[pidx], ent))
                ]
                first = np.ones(len(order), dtype=bool)
                first[1:] = self.path_entry[order][1:] != self.path_entry[order][:-1]
                best[self.path_entry[order][first]] = order[first]
            self._best[k] = best.astype(np.int64, copy=False)
        return self._best[k]

    def on_best_path(self, per_path: NDArray[np.float64], k: int) -> NDArray[np.float64]:
        """Per entry: the value of ``per_path`` on the entry's best path at cutoff k."""
        return per_path[self.best_path(k)]

    def best_of_paths(self, per_path: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per entry: the largest value of ``per_path`` over the entry's paths (the path the
        system served best by that measure; for the families that take no cutoff)."""
        out = np.zeros(self.n_entries, dtype=np.float64)
        np.maximum.at(out, self.path_entry, per_path)
        return out

    def recall(self, k: int) -> NDArray[np.float64]:
        """Per entry: the best path's recall@k."""
        if k not in self._entry_recall:
            self._entry_recall[k] = self.on_best_path(self.path_recall(k), k)
        return self._entry_recall[k]


def evaluate(ctx: Context, metrics: Sequence[Metric]) -> dict[str, NDArray[np.float64]]:
    """Every metric's per-entry values from one shared context, keyed by the metric's name."""
    out: dict[str, NDArray[np.float64]] = {}
    for m in metrics:
        values = np.asarray(m.compute(ctx), dtype=np.float64)
        if values.shape != (ctx.n_entries,):
            raise MetricError(
                f"metric {m} returned shape {values.shape}; expected one value per entry "
                f"({ctx.n_entries},)"
            )
        out[m.name] = values
    return out
