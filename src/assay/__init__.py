"""assay: expert-verified golden datasets as the backbone of RAG evaluation."""

from assay.cache import RequestCache, cache_key
from assay.errors import AssayError, DataError, MissingExtraError, Problem, UsageError

__version__ = "0.1.0"

__all__ = [
    "AssayError",
    "DataError",
    "MissingExtraError",
    "Problem",
    "RequestCache",
    "UsageError",
    "__version__",
    "cache_key",
]
