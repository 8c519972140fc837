"""Parts of a results bundle (`assay.explorer.bundle`): how the dataset, a run and an entry are
named, how runs are compared, and the canonical JSON that gives the same bytes for the same
inputs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.report import json_ready

if TYPE_CHECKING:
    from assay.dataset import Dataset, Entry
    from assay.judge.judged import JudgedAnswers
    from assay.runs import Run
    from assay.stats.clusters import Clustering

__all__ = [
    "canonical_json",
    "check_values",
    "compared_runs",
    "dataset_head",
    "entry_head",
    "file_names",
    "judged_of",
    "run_head",
    "system_spec",
]


def canonical_json(obj: Any, *, indent: int | None = 2) -> str:
    """JSON with sorted keys and no NaN: the same bundle always has the same bytes."""
    return json.dumps(json_ready(obj), indent=indent, sort_keys=True, allow_nan=False)


def compared_runs(
    computed: Mapping[str, Any],
    metrics: Sequence[str],
    notes: list[str],
    *,
    seed: int,
    n_resamples: int,
    n_permutations: int,
    clusters: Clustering | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(comparisons, leaderboard) of every later run's series against the first's (run name ->
    `RunSeries`): one Holm family across every candidate; the leaderboard with three runs or
    more. Adds the note that an export records nothing in the ledger."""
    from assay.compare.leaderboard import leaderboard_from_series

    names = list(computed)
    board = leaderboard_from_series(
        computed[names[0]],
        [computed[n] for n in names[1:]],
        names=names[1:],
        base_name=names[0],
        metrics=list(metrics),
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        clusters=clusters,
    )
    comparisons = {n: cmp.to_dict() for n, cmp in zip(board.names, board.comparisons, strict=True)}
    leaderboard = None
    if len(names) > 2:
        leaderboard = board.to_dict()
        leaderboard.pop("comparisons")
    notes.append(
        "Comparisons are not recorded in the dataset's ledger by an export; their p-values "
        "are Holm-adjusted across every candidate, not corrected for the dataset's history."
    )
    return comparisons, leaderboard


def entry_head(entry: Entry) -> dict[str, Any]:
    """What an entry row of the bundle says of the entry itself (its question, behaviour, who
    asks), before its gold and runs."""
    return {
        "id": entry.id,
        "query": entry.query,
        "category": entry.category,
        "as_of": entry.as_of.isoformat() if entry.as_of else None,
        "answerable": entry.answerable,
        "expected_behavior": None
        if entry.expected_behavior is None
        else str(entry.expected_behavior.value),
        "reference_answer": entry.reference_answer,
        "key_facts": [kf.fact for kf in entry.key_facts],
        "principal": None if entry.principal is None else entry.principal.model_dump(mode="json"),
    }


def dataset_head(dataset: Dataset) -> dict[str, Any]:
    """The dataset as the bundle names it: its file name (no folder), version and hash."""
    return {
        "name": Path(dataset.path).name if dataset.path else None,
        "version": dataset.version,
        "sha256": dataset.content_hash,
        "n_entries": len(dataset),
        "categories": dataset.categories(),
    }


def run_head(name: str, run: Run, chunks_version: str | None) -> dict[str, Any]:
    """A run as the bundle names it: its hash, file name, system and chunk table; and, for a
    run over conversations, what it told the system of earlier turns (``history``: ``own``,
    ``gold`` or ``none``, as `assay run --history` records it)."""
    head = {
        "name": name,
        "hash": run.hash,
        "file": Path(str(run.path)).name if run.path else None,
        "system": system_spec(run.meta),
        "system_hash": run.meta.get("system_hash"),
        "corpus_hash": run.meta.get("corpus_hash"),
        "chunks": chunks_version,
    }
    history = run.meta.get("history")
    if history is not None:  # recorded only for runs over conversations
        head["history"] = str(history)
    return head


def file_names(obj: Any) -> Any:
    """``path`` fields reduced to file names: a bundle names no folder of the machine it was
    made on (and so has the same bytes wherever it is made)."""
    if isinstance(obj, dict):
        return {
            k: Path(v).name if k == "path" and isinstance(v, str) else file_names(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [file_names(v) for v in obj]
    return obj


def system_spec(meta: Mapping[str, Any]) -> str | None:
    system = meta.get("system")
    if isinstance(system, dict):
        system = system.get("spec")
    return None if system is None else str(system)


def check_values(
    row: Mapping[str, Any] | None, keep: Sequence[str] | None = None
) -> dict[str, Any] | None:
    """An entry's check row as its page shows it: every value (or those named in ``keep``)."""
    if row is None:
        return None
    if keep is not None:
        return {k: row.get(k) for k in keep}
    return {k: v for k, v in row.items() if k not in ("id", "category")}


def judged_of(
    judged: Mapping[str, JudgedAnswers] | None, name: str, eid: str
) -> dict[str, Any] | None:
    if not judged or name not in judged:
        return None
    for row in judged[name].rows:
        if row.id == eid:
            return {"verdicts": dict(row.verdicts), "critiques": dict(row.critiques)}
    return None
