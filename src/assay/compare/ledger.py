"""The comparison ledger: every distinct comparison run against a dataset, one JSON line each.

The ledger lives beside the dataset as ``<name>.ledger.jsonl`` (``golden.jsonl`` ->
``golden.ledger.jsonl``). Each completed ``assay compare`` / ``assay gate`` records one line:
when, which command, the dataset's version and content hash, both runs' hashes, the tests run and
their p-values, and the comparison's number ``t`` in the dataset's history. Reports state ``t``
and apply the alpha-spending correction of `assay.stats.multiple` (p multiplied by
``t * (t + 1)``).

A comparison is identified by its `comparison_key`: the dataset (version and content hash), the
two runs (as a set: swapping them is the same two-sided test), the metrics, k, the level and the
grouping of the rows (``--by``). Every set of hypotheses that was looked at is a comparison: the
same runs regrouped by format after being grouped by category test new hypotheses (other rows)
and take a new number, and so does each candidate of a several-run compare. The same comparison
seen again (printed as a table and then as markdown, re-run in CI, asked for by
the pytest plugin on every test run) is not a new look at the data: `append_ledger` with a
``key`` returns the existing line, and its number ``t``, instead of appending.

Appending takes an exclusive ``flock`` on the ledger while it counts the existing lines and writes
the new one, so two concurrent gates get distinct, consecutive numbers. One line is written with a
single ``write`` on a file opened for append, so a crash leaves either the whole line or nothing;
a torn or hand-edited line is reported with its line number.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from assay.errors import DataError, Problem

__all__ = [
    "LEDGER_SCHEMA",
    "append_ledger",
    "comparison_key",
    "ledger_count",
    "ledger_path",
    "read_ledger",
]

LEDGER_SCHEMA = "assay.ledger/1"
DEFAULT_BY = "category"


def ledger_path(dataset_path: str | Path) -> Path:
    """``golden.jsonl`` -> ``golden.ledger.jsonl`` in the same directory."""
    p = Path(dataset_path)
    name = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    return p.with_name(f"{name}.ledger.jsonl")


def _parse(lines: list[str], path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), lineno, None, f"bad JSON in ledger: {exc.msg}"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(str(path), lineno, None, "a ledger line must be a JSON object"))
            continue
        out.append(obj)
    if problems:
        raise DataError(problems)
    return out


def comparison_key(
    *,
    dataset_version: str | None,
    dataset_hash: str | None,
    runs: Iterable[str | None],
    metrics: Iterable[str],
    k: int | None,
    level: str | None = None,
    by: str | None = None,
) -> str:
    """What makes two comparisons the same one: dataset version and hash, the set of runs,
    the set of metrics, k, level and the grouping of the rows ``by`` (seeds and resample counts
    do not change the tests). The default grouping (``category``, or None) is left out of the
    hashed payload, so lines written before the grouping was part of the key keep matching."""
    payload: dict[str, Any] = {
        "dataset_version": dataset_version,
        "dataset_hash": dataset_hash,
        "runs": sorted(str(r) for r in runs),
        "metrics": sorted(set(metrics)),
        "k": k,
        "level": level,
    }
    if by is not None and by != DEFAULT_BY:
        payload["by"] = by
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def _record_key(rec: Mapping[str, Any]) -> str | None:
    """A stored line's key (recomputed for lines written before keys were stored)."""
    key = rec.get("key")
    if isinstance(key, str):
        return key
    if "base_run" not in rec or "metrics" not in rec:
        return None
    return comparison_key(
        dataset_version=rec.get("dataset_version"),
        dataset_hash=rec.get("dataset_hash"),
        runs=[rec.get("base_run"), rec.get("cand_run")],
        metrics=rec.get("metrics") or [],
        k=rec.get("k"),
        level=rec.get("level"),
        by=rec.get("by"),
    )


def read_ledger(dataset_path: str | Path) -> list[dict[str, Any]]:
    """Every ledger record of a dataset, oldest first ([] when it has none)."""
    path = ledger_path(dataset_path)
    if not path.exists():
        return []
    return _parse(path.read_text(encoding="utf-8").splitlines(), path)


def ledger_count(dataset_path: str | Path) -> int:
    """How many comparisons the dataset has seen so far."""
    return len(read_ledger(dataset_path))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[IO[str]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield fh
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def append_ledger(
    dataset_path: str | Path,
    record: dict[str, Any] | Callable[[int], dict[str, Any]],
    *,
    key: str | None = None,
) -> dict[str, Any]:
    """Append one comparison; returns the stored record with its number ``t`` (1-based) set.

    ``record`` is the dict to store, or a function of ``t`` that builds it (called while the
    ledger is locked, so corrections that depend on ``t`` are stored consistently). ``t`` and
    ``schema`` are filled in here, and ``when`` (UTC) if absent. With ``key`` (see
    `comparison_key`), a comparison already in the ledger is not appended again: its stored
    record is returned (``record`` is not called). The returned dict says which happened in
    ``"repeat"`` (not stored).
    """
    path = ledger_path(dataset_path)
    with _locked(path) as fh:
        fh.seek(0)
        existing = _parse(fh.read().splitlines(), path)
        if key is not None:
            for rec in existing:
                if _record_key(rec) == key:
                    return {**rec, "repeat": True}
        t = len(existing) + 1
        body = record(t) if callable(record) else dict(record)
        stored = {"schema": LEDGER_SCHEMA, **body, "t": t}
        if key is not None:
            stored["key"] = key
        stored.setdefault("when", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        line = json.dumps(stored, ensure_ascii=False, sort_keys=True, default=str) + "\n"
        fh.seek(0, os.SEEK_END)
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    return {**stored, "repeat": False}
