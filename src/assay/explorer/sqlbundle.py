"""The bundle of a dataset of SQL questions only (`assay synth warehouse` output and its runs).

Such a dataset has no evidence to retrieve and needs no chunk table: each run is rated by the
gold SQL checks (`assay.sql.checks`, the ones `assay check` runs on SQL questions) per category
with their 95% intervals, and these rates are the bundle's scores. Comparisons pair the runs'
check series (default: exec_match and test_suite_match; Holm across every candidate, as with
retrieval metrics). Every entry shows its gold queries and result and, per run, the system's
query, its result and the rows only in either (`assay.explorer.sqlview`), with its check values.

The bundle has the same shape as a retrieval bundle (``"kind": "sql"``, no chunks, no
attribution: there is no pipeline stage to lose evidence in), so the same site renders it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.errors import DataError, Problem, UsageError

if TYPE_CHECKING:
    from assay.dataset.io import Dataset
    from assay.judge.judged import JudgedAnswers
    from assay.judge.report import CheckReport
    from assay.runs import Run

__all__ = ["SQL_HEADLINE", "SQL_PAIR", "is_sql_only", "sql_bundle"]

SQL_PAIR = ("exec_match", "test_suite_match")
"""What a SQL bundle compares by default."""

SQL_HEADLINE = "exec_match"
"""The score a SQL bundle's summary shows per run."""


def is_sql_only(dataset: Dataset) -> bool:
    """Every entry carries gold SQL: the bundle is made without chunks (module docs)."""
    return bool(dataset.entries) and all(e.sql is not None for e in dataset.entries)


def _scores(report: CheckReport, categories: Mapping[str, int]) -> dict[str, Any]:
    """The report's rates as a score table: per row (category, and overall) each check's rate,
    its interval as ``<check>_ci`` and ``n``, the entries in the row."""

    def cell(row: str) -> dict[str, Any]:
        out: dict[str, Any] = {"n": categories.get(row, 0)}
        for name, rc in report.rates.get(row, {}).items():
            out[name] = rc.rate
            out[f"{name}_ci"] = rc.interval.to_dict()
        return out

    cats = sorted(c for c in report.rates if c != "overall")
    return {"overall": cell("overall"), "categories": {c: cell(c) for c in cats}}


def sql_bundle(
    dataset: Dataset,
    runs: Mapping[str, Run],
    *,
    judged: Mapping[str, JudgedAnswers] | None,
    ladder: Mapping[str, Any] | None,
    k: int,
    seed: int,
    n_resamples: int,
    n_permutations: int,
    compared: Sequence[str] | None,
    sql_timeout: float,
    sql_max_rows: int,
    notes: list[str],
) -> dict[str, Any]:
    """The data of the bundle of a SQL-only dataset (module docs), but its schema; ``notes``
    are carried into it."""
    from assay._version import __version__
    from assay.compare.series import RunSeries, series_from_checks, series_names
    from assay.explorer._rows import (
        check_values,
        compared_runs,
        dataset_head,
        entry_head,
        file_names,
        judged_of,
        run_head,
    )
    from assay.explorer.sqlview import SqlViews
    from assay.judge.checks import check_run, default_checks_for

    names = list(runs)
    wanted = series_names(compared or SQL_PAIR, k=k)
    metrics = [i.name for i in wanted if i.source != "check"]
    if metrics:
        raise UsageError(
            f"{', '.join(metrics)}: every entry of {dataset.path or 'the dataset'} is a SQL "
            "question, with no evidence to retrieve; compare checks such as " + ", ".join(SQL_PAIR)
        )
    checks = list(dict.fromkeys([*default_checks_for(dataset), *(i.name for i in wanted)]))
    reports = {
        n: check_run(dataset, run, checks=checks, rng=np.random.default_rng(seed))
        for n, run in runs.items()
    }
    ids = [e.id for e in dataset.entries]
    groups = {e.id: e.category for e in dataset.entries}
    per_category: dict[str, int] = {"overall": len(ids)}
    for c in groups.values():
        per_category[c] = per_category.get(c, 0) + 1
    rows = {n: {str(r["id"]): r for r in rep.to_dict()["rows"]} for n, rep in reports.items()}

    comparisons: dict[str, Any] = {}
    leaderboard: dict[str, Any] | None = None
    if len(names) > 1:
        computed = {
            n: RunSeries(
                series_from_checks(list(rows[n].values()), ids=ids, infos=wanted),
                groups,
                run_hash=runs[n].hash or None,
                run_path=runs[n].path,
                dataset_version=dataset.version,
            )
            for n in names
        }
        comparisons, leaderboard = compared_runs(
            computed,
            [i.name for i in wanted],
            notes,
            seed=seed,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
        )

    views = SqlViews(
        Path(dataset.path).parent if dataset.path else None,
        timeout=sql_timeout,
        max_rows=sql_max_rows,
    )
    entries = []
    for entry in dataset.entries:
        per_run: dict[str, Any] = {}
        for name, run in runs.items():
            row = run.row(entry.id) if entry.id in run else None
            found = check_values(rows[name].get(entry.id))
            values = None if found is None else {c: found.get(c) for c in [*checks, "notes"]}
            view = views.run(entry, row)
            status = "unscored" if view is None else str(view["status"])
            if values is not None and values.get("test_suite_match") is False:
                status = "fail"  # the same rows here, told apart by a variant of the database
            per_run[name] = {
                "status": status,
                "metrics": {},
                "retrieved": [],
                "best_path": None,
                "missing_pieces": [],
                "answer": row.answer if row else None,
                "citations": list(row.citations or []) if row else [],
                "checks": values,
                "judge": judged_of(judged, name, entry.id),
                "stage": None,
                "group": None,
                "in_run": row is not None,
                "sql": view,
            }
        entries.append(entry_head(entry) | {"paths": [], "sql": views.gold(entry), "runs": per_run})
    if views.missing_extra is not None:
        notes.append(views.missing_extra)
    checks_out = {}
    for n, rep in reports.items():
        d = rep.to_dict()
        d.pop("rows")
        checks_out[n] = file_names(d)
        notes.extend(f"{n}: {w}" for w in rep.warnings)
    data = {
        "kind": "sql",
        "headline": SQL_HEADLINE,
        "assay_version": __version__,
        "k": k,
        "level": "chunk",
        "seed": seed,
        "n_resamples": n_resamples,
        "dataset": dataset_head(dataset),
        "chunks": None,
        "runs": [run_head(n, runs[n], None) for n in names],
        "baseline": names[0],
        "scores": {n: _scores(reports[n], per_category) for n in names},
        "comparisons": comparisons,
        "leaderboard": leaderboard,
        "checks": checks_out,
        "attribution": {},
        "ladder": dict(ladder) if ladder is not None else None,
        "entries": entries,
        "chunk_text": {},
        "run_chunk_text": {},
        "notes": notes,
        "fresh": None,
    }
    if not entries:
        raise DataError(Problem(dataset.path or "<dataset>", None, None, "no entry to export"))
    return data
