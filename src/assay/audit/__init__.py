"""Audits that keep a golden set true: stale entries after a filing season (`audit_seasonal`),
likely label errors ranked for adjudication (`audit_labels`, `apply_corrections`), and held-out
rows leaking into prompts or training data (`audit_leakage`). See docs/audit.md."""

from assay.audit.label_audit import (
    WEIGHTS,
    CorrectionReport,
    LabelAuditReport,
    ReviewRow,
    Signal,
    apply_corrections,
    audit_labels,
    audit_labels_files,
    bump_version,
    ledger_runs,
)
from assay.audit.leakage import DEFAULT_SPLITS, Leak, LeakageReport, audit_leakage
from assay.audit.seasonal import (
    TIME_WORDS,
    Arrival,
    SeasonalFlag,
    SeasonalReport,
    audit_seasonal,
    load_corpus_documents,
    time_words,
)
from assay.audit.workbench import queue_for_review

__all__ = [
    "DEFAULT_SPLITS",
    "TIME_WORDS",
    "WEIGHTS",
    "Arrival",
    "CorrectionReport",
    "LabelAuditReport",
    "Leak",
    "LeakageReport",
    "ReviewRow",
    "SeasonalFlag",
    "SeasonalReport",
    "Signal",
    "apply_corrections",
    "audit_labels",
    "audit_labels_files",
    "audit_leakage",
    "audit_seasonal",
    "bump_version",
    "ledger_runs",
    "load_corpus_documents",
    "queue_for_review",
    "time_words",
]
