"""Sweeps: one run of the filings pipeline per configuration of a grid, each scored, and a
leaderboard with every configuration compared to the baseline.

A grid file (JSON, or YAML with the `yaml` extra) maps settings to lists of values; the sweep
runs their Cartesian product, in file order::

    {"grid": {"mode": ["bm25", "hybrid"], "k": [10, 20], "pool": [50, 100],
              "rerank": [false, true]},
     "baseline": {"mode": "bm25", "k": 10, "pool": 50, "rerank": false}}

`mode` is the pipeline mode, `k` the hits asked for per query; every other key is a field of
`assay.systems.filings.RetrievalConfig` (`pool`, `rerank`, `rrf_k`, `filters`, ...) that
overrides the mode's default. `baseline` (default: the first configuration) must be one of the
configurations.

Each configuration is one task of the executor (`assay.executors`: `local`, or Ray tasks with
`ray` / `ray:ADDRESS`): the task builds the pipeline over the corpus and runs it over the dataset
with the local executor, and its rows return to the driver, which writes every run file, scores
it and compares it with the baseline through `assay.compare.compare_series` (paired tests per
category, on any registered metric or answer check named in ``metrics``). The p-values of the candidates against the baseline are then Holm-corrected across
the candidates, metric by metric, since a sweep is a family of comparisons. Sweep tasks do not
use the request cache (each configuration is computed once per sweep).

Questions on one document are not independent: ``cluster`` (default ``auto``: by evidence
document when the dataset has more than one entry per document, as `assay compare` does;
`assay.dataset.clustering`) makes each p-value that of a cluster-level test, and the
leaderboard's footer says how entries were clustered.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import json_loads, write_text_atomic
from assay.errors import DataError, UsageError
from assay.report import ReportMixin, Tabular
from assay.stats.clusters import ClusterSummary

__all__ = ["SweepReport", "SweepRow", "load_grid", "run_sweep"]

_RUN_KEYS = {"mode", "k"}


def _config_fields() -> set[str]:
    from assay.systems.filings import RetrievalConfig

    return {f.name for f in dataclasses.fields(RetrievalConfig)} - {"ranker"}


def _name(config: dict[str, Any]) -> str:
    return ",".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in config.items())


def load_grid(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The configurations of a grid file, in order, and the baseline configuration."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise DataError("file not found", file=where)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise UsageError(
                f"{path}: a YAML grid needs PyYAML: pip install 'assay[yaml]' (or write it as JSON)"
            ) from None
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = None if mark is None else mark.line + 1
            raise DataError(f"bad YAML: {exc}", file=where, line=line) from None
    else:
        doc = json_loads(text, where)
    if not isinstance(doc, dict) or not isinstance(doc.get("grid"), dict) or not doc["grid"]:
        raise DataError("required: a mapping of setting -> values", file=where, field="grid")
    allowed = _RUN_KEYS | _config_fields()
    axes: dict[str, list[Any]] = {}
    for key, values in doc["grid"].items():
        if key not in allowed:
            raise DataError(
                f"unknown setting; use {sorted(allowed)}", file=where, field=f"grid.{key}"
            )
        vals = values if isinstance(values, list) else [values]
        if not vals:
            raise DataError("needs at least one value", file=where, field=f"grid.{key}")
        axes[key] = vals
    configs = [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]
    base = doc.get("baseline", configs[0])
    if not isinstance(base, dict) or base not in configs:
        raise DataError("must be one of the grid's configurations", file=where, field="baseline")
    for i, c in enumerate(configs):
        k = c.get("k", 10)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise DataError(f"a positive integer, not {k!r}", file=where, field="grid.k")
        mode = c.get("mode", "full")
        from assay.systems.filings import MODES

        if mode not in MODES:
            raise DataError(
                f"{mode!r}: use one of {', '.join(MODES)}", file=where, field="grid.mode"
            )
        configs[i] = c
    return configs, base


def _run_config(
    dataset_path: str, corpus: str, cache_dir: str | None, config: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One configuration, run where the executor puts it: the rows and the run's metadata."""
    from assay.cache import RequestCache
    from assay.dataset import load_dataset
    from assay.runner import run_system
    from assay.systems.filings import build

    overrides = {k: v for k, v in config.items() if k not in _RUN_KEYS}
    system = build(corpus, mode=config.get("mode", "full"), cache_dir=cache_dir, **overrides)
    run = run_system(
        load_dataset(dataset_path),
        system,
        spec="filings",
        k=int(config.get("k", 10)),
        cache=RequestCache(enabled=False),
        progress=False,
    )
    return [r.to_dict() for r in run.rows], run.meta


@dataclass
class SweepRow:
    name: str
    config: dict[str, Any]
    run: str
    run_hash: str
    baseline: bool
    values: dict[str, float]  # metric -> overall value
    deltas: dict[str, float]  # metric -> candidate minus baseline (0 for the baseline)
    p: dict[str, float | None]  # metric -> the paired test's p on all entries
    p_holm: dict[str, float | None]  # ... Holm-corrected across the candidates

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SweepReport(ReportMixin):
    """The leaderboard of a sweep: configurations by the first metric, best first."""

    dataset: str
    corpus: str
    executor: str
    metrics: list[str]
    score_k: int
    rows: list[SweepRow] = field(default_factory=list)
    out: str | None = None
    # how entries were clustered (`assay.stats.clusters.ClusterSummary`); None: independent
    clustering: ClusterSummary | None = None
    # what the scoring said of the entries it read: label tiers used, entries left out
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "corpus": self.corpus,
            "executor": self.executor,
            "metrics": self.metrics,
            "score_k": self.score_k,
            "out": self.out,
            "correction": "Holm across the candidates, per metric",
            "clustering": None if self.clustering is None else self.clustering.to_dict(),
            "notes": list(self.notes),
            "rows": [r.to_dict() for r in self.rows],
        }

    def tabular(self) -> Tabular:
        header = ["configuration"]
        for m in self.metrics:
            header += [m, f"Δ {m}", "p (Holm)"]
        rows: list[list[str]] = []
        emphasis: set[str] = set()
        for r in self.rows:
            line = [r.name + (" (baseline)" if r.baseline else "")]
            for m in self.metrics:
                p = r.p_holm.get(m)
                line += [
                    f"{r.values[m]:.3f}",
                    "-" if r.baseline else f"{r.deltas[m]:+.3f}",
                    "-" if p is None else f"{p:.3g}",
                ]
            rows.append(line)
            if r.baseline:
                emphasis.add(line[0])
        test = "the paired test on all entries"
        clustered: list[str] = []
        if self.clustering is not None:
            w = self.clustering.words()
            test = "the cluster-level paired test (clustered McNemar, cluster sign-flip)"
            clustered = [f"{w[0].upper()}{w[1:]} (--cluster none: entries as independent)."]
        return Tabular(
            title=f"sweep: {len(self.rows)} configurations ({self.executor})",
            header=header,
            rows=rows,
            footer=[
                *clustered,
                f"scored at k={self.score_k}; Δ against the baseline; p: {test}, "
                "Holm-corrected across the candidates (per metric)",
                *self.notes,
            ],
            emphasis=emphasis,
        )


def _overall(rs: Any, names: Sequence[str]) -> dict[str, float]:
    """Each series' overall value: a metric's as scored, a check's mean over decided entries."""
    out: dict[str, float] = {}
    for m in names:
        if rs.scores is not None and m in rs.scores.per_entry:
            assert rs.scores.overall is not None
            out[m] = float(rs.scores.overall.values[m])
        else:
            vals = rs.series[m].values
            decided = vals[~np.isnan(vals)]
            out[m] = float(decided.mean()) if decided.size else float("nan")
    return out


def _notes(ds: Any, rs: Any) -> list[str]:
    """The tiers used and the entries left out (as score and compare say them)."""
    out: list[str] = []
    if ds.tiers is not None and not ds.tiers.untiered:
        out.append(ds.tiers.line())
    sc = rs.scores
    if sc is not None and (sc.skip_stale or sc.excluded):
        from assay.gold.resolve import skipped_note

        out.append(skipped_note(sc.excluded, sc.excluded_kinds))
    return out


def run_sweep(
    dataset: str | Path,
    *,
    corpus: str | Path,
    grid: str | Path | Sequence[dict[str, Any]],
    out: str | Path,
    baseline: dict[str, Any] | None = None,
    executor: Any = "local",
    workers: int | None = None,
    metrics: Sequence[str] | None = None,
    score_k: int = 5,
    cache_dir: str | Path | None = None,
    skip_stale: bool = False,
    cluster: str | None = "auto",
    level: str = "chunk",
    tiers: str | None = None,
) -> SweepReport:
    """Run every configuration of `grid` (a grid file or a list of configurations), score each
    at `score_k`, compare each with the baseline, and write under `out`: `runs/NAME.jsonl`
    (+ `.meta.json`) per configuration, `comparisons/NAME.json` per candidate and
    `leaderboard.json`. Returns the leaderboard. `skip_stale` is `score_retrieval`'s: entries
    whose gold the corpus no longer holds are left out (and named) instead of refused.
    ``cluster``: what entries are clustered by (`assay.dataset.clustering.clustering_for`).
    ``level`` (chunk or page) and ``tiers`` (the label tiers scored, gold by default) are
    compare's: the sweep scores the entries compare would, and its footer says which entries
    were left out (tiers, stale gold)."""
    from assay.compare import DEFAULT_METRICS, compare_series, series_for, series_names
    from assay.corpus import load_chunks
    from assay.dataset import open_dataset
    from assay.executors import map_ordered, parse_executor
    from assay.runs import Run, write_run
    from assay.stats import holm

    ex = parse_executor(executor, workers=workers)
    if isinstance(grid, (str, Path)):
        configs, base = load_grid(grid)
    else:
        configs = [dict(c) for c in grid]
        if not configs:
            raise UsageError("the grid has no configuration")
        base = configs[0]
    if baseline is not None:
        base = baseline
    if base not in configs:
        raise UsageError("the baseline must be one of the grid's configurations")
    corpus = Path(corpus)
    chunks_path = corpus / "chunks.jsonl"
    if not chunks_path.is_file():
        raise DataError("file not found (a corpus folder?)", file=chunks_path)
    if level not in ("chunk", "page"):
        raise UsageError(f"level must be chunk or page, not {level!r}")
    ds = open_dataset(dataset, tiers)
    from assay.dataset import clustering_for

    clusters = clustering_for(ds.entries, cluster, file=str(dataset))
    chunks = load_chunks(chunks_path)
    infos = series_names(metrics or DEFAULT_METRICS, k=score_k)
    names = [i.name for i in infos]
    out = Path(out)
    task = functools.partial(
        _run_config,
        str(Path(dataset).resolve()),
        str(corpus.resolve()),
        None if cache_dir is None else str(Path(cache_dir).resolve()),
    )
    results = map_ordered(ex, lambda _state, c: task(c), configs)
    scores = []
    runs: list[tuple[str, str]] = []
    for config, (rows, meta) in zip(configs, results, strict=True):
        name = _name(config)
        meta = {**meta, "sweep": {"config": config, "executor": str(ex)}}
        path = out / "runs" / f"{name}.jsonl"
        h = write_run(path, rows, meta=meta)
        run = Run.from_rows(rows, path=str(path), hash=h, meta=meta)
        scores.append(
            series_for(ds, run, infos, k=score_k, chunks=chunks, level=level, skip_stale=skip_stale)
        )
        runs.append((str(path), h))
    bi = configs.index(base)
    base_scores = scores[bi]
    table: list[SweepRow] = []
    raw: dict[str, list[float]] = {m: [] for m in names}
    summary: ClusterSummary | None = None  # as the comparisons clustered their entries
    base_values = _overall(base_scores, names)
    for i, (config, sc) in enumerate(zip(configs, scores, strict=True)):
        values = _overall(sc, names)
        if i == bi:
            deltas = dict.fromkeys(names, 0.0)
            p: dict[str, float | None] = dict.fromkeys(names)
        else:
            cmp = compare_series(base_scores, sc, metrics=names, clusters=clusters)
            summary = cmp.clustering
            write_text_atomic(out / "comparisons" / f"{_name(config)}.json", cmp.to_json() + "\n")
            deltas = {m: values[m] - base_values[m] for m in names}
            p = {}
            for m in names:
                pv = float(cmp.overall.metrics[m].p)
                p[m] = None if pv != pv else pv
                raw[m].append(pv)
        table.append(
            SweepRow(
                name=_name(config),
                config=config,
                run=runs[i][0],
                run_hash=runs[i][1],
                baseline=i == bi,
                values=values,
                deltas=deltas,
                p=p,
                p_holm=dict.fromkeys(names),
            )
        )
    for m in names:
        adjusted = iter(holm(np.asarray(raw[m], dtype=np.float64)).tolist() if raw[m] else [])
        for row in table:
            if not row.baseline:
                v = next(adjusted)
                row.p_holm[m] = None if v != v else v
    table.sort(key=lambda r: (-r.values[names[0]], r.name))
    report = SweepReport(
        dataset=str(dataset),
        corpus=str(corpus),
        executor=str(ex),
        metrics=names,
        score_k=score_k,
        rows=table,
        out=str(out),
        clustering=summary,
        notes=_notes(ds, base_scores),
    )
    write_text_atomic(out / "leaderboard.json", report.to_json() + "\n")
    return report
