"""Slicing entries by any field: the rows of `assay score/compare/gate --by`.

``by`` names one value per entry:

* ``category`` (the default);
* ``source``: the entry's provenance (log, hand, synthetic, benchmark), so questions mined from
  logs and synthetic ones are two rows;
* any other single-valued field of the entry schema (``split``, ``answerable``,
  ``expected_behavior``, ``label_tier``, ``as_of``, ...);
* ``principal.role`` or ``principal.clearance``: who asks (an entry without a principal is
  asked by the public: role and clearance ``public``);
* ``metadata.FIELD``: a key of the entry's metadata (``metadata.a.b``: key ``b`` of the mapping
  under ``a``, unless ``a.b`` is a key itself); a bare name that is not a schema field is
  read the same way (``format`` and ``messiness``, which the synthetic room records).

An entry without the value falls in the row ``(none)``. A field that no entry has is an error
naming it: a typo would otherwise put every entry in one row and look like an answer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from assay.dataset.schema import Entry
from assay.errors import DataError, UsageError

__all__ = [
    "NONE",
    "PRINCIPAL_FIELDS",
    "SCALAR_FIELDS",
    "group_of",
    "groups",
]

NONE = "(none)"

# schema fields that hold one value per entry (lists and mappings do not name a row)
SCALAR_FIELDS = (
    "category",
    "source",
    "answerable",
    "expected_behavior",
    "as_of",
    "added",
    "reviewed_by",
    "label_tier",
    "split",
)
PRINCIPAL_FIELDS = ("principal.role", "principal.clearance")
_NOT_SCALAR = (
    "principal",
    "behavior_reason",
    "id",
    "query",
    "evidence_paths",
    "key_facts",
    "chunk_hashes",
    "doc_versions",
    "flags",
    "metadata",
    "reference_answer",
    "acceptable_response_notes",
    "clarify_with",
    "false_premise",
)


def _value_text(v: Any) -> str:
    """A field's value as a row label (``(none)`` for no value)."""
    if type(v) is str:  # the common case first (a category)
        return v
    if v is None:
        return NONE
    if isinstance(v, Enum):
        return str(v.value)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def _field_reader(by: str) -> tuple[str, Any]:
    """(the field as errors name it, a function entry -> value or None)."""
    if not by or by != by.strip():
        raise UsageError(f"--by needs a field name, not {by!r}")
    if by.startswith("metadata."):
        key = by.removeprefix("metadata.")
        if not key:
            raise UsageError("--by metadata. needs a key, e.g. metadata.format")
        return by, lambda e: _metadata(e.metadata, key)
    if by in SCALAR_FIELDS:
        return by, lambda e: getattr(e, by)
    if by in PRINCIPAL_FIELDS:
        key = by.removeprefix("principal.")
        return by, lambda e: "public" if e.principal is None else getattr(e.principal, key)
    if by in _NOT_SCALAR:
        raise UsageError(
            f"cannot group by {by!r}: it is not one value per entry; group by "
            f"{', '.join(SCALAR_FIELDS)} or metadata.FIELD"
        )
    return f"metadata.{by}", lambda e: _metadata(e.metadata, by)


def _metadata(metadata: Mapping[str, Any], key: str) -> Any:
    """``metadata[key]``, else, for a dotted key, the nested value (``a.b``: ``{"a": {"b": v}}``)."""
    if key in metadata:
        return metadata[key]
    v: Any = metadata
    for part in key.split("."):
        if not isinstance(v, Mapping) or part not in v:
            return None
        v = v[part]
    return v


def group_of(entry: Entry, by: str) -> str:
    """The row `entry` falls in when entries are grouped by `by` ("(none)" without the value)."""
    _, read = _field_reader(by)
    return _value_text(read(entry))


def groups(entries: Sequence[Entry], by: str, *, file: str = "<dataset>") -> dict[str, str]:
    """{entry id: row label} for every entry; a field no entry has is a `DataError` naming it."""
    field, read = _field_reader(by)
    out = {e.id: _value_text(read(e)) for e in entries}
    if by != "category" and entries and all(v == NONE for v in out.values()):
        raise DataError(
            f"no entry has {field}; cannot group by it (group by category, source, "
            f"{', '.join(f for f in SCALAR_FIELDS if f not in ('category', 'source'))}, "
            f"{', '.join(PRINCIPAL_FIELDS)} (who asks) or metadata.FIELD)",
            file=file,
            field=field,
        )
    return out
