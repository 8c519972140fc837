"""assay.gold: where gold lives and what it points at.

Anchors are aligned onto any parser's chunks (`align`); chunk-id gold records the fingerprint of
the text it was labelled on (`fingerprint`); and one resolver (`resolve`) decides what every
alternative of an entry's evidence points at in a chunk table, for `assay validate`
(`check_gold`, `validate_file`) and for `assay score` (`resolve_gold` -> `GoldIndex`) alike.

Layering: `dataset` (the schema) and `corpus` (the chunk table) sit below this package, retrieval
scoring above it.
"""

from assay.gold.align import (
    BOX_IOU,
    HOLD_THRESHOLD,
    AnchorResolution,
    box_iou,
    chunk_fingerprint,
    containment,
    normalize_tokens,
    resolve_anchor,
)
from assay.gold.fingerprint import record_chunk_hashes
from assay.gold.index import GoldIndex, Level
from assay.gold.resolve import GoldResolver, Resolution, StaleKind, check_gold, resolve_gold
from assay.gold.validate import ValidationReport, validate, validate_file

__all__ = [
    "BOX_IOU",
    "HOLD_THRESHOLD",
    "AnchorResolution",
    "GoldIndex",
    "GoldResolver",
    "Level",
    "Resolution",
    "StaleKind",
    "ValidationReport",
    "box_iou",
    "check_gold",
    "chunk_fingerprint",
    "containment",
    "normalize_tokens",
    "record_chunk_hashes",
    "resolve_anchor",
    "resolve_gold",
    "validate",
    "validate_file",
]
