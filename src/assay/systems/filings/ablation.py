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

Every rung is run through `assay.run.run_system` (as_of enforced) and scored with
`assay.score.retrieval.score_retrieval` at page level (a page is retrieved when any chunk of it
is) and chunk level: recall@k, complete@k and MRR per category, a seeded bootstrap CI for the
complete rate, and flips against the BM25 rung with an exact McNemar test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from assay.systems.filings.dense import Encoder
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.system import FilingsSystem, RetrievalConfig

__all__ = ["AblationResult", "AblationRow", "default_rungs", "run_ablation"]


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
    rung: str
    level: str
    category: str
    n: int
    recall: float
    complete: float
    complete_low: float
    complete_high: float
    mrr: float
    fixed: int = 0
    broken: int = 0
    p_mcnemar: float | None = None


@dataclass(slots=True)
class AblationResult:
    rows: list[AblationRow]
    k: int
    dataset_version: str | None
    corpus_version: str
    seed: int
    n_resamples: int
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_entry: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    unaligned: list[str] = field(default_factory=list)  # left out of chunk level: gold unaligned

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "dataset_version": self.dataset_version,
            "corpus_version": self.corpus_version,
            "ci": {"method": "percentile bootstrap", "seed": self.seed, "n_resamples": self.n_resamples},
            "configs": self.configs,
            "chunk_level_excluded": self.unaligned,
            "rows": [
                {
                    "rung": r.rung, "level": r.level, "category": r.category, "n": r.n,
                    f"recall@{self.k}": r.recall, f"complete@{self.k}": r.complete,
                    "complete_ci": [r.complete_low, r.complete_high], "mrr": r.mrr,
                    "flips_vs_bm25": {"fixed": r.fixed, "broken": r.broken, "p_mcnemar": r.p_mcnemar},
                }
                for r in self.rows
            ],
        }  # fmt: skip

    def to_markdown(self, *, categories: bool = True) -> str:
        k = self.k
        head = (
            f"| level | rung | category | n | recall@{k} | complete@{k} (95% CI) | MRR "
            "| fixed / broken vs bm25 | McNemar p |\n|---|---|---|---:|---:|---|---:|---|---:|\n"
        )
        lines = []
        for r in self.rows:
            if not categories and r.category != "overall":
                continue
            p = "" if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}"
            cat = f"**{r.category}**" if r.category == "overall" else r.category
            lines.append(
                f"| {r.level} | {r.rung} | {cat} | {r.n} | {r.recall:.3f} | {r.complete:.3f} "
                f"({r.complete_low:.2f}-{r.complete_high:.2f}) | {r.mrr:.3f} | {r.fixed} / {r.broken} | {p} |"
            )
        caption = (
            f"\ndataset {self.dataset_version} · corpus {self.corpus_version[:16]} · "
            f"bootstrap seed {self.seed}, {self.n_resamples} resamples"
            + (
                f" · chunk level leaves out {len(self.unaligned)} entries whose gold quote aligns "
                "onto no chunk"
                if self.unaligned
                else ""
            )
            + "\n"
        )
        return head + "\n".join(lines) + "\n" + caption


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
    """Run and score every rung on `dataset` (an `assay.dataset.io.Dataset`)."""
    from assay.cache import RequestCache
    from assay.corpus.chunks import load_chunks
    from assay.run import run_system
    from assay.score.retrieval import score_retrieval
    from assay.stats.bootstrap import bootstrap_ci, group_generator
    from assay.stats.paired import flips, mcnemar_exact

    root = Path(corpus_dir)
    idx = index if index is not None else FilingsIndex.load(root)
    table = load_chunks(root / "chunks.jsonl")
    ladder = list(rungs) if rungs is not None else default_rungs()
    scores: dict[tuple[str, str], Any] = {}
    # chunk-level gold exists only where an anchor's quote aligns onto a chunk of the corpus
    chunk_entries, unaligned = _aligned_entries(dataset, table) if "chunk" in levels else ([], [])
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
            subset = dataset if level == "page" else chunk_entries
            scores[(name, level)] = score_retrieval(subset, run, k=k, chunks=table, level=level)  # type: ignore[arg-type]

    rows: list[AblationRow] = []
    per_entry: dict[str, dict[str, dict[str, float]]] = {}
    base_name = ladder[0][0]
    for level in levels:
        base = scores[(base_name, level)]
        base_arr = base.arrays()
        for name, _ in ladder:
            sc = scores[(name, level)]
            arr = sc.arrays()
            ids = np.asarray(sc.ids, dtype=object)
            cats = np.asarray(sc.categories_of, dtype=object)
            per_entry[f"{name}|{level}"] = {
                str(i): {"complete": float(c), "recall": float(r)}
                for i, c, r in zip(ids, arr[f"complete@{k}"], arr[f"recall@{k}"], strict=True)
            }
            groups = [("overall", np.ones(len(ids), dtype=np.bool_))] + [
                (c, cats == c) for c in sorted(set(cats.tolist()))
            ]
            for cat, sel in groups:
                comp = np.asarray(arr[f"complete@{k}"], dtype=np.float64)[sel]
                # one generator per cell, named: a CI does not move when rungs are added
                rng = group_generator(seed, f"{name}|{level}|{cat}")
                ci = bootstrap_ci(comp, rng=rng, n_resamples=n_resamples)
                assert ci.value is not None and ci.low is not None and ci.high is not None
                fl = flips(ids[sel], np.asarray(base_arr[f"complete@{k}"])[sel], comp)
                test = mcnemar_exact(len(fl.fixed), len(fl.broken)) if name != base_name else None
                rows.append(
                    AblationRow(
                        rung=name, level=level, category=str(cat), n=int(sel.sum()),
                        recall=float(np.mean(np.asarray(arr[f"recall@{k}"])[sel])) if sel.any() else float("nan"),
                        complete=ci.value, complete_low=ci.low, complete_high=ci.high,
                        mrr=float(np.mean(np.asarray(arr["mrr"])[sel])) if sel.any() else float("nan"),
                        fixed=len(fl.fixed), broken=len(fl.broken),
                        p_mcnemar=None if test is None else test.pvalue,
                    )
                )  # fmt: skip
    version = getattr(dataset, "version", None)
    return AblationResult(
        rows=rows, k=k, dataset_version=version, corpus_version=idx.version, seed=seed,
        n_resamples=n_resamples, configs=configs, per_entry=per_entry,
        unaligned=unaligned,
    )  # fmt: skip


def _aligned_entries(dataset: Any, table: Any) -> tuple[list[Any], list[str]]:
    """Entries whose every anchor resolves onto chunks (chunk-level gold exists), and the rest."""
    from assay.errors import DataError
    from assay.score.retrieval import resolve_gold

    entries = dataset.entries if hasattr(dataset, "entries") else list(dataset)
    keep: list[Any] = []
    dropped: list[str] = []
    for entry in entries:
        try:
            resolve_gold([entry], chunks=table, level="chunk")
        except DataError:
            dropped.append(entry.id)
            continue
        keep.append(entry)
    return keep, dropped
