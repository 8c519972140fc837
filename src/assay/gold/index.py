"""Gold evidence flattened to arrays, the form retrieval scoring computes on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = ["GoldIndex", "Level"]

Level = Literal["chunk", "page"]


@dataclass
class GoldIndex:
    """Gold evidence flattened to arrays: alternatives grouped by piece, pieces by path, paths by entry.

    `alt_keys` are item keys (chunk ids, or `doc#page` at page level); build once per dataset+index
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
