"""assay.attribution: why entries fail -- the first stage (parse, chunk, recall, rerank,
generation, grounding) that lost a required piece of evidence, per entry and per category.

`attribute(dataset, run, corpus=...)` returns an `Attribution` report; `assay attribute` prints it.
"""

from assay.attribution.stages import (
    ANSWER_STAGES,
    ATTRIBUTION_VERSION,
    RETRIEVAL_STAGES,
    STAGES,
    Attribution,
    EntryAttribution,
    PieceOutcome,
    attribute,
    attribute_files,
)

__all__ = [
    "ANSWER_STAGES",
    "ATTRIBUTION_VERSION",
    "RETRIEVAL_STAGES",
    "STAGES",
    "Attribution",
    "EntryAttribution",
    "PieceOutcome",
    "attribute",
    "attribute_files",
]
