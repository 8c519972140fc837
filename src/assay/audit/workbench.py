"""Queueing audited rows in the expert workbench for review (`--to-workbench URL`)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay._io import write_jsonl_atomic
from assay.dataset import Entry
from assay.errors import MissingExtraError

__all__ = ["queue_for_review"]


def queue_for_review(
    url: str,
    entries: Sequence[Entry],
    reasons: Mapping[str, list[str]],
    *,
    audit: str,
    overlap: int = 2,
) -> dict[str, Any]:
    """Import `entries` into the workbench at `url` as items with evidence and reference tasks,
    each carrying ``metadata.audit = {"audit": ..., "reasons": [...]}`` so the reviewer sees why
    it came back. Labels are never changed here: the experts' adjudicated gold is exported from
    the workbench and recorded with `assay audit correct`. Returns the import summary."""
    try:
        from assay.workbench.db import Database
        from assay.workbench.service import import_entries
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("workbench", "the workbench", exc.name or "fastapi") from exc
    db = Database(url)
    db.migrate()
    rows = []
    for e in entries:
        md = dict(e.metadata)
        md["audit"] = {"audit": audit, "reasons": list(reasons.get(e.id, []))}
        rows.append(e.model_copy(update={"metadata": md}).to_json_dict())
    with tempfile.TemporaryDirectory(prefix="assay-audit-") as tmp:
        path = Path(tmp) / "queue.jsonl"
        write_jsonl_atomic(path, rows)
        summary = import_entries(db, path, overlap=overlap)
    return summary.to_dict()
