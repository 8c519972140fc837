"""The workbench's library layer, one module per concern: `imports` (corpus, entries, runs),
`queue` (work sessions, claiming tasks), `labels` (blind visibility, task views, submissions,
flags), `search` (full-text search of the corpus), `access` (the experts' own access to
restricted documents), `sql`, `policy` and `tools` (those task kinds' panels), `adjudication` (queue, final labels,
guidelines, gold) and `planning` (measured minutes per label, projected expert hours). Every
web route and CLI command is a thin wrapper over a function here; each returns a typed value
(a frozen dataclass with `to_dict()` for JSON).
"""

from __future__ import annotations

from assay.workbench.service._common import (
    ChunkView,
    Conflict,
    LabelView,
    NotFound,
    settings_get,
    settings_put,
)
from assay.workbench.service.access import UserAccess, set_redacting, set_user_access
from assay.workbench.service.adjudication import (
    AdjudicationResult,
    AdjudicationView,
    FinalLabel,
    FlagView,
    GuidelineView,
    QueueRow,
    adjudicate,
    adjudication_queue,
    adjudication_view,
    edit_guidelines,
    gold_for_task,
    guidelines,
)
from assay.workbench.service.imports import (
    ImportSummary,
    import_corpus,
    import_entries,
    import_run,
)
from assay.workbench.service.labels import (
    Feedback,
    ItemView,
    OutputView,
    Submission,
    TaskView,
    add_flag,
    can_view_label,
    get_label,
    labels_complete,
    list_labels,
    may_see_others,
    submit_label,
    task_view,
)
from assay.workbench.service.planning import (
    Budget,
    MinutesRow,
    TimeStats,
    measured_time,
    plan_budget,
)
from assay.workbench.service.queue import (
    QueueCount,
    claim_next,
    current_work_session,
    open_task,
    queue_counts,
    release_stale_claims,
    start_work_session,
)
from assay.workbench.service.search import Facets, facets, get_chunk, search_chunks

__all__ = [
    "AdjudicationResult",
    "AdjudicationView",
    "Budget",
    "ChunkView",
    "Conflict",
    "Facets",
    "Feedback",
    "FinalLabel",
    "FlagView",
    "GuidelineView",
    "ImportSummary",
    "ItemView",
    "LabelView",
    "MinutesRow",
    "NotFound",
    "OutputView",
    "QueueCount",
    "QueueRow",
    "Submission",
    "TaskView",
    "TimeStats",
    "UserAccess",
    "add_flag",
    "adjudicate",
    "adjudication_queue",
    "adjudication_view",
    "can_view_label",
    "claim_next",
    "current_work_session",
    "edit_guidelines",
    "facets",
    "get_chunk",
    "get_label",
    "gold_for_task",
    "guidelines",
    "import_corpus",
    "import_entries",
    "import_run",
    "labels_complete",
    "list_labels",
    "may_see_others",
    "measured_time",
    "open_task",
    "plan_budget",
    "queue_counts",
    "release_stale_claims",
    "search_chunks",
    "set_redacting",
    "set_user_access",
    "settings_get",
    "settings_put",
    "start_work_session",
    "submit_label",
    "task_view",
]
