"""Recording what chunk-id gold pointed at, so a re-chunk that changes a chunk's text is noticed."""

from __future__ import annotations

from collections.abc import Mapping

from assay.corpus import ChunkTable
from assay.dataset import Entry
from assay.gold.align import chunk_fingerprint

__all__ = ["record_chunk_hashes"]


def record_chunk_hashes(entry: Entry, texts: ChunkTable | Mapping[str, str]) -> Entry:
    """A copy of `entry` whose `chunk_hashes` hold the fingerprint of every chunk id its gold names
    (evidence paths and key facts) that `texts` (a chunk table, or chunk id -> text) knows.

    A hash recorded before for an id `texts` does not know is kept; one for an id the gold no
    longer names is dropped.
    """
    named = entry.chunk_ids()
    lookup = {c: h for c, h in entry.chunk_hashes.items() if c in named}
    for cid in named:
        if isinstance(texts, ChunkTable):
            chunk = texts.by_id.get(cid)
            text = None if chunk is None else chunk.text
        else:
            text = texts.get(cid)
        if text is not None:
            lookup[cid] = chunk_fingerprint(text)
    return entry.model_copy(update={"chunk_hashes": dict(sorted(lookup.items()))})
