"""assay.score: retrieval scores of a run against a dataset's gold.

Main entry point: `score_retrieval(dataset, run, k=..., chunks=...)` -> `RetrievalScores`
(per-entry metrics, per-category rows with confidence intervals, path diagnostics; ``assay
score``). `resolve_for` resolves a dataset's gold on a chunk table once, for every run read
against it; `regroup` re-slices scores by another field (``--by``); `compute_metrics` is the
vectorised kernel behind them.

Imported lazily, on first use. Import from here, not from the modules: other packages of assay
do (tests/test_package_faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._faces import lazy_face

if TYPE_CHECKING:
    from assay.score.retrieval import (
        BY_KEYS,
        CategoryRow,
        PathDiagnostics,
        RetrievalScores,
        UnknownRetrieved,
        ci_words,
        compute_metrics,
        regroup,
        resolve_for,
        score_retrieval,
    )

__all__ = [
    "BY_KEYS",
    "CategoryRow",
    "PathDiagnostics",
    "RetrievalScores",
    "UnknownRetrieved",
    "ci_words",
    "compute_metrics",
    "regroup",
    "resolve_for",
    "score_retrieval",
]

#: name -> the module that defines it (read on first access: nothing is imported up front)
_LAZY: dict[str, str] = {
    "BY_KEYS": "assay.score.retrieval",
    "CategoryRow": "assay.score.retrieval",
    "PathDiagnostics": "assay.score.retrieval",
    "RetrievalScores": "assay.score.retrieval",
    "UnknownRetrieved": "assay.score.retrieval",
    "ci_words": "assay.score.retrieval",
    "compute_metrics": "assay.score.retrieval",
    "regroup": "assay.score.retrieval",
    "resolve_for": "assay.score.retrieval",
    "score_retrieval": "assay.score.retrieval",
}
#: namespaces of verbs: the submodule itself
_NAMESPACES: dict[str, str] = {}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(__name__, _LAZY, _NAMESPACES)
