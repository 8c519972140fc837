"""The retrieval ablation ladder: what each stage of the filings pipeline adds.

Rungs (each adds one thing to the one before, except `dense`, an alternative first stage):

    bm25                 BM25 over every visible chunk, the raw query
    dense                dense re-scoring of BM25's top `pool` candidates
    hybrid               BM25 and dense fused by reciprocal rank
    hybrid + filters     entity, form and fiscal-period filters before ranking
    + query              ranking text without instruction boilerplate, metric wording added,
                         primary-statement pages lifted, one chunk per page first
    + reranker           dense reranker over the fused list (mode "full")
    bm25 + filters + query   the same without any dense model (what dense adds)

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
    from assay.score.retrieval import RetrievalScores

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

    def overall_only(self) -> AblationResult:
        """The same result with the overall rows only (one per rung and level)."""
        copy = replace(self)
        copy.rows = [r for r in self.rows if r.category == "overall"]
        return copy

    def row(self, rung: str, level: str = "page", category: str = "overall") -> AblationRow:
        for r in self.rows:
            if (r.rung, r.level, r.category) == (rung, level, category):
                return r
        raise KeyError((rung, level, category))

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
            "rows": [
                {
                    "rung": r.rung, "level": r.level, "category": r.category, "n": r.n,
                    names["recall"]: r.recall, names["complete"]: r.complete,
                    "complete_ci": r.complete_ci.to_dict(), names["mrr"]: r.mrr,
                    "flips_vs_bm25": {"fixed": r.fixed, "broken": r.broken, "p_mcnemar": r.p_mcnemar},
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
        )

    def tabular(self) -> Tabular:
        k = self.k
        header = [
            "level", "rung", "category", "n", f"recall@{k}", f"complete@{k} [95% CI]", "MRR",
            f"fixed/broken vs {self.baseline}", "McNemar p",
        ]  # fmt: skip
        rows: list[list[str]] = []
        sections: set[int] = set()
        for i, r in enumerate(self.rows):
            if i + 1 < len(self.rows) and (self.rows[i + 1].rung, self.rows[i + 1].level) != (
                r.rung,
                r.level,
            ):
                sections.add(i)
            rows.append(
                [
                    r.level, r.rung, r.category, str(r.n), f"{r.recall:.3f}", r.complete_ci.fmt(),
                    f"{r.mrr:.3f}", f"{r.fixed}/{r.broken}",
                    "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}",
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
        head = (
            f"| level | rung | category | n | recall@{k} | complete@{k} (95% CI) | MRR "
            f"| fixed / broken vs {self.baseline} | McNemar p |\n"
            "|---|---|---|---:|---:|---|---:|---|---:|\n"
        )
        lines = []
        for r in self.rows:
            p = "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}"
            cat = f"**{r.category}**" if r.category == "overall" else r.category
            lines.append(
                f"| {r.level} | {r.rung} | {cat} | {r.n} | {r.recall:.3f} | {r.complete:.3f} "
                f"({r.complete_low:.2f}-{r.complete_high:.2f}) | {r.mrr:.3f} | {r.fixed} / {r.broken} | {p} |"
            )
        return head + "\n".join(lines) + "\n\n" + self._caption() + "\n"


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
) -> AblationResult:
    """Run, score and compare every rung on `dataset` (an `assay.dataset.io.Dataset`)."""
    from assay.cache import RequestCache
    from assay.compare import compare_scores
    from assay.corpus.chunks import load_chunks
    from assay.runner import run_system
    from assay.score.retrieval import score_retrieval

    root = Path(corpus_dir)
    idx = index if index is not None else FilingsIndex.load(root)
    table = load_chunks(root / "chunks.jsonl")
    ladder = list(rungs) if rungs is not None else default_rungs()
    names = metric_names(k)
    scores: dict[tuple[str, str], RetrievalScores] = {}
    # chunk-level gold exists only where an anchor's quote aligns onto a chunk of the corpus
    chunk_entries, unaligned = (
        _resolvable(dataset, table, "chunk") if "chunk" in levels else ([], [])
    )
    # page-level gold naming a filing the corpus lacks is a stale label, not a retrieval miss
    page_entries, page_stale = _resolvable(dataset, table, "page") if "page" in levels else ([], [])
    configs: dict[str, dict[str, Any]] = {}
    for name, cfg in ladder:
        if on_rung is not None:
            on_rung(name)
        system = FilingsSystem(
            idx, cfg, encoder=encoder if cfg.needs_encoder else None, name=f"filings[{name}]"
        )
        configs[name] = system.describe()
        run = run_system(
            dataset, system, k=k, cache=RequestCache(enabled=False), answers=False, progress=False,
            spec=f"filings[{name}]",
        )  # fmt: skip
        for level in levels:
            subset = page_entries if level == "page" else chunk_entries
            scores[(name, level)] = score_retrieval(
                subset,
                run,
                k=k,
                chunks=table,
                level=level,  # type: ignore[arg-type]
                metrics=list(metric_names(k).values()),
            )

    rows: list[AblationRow] = []
    per_entry: dict[str, dict[str, dict[str, float]]] = {}
    comparisons: dict[str, Comparison] = {}
    base_name = ladder[0][0]
    for level in levels:
        base = scores[(base_name, level)]
        for name, _ in ladder:
            sc = scores[(name, level)]
            per_entry[f"{name}|{level}"] = {
                str(i): {"complete": float(c), "recall": float(r)}
                for i, c, r in zip(
                    sc.ids, sc.per_entry[names["complete"]], sc.per_entry[names["recall"]],
                    strict=True,
                )
            }  # fmt: skip
            cmp = None
            if name != base_name:
                cmp = compare_scores(
                    base, sc, metrics=[names["complete"]], seed=seed, n_resamples=n_resamples
                )
                comparisons[f"{name}|{level}"] = cmp
            rows.extend(_rows(name, level, sc, cmp, names, seed=seed, n_resamples=n_resamples))
    version = getattr(dataset, "version", None)
    return AblationResult(
        rows=rows, k=k, dataset_version=version, corpus_version=idx.version, seed=seed,
        n_resamples=n_resamples, baseline=base_name, configs=configs, per_entry=per_entry,
        unaligned=unaligned, page_stale=page_stale, comparisons=comparisons,
    )  # fmt: skip


def _rows(
    rung: str,
    level: str,
    sc: RetrievalScores,
    cmp: Comparison | None,
    names: Mapping[str, str],
    *,
    seed: int,
    n_resamples: int,
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
        ci = bootstrap_ci(
            complete[sel],
            rng=group_generator(seed, f"{rung}|{level}|{cat}"),
            n_resamples=n_resamples,
        )
        fixed = broken = 0
        p: float | None = None
        if cmp is not None:
            mc = (cmp.overall if cat == "overall" else cmp.categories[cat]).metrics[
                names["complete"]
            ]
            fixed, broken, p = len(mc.fixed), len(mc.broken), mc.p
        out.append(
            AblationRow(
                rung=rung, level=level, category=str(cat), n=int(sel.sum()),
                recall=agg.values[names["recall"]],
                complete_ci=Interval(
                    agg.values[names["complete"]], ci.low, ci.high, CI_LEVEL, CI_METHOD
                ),
                mrr=agg.values[names["mrr"]], fixed=fixed, broken=broken, p_mcnemar=p,
            )
        )  # fmt: skip
    return out


def _resolvable(dataset: Any, table: Any, level: str) -> tuple[list[Any], list[str]]:
    """Entries whose gold resolves onto the corpus at `level`, and the ids of the rest."""
    from assay.gold import resolve_gold

    entries = dataset.entries if hasattr(dataset, "entries") else list(dataset)
    excluded = resolve_gold(entries, chunks=table, level=level, skip_stale=True).excluded  # type: ignore[arg-type]
    return [e for e in entries if e.id not in excluded], list(excluded)
