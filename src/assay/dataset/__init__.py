"""assay.dataset: golden datasets (schema, io, validation, splits, fresh samples, versioning).

The names below are imported lazily (the command line starts without pydantic):

- `diff_datasets(old, new)` -> `DatasetDiff`: entries added, removed and changed field by field
  (`assay diff`);
- `content_changed_since_version(dataset)` -> `VersionCheck`: whether the content is still the
  one its manifest's version was written with (`assay validate` names an edit without a bump).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.dataset.diff import DatasetDiff, diff_datasets
    from assay.dataset.versions import VersionCheck, content_changed_since_version

__all__ = ["DatasetDiff", "VersionCheck", "content_changed_since_version", "diff_datasets"]

_LAZY = {
    "DatasetDiff": "assay.dataset.diff",
    "diff_datasets": "assay.dataset.diff",
    "VersionCheck": "assay.dataset.versions",
    "content_changed_since_version": "assay.dataset.versions",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.dataset' has no attribute {name!r}")
