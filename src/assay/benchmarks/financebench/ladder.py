"""The retrieval ablation ladder: what each stage of the filings pipeline adds.

Rungs (each adds one thing to the one before, except `dense`, an alternative first stage):

    bm25                 BM25 over every visible chunk, the raw query
    dense                dense re-scoring of BM25's top `pool` candidates
    hybrid               BM25 and dense fused by reciprocal rank
    hybrid + filters     entity, form and fiscal-period filters before ranking
    + query              ranking text without instruction boilerplate, metric wording added,
                         primary-statement pages lifted, one chunk per page first
    + reranker           dense reranker over the fused list (mode "full" until 2026-12-01)
    bm25 + filters + query   the same without any dense model (what dense adds)
    true hybrid + filters + query   the dense side searches every chunk the filters allow
                         (not BM25's pool) and is fused with BM25 by reciprocal rank
    true hybrid + reranker   the same with the dense reranker (tables exempt)
    + facts              the facts route: a question naming a line item and a period gets the
                         pages of the facts table's figures first
    facts only           the facts route alone (nothing when it finds no fact)
    + concepts           `+ reranker` reading analyst concepts ("capital-intensive", "margin",
                         "what drove", "spin-off", ...: `query.CONCEPTS`)
    + concepts + cover   the same with one page of every statement the plan needs in the top k
                         (`statement_cover`; the new full mode, `mode="full"`)
    true hybrid + concepts + cover   the same over the true hybrid

`true hybrid` (no filters: dense search over the whole corpus, which needs the whole corpus
embedded) is available by name (`rungs=` / `--rung`) but not in `default_rungs()`.

With `halves` (entry id -> "A" or "B", e.g. `judge_bench.split_halves`) every row is computed
on each half separately: design decisions are made on half A, half B is reported as unseen.
Besides BM25, each rung is compared with `reference` (default "+ reranker", the previous full
mode) when that rung was run: flips and exact McNemar p in the `vs full` columns. For the
rung `facts_rung` (default "+ facts", else "facts only") the metrics-generated questions whose facts-route figure
states the reference answer (`assay.judge.check_numeric`) are counted (`facts_exact`).

The ladder is a harness over the library, not a second implementation of it: every rung is run
through `assay.runner.run_system` (as_of enforced), scored by `assay.score.retrieval.score_retrieval`
at page level (a page is retrieved when any chunk of it is) and chunk level, and compared with
the first rung (BM25) by `assay.compare.compare_scores`, which gives the flips and the exact
McNemar test per category. The rows report the metrics named in `METRICS` per category and
overall; the complete rate carries a seeded percentile-bootstrap interval
(`assay.stats.bootstrap.bootstrap_ci`, one named stream per rung, level and category, so a cell's
interval does not move when rungs are added).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.metrics import parse
from assay.report import Interval, ReportMixin, Tabular
from assay.systems.filings.dense import Encoder
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.system import FilingsSystem, RetrievalConfig

if TYPE_CHECKING:
    from assay.compare import Comparison
    from assay.score import RetrievalScores

__all__ = [
    "METRICS",
    "AblationResult",
    "AblationRow",
    "default_rungs",
    "metric_names",
    "run_ablation",
]

#: The metrics the ladder reports, by the row field that holds them (``{k}`` is the cut-off).
#: ``complete`` is the binary one: its flips and McNemar test come from `assay.compare`, and it
#: carries the bootstrap interval. The one place the ladder names metrics.
METRICS: Mapping[str, str] = {"recall": "recall", "complete": "complete", "mrr": "mrr"}

CI_METHOD = "percentile bootstrap"
CI_LEVEL = 0.95


def metric_names(k: int) -> dict[str, str]:
    """`METRICS` at cut-off ``k``, read by the metric registry: row field -> metric name."""
    return {f: parse(name, k=k).name for f, name in METRICS.items()}


def default_rungs(pool: int = 20) -> list[tuple[str, RetrievalConfig]]:
    base = RetrievalConfig(pool=pool)
    filters = replace(base, ranker="hybrid", filters=True, latest_when_undated=True)
    query = replace(filters, understand=True, per_page=1)
    return [
        ("bm25", base),
        ("dense", replace(base, ranker="dense")),
        ("hybrid", replace(base, ranker="hybrid")),
        ("hybrid + filters", filters),
        ("+ query", query),
        # MiniLM reads sentences, not tables: table chunks keep their retrieval slots
        ("+ reranker", replace(query, rerank=True, exempt_tables=True)),
        # what the dense model adds: the same understanding with BM25 alone
        ("bm25 + filters + query", replace(query, ranker="bm25")),
        *new_rungs(pool)[1:],
    ]


def new_rungs(pool: int = 20) -> list[tuple[str, RetrievalConfig]]:
    """The true hybrid (whole-corpus dense side), the facts route, the analyst concepts and
    the statement cover."""
    base = RetrievalConfig(pool=pool)
    filters = replace(base, ranker="hybrid", filters=True, latest_when_undated=True)
    true_q = replace(filters, understand=True, per_page=1, dense_scope="corpus")
    true_full = replace(true_q, rerank=True, exempt_tables=True)
    pool_full = replace(true_full, dense_scope="pool")  # = "+ reranker"
    return [
        ("true hybrid", replace(base, ranker="hybrid", dense_scope="corpus")),
        ("true hybrid + filters + query", true_q),
        ("true hybrid + reranker", true_full),
        ("+ facts", replace(true_full, facts=True)),
        (
            "facts only",
            replace(true_q, ranker="bm25", dense_scope="pool", facts=True, facts_only=True),
        ),
        ("+ concepts", replace(pool_full, concepts=True)),
        ("+ concepts + cover", replace(pool_full, concepts=True, statement_cover=True)),
        (
            "true hybrid + concepts + cover",
            replace(true_full, concepts=True, statement_cover=True),
        ),
    ]


@dataclass(frozen=True, slots=True)
class AblationRow:
    """One rung at one level for one category (or overall)."""

    rung: str
    level: str
    category: str
    n: int
    recall: float
    complete_ci: Interval
    mrr: float
    fixed: int = 0
    broken: int = 0
    p_mcnemar: float | None = None
    half: str = "all"  # "A" (decisions made on it) | "B" (unseen) | "all"
    fixed_ref: int | None = None  # flips against the reference rung (the previous full mode)
    broken_ref: int | None = None
    p_ref: float | None = None

    @property
    def complete(self) -> float:
        v = self.complete_ci.value
        return float("nan") if v is None else float(v)

    @property
    def complete_low(self) -> float:
        return float("nan") if self.complete_ci.low is None else float(self.complete_ci.low)

    @property
    def complete_high(self) -> float:
        return float("nan") if self.complete_ci.high is None else float(self.complete_ci.high)


@dataclass(slots=True)
class AblationResult(ReportMixin):
    """Every rung scored per level and category, with flips against the first rung.

    A report: ``to_dict``/``to_json`` (full precision), ``to_table``, ``to_markdown``.
    ``comparisons`` holds each rung's `assay.compare.Comparison` with the baseline, by
    ``"rung|level"`` (the flipped entry ids are there).
    """

    rows: list[AblationRow]
    k: int
    dataset_version: str | None
    corpus_version: str
    seed: int
    n_resamples: int
    baseline: str = "bm25"
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_entry: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    unaligned: list[str] = field(default_factory=list)  # left out of chunk level: gold unaligned
    page_stale: list[str] = field(default_factory=list)  # left out of page level: stale gold
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    reference: str | None = None
    facts_exact: dict[str, dict[str, int]] = field(default_factory=dict)  # half -> n, exact

    def overall_only(self) -> AblationResult:
        """The same result with the overall rows only (one per rung and level)."""
        copy = replace(self)
        copy.rows = [r for r in self.rows if r.category == "overall"]
        return copy

    def row(
        self, rung: str, level: str = "page", category: str = "overall", half: str = "all"
    ) -> AblationRow:
        for r in self.rows:
            if (r.rung, r.level, r.category, r.half) == (rung, level, category, half):
                return r
        raise KeyError((rung, level, category, half))

    @property
    def _halved(self) -> bool:
        return any(r.half != "all" for r in self.rows)

    @property
    def _with_ref(self) -> bool:
        return any(r.fixed_ref is not None for r in self.rows)

    def to_dict(self, *, per_entry: bool = False) -> dict[str, Any]:
        names = metric_names(self.k)
        d: dict[str, Any] = {
            "k": self.k,
            "dataset_version": self.dataset_version,
            "corpus_version": self.corpus_version,
            "ci": {"method": CI_METHOD, "seed": self.seed, "n_resamples": self.n_resamples},
            "baseline": self.baseline,
            "configs": self.configs,
            "chunk_level_excluded": self.unaligned,
            "page_level_excluded": self.page_stale,
            "reference": self.reference,
            "facts_exact": self.facts_exact,
            "rows": [
                {
                    "rung": r.rung, "level": r.level, "category": r.category, "n": r.n,
                    names["recall"]: r.recall, names["complete"]: r.complete,
                    "complete_ci": r.complete_ci.to_dict(), names["mrr"]: r.mrr,
                    "flips_vs_bm25": {"fixed": r.fixed, "broken": r.broken, "p_mcnemar": r.p_mcnemar},
                    "half": r.half,
                    "flips_vs_reference": None if r.fixed_ref is None else
                    {"fixed": r.fixed_ref, "broken": r.broken_ref, "p_mcnemar": r.p_ref},
                }
                for r in self.rows
            ],
        }  # fmt: skip
        if per_entry:
            d["per_entry"] = self.per_entry
        return d

    def _caption(self) -> str:
        return (
            f"dataset {self.dataset_version} · corpus {self.corpus_version[:16]} · "
            f"bootstrap seed {self.seed}, {self.n_resamples} resamples"
            + (
                f" · chunk level leaves out {len(self.unaligned)} entries whose gold quote aligns "
                "onto no chunk"
                if self.unaligned
                else ""
            )
            + (
                f" · page level leaves out {len(self.page_stale)} entries whose gold is stale "
                "(names a filing or chunk the corpus lacks)"
                if self.page_stale
                else ""
            )
            + (
                " · half A: decisions were made on it; half B: unseen while tuning"
                if self._halved
                else ""
            )
            + "".join(
                f" · facts route, half {h}: {v['exact']} of {v['n']} metrics-generated questions "
                "answered exactly"
                for h, v in sorted(self.facts_exact.items())
            )
        )

    def tabular(self) -> Tabular:
        k = self.k
        header = [
            "level", *(["half"] if self._halved else []), "rung", "category", "n", f"recall@{k}",
            f"complete@{k} [95% CI]", "MRR", f"fixed/broken vs {self.baseline}", "McNemar p",
            *([f"fixed/broken vs {self.reference}", "p"] if self._with_ref else []),
        ]  # fmt: skip
        rows: list[list[str]] = []
        sections: set[int] = set()
        for i, r in enumerate(self.rows):
            if i + 1 < len(self.rows) and (
                self.rows[i + 1].rung,
                self.rows[i + 1].level,
                self.rows[i + 1].half,
            ) != (r.rung, r.level, r.half):
                sections.add(i)
            rows.append(
                [
                    r.level, *([r.half] if self._halved else []), r.rung, r.category, str(r.n),
                    f"{r.recall:.3f}", r.complete_ci.fmt(), f"{r.mrr:.3f}", f"{r.fixed}/{r.broken}",
                    "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}",
                    *(_ref_cells(r) if self._with_ref else []),
                ]
            )  # fmt: skip
        return Tabular(
            f"retrieval ablation @ {k}",
            header,
            rows,
            footer=[self._caption()],
            emphasis=set(),
            sections=sections,
        )

    def to_markdown(self) -> str:
        k = self.k
        half_h = "half | " if self._halved else ""
        ref_h = f" fixed / broken vs {self.reference} | p |" if self._with_ref else ""
        head = (
            f"| level | {half_h}rung | category | n | recall@{k} | complete@{k} (95% CI) | MRR "
            f"| fixed / broken vs {self.baseline} | McNemar p |{ref_h}\n"
            f"|---|{'---|' if self._halved else ''}---|---|---:|---:|---|---:|---|---:|"
            f"{'---|---:|' if self._with_ref else ''}\n"
        )
        lines = []
        for r in self.rows:
            p = "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}"
            cat = f"**{r.category}**" if r.category == "overall" else r.category
            half = f" {r.half} |" if self._halved else ""
            ref = "".join(f" {c} |" for c in _ref_cells(r, sep=" / ")) if self._with_ref else ""
            lines.append(
                f"| {r.level} |{half} {r.rung} | {cat} | {r.n} | {r.recall:.3f} | {r.complete:.3f} "
                f"({r.complete_low:.2f}-{r.complete_high:.2f}) | {r.mrr:.3f} | {r.fixed} / {r.broken} | {p} |{ref}"
            )
        return head + "\n".join(lines) + "\n\n" + self._caption() + "\n"


def _ref_cells(r: AblationRow, sep: str = "/") -> list[str]:
    if r.fixed_ref is None:
        return ["", ""]
    return [f"{r.fixed_ref}{sep}{r.broken_ref}", "" if r.p_ref is None else f"{r.p_ref:.3g}"]


def run_ablation(
    dataset: Any,
    corpus_dir: str | Path,
    *,
    k: int = 5,
    levels: Sequence[str] = ("page", "chunk"),
    rungs: Sequence[tuple[str, RetrievalConfig]] | None = None,
    encoder: Encoder | None = None,
    index: FilingsIndex | None = None,
    seed: int = 20260801,
    n_resamples: int = 2000,
    on_rung: Callable[[str], None] | None = None,
    halves: Mapping[str, str] | None = None,
    reference: str = "+ reranker",
    facts_rung: str | None = None,
    cache_dir: str | Path | None = None,
) -> AblationResult:
    """Run, score and compare every rung on `dataset` (an `assay.dataset.io.Dataset`).

    `halves` (entry id -> "A" | "B") scores each half on its own; `reference` is the second
    rung every other rung is compared with; `cache_dir` is where whole-corpus vectors are kept
    (the true-hybrid rungs).
    """
    from assay.cache import RequestCache
    from assay.corpus import load_chunks
    from assay.runner import run_system
    from assay.systems.filings.facts_route import FactsTable

    root = Path(corpus_dir)
    idx = index if index is not None else FilingsIndex.load(root)
    table = load_chunks(root / "chunks.jsonl")
    ladder = list(rungs) if rungs is not None else default_rungs()
    facts = FactsTable.load(root) if any(cfg.facts for _, cfg in ladder) else None
    # chunk-level gold exists only where an anchor's quote aligns onto a chunk of the corpus
    chunk_entries, unaligned = (
        _resolvable(dataset, table, "chunk") if "chunk" in levels else ([], [])
    )
    # page-level gold naming a filing the corpus lacks is a stale label, not a retrieval miss
    page_entries, page_stale = _resolvable(dataset, table, "page") if "page" in levels else ([], [])
    configs: dict[str, dict[str, Any]] = {}
    runs: dict[str, Any] = {}
    logs: dict[str, list[dict[str, Any]]] = {}
    dense_search = None  # shared by the rungs whose dense side searches the corpus
    for name, cfg in ladder:
        if on_rung is not None:
            on_rung(name)
        system = FilingsSystem(
            idx, cfg, encoder=encoder if cfg.needs_encoder else None, name=f"filings[{name}]",
            dense_search=dense_search, cache_dir=cache_dir, facts=facts,
        )  # fmt: skip
        configs[name] = system.describe()
        runs[name] = run_system(
            dataset, system, k=k, cache=RequestCache(enabled=False), answers=False, progress=False,
            spec=f"filings[{name}]",
        )  # fmt: skip
        logs[name] = system.log
        if cfg.dense_scope == "corpus" and cfg.ranker != "bm25":
            dense_search = system.dense_search

    groups = ["all"] if halves is None else ["A", "B"]
    rows: list[AblationRow] = []
    per_entry: dict[str, dict[str, dict[str, float]]] = {}
    comparisons: dict[str, Comparison] = {}
    base_name = ladder[0][0]
    ref_name = reference if any(n == reference for n, _ in ladder) else None
    for level in levels:
        entries = page_entries if level == "page" else chunk_entries
        for group in groups:
            subset = [e for e in entries if halves is None or halves.get(e.id) == group]
            suffix = "" if group == "all" else f"|{group}"
            group_rows = _ladder_rows(
                ladder, runs, subset, table, level, group, suffix, k,
                base_name, ref_name, per_entry, comparisons, seed, n_resamples,
            )  # fmt: skip
            rows.extend(group_rows)
    facts_exact: dict[str, dict[str, int]] = {}
    # the route finds the same facts whatever ranks the rest: any rung that runs it will do
    source = facts_rung or next((n for n in ("+ facts", "facts only") if n in logs), None)
    if source is not None and source in logs:
        facts_exact = _facts_exact(dataset, logs[source], halves)
    version = getattr(dataset, "version", None)
    return AblationResult(
        rows=rows, k=k, dataset_version=version, corpus_version=idx.version, seed=seed,
        n_resamples=n_resamples, baseline=base_name, configs=configs, per_entry=per_entry,
        unaligned=unaligned, page_stale=page_stale, comparisons=comparisons,
        reference=ref_name, facts_exact=facts_exact,
    )  # fmt: skip


def _ladder_rows(
    ladder: Sequence[tuple[str, RetrievalConfig]],
    runs: Mapping[str, Any],
    subset: list[Any],
    table: Any,
    level: str,
    group: str,
    suffix: str,
    k: int,
    base_name: str,
    ref_name: str | None,
    per_entry: dict[str, dict[str, dict[str, float]]],
    comparisons: dict[str, Comparison],
    seed: int,
    n_resamples: int,
) -> list[AblationRow]:
    """Score every rung on `subset` and compare it with the baseline and the reference."""
    from assay.compare import compare_scores
    from assay.score import score_retrieval

    names = metric_names(k)
    scores = {
        name: score_retrieval(
            subset, runs[name], k=k, chunks=table, level=level,  # type: ignore[arg-type]
            metrics=list(names.values()),
        )
        for name, _ in ladder
    }  # fmt: skip
    out: list[AblationRow] = []
    for name, _ in ladder:
        sc = scores[name]
        per_entry.setdefault(f"{name}|{level}", {}).update(
            {
                str(i): {"complete": float(c), "recall": float(r)}
                for i, c, r in zip(
                    sc.ids, sc.per_entry[names["complete"]], sc.per_entry[names["recall"]],
                    strict=True,
                )
            }
        )  # fmt: skip
        cmp = ref = None
        if name != base_name:
            cmp = compare_scores(
                scores[base_name], sc, metrics=[names["complete"]], seed=seed,
                n_resamples=n_resamples,
            )  # fmt: skip
            comparisons[f"{name}|{level}{suffix}"] = cmp
        if ref_name is not None and name not in (ref_name, base_name):
            ref = compare_scores(
                scores[ref_name], sc, metrics=[names["complete"]], seed=seed,
                n_resamples=n_resamples,
            )  # fmt: skip
            comparisons[f"{name}|{level}{suffix}|vs {ref_name}"] = ref
        out.extend(
            _rows(
                name, level, sc, cmp, names, seed=seed, n_resamples=n_resamples, half=group, ref=ref
            )
        )
    return out


def _facts_exact(
    dataset: Any, log: list[dict[str, Any]], halves: Mapping[str, str] | None
) -> dict[str, dict[str, int]]:
    """Metrics-generated questions whose facts-route figures state the reference answer."""
    from assay.judge.numeric import check_numeric

    entries = dataset.entries if hasattr(dataset, "entries") else list(dataset)
    facts_of: dict[str, list[dict[str, Any]]] = {}
    for record in log:
        facts_of.setdefault(str(record["query"]), list(record.get("facts") or []))
    out: dict[str, dict[str, int]] = {}
    for e in entries:
        if e.category != "metrics-generated" or not e.reference_answer:
            continue
        group = "all" if halves is None else halves.get(e.id, "A")
        cell = out.setdefault(group, {"n": 0, "exact": 0})
        cell["n"] += 1
        figures = [f["figure"] for f in facts_of.get(e.query, [])]
        if not figures:
            continue
        verdict = check_numeric(e.reference_answer, "; ".join(figures), question=e.query)
        cell["exact"] += int(verdict.status == "pass")
    return out


def _rows(
    rung: str,
    level: str,
    sc: RetrievalScores,
    cmp: Comparison | None,
    names: Mapping[str, str],
    *,
    seed: int,
    n_resamples: int,
    half: str = "all",
    ref: Comparison | None = None,
) -> list[AblationRow]:
    """The overall row and one per category: means from the scores, flips from the comparison."""
    from assay.stats.bootstrap import bootstrap_ci, group_generator

    cats = np.asarray(sc.categories_of, dtype=object)
    complete = np.asarray(sc.per_entry[names["complete"]], dtype=np.float64)
    out: list[AblationRow] = []
    for cat in ["overall", *sorted(set(cats.tolist()))]:
        sel = np.ones(len(cats), dtype=np.bool_) if cat == "overall" else cats == cat
        agg = sc.overall if cat == "overall" else sc.categories[cat]
        assert agg is not None
        # one generator per cell, named: a CI does not move when rungs are added
        stream = f"{rung}|{level}|{cat}" + ("" if half == "all" else f"|{half}")
        ci = bootstrap_ci(
            complete[sel],
            rng=group_generator(seed, stream),
            n_resamples=n_resamples,
        )
        fixed = broken = 0
        p: float | None = None
        if cmp is not None:
            mc = (cmp.overall if cat == "overall" else cmp.categories[cat]).metrics[
                names["complete"]
            ]
            fixed, broken, p = len(mc.fixed), len(mc.broken), mc.p
        fixed_ref = broken_ref = None
        p_ref: float | None = None
        if ref is not None:
            mr = (ref.overall if cat == "overall" else ref.categories[cat]).metrics[
                names["complete"]
            ]
            fixed_ref, broken_ref, p_ref = len(mr.fixed), len(mr.broken), mr.p
        out.append(
            AblationRow(
                rung=rung, level=level, category=str(cat), n=int(sel.sum()),
                recall=agg.values[names["recall"]],
                complete_ci=Interval(
                    agg.values[names["complete"]], ci.low, ci.high, CI_LEVEL, CI_METHOD
                ),
                mrr=agg.values[names["mrr"]], fixed=fixed, broken=broken, p_mcnemar=p,
                half=half, fixed_ref=fixed_ref, broken_ref=broken_ref, p_ref=p_ref,
            )
        )  # fmt: skip
    return out


def _resolvable(dataset: Any, table: Any, level: str) -> tuple[list[Any], list[str]]:
    """Entries whose gold resolves onto the corpus at `level`, and the ids of the rest."""
    from assay.gold import resolve_gold

    entries = dataset.entries if hasattr(dataset, "entries") else list(dataset)
    excluded = resolve_gold(entries, chunks=table, level=level, skip_stale=True).excluded  # type: ignore[arg-type]
    return [e for e in entries if e.id not in excluded], list(excluded)
