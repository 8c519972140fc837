"""What an entry asks, as a short hash: the fingerprint a run row carries of the entry it answered.

`entry_fingerprint` hashes the entry's *normalised query* (case folded, whitespace collapsed) and
its `as_of`: the two things that reach the system. A run row records it (``entry_fp``, beside
``dataset_version``) when the run is made, so scoring can tell a row answering the question as it
is now from one answering a question since edited (`assay.runs.binding`). Gold (evidence, the
reference answer) is not in it: editing gold and rescoring an old run is the point of gold.
"""

from __future__ import annotations

import hashlib
import json

from assay.dataset.schema import Entry

__all__ = ["entry_fingerprint", "normalise_query"]


def normalise_query(query: str) -> str:
    """The query with case folded and runs of whitespace collapsed to one space."""
    return " ".join(query.casefold().split())


def entry_fingerprint(entry: Entry) -> str:
    """16 hex digits of SHA-256 over the normalised query and the ISO `as_of` (or null)."""
    as_of = entry.as_of.isoformat() if entry.as_of is not None else None
    blob = json.dumps([normalise_query(entry.query), as_of], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
