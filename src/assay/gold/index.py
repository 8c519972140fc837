"""Gold evidence flattened to arrays, the form retrieval scoring computes on."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["GoldIndex", "Level"]

Level = Literal["chunk", "page"]


@dataclass
class GoldIndex:
    """Gold evidence flattened to arrays: alternatives grouped by piece, pieces by path, paths by entry.

    `alt_keys` are item keys (chunk ids, or `doc#page` at page level), `alt_gain` the grade of the
    alternative each key came from (`assay.dataset.schema.Entry.grade`; grade-0 alternatives
    satisfy nothing and are not among the alternatives; their keys are kept in `judged_keys`,
    what bpref counts as judged not relevant); build once per dataset+index
    with `assay.gold.resolve_gold`. `excluded` maps the id of every entry left out because its gold
    is stale (only when asked to skip them) to the first problem found with it.
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
    excluded: dict[str, str] = field(default_factory=dict)
    # entry id -> the kind of its first unresolved alternative (`assay.gold.resolve.StaleKind`)
    excluded_kinds: dict[str, str] = field(default_factory=dict)
    #: every entry's ``metadata.room`` (as a string; None for none), answerable or not; None
    #: when not recorded
    rooms: frozenset[str | None] | None = None
    #: whether any entry (answerable or not) is a conversation's turn; None when not recorded
    conversations: bool | None = None
    #: the keys of every entry's alternatives graded 0 (judged not relevant, and not relevant
    #: through another alternative of the entry), distinct per entry, and each one's entry
    judged_keys: list[str] = field(default_factory=list)
    judged_entry: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the distinct alternative keys numbered 0, 1, ... in first-seen order, and per alternative
    #: the number of its key
    key_ids: dict[str, int] = field(init=False, repr=False, compare=False)
    alt_key_id: npt.NDArray[np.int64] = field(init=False, repr=False, compare=False)
    #: the distinct categories of the entries, sorted, and every entry's position among them
    category_names: list[str] = field(init=False, repr=False, compare=False)
    category_code: npt.NDArray[np.int64] = field(init=False, repr=False, compare=False)
    #: the distinct (entry, key) pairs, grouped by entry: every pair's entry and key (as in
    #: ``alt_key_id``), and per alternative its pair (a run's hits are searched once per pair)
    pair_entry: npt.NDArray[np.int64] = field(init=False, repr=False, compare=False)
    pair_key: npt.NDArray[np.int64] = field(init=False, repr=False, compare=False)
    alt_pair: npt.NDArray[np.int64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # built with the index, once per dataset, so that scoring a run touches no string per
        # alternative or per entry
        self.key_ids = dict(zip(dict.fromkeys(self.alt_keys), count()))
        ids = map(self.key_ids.__getitem__, self.alt_keys)
        self.alt_key_id = np.fromiter(ids, dtype=np.int64, count=len(self.alt_keys))
        self.category_names = sorted(set(self.categories))
        code_of = {c: i for i, c in enumerate(self.category_names)}
        self.category_code = np.fromiter(
            map(code_of.__getitem__, self.categories), dtype=np.int64, count=len(self.categories)
        )
        self._pairs()

    def _pairs(self) -> None:
        entry = self.path_entry[self.piece_path][self.alt_piece]
        key = self.alt_key_id
        span = max(len(self.key_ids), 1)
        if len(self.entry_ids) * span < (1 << 62):
            order = np.argsort(entry * span + key, kind="stable")  # nearly sorted: cheap
        else:
            order = np.lexsort((key, entry))
        se, sk = entry[order], key[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (se[1:] != se[:-1]) | (sk[1:] != sk[:-1])
        self.alt_pair = np.empty(len(order), dtype=np.int64)
        self.alt_pair[order] = np.cumsum(new) - 1
        self.pair_entry, self.pair_key = se[new], sk[new]
