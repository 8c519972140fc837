"""assay: expert-verified golden datasets as the backbone of RAG evaluation.

The public nouns are re-exported here (imported lazily, so the command line starts fast);
everything else may move.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.attribution import Attribution, attribute
    from assay.benchmarks.financebench import import_financebench, run_ablation
    from assay.cache import RequestCache, cache_key
    from assay.chat import ChatClient
    from assay.compare import Comparison, compare_files, compare_runs, compare_scores
    from assay.compare.files import gate_files
    from assay.compare.gate import GatePolicy, GateResult, gate, load_margins
    from assay.compare.leaderboard import Leaderboard, compare_many
    from assay.corpus import (
        Chunk,
        ChunkSettings,
        ChunkTable,
        CorpusManifest,
        Document,
        build_corpus,
        chunk_document,
        load_chunks,
        load_documents,
        parse_file,
        write_chunks,
    )
    from assay.dataset import (
        Anchor,
        Dataset,
        Entry,
        ExpectedBehavior,
        KeyFact,
        Source,
        fresh,
        load_dataset,
        split_entries,
        write_dataset,
    )
    from assay.errors import AssayError, DataError, MissingExtraError, Problem, UsageError
    from assay.explorer import Bundle, export_bundle, render_site
    from assay.gold import containment, normalize_tokens, resolve_anchor, validate_file
    from assay.judge import (
        Check,
        CheckContext,
        JudgeInput,
        LLMJudge,
        Outcome,
        check_entry,
        check_numeric,
        check_run,
        detect_refusal,
        extract_quantities,
    )
    from assay.judge.registry import CheckInput
    from assay.label_files import agreement_file, calibrate_files, load_labels, read_calibration
    from assay.metrics import Metric, MetricContext
    from assay.runner import run_system
    from assay.runs import (
        Hit,
        Run,
        RunRow,
        load_run,
        qrels_from_dataset,
        read_trec_qrels,
        read_trec_run,
        write_run,
        write_trec_run,
    )
    from assay.score import RetrievalScores, score_retrieval
    from assay.stats.agreement import agreement, agreement_by_criterion, agreement_panel
    from assay.stats.bootstrap import bootstrap_by_group, bootstrap_ci
    from assay.stats.calibration import (
        binary_calibration,
        binary_calibration_by_category,
        corrected_pass_rate,
    )
    from assay.stats.multiple import holm
    from assay.stats.paired import (
        mcnemar_exact,
        paired_bootstrap_diff,
        sign_flip_permutation,
        wilcoxon_moved,
    )
    from assay.stats.plan import plan_mcnemar
    from assay.stats.proportion import paired_proportion_diff, rate_interval
    from assay.synth import RoomCheck, RoomSummary, check_room, generate_room
    from assay.systems import HttpSystem, System, load_system, register_adapter, system_identity
    from assay.systems.filings import (
        REFUSAL,
        ExtractiveAnswerer,
        FilingsSystem,
        QueryPlan,
        RetrievalConfig,
        plan_query,
    )

from assay._version import __version__

_LAZY: dict[str, str] = {
    "Check": "assay.judge",
    "CheckContext": "assay.judge",
    "CheckInput": "assay.judge.registry",
    "MetricContext": "assay.metrics",
    "Outcome": "assay.judge",
    "Bundle": "assay.explorer",
    "export_bundle": "assay.explorer",
    "render_site": "assay.explorer",
    "Leaderboard": "assay.compare.leaderboard",
    "compare_many": "assay.compare.leaderboard",
    "Attribution": "assay.attribution",
    "attribute": "assay.attribution",
    "ExtractiveAnswerer": "assay.systems.filings",
    "FilingsSystem": "assay.systems.filings",
    "QueryPlan": "assay.systems.filings",
    "REFUSAL": "assay.systems.filings",
    "RetrievalConfig": "assay.systems.filings",
    "plan_query": "assay.systems.filings",
    "run_ablation": "assay.benchmarks.financebench",
    "ChunkSettings": "assay.corpus.chunking",
    "CorpusManifest": "assay.corpus.build",
    "Document": "assay.corpus.documents",
    "build_corpus": "assay.corpus.build",
    "chunk_document": "assay.corpus.chunking",
    "import_financebench": "assay.benchmarks.financebench",
    "load_documents": "assay.corpus.documents",
    "parse_file": "assay.corpus.parse",
    "ChatClient": "assay.chat",
    "JudgeInput": "assay.judge",
    "RoomCheck": "assay.synth",
    "RoomSummary": "assay.synth",
    "bootstrap_by_group": "assay.stats.bootstrap",
    "calibrate_files": "assay.label_files",
    "check_entry": "assay.judge",
    "check_numeric": "assay.judge",
    "check_room": "assay.synth",
    "compare_files": "assay.compare",
    "gate_files": "assay.compare",
    "generate_room": "assay.synth",
    "holm": "assay.stats.multiple",
    "load_margins": "assay.compare.gate",
    "paired_bootstrap_diff": "assay.stats.paired",
    "paired_proportion_diff": "assay.stats.proportion",
    "rate_interval": "assay.stats.proportion",
    "read_calibration": "assay.label_files",
    "Anchor": "assay.dataset.schema",
    "AssayError": "assay.errors",
    "Chunk": "assay.corpus.chunks",
    "ChunkTable": "assay.corpus.chunks",
    "Comparison": "assay.compare",
    "DataError": "assay.errors",
    "Dataset": "assay.dataset.io",
    "Entry": "assay.dataset.schema",
    "ExpectedBehavior": "assay.dataset.schema",
    "GatePolicy": "assay.compare.gate",
    "GateResult": "assay.compare.gate",
    "Hit": "assay.runs",
    "HttpSystem": "assay.systems",
    "KeyFact": "assay.dataset.schema",
    "LLMJudge": "assay.judge",
    "Metric": "assay.metrics",
    "MissingExtraError": "assay.errors",
    "Problem": "assay.errors",
    "RequestCache": "assay.cache",
    "RetrievalScores": "assay.score.retrieval",
    "Run": "assay.runs",
    "RunRow": "assay.runs",
    "Source": "assay.dataset.schema",
    "System": "assay.systems",
    "UsageError": "assay.errors",
    "agreement": "assay.stats.agreement",
    "agreement_by_criterion": "assay.stats.agreement",
    "agreement_file": "assay.label_files",
    "agreement_panel": "assay.stats.agreement",
    "binary_calibration": "assay.stats.calibration",
    "binary_calibration_by_category": "assay.stats.calibration",
    "bootstrap_ci": "assay.stats.bootstrap",
    "cache_key": "assay.cache",
    "check_run": "assay.judge",
    "compare_runs": "assay.compare",
    "compare_scores": "assay.compare",
    "containment": "assay.gold",
    "corrected_pass_rate": "assay.stats.calibration",
    "detect_refusal": "assay.judge",
    "extract_quantities": "assay.judge",
    "gate": "assay.compare.gate",
    "load_chunks": "assay.corpus.chunks",
    "load_dataset": "assay.dataset.io",
    "load_labels": "assay.label_files",
    "load_run": "assay.runs",
    "load_system": "assay.systems",
    "mcnemar_exact": "assay.stats.paired",
    "normalize_tokens": "assay.gold",
    "plan_mcnemar": "assay.stats.plan",
    "read_trec_qrels": "assay.runs",
    "read_trec_run": "assay.runs",
    "resolve_anchor": "assay.gold",
    "run_system": "assay.runner",
    "score_retrieval": "assay.score.retrieval",
    "sign_flip_permutation": "assay.stats.paired",
    "split_entries": "assay.dataset.split",
    "validate_file": "assay.gold",
    "wilcoxon_moved": "assay.stats.paired",
    "write_chunks": "assay.corpus.chunks",
    "write_dataset": "assay.dataset.io",
    "write_run": "assay.runs",
    "write_trec_run": "assay.runs",
    "qrels_from_dataset": "assay.runs",
    "register_adapter": "assay.systems",
    "system_identity": "assay.systems",
}


#: Namespaces for verbs and families of names: ``assay.fresh.seal``, ``assay.metrics.parse``.
_NAMESPACES: dict[str, str] = {
    "audit": "assay.audit",
    "attribution": "assay.attribution",
    "benchmarks": "assay.benchmarks",
    "corpus": "assay.corpus",
    "dataset": "assay.dataset",
    "explorer": "assay.explorer",
    "fresh": "assay.dataset.fresh",
    "gold": "assay.gold",
    "judge": "assay.judge",
    "logs": "assay.logs",
    "metrics": "assay.metrics",
    "report": "assay.report",
    "runs": "assay.runs",
    "sql": "assay.sql",
    "stats": "assay.stats",
    "synth": "assay.synth",
    "systems": "assay.systems",
}


def _lazy_value(scope: dict[str, Any], home: dict[str, str], package: str, name: str) -> Any:
    """A package face's `name`, imported from its module in `home` on first use and kept in
    `scope` (the face's globals) so the next use is a plain lookup."""
    module = home.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    scope[name] = value
    return value


def __getattr__(name: str) -> Any:
    if name in _NAMESPACES:
        mod = importlib.import_module(_NAMESPACES[name])
        globals()[name] = mod
        return mod
    return _lazy_value(globals(), _LAZY, "assay", name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, *_NAMESPACES])


__all__ = [
    "REFUSAL",
    "Anchor",
    "AssayError",
    "Attribution",
    "Bundle",
    "ChatClient",
    "Check",
    "CheckContext",
    "CheckInput",
    "Chunk",
    "ChunkSettings",
    "ChunkTable",
    "Comparison",
    "CorpusManifest",
    "DataError",
    "Dataset",
    "Document",
    "Entry",
    "ExpectedBehavior",
    "ExtractiveAnswerer",
    "FilingsSystem",
    "GatePolicy",
    "GateResult",
    "Hit",
    "HttpSystem",
    "JudgeInput",
    "KeyFact",
    "LLMJudge",
    "Leaderboard",
    "Metric",
    "MetricContext",
    "MissingExtraError",
    "Outcome",
    "Problem",
    "QueryPlan",
    "RequestCache",
    "RetrievalConfig",
    "RetrievalScores",
    "RoomCheck",
    "RoomSummary",
    "Run",
    "RunRow",
    "Source",
    "System",
    "UsageError",
    "__version__",
    "agreement",
    "agreement_by_criterion",
    "agreement_file",
    "agreement_panel",
    "attribute",
    "attribution",
    "audit",
    "benchmarks",
    "binary_calibration",
    "binary_calibration_by_category",
    "bootstrap_by_group",
    "bootstrap_ci",
    "build_corpus",
    "cache_key",
    "calibrate_files",
    "check_entry",
    "check_numeric",
    "check_room",
    "check_run",
    "chunk_document",
    "compare_files",
    "compare_many",
    "compare_runs",
    "compare_scores",
    "containment",
    "corpus",
    "corrected_pass_rate",
    "dataset",
    "detect_refusal",
    "explorer",
    "export_bundle",
    "extract_quantities",
    "fresh",
    "gate",
    "gate_files",
    "generate_room",
    "gold",
    "holm",
    "import_financebench",
    "judge",
    "load_chunks",
    "load_dataset",
    "load_documents",
    "load_labels",
    "load_margins",
    "load_run",
    "load_system",
    "mcnemar_exact",
    "metrics",
    "normalize_tokens",
    "paired_bootstrap_diff",
    "paired_proportion_diff",
    "parse_file",
    "plan_mcnemar",
    "plan_query",
    "qrels_from_dataset",
    "rate_interval",
    "read_calibration",
    "read_trec_qrels",
    "read_trec_run",
    "register_adapter",
    "render_site",
    "report",
    "resolve_anchor",
    "run_ablation",
    "run_system",
    "runs",
    "score_retrieval",
    "sign_flip_permutation",
    "split_entries",
    "sql",
    "stats",
    "synth",
    "system_identity",
    "systems",
    "validate_file",
    "wilcoxon_moved",
    "write_chunks",
    "write_dataset",
    "write_run",
    "write_trec_run",
]
