"""A run is bound to its dataset: rows whose entry changed since the run was made are found.

Every row `assay run` writes carries ``entry_fp`` (`assay.dataset.fingerprint.entry_fingerprint`:
the normalised query and `as_of` the system was asked) and ``dataset_version``. Scoring,
comparing or gating such a row against an entry whose query or `as_of` changed since would score
an answer to another question: `check_binding` refuses it with the list of entries
(`ChangedEntriesError`, a `DataError`, exit 2), or with ``allow_changed=True``
(``--allow-changed-entries``) returns the list so the result can say it proceeded anyway.

Rows without a fingerprint (older runs, TREC runs, runs from other tools) are checked on what
they do carry: a row's `as_of` that differs from its entry's is a change too.

A dataset's manifest may name the index its gold was labelled on (``index_version``); a run
records the index it was made on (``corpus_hash``, else its chunk table's hash). `index_mismatch`
says when the two differ, so a score can say it read the run against gold made on another index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.dataset import Dataset, Entry, entry_fingerprint, legacy_entry_fingerprint
from assay.errors import DataError, Problem
from assay.runs.model import Run

__all__ = [
    "ChangedEntriesError",
    "ChangedEntry",
    "changed_entries",
    "changed_note",
    "check_binding",
    "index_mismatch",
    "run_index",
]


@dataclass(frozen=True, slots=True)
class ChangedEntry:
    """An entry whose question changed since a run's row for it was made."""

    id: str
    field: str  # "query" or "as_of"
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "field": self.field, "message": self.message}


class ChangedEntriesError(DataError):
    """Rows of a run answer entries whose query or `as_of` changed since the run was made."""


def changed_entries(dataset: Dataset | Sequence[Entry], run: Run) -> list[ChangedEntry]:
    """Every entry of `dataset` whose row in `run` was made for another query or `as_of`."""
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    out: list[ChangedEntry] = []
    index, details = run.index, run.details
    if not any(details):  # rows with nothing but hits (a TREC run, a bare JSONL): nothing to check
        return out
    made_on = run.meta.get("dataset_version")
    for e in entries:
        i = index.get(e.id)
        if i is None:
            continue
        d = details[i]
        fp = d.get("entry_fp")
        now_as_of = e.as_of.isoformat() if e.as_of is not None else None
        row_as_of = d.get("as_of")
        if "as_of" in d and row_as_of != now_as_of:
            what = "as_of"
            text = (
                f"as_of was {row_as_of or 'none'} when the run was made, now {now_as_of or 'none'}"
            )
        elif isinstance(fp, str) and fp not in (entry_fingerprint(e), legacy_entry_fingerprint(e)):
            what = "query"
            text = "the query changed since the run was made"
        else:
            continue
        version = d.get("dataset_version", made_on)
        if version is not None:
            text += f" (run made on dataset {version})"
        out.append(ChangedEntry(e.id, what, text))
    return out


def check_binding(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    allow_changed: bool = False,
    file: str | None = None,
) -> list[ChangedEntry]:
    """Refuse (`ChangedEntriesError`, every changed entry named FILE:LINE) a run whose rows answer
    entries since changed; with `allow_changed`, return them (the caller says it proceeded)."""
    changed = changed_entries(dataset, run)
    if changed and not allow_changed:
        lines = dataset.lines if isinstance(dataset, Dataset) else {}
        where = file or (dataset.path if isinstance(dataset, Dataset) else None) or "<dataset>"
        name = run.path or "the run"
        raise ChangedEntriesError(
            [
                Problem(
                    where,
                    lines.get(c.id),
                    c.field,
                    f"entry {c.id}: {c.message}; {name} answered another question. Rerun the "
                    "system, or pass --allow-changed-entries to score the old rows anyway",
                )
                for c in changed
            ]
        )
    return changed


def changed_note(ids: Sequence[str], run: str | None = None) -> str:
    """The line a result prints when it scored changed entries anyway."""
    n = len(ids)
    shown = ", ".join(ids[:10]) + (f" (+{n - 10} more)" if n > 10 else "")
    return (
        f"{n} {'entry' if n == 1 else 'entries'} changed since {run or 'the run'} was made and "
        f"{'was' if n == 1 else 'were'} scored anyway (--allow-changed-entries): {shown}"
    )


def run_index(run: Run) -> str | None:
    """The index a run records it was made on: its corpus hash, else its chunk table's hash."""
    corpus = run.meta.get("corpus_hash")
    if corpus:
        return str(corpus)
    chunks = run.meta.get("chunks")
    digest = chunks.get("hash") if isinstance(chunks, dict) else None
    return str(digest) if digest else None


def _same_index(a: str, b: str) -> bool:
    """Equal, or the same hash written at two lengths (a 16-digit version of a full SHA-256)."""
    a, b = a.strip().lower(), b.strip().lower()
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    hexdigits = set("0123456789abcdef")
    return len(short) >= 12 and set(a + b) <= hexdigits and long.startswith(short)


def index_mismatch(dataset: Dataset | Sequence[Entry], run: Run) -> dict[str, str] | None:
    """``{"run", "dataset", "message"}`` when `run` was made on another index than the one the
    dataset's manifest names (``index_version``); None when they agree or either does not say."""
    bound = dataset.manifest.get("index_version") if isinstance(dataset, Dataset) else None
    made_on = run_index(run)
    if not bound or made_on is None or _same_index(str(bound), made_on):
        return None
    return {
        "run": made_on,
        "dataset": str(bound),
        "message": f"{run.path or 'the run'} was made on index {made_on}, but the dataset is "
        f"bound to index {bound} (its manifest's index_version): its gold was labelled on "
        "another index, so misses may be gold the run's index does not hold",
    }
