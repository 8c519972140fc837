"""Production logs: ingest, the traffic report, the monthly fresh sample, failures into entries.

- `model`: the log format (`LogRecord`), its reader (assay JSONL and OpenInference/Phoenix
  retriever spans, JSON or JSONL), `normalize_query`;
- `store` / `ingest`: the SQLite store, each record once (`ingest_logs`);
- `classify`: the transparent traffic classifier (rules + nearest labelled golden queries);
- `report`: `traffic_report` (per period and category: volume, no-hits, abstention, feedback,
  latency, score drift, retrieval on traffic matching golden entries) and `category_shares` (confident
  placements only, the uncertain counted);
- `sample`: `sample_month`, the stratified, seeded, blind monthly fresh sample;
- `failures`: `find_failures`, one draft entry per failing query;
- `write`: the lines `assay run --log` appends.
"""

from assay.logs.classify import CLASSIFIER_VERSION, Classification, Classifier
from assay.logs.failures import FAILURE_RULES, FailureReport, find_failures
from assay.logs.ingest import IngestReport, ingest_logs
from assay.logs.model import LogRecord, ReadStats, normalize_query, read_log
from assay.logs.report import (
    CategoryShares,
    Period,
    TrafficReport,
    category_shares,
    traffic_report,
)
from assay.logs.sample import NEAR_DUPLICATE, SampleReport, queue_in_workbench, sample_month
from assay.logs.write import append_log, log_lines_from_run

__all__ = [
    "CLASSIFIER_VERSION",
    "FAILURE_RULES",
    "NEAR_DUPLICATE",
    "CategoryShares",
    "Classification",
    "Classifier",
    "FailureReport",
    "IngestReport",
    "LogRecord",
    "Period",
    "ReadStats",
    "SampleReport",
    "TrafficReport",
    "append_log",
    "category_shares",
    "find_failures",
    "ingest_logs",
    "log_lines_from_run",
    "normalize_query",
    "queue_in_workbench",
    "read_log",
    "sample_month",
    "traffic_report",
]
