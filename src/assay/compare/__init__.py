"""The evaluation core: paired comparisons of runs, the gate, the N-run leaderboard and the ledger.

``compare`` takes per-entry series (one value per entry id, with a kind that chooses the test)
and reports per row (category or any grouping) the flips, the paired test, an interval and the
Holm-adjusted p; ``open_inputs`` opens a command's dataset and runs once, as one use of a sealed
fresh sample, and everything below it takes the loaded objects; ``gate`` is a policy over a
comparison; ``leaderboard`` compares several candidates with one baseline in one Holm family;
``ledger`` keeps every comparison made against a dataset, so p-values can be corrected for its
history. By concern: ``paired`` (the paired statistics and `compare_arrays`), ``comparison`` (the
result objects and their reports), ``render`` (the formats they share), ``files`` (runs read from files), ``ledger``
(the dataset's history of comparisons), ``options`` (`CompareOptions`, the one value of options
that compare, the gate and the leaderboard pass down), ``pairing`` (``--pair turn|conversation``:
`per_conversation` rolls a run's series up to one value per conversation).
"""

from __future__ import annotations

from assay.compare._reading import Inputs, open_inputs
from assay.compare.comparison import (
    CategoryComparison,
    Comparison,
    MetricComparison,
    min_entries_for_conclusion,
    too_few_note,
)
from assay.compare.files import compare_files, compare_runs, gate_files
from assay.compare.gate import GatePolicy, GateResult, GateRow, gate, load_margins
from assay.compare.leaderboard import (
    Leaderboard,
    compare_many,
    compare_many_files,
    leaderboard_from_scores,
    leaderboard_from_series,
    run_names,
)
from assay.compare.ledger import (
    LEDGER_SCHEMA,
    LedgerHistory,
    append_ledger,
    comparison_key,
    ledger_count,
    ledger_history,
    ledger_path,
    read_ledger,
    record_in_ledger,
    void_comparison,
)
from assay.compare.options import CompareOptions, RunsOptions
from assay.compare.paired import (
    DEFAULT_METRICS,
    compare_arrays,
    compare_scores,
    compare_series,
    is_binary_metric,
)
from assay.compare.pairing import PAIRS, per_conversation
from assay.compare.planning import SamplePlan, plan_sample
from assay.compare.series import (
    RunSeries,
    Series,
    SeriesError,
    SeriesInfo,
    describe,
    series_for,
    series_from_checks,
    series_from_judged,
    series_from_scores,
    series_names,
)

__all__ = [
    "DEFAULT_METRICS",
    "LEDGER_SCHEMA",
    "PAIRS",
    "CategoryComparison",
    "CompareOptions",
    "Comparison",
    "GatePolicy",
    "GateResult",
    "GateRow",
    "Inputs",
    "Leaderboard",
    "LedgerHistory",
    "MetricComparison",
    "RunSeries",
    "RunsOptions",
    "SamplePlan",
    "Series",
    "SeriesError",
    "SeriesInfo",
    "append_ledger",
    "compare_arrays",
    "compare_files",
    "compare_many",
    "compare_many_files",
    "compare_runs",
    "compare_scores",
    "compare_series",
    "comparison_key",
    "describe",
    "gate",
    "gate_files",
    "is_binary_metric",
    "leaderboard_from_scores",
    "leaderboard_from_series",
    "ledger_count",
    "ledger_history",
    "ledger_path",
    "load_margins",
    "min_entries_for_conclusion",
    "open_inputs",
    "per_conversation",
    "plan_sample",
    "read_ledger",
    "record_in_ledger",
    "run_names",
    "series_for",
    "series_from_checks",
    "series_from_judged",
    "series_from_scores",
    "series_names",
    "too_few_note",
    "void_comparison",
]
