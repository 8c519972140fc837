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

The ledger is append-only. A comparison found to be wrong (a run made on another index, a dataset
file mixed up) is *voided* (`void_comparison`, ``assay ledger void N --reason ...``): a second
line records the void, its reason and when; the comparison's own line stays as it was. A voided
comparison keeps its number and still counts toward ``t``: the look was taken and its share of
alpha (``alpha / (t (t + 1))``) was spent when it was tested, so later comparisons are corrected
exactly as before; the void says its result is not to be relied on (``assay ledger show`` lists
it with its reason, and the same comparison seen again says it was voided). `ledger_history`
is the ledger as a report.

Appending takes an exclusive ``flock`` on the ledger while it counts the existing lines and writes
the new one, so two concurrent gates get distinct, consecutive numbers. One line is written with a
single ``write`` on a file opened for append, so a crash leaves either the whole line or nothing;
a torn or hand-edited line is reported with its line number.

`record_in_ledger` records a completed comparison and applies the correction to it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._io import json_loads, jsonl_identity, sha256_file
from assay.compare import ledger_index as index
from assay.compare.ledger_index import locked
from assay.errors import DataError, Problem, UsageError
from assay.report import ReportMixin, Tabular
from assay.stats.multiple import ledger_factor

if TYPE_CHECKING:
    from assay.compare.comparison import Comparison
    from assay.compare.options import CompareOptions
    from assay.dataset import Dataset
    from assay.runs import Run

__all__ = [
    "LEDGER_SCHEMA",
    "LedgerHistory",
    "append_ledger",
    "comparison_key",
    "ledger_count",
    "ledger_history",
    "ledger_path",
    "read_ledger",
    "record_in_ledger",
    "void_comparison",
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
            obj = json_loads(raw)
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
    tiers: Iterable[str] | None = None,
) -> str:
    """What makes two comparisons the same one: dataset version and hash, the set of runs,
    the set of metrics, k, level and the grouping of the rows ``by`` (seeds and resample counts
    do not change the tests), and the label ``tiers`` whose entries were compared. The default
    grouping (``category``, or None) and no tiers (an untiered dataset, used whole) are left out
    of the hashed payload, so lines written before either was part of the key keep matching."""
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
    if tiers is not None:
        payload["tiers"] = sorted(tiers)
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


def _runs_key(rec: Mapping[str, Any]) -> str | None:
    """A stored comparison's key without its dataset: the runs, metrics, k, level, grouping
    and tiers (`comparison_key`'s other fields), for a repeat on another spelling of it."""
    if "base_run" not in rec or "metrics" not in rec:
        return None
    return comparison_key(
        dataset_version=None,
        dataset_hash=None,
        runs=rec.get("run_identities") or [rec.get("base_run"), rec.get("cand_run")],
        metrics=rec.get("metrics") or [],
        k=rec.get("k"),
        level=rec.get("level"),
        by=rec.get("by"),
        tiers=rec.get("tiers"),
    )


def _count(records: list[dict[str, Any]]) -> int:
    return _offset(records) + len(_comparisons(records))


def _repeat(
    records: list[dict[str, Any]], key: str, same: tuple[set[str], str] | None
) -> dict[str, Any] | None:
    """The comparison of ``records`` that a new one with ``key`` repeats (its void line in
    ``"voided"``), or None. ``same``: the file hashes that spell the dataset's content and the
    new comparison's key without its dataset (`_runs_key`): a comparison made on any of them
    with that key is a repeat too."""
    voids = _voids(records)
    for rec in _comparisons(records):
        if _record_key(rec) == key or (
            same is not None and rec.get("dataset_hash") in same[0] and _runs_key(rec) == same[1]
        ):
            void = voids.get(int(rec.get("t", 0)))
            return {**rec, "repeat": True, **({"voided": void} if void else {})}
    return None


def _is_void(rec: Mapping[str, Any]) -> bool:
    """A line that voids an earlier comparison (not a comparison itself)."""
    return "void" in rec


def _is_continuation(rec: Mapping[str, Any]) -> bool:
    """The first line of a copy's ledger: the comparisons its original had seen."""
    return "continues" in rec


def _comparisons(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if not _is_void(r) and not _is_continuation(r)]


def _offset(records: Iterable[dict[str, Any]]) -> int:
    """Comparisons seen under another path before this ledger began (a renamed or copied
    dataset continues its original's count)."""
    return sum(int(r.get("comparisons", 0)) for r in records if _is_continuation(r))


def _others(
    content_hash: str, own: Path, identity: str | None = None
) -> list[tuple[Path, list[dict[str, Any]]]]:
    """The other ledgers of datasets with this content (a copy's original), with their lines."""
    out = []
    for other in index.indexed(content_hash, identity):
        if other.resolve() == own.resolve() or not other.exists():
            continue
        with contextlib.suppress(DataError, OSError):
            out.append((other, _parse(other.read_text(encoding="utf-8").splitlines(), other)))
    return out


def _voids(records: Iterable[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Comparison number -> the line that voided it (the first, when voided twice)."""
    out: dict[int, dict[str, Any]] = {}
    for r in records:
        if _is_void(r) and isinstance(r.get("void"), int):
            out.setdefault(int(r["void"]), r)
    return out


def read_ledger(dataset_path: str | Path) -> list[dict[str, Any]]:
    """Every ledger line of a dataset, oldest first ([] when it has none): the comparisons, and
    the lines voiding some of them (``{"void": t, "reason": ...}``)."""
    path = ledger_path(dataset_path)
    if not path.exists():
        return []
    return _parse(path.read_text(encoding="utf-8").splitlines(), path)


def ledger_count(dataset_path: str | Path) -> int:
    """How many comparisons the dataset has seen so far (voided ones included: they count; a
    renamed, copied or re-spelt dataset, before and after its first comparison, counts from
    its original's count)."""
    lines = read_ledger(dataset_path)
    if lines or not index.ledger_index_path().exists() or not Path(dataset_path).is_file():
        return _count(lines)
    content_hash = sha256_file(dataset_path)
    identity = index.identity_of(content_hash, lambda: jsonl_identity(dataset_path))
    return max((_count(o[1]) for o in _others(content_hash, ledger_path(dataset_path), identity)),
               default=0)  # fmt: skip


def append_ledger(
    dataset_path: str | Path,
    record: dict[str, Any] | Callable[[int], dict[str, Any]],
    *,
    key: str | None = None,
    content_hash: str | None = None,
    identity: Callable[[], str] | None = None,
    runs_key: str | None = None,
) -> dict[str, Any]:
    """Append one comparison; returns the stored record with its number ``t`` (1-based) set.

    ``content_hash`` (the dataset file's hash) and ``identity`` (a function giving its content
    identity, `assay._io.jsonl_identity`: called only for content the index has not seen): the
    ledger is indexed by both (`assay.compare.ledger_index`), so a renamed or copied dataset
    continues its original's count, and so does a copy re-spelt (CRLF, a BOM, keys reordered,
    NFD text, ``60.0`` for ``60``): a new ledger whose content another ledger has seen starts
    with a line saying so (``{"continues": path, "comparisons": N}``). ``runs_key`` (the key
    without the dataset, `_runs_key`): a comparison with it that this or that ledger holds,
    made on any spelling of the content, is a repeat with its number.

    ``record`` is the dict to store, or a function of ``t`` that builds it (called while the
    ledger is locked, so corrections that depend on ``t`` are stored consistently). ``t`` and
    ``schema`` are filled in here, and ``when`` (UTC) if absent. With ``key`` (see
    `comparison_key`), a comparison already in the ledger is not appended again: its stored
    record is returned (``record`` is not called). The returned dict says which happened in
    ``"repeat"`` (not stored), and for a comparison since voided holds the void line in
    ``"voided"``.
    """
    path = ledger_path(dataset_path)
    if identity is not None:
        identity = functools.cache(identity)
    with locked(path) as fh:
        fh.seek(0)
        lines = _parse(fh.read().splitlines(), path)
        found = None if key is None else _repeat(lines, key, None)
        if found is not None:
            return found
        if content_hash is not None:
            ident = None if identity is None else index.identity_of(content_hash, identity)
            others = _others(content_hash, path, ident)
            if key is not None and runs_key is not None:  # a repeat on another spelling or copy
                hashes = {content_hash} | (set() if ident is None else index.spellings(ident))
                for where, recs in [(path, lines), *others]:
                    found = _repeat(recs, key, (hashes, runs_key))
                    if found is not None:
                        return found | ({} if where == path else {"continues": str(where)})
            if others and not lines:
                other, theirs = max(others, key=lambda o: _count(o[1]))
                if seen := _count(theirs):
                    head = {"schema": LEDGER_SCHEMA, "continues": str(other), "comparisons": seen,
                            "content_hash": content_hash}  # fmt: skip
                    lines = [head]
                    fh.seek(0, os.SEEK_END)
                    fh.write(json.dumps(head, sort_keys=True) + "\n")
            if ident is not None:
                identity = functools.partial(str, ident)
        t = _count(lines) + 1
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
    if content_hash is not None:
        index.register(content_hash, path, identity)
    return {**stored, "repeat": False}


def void_comparison(dataset_path: str | Path, t: int, *, reason: str) -> dict[str, Any]:
    """Void comparison ``t`` of the dataset's ledger: append a line saying so, with ``reason``.

    The comparison's own line stays; it keeps its number and still counts toward later
    corrections (see the module docs). Refused (`UsageError`) for a number the ledger does not
    have, a comparison already voided, or an empty reason. Returns the void line."""
    _dataset_file(dataset_path)
    reason = " ".join(str(reason).split())
    if not reason:
        raise UsageError("--reason is required: say why the comparison is void")
    path = ledger_path(dataset_path)
    if not path.exists():
        raise UsageError(f"{path}: no ledger (no comparison was recorded against this dataset)")
    with locked(path) as fh:
        fh.seek(0)
        lines = _parse(fh.read().splitlines(), path)
        numbers = [int(r["t"]) for r in _comparisons(lines) if isinstance(r.get("t"), int)]
        if t not in numbers:
            have = f"1 to {max(numbers)}" if numbers else "none"
            raise UsageError(f"{path}: no comparison #{t} (the ledger has {have})")
        done = _voids(lines).get(t)
        if done is not None:
            raise UsageError(
                f"comparison #{t} was already voided on {done.get('when')}: {done.get('reason')}"
            )
        stored = {
            "schema": LEDGER_SCHEMA,
            "void": t,
            "reason": reason,
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        fh.seek(0, os.SEEK_END)
        fh.write(json.dumps(stored, ensure_ascii=False, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return stored


def _smallest(pvalues: Any) -> tuple[float | None, float | None, str]:
    """The smallest Holm p of a stored comparison, its ledger-corrected p, and where it is."""
    best: tuple[float | None, float | None, str] = (None, None, "")
    if not isinstance(pvalues, Mapping):
        return best
    for row, metrics in pvalues.items():
        if not isinstance(metrics, Mapping):
            continue
        for metric, ps in metrics.items():
            holm = ps.get("holm") if isinstance(ps, Mapping) else None
            if isinstance(holm, (int, float)) and (best[0] is None or holm < best[0]):
                led = ps.get("ledger")
                best = (
                    float(holm),
                    float(led) if isinstance(led, (int, float)) else None,
                    f"{row} {metric}",
                )
    return best


class LedgerHistory(ReportMixin):
    """A dataset's comparison ledger as a report: one row per comparison, voided ones marked."""

    def __init__(self, path: str, records: list[dict[str, Any]]):
        self.path = path
        self.records = records

    @property
    def comparisons(self) -> list[dict[str, Any]]:
        return _comparisons(self.records)

    @property
    def voids(self) -> dict[int, dict[str, Any]]:
        return _voids(self.records)

    def to_dict(self) -> dict[str, Any]:
        voids = self.voids
        rows = []
        for rec in self.comparisons:
            t = rec.get("t")
            holm, led, where = _smallest(rec.get("pvalues"))
            void = voids.get(int(t)) if isinstance(t, int) else None
            rows.append(
                {
                    "t": t,
                    "when": rec.get("when"),
                    "command": rec.get("command"),
                    "dataset_version": rec.get("dataset_version"),
                    "base_run": rec.get("base_run"),
                    "cand_run": rec.get("cand_run"),
                    "metrics": rec.get("metrics"),
                    "k": rec.get("k"),
                    "level": rec.get("level"),
                    "factor": (rec.get("correction") or {}).get("factor"),
                    "smallest_p_holm": holm,
                    "its_p_ledger": led,
                    "smallest_at": where,
                    "void": None
                    if void is None
                    else {"reason": void.get("reason"), "when": void.get("when")},
                }
            )
        return {
            "ledger": self.path,
            "comparisons": len(rows),
            "voided": sum(r["void"] is not None for r in rows),
            "counting": "a voided comparison keeps its number and still counts toward t",
            "rows": rows,
        }

    def tabular(self) -> Tabular:
        d = self.to_dict()
        body = []
        for r in d["rows"]:
            holm = r["smallest_p_holm"]
            led = r["its_p_ledger"]
            body.append(
                [
                    str(r["t"]),
                    str(r["when"] or "-"),
                    str(r["command"] or "-"),
                    f"{str(r['base_run'])[:8]} -> {str(r['cand_run'])[:8]}",
                    ",".join(r["metrics"] or []),
                    "-" if holm is None else f"{holm:.3g} ({r['smallest_at']})",
                    "-" if led is None else f"{led:.3g}",
                    "" if r["void"] is None else f"VOID: {r['void']['reason']}",
                ]
            )
        n, v = d["comparisons"], d["voided"]
        return Tabular(
            title=f"Comparison ledger {self.path}: {n} comparison(s), {v} voided",
            header=[
                "#",
                "when",
                "command",
                "runs",
                "metrics",
                "smallest p Holm",
                "p ledger",
                "status",
            ],
            rows=body,
            footer=[
                "A voided comparison keeps its number and still counts toward t (its look was "
                "taken and its share of alpha spent): later corrections are unchanged; its result "
                "is not to be relied on (docs/statistics.md)."
            ],
            emphasis=set(),
        )


def _dataset_file(dataset_path: str | Path) -> None:
    p = Path(dataset_path)
    if not p.is_file():
        why = "is a directory, not a dataset file" if p.is_dir() else "file not found"
        raise DataError(why, file=p)


def ledger_history(dataset_path: str | Path) -> LedgerHistory:
    """The dataset's comparison ledger as a report (`assay ledger show`)."""
    _dataset_file(dataset_path)
    return LedgerHistory(str(ledger_path(dataset_path)), read_ledger(dataset_path))


def record_in_ledger(
    cmp: Comparison,
    dataset_path: str | Path,
    *,
    command: str,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Record the comparison in the dataset's ledger and apply the history correction to it.

    A comparison already in the ledger (the same dataset version and hash, runs, metrics, k,
    level and grouping ``cmp.by``: see `assay.compare.ledger.comparison_key`; a regrouped view is
    a new set of hypotheses and a new comparison) keeps its number and is not appended again;
    the returned record's ``"repeat"`` says which happened. ``extra`` may carry
    ``dataset_hash``, ``level`` and ``tiers``, which are part of the key, and ``run_identities`` (each
    run's `assay.runs.Run.identity`, which leaves measured wall time out) to key the runs by
    what they returned rather than by their file hashes.
    """
    from assay._version import __version__

    more = dict(extra or {})
    parts: dict[str, Any] = {
        "runs": more.get("run_identities") or [cmp.base_run, cmp.cand_run],
        "metrics": cmp.metrics,
        "k": cmp.k,
        "level": more.get("level"),
        "by": cmp.by,
        "tiers": more.get("tiers"),
    }
    key = comparison_key(
        dataset_version=cmp.dataset_version, dataset_hash=more.get("dataset_hash"), **parts
    )

    def build(t: int) -> dict[str, Any]:
        cmp.apply_ledger(t)
        rec: dict[str, Any] = {
            "command": command,
            "dataset_version": cmp.dataset_version,
            "base_run": cmp.base_run,
            "cand_run": cmp.cand_run,
            "k": cmp.k,
            "metrics": cmp.metrics,
            "by": cmp.by,
            "tests": sorted(
                {name for row in cmp.rows for mc in row.metrics.values() for name in mc.tests}
            ),
            "seed": cmp.seed,
            "pvalues": cmp.pvalues(),
            "correction": {"method": "alpha-spending 1/(t(t+1))", "factor": ledger_factor(t)},
            "assay_version": __version__,
        }
        if cmp.tables:  # which table each run was read against, and whether it is its own
            rec["chunk_tables"] = cmp.tables
        return rec | more

    stored = append_ledger(
        dataset_path,
        build,
        key=key,
        content_hash=more.get("dataset_hash"),
        identity=lambda: jsonl_identity(dataset_path),
        runs_key=comparison_key(dataset_version=None, dataset_hash=None, **parts),
    )
    if stored["repeat"]:
        cmp.apply_ledger(int(stored["t"]), repeat=True)
    void = stored.get("voided")
    if void:
        cmp.notes.append(
            f"Comparison #{stored['t']} was voided in the ledger on {void.get('when')}: "
            f"{void.get('reason')} (assay ledger show)."
        )
    return stored


def _record_comparison(
    cmp: Comparison,
    ds: Dataset,
    b: Run,
    c: Run,
    dataset: str | Path,
    options: CompareOptions,
) -> None:
    """The ledger line of a completed comparison.

    (The use of a sealed fresh sample was recorded when the comparison completed, whatever
    ``options.record`` says: a look at a sealed sample is a look.) The ledger records the
    comparison under ``options.command`` unless ``options.record`` is False (the note names the
    switch as the caller's user wrote it, ``options.record_switch``) or both runs are the same
    run (a run compared with itself tests nothing).
    """
    if not options.record:
        cmp.notes.append(
            f"Not recorded in the ledger ({options.record_switch}): an exploratory look, its p-values "
            "not corrected for the dataset's history."
        )
        return
    if b.identity == c.identity:
        cmp.notes.append("Not recorded in the ledger: both runs returned the same results.")
        return
    record_in_ledger(
        cmp,
        dataset,
        command=options.command,
        extra={
            "dataset_hash": ds.content_hash,
            "level": options.level,
            "run_identities": [b.identity, c.identity],
        }
        | ({} if ds.tiers is None or ds.tiers.untiered else {"tiers": list(ds.tiers.tiers)}),
    )
