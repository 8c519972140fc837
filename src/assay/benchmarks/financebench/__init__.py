"""FinanceBench (Islam et al., 2023, arXiv:2311.11944) as an assay benchmark.

- `importer`: FinanceBench questions -> assay entries with page anchors (`import_financebench`),
  written as a dataset with the questions whose filings the corpus lacks (`import_dataset`).
- `ladder`: the retrieval ablation of the reference filings pipeline (`run_ablation`), scored by
  `assay.score` and compared with BM25 by `assay.compare`.
- `judge_bench`: the deterministic answer checks calibrated against the human grades
  (`financebench_judge`).

The result types (`FinanceBenchImport`, `AblationResult`, `FinanceBenchReport`) are reports:
``to_dict``, ``to_json``, ``to_table``, ``to_markdown``.
"""

from assay.benchmarks.financebench.importer import (
    FinanceBenchImport,
    corpus_documents,
    import_dataset,
    import_financebench,
    missing_filings,
    question_to_entry,
    questions_dataset,
)
from assay.benchmarks.financebench.judge_bench import (
    SPLIT_SALT,
    CalibrationRow,
    FinanceBenchReport,
    GradedAnswer,
    JudgedAnswer,
    financebench_judge,
    judge_answers,
    load_graded,
    load_questions,
    split_halves,
)
from assay.benchmarks.financebench.ladder import (
    METRICS,
    AblationResult,
    AblationRow,
    default_rungs,
    metric_names,
    new_rungs,
    run_ablation,
)

__all__ = [
    "METRICS",
    "SPLIT_SALT",
    "AblationResult",
    "AblationRow",
    "CalibrationRow",
    "FinanceBenchImport",
    "FinanceBenchReport",
    "GradedAnswer",
    "JudgedAnswer",
    "corpus_documents",
    "default_rungs",
    "financebench_judge",
    "import_dataset",
    "import_financebench",
    "judge_answers",
    "load_graded",
    "load_questions",
    "metric_names",
    "missing_filings",
    "new_rungs",
    "question_to_entry",
    "questions_dataset",
    "run_ablation",
    "split_halves",
]
