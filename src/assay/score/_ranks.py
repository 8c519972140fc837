"""The first rank of every gold alternative in its entry's retrieved list, vectorised.

This is the hot path of scoring: a run holds many hits per entry (100 x 100,000 in
``bench/bench_score.py``), the gold a handful of alternatives per entry. The alternatives are
reduced to the distinct (entry, item code) pairs and numbered within their entry (their *slot*).
The hits are laid out as a matrix of rows (one row per entry, or per segment of an over-long
row) and compared with one slot at a time across all rows at once: each comparison is one
numpy pass over a cache-sized block, no Python loop runs per entry, and no row is copied when
the run's rows already line up with the gold's entries. A matching cell records its slot in an
int8 marker matrix (the codes of one entry are distinct, so a cell matches one slot at most);
the marked cells give (entry, slot, rank) and the first rank of every pair is their minimum.

Entries with more slots than most are handled in further rounds over just those entries, so
one entry with many alternatives does not make every row pay for them.

Ranks count from 0 in the list's order; a code retrieved twice counts at its first rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics.context import NEVER

__all__ = ["Hits", "codes_of", "first_ranks", "gold_codes", "rows_of"]

I64 = npt.NDArray[np.int64]

_CELLS = 1 << 17  # hit cells per block: the codes, the marker and the match buffer stay in cache
_MAX_SLOTS = 127  # slots per round: the int8 marker holds 1..127
_SHARE = 4  # a round takes the slots that at least 1 in _SHARE of its entries have


def codes_of(keys: Sequence[str], vocab: Sequence[str]) -> I64:
    """Position of every key in ``vocab`` (its first occurrence), -1 when absent."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    index = dict(zip(reversed(vocab), range(len(vocab) - 1, -1, -1), strict=True))
    return np.fromiter(map(index.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))


def gold_codes(key_ids: dict[str, int], key: I64, vocab: Sequence[str]) -> I64:
    """The position in ``vocab`` (first occurrence; -1 when absent) of every gold key numbered in
    ``key``. ``key_ids`` numbers the gold's distinct keys 0, 1, ... (`assay.gold.GoldIndex`):
    the vocabulary is looked up in it, one string per distinct retrieved item."""
    number = np.fromiter(map(key_ids.get, vocab, repeat(-1)), dtype=np.int64, count=len(vocab))
    found = np.flatnonzero(number >= 0)
    code = np.full(len(key_ids), len(vocab), dtype=np.int64)
    np.minimum.at(code, number[found], found)
    code[code == len(vocab)] = -1
    return code[key]


def rows_of(ids: Sequence[str], run_ids: Sequence[str], index: dict[str, int]) -> I64:
    """Row of every id in a run (-1 when absent); ``index`` maps the run's ids to rows."""
    same = ids == run_ids if isinstance(ids, list) and isinstance(run_ids, list) else None
    if same is None:
        same = len(ids) == len(run_ids) and list(ids) == list(run_ids)
    if same:
        return np.arange(len(ids), dtype=np.int64)
    if len(index) != len(run_ids):  # repeated ids: the first row counts
        return codes_of(ids, run_ids)
    return np.fromiter(map(index.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))


@dataclass(frozen=True)
class Hits:
    """Every entry's retrieved item codes: entry i's are ``codes[lo[i] : lo[i] + length[i]]``.

    ``ranks`` gives each code's rank (same layout); None means the position in the list is the
    rank (0, 1, 2, ...). Every code is in ``range(n_codes)``.
    """

    codes: I64
    lo: I64
    length: I64
    n_codes: int
    ranks: I64 | None = None

    @classmethod
    def from_run(cls, offsets: I64, codes: I64, n_codes: int, row_of: I64) -> Hits:
        """The rows of a columnar run (`assay.runs.Run`: its offsets, codes and vocabulary size)
        in the order of ``row_of`` (-1: no row)."""
        present = row_of >= 0
        row = np.clip(row_of, 0, len(offsets) - 2) if len(offsets) > 1 else np.zeros_like(row_of)
        lo = np.where(present, offsets[row], 0).astype(np.int64)
        hi = np.where(present, offsets[np.minimum(row + 1, len(offsets) - 1)], 0).astype(np.int64)
        return cls(codes, lo, hi - lo, n_codes)

    @classmethod
    def from_triples(cls, entry: I64, rank: I64, code: I64, n_codes: int, n_entries: int) -> Hits:
        """Retrieved (entry, rank, code) triples in any order; codes in ``range(n_codes)``."""
        entry = np.asarray(entry, dtype=np.int64)
        rank = np.asarray(rank, dtype=np.int64)
        code = np.asarray(code, dtype=np.int64)
        if len(entry) > 1 and bool(np.any(entry[1:] < entry[:-1])):
            order = np.argsort(entry, kind="stable")
            entry, rank, code = entry[order], rank[order], code[order]
        length = np.bincount(entry, minlength=n_entries).astype(np.int64)
        lo = np.cumsum(length) - length
        return cls(code, lo, length, n_codes, rank)


@dataclass(frozen=True)
class _Segments:
    """The hits cut into rows of at most ``width`` cells: segment s holds entry ``entry[s]``'s
    codes ``codes[lo[s] : lo[s] + length[s]]``, the first of them at list position ``start[s]``.
    ``in_place``: every segment is ``width`` long and follows the one before it in ``codes``, so a
    run of segments is a reshaped slice of the codes (no copy)."""

    entry: I64
    lo: I64
    length: I64
    start: I64
    width: int
    in_place: bool

    @classmethod
    def of(cls, hits: Hits) -> _Segments:
        length = hits.length
        filled = length[length > 0]
        if not len(filled):
            z = np.zeros(0, dtype=np.int64)
            return cls(z, z, z, z, 1, False)
        longest = int(filled.max())
        # a few very long rows are cut, so that short rows are not padded to their width
        width = min(longest, max(256, 4 * int(np.ceil(filled.mean()))))
        per = -(-length // width)  # segments per entry (0 for an entry without hits)
        if bool(np.all(per == 1)):
            entry = np.arange(len(length), dtype=np.int64)
            start = np.zeros(len(length), dtype=np.int64)
            lo, seg_len = hits.lo, length
        else:
            entry = np.repeat(np.arange(len(length), dtype=np.int64), per)
            first = np.repeat(np.cumsum(per) - per, per)
            start = (np.arange(len(entry), dtype=np.int64) - first) * width
            lo = hits.lo[entry] + start
            seg_len = np.minimum(length[entry] - start, width)
        in_place = bool(np.all(seg_len == width)) and bool(
            np.all(lo == lo[0] + width * np.arange(len(lo), dtype=np.int64))
        )
        return cls(entry, lo, seg_len, start, width, in_place)


def _block(hits: Hits, seg: _Segments, sel: I64 | slice) -> npt.NDArray[np.int64]:
    """The codes of the selected segments as a (segments x width) matrix padded with -1."""
    if seg.in_place and isinstance(sel, slice):
        first = int(seg.lo[sel.start])
        return hits.codes[first : first + (sel.stop - sel.start) * seg.width].reshape(
            -1, seg.width
        )  # a view: rows already in place
    lo, ln = seg.lo[sel], seg.length[sel]
    w = int(ln.max())
    cols = np.arange(w, dtype=np.int64)
    idx = lo[:, None] + cols[None, :]
    if int(ln.min()) == w:
        full: I64 = hits.codes[idx]
        return full
    valid = cols[None, :] < ln[:, None]
    padded: I64 = np.where(valid, hits.codes[np.minimum(idx, len(hits.codes) - 1)], -1)
    return padded


def first_ranks(pair_entry: I64, pair_code: I64, hits: Hits) -> I64:
    """Per (entry, code) pair: the first rank (0-based) at which the entry's hits hold the code,
    `NEVER` when they do not (or the code is -1: an item the run never retrieved).

    The pairs of an entry must be distinct (`assay.gold.GoldIndex` keeps its pairs so); they
    need not be grouped by entry.
    """
    pair_entry = np.asarray(pair_entry, dtype=np.int64)
    pair_code = np.asarray(pair_code, dtype=np.int64)
    n_entries = len(hits.length)
    out = np.full(len(pair_code), NEVER, dtype=np.int64)
    known = np.flatnonzero(pair_code >= 0)
    if not len(known) or not len(hits.codes):
        return out
    ent, code = pair_entry[known], pair_code[known]
    if bool(np.any(ent[1:] < ent[:-1])):  # group by entry
        order = np.argsort(ent, kind="stable")
        known, ent, code = known[order], ent[order], code[order]
    per_entry = np.bincount(ent, minlength=n_entries).astype(np.int64)
    start = np.cumsum(per_entry) - per_entry  # an entry's first pair (among the known ones)
    slot = np.arange(len(code), dtype=np.int64) - start[ent]  # a pair's number in its entry
    rank = np.full(len(code), NEVER, dtype=np.int64)

    seg = _Segments.of(hits)
    # rounds: first the slots most entries have, for every segment (blocks of rows in place);
    # then the further slots, for the segments of the entries that have them
    base = 0
    todo = np.arange(len(seg.entry), dtype=np.int64)
    while len(todo):
        rest = per_entry[per_entry > base] - base  # slots left, per entry that has any
        hist = np.bincount(np.minimum(rest, _MAX_SLOTS))
        have = np.cumsum(hist[::-1])[::-1][1:]  # have[j]: entries with a slot base + j
        n_slots = max(1, int(np.count_nonzero(have * _SHARE >= len(rest))))
        _round(hits, seg, todo, base, n_slots, (ent, slot, code, start), rank)
        base += n_slots
        todo = todo[per_entry[seg.entry[todo]] > base]
    out[known] = rank
    return out


def _round(
    hits: Hits,
    seg: _Segments,
    todo: I64,
    base: int,
    n_slots: int,
    pairs: tuple[I64, I64, I64, I64],
    rank: I64,
) -> None:
    """Slots base .. base + n_slots - 1 of the entries of segments ``todo``: the first ranks of
    those pairs lowered into ``rank``. ``pairs``: every pair's entry, slot and code, and every
    entry's first pair."""
    ent, slot, code, start = pairs
    # compared in the narrowest unsigned type that holds every code exactly and keeps the two
    # fillers apart (-1 and -2 wrap to its two largest values)
    narrow: type[np.unsignedinteger[Any]] | None = None
    if hits.n_codes <= (1 << 16) - 2:
        narrow = np.uint16
    elif hits.n_codes <= (1 << 32) - 2:
        narrow = np.uint32
    # the codes to look for, per entry and slot: -2 (never a code, never padding) where none
    here = np.flatnonzero((slot >= base) & (slot < base + n_slots))
    grid = np.full((len(hits.length), n_slots), -2, dtype=np.int64)
    grid[ent[here], slot[here] - base] = code[here]
    seg_entry = seg.entry[todo]
    wanted = grid[seg_entry] if narrow is None else grid.astype(narrow)[seg_entry]
    step = max(1, _CELLS // seg.width)
    whole = len(todo) == len(seg.entry)  # every segment, in order: blocks are slices
    low = np.empty(step * seg.width if narrow is not None else 0, dtype=narrow or np.int64)
    # the marker is scanned 8 cells (one uint64) at a time: most cells match nothing
    words = -(-step * seg.width // 8)
    marker = np.zeros(words * 8, dtype=np.int8)
    match = np.empty(step * seg.width, dtype=bool)
    for s in range(0, len(todo), step):
        e = min(s + step, len(todo))
        sel: I64 | slice = slice(s, e) if whole else todo[s:e]
        mat = _block(hits, seg, sel)
        b, w = mat.shape
        if narrow is not None:
            small = low[: b * w].reshape(b, w)
            np.copyto(small, mat, casting="unsafe")  # exact: every code fits; -1 wraps
            mat = small
        used = -(-b * w // 8) * 8
        marker[:used] = 0
        mk = marker[: b * w].reshape(b, w)
        eq = match[: b * w].reshape(b, w)
        want = wanted[s:e]
        for j in range(n_slots):
            np.equal(mat, want[:, j : j + 1], out=eq)
            np.copyto(mk, np.int8(j + 1), where=eq)
        hot = np.flatnonzero(marker[:used].view(np.uint64))
        if not len(hot):
            continue
        eight = marker[:used].reshape(-1, 8)[hot]
        i, byte = np.nonzero(eight)
        cell = hot[i] * 8 + byte
        row, col = np.divmod(cell, w)
        which = eight[i, byte].astype(np.int64) - 1 + base
        # the rank of every marked cell: its position in the list, or as the triples give it
        at = seg.start[sel][row] + col if hits.ranks is None else hits.ranks[seg.lo[sel][row] + col]
        np.minimum.at(rank, start[seg_entry[s:e][row]] + which, at)
