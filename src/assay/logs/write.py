"""Writing assay's log format: what `assay run --log FILE` appends for each query it runs."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.dataset import Entry

__all__ = ["append_log", "log_lines_from_run"]


def log_lines_from_run(
    entries: Sequence[Entry],
    rows: Iterable[dict[str, Any]],
    *,
    system: str | None = None,
    ts: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """One log line per run row: the entry's query and as_of, the row's hits, answer, citations
    and latency; ``ts`` defaults to now (UTC), ``as_of`` to the date of ``ts``."""
    now = (ts or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    by_id = {e.id: e for e in entries}
    out: list[dict[str, Any]] = []
    for row in rows:
        e = by_id.get(row["id"])
        if e is None:
            continue
        line: dict[str, Any] = {
            "ts": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "query": e.query,
            "as_of": (e.as_of or now.date()).isoformat(),
            "retrieved": [
                h
                if isinstance(h, str)
                else {k: v for k, v in h.items() if k in ("chunk_id", "score")}
                for h in row.get("retrieved") or []
            ],
        }
        for k in ("answer", "citations", "latency_ms"):
            if row.get(k) is not None:
                line[k] = row[k]
        if system:
            line["system"] = system
        out.append(line)
    return out


def append_log(path: str | Path, lines: Iterable[dict[str, Any]]) -> int:
    """Append log lines to `path` (a production log only grows); returns how many."""
    text = "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return text.count("\n")
