"""The workbench's library layer, one module per concern: `imports` (corpus, entries, runs),
`queue` (work sessions, claiming tasks), `labels` (blind visibility, task views, submissions,
flags), `search` (full-text search of the corpus) and `adjudication` (queue, final labels,
guidelines, gold). Every web route and CLI command is a thin wrapper over a function here; each
returns a typed value (a frozen dataclass with `to_dict()` for JSON).
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
    list_labels,
    submit_label,
    task_view,
)
from assay.workbench.service.queue import (
    QueueCount,
    claim_next,
    current_work_session,
    queue_counts,
    release_stale_claims,
    start_work_session,
)
from assay.workbench.service.search import Facets, facets, search_chunks

__all__ = [
    "AdjudicationResult",
    "AdjudicationView",
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
    "NotFound",
    "OutputView",
    "QueueCount",
    "QueueRow",
    "Submission",
    "TaskView",
    "add_flag",
    "adjudicate",
    "adjudication_queue",
    "adjudication_view",
    "can_view_label",
    "claim_next",
    "current_work_session",
    "edit_guidelines",
    "facets",
    "get_label",
    "gold_for_task",
    "guidelines",
    "import_corpus",
    "import_entries",
    "import_run",
    "list_labels",
    "queue_counts",
    "release_stale_claims",
    "search_chunks",
    "settings_get",
    "settings_put",
    "start_work_session",
    "submit_label",
    "task_view",
]
