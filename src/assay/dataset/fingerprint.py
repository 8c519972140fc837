"""What an entry asks, as a short hash: the fingerprint a run row carries of the entry it answered.

`entry_fingerprint` hashes the entry's *normalised query* (`assay._text.normalise_query`: NFKC,
typographic quotes as ASCII, case folded, punctuation and runs of whitespace aside) and its `as_of`: the two things that reach the system. A run row records it (``entry_fp``, beside
``dataset_version``) when the run is made, so scoring can tell a row answering the question as it
is now from one answering a question since edited (`assay.runs.binding`). Gold (evidence, the
reference answer) is not in it: editing gold and rescoring an old run is the point of gold.
Rows written before the shared normaliser carry `legacy_entry_fingerprint` (case and whitespace
only), which the binding check still accepts.
"""

from __future__ import annotations

import hashlib
import json

from assay._text import normalise_query
from assay.dataset.schema import Entry

__all__ = ["entry_fingerprint", "legacy_entry_fingerprint", "normalise_query"]


def _hash(query: str, entry: Entry) -> str:
    as_of = entry.as_of.isoformat() if entry.as_of is not None else None
    blob = json.dumps([query, as_of], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def entry_fingerprint(entry: Entry) -> str:
    """16 hex digits of SHA-256 over the normalised query and the ISO `as_of` (or null)."""
    return _hash(normalise_query(entry.query), entry)


def legacy_entry_fingerprint(entry: Entry) -> str:
    """The fingerprint rows made before the shared normaliser carry (case folded, whitespace
    collapsed, nothing else): read, never written."""
    return _hash(" ".join(entry.query.casefold().split()), entry)
