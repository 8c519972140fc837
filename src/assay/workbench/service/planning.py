"""Planning expert time: measured minutes per label (by task kind and expert, from the seconds
the pages record with every label), the measured adjudication rate, and the projected expert
hours for a set of rows.

The budget of N rows: every row is labelled once, a share `overlap` of them a second time
(labels = N x (1 + overlap)); a share `adjudication_rate` of the double-labelled rows needs
adjudication (adjudications = N x overlap x adjudication_rate). Hours = (labels x minutes per
label + adjudications x minutes per adjudication) / 60. The labelling guide's worked example,
200 rows x 3 minutes with 50% overlap and adjudication (30% of the overlap, 10 minutes each),
is 900 + 300 minutes = 20 hours.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from assay.errors import UsageError
from assay.report import ReportMixin, Tabular
from assay.workbench.db import Database
from assay.workbench.models import Adjudication, Label, Task, User
from assay.workbench.payloads import agreement_key

__all__ = [
    "Budget",
    "DraftSaving",
    "MinutesRow",
    "TimeStats",
    "measured_time",
    "plan_budget",
]

DEFAULT_MINUTES = 3.0
DEFAULT_ADJUDICATION_RATE = 0.3
DEFAULT_ADJUDICATION_MINUTES = 10.0


@dataclass(frozen=True)
class MinutesRow:
    """Minutes per label of one task kind, for one expert (or "all")."""

    kind: str
    expert: str
    n: int
    mean: float
    median: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "expert": self.expert,
            "n": self.n,
            "mean_minutes": self.mean,
            "median_minutes": self.median,
        }


@dataclass(frozen=True)
class DraftSaving:
    """Measured minutes per reference answer started from the system's draft against from a
    blank form, and what a draft saves (blank minus drafted; negative: drafts cost time)."""

    drafted_minutes: float
    blank_minutes: float
    n_drafted: int
    n_blank: int

    @property
    def saved_minutes(self) -> float:
        return self.blank_minutes - self.drafted_minutes

    def to_dict(self) -> dict[str, Any]:
        return {
            "drafted_minutes": self.drafted_minutes,
            "blank_minutes": self.blank_minutes,
            "n_drafted": self.n_drafted,
            "n_blank": self.n_blank,
            "saved_minutes": self.saved_minutes,
        }

    def line(self) -> str:
        verb = "save" if self.saved_minutes >= 0 else "cost"
        return (
            f"reference answers: {self.drafted_minutes:.1f} min from a draft "
            f"({self.n_drafted} labels) vs {self.blank_minutes:.1f} min blank ({self.n_blank}): "
            f"drafts {verb} {abs(self.saved_minutes):.1f} min each"
        )


@dataclass(frozen=True)
class TimeStats(ReportMixin):
    """Measured minutes per label by kind and expert (labels without a recorded time are left
    out), and the share of settled double-labelled tasks that needed adjudication."""

    rows: list[MinutesRow]
    adjudication_rate: float | None
    n_double: int
    drafts: DraftSaving | None = None  # when reference labels were timed both ways

    def per_kind(self, kind: str | None = None) -> float | None:
        """Mean minutes per label of a kind (or of every kind), None when nothing is measured."""
        for r in self.rows:
            if r.expert == "all" and r.kind == (kind or "all"):
                return r.mean
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [r.to_dict() for r in self.rows],
            "adjudication_rate": self.adjudication_rate,
            "n_double_labelled": self.n_double,
            "drafts": self.drafts.to_dict() if self.drafts else None,
        }

    def tabular(self) -> Tabular:

        rate = "-" if self.adjudication_rate is None else f"{self.adjudication_rate:.0%}"
        return Tabular(
            title="Measured minutes per label",
            header=["kind", "expert", "labels", "mean min", "median min"],
            rows=[
                [r.kind, r.expert, str(r.n), f"{r.mean:.1f}", f"{r.median:.1f}"] for r in self.rows
            ],
            footer=[f"adjudication rate: {rate} of {self.n_double} double-labelled tasks"]
            + ([self.drafts.line()] if self.drafts else []),
            emphasis={"all"},
        )


def measured_time(db: Database) -> TimeStats:
    with db.read() as s:
        rows = s.execute(
            select(Task.kind, User.username, Label.seconds, Label.drafted)
            .join(Task, Task.id == Label.task_id)
            .join(User, User.id == Label.user_id)
            .where(Label.seconds.is_not(None), Label.seconds > 0)
        ).all()
        tasks = {t.id: t for t in s.scalars(select(Task).where(Task.calibration.is_(False)))}
        labels: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for tid, payload in s.execute(select(Label.task_id, Label.payload)):
            labels[tid].append(payload)
        adjudicated = set(s.scalars(select(Adjudication.task_id)))
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    ways: dict[bool, list[float]] = {True: [], False: []}
    for kind, who, seconds, drafted in rows:
        if seconds is None:
            continue
        for key in ((kind, who), (kind, "all"), ("all", "all")):
            by[key].append(float(seconds) / 60)
        if kind == "reference" and drafted is not None:
            ways[bool(drafted)].append(float(seconds) / 60)
    drafts = None
    if ways[True] and ways[False]:
        drafts = DraftSaving(
            drafted_minutes=statistics.fmean(ways[True]),
            blank_minutes=statistics.fmean(ways[False]),
            n_drafted=len(ways[True]),
            n_blank=len(ways[False]),
        )
    out = [
        MinutesRow(kind, who, len(v), statistics.fmean(v), statistics.median(v))
        for (kind, who), v in sorted(by.items(), key=lambda kv: (kv[0][0] == "all", kv[0]))
    ]
    double = [
        tid
        for tid, t in tasks.items()
        if len(labels.get(tid, [])) >= max(2, t.overlap) or tid in adjudicated
    ]
    needing = [
        tid
        for tid in double
        if tid in adjudicated
        or len({agreement_key(tasks[tid].kind, p) for p in labels.get(tid, [])}) > 1
    ]
    rate = len(needing) / len(double) if double else None
    return TimeStats(rows=out, adjudication_rate=rate, n_double=len(double), drafts=drafts)


@dataclass(frozen=True)
class Budget(ReportMixin):
    """Projected expert time for `rows` rows (see the module's docstring for the arithmetic)."""

    rows: int
    minutes_per_label: float
    overlap: float
    adjudication_rate: float
    adjudication_minutes: float
    source: str  # where minutes per label came from: "given", "measured" or "default"
    drafts: DraftSaving | None = None  # measured: what the system's drafts save per answer

    @property
    def labels(self) -> float:
        return self.rows * (1 + self.overlap)

    @property
    def adjudications(self) -> float:
        return self.rows * self.overlap * self.adjudication_rate

    @property
    def label_hours(self) -> float:
        return self.labels * self.minutes_per_label / 60

    @property
    def adjudication_hours(self) -> float:
        return self.adjudications * self.adjudication_minutes / 60

    @property
    def hours(self) -> float:
        return self.label_hours + self.adjudication_hours

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "minutes_per_label": self.minutes_per_label,
            "minutes_source": self.source,
            "overlap": self.overlap,
            "adjudication_rate": self.adjudication_rate,
            "adjudication_minutes": self.adjudication_minutes,
            "labels": self.labels,
            "adjudications": self.adjudications,
            "label_hours": self.label_hours,
            "adjudication_hours": self.adjudication_hours,
            "hours": self.hours,
            "drafts": self.drafts.to_dict() if self.drafts else None,
        }

    def tabular(self) -> Tabular:

        return Tabular(
            title=f"Expert time for {self.rows} rows",
            header=["part", "count", "minutes each", "hours"],
            rows=[
                [
                    "labels",
                    f"{self.labels:.0f}",
                    f"{self.minutes_per_label:.1f} ({self.source})",
                    f"{self.label_hours:.1f}",
                ],
                [
                    "adjudications",
                    f"{self.adjudications:.0f}",
                    f"{self.adjudication_minutes:.1f}",
                    f"{self.adjudication_hours:.1f}",
                ],
                ["total", "", "", f"{self.hours:.1f}"],
            ],
            footer=[
                f"overlap {self.overlap:.0%} of rows labelled twice; "
                f"{self.adjudication_rate:.0%} of those adjudicated"
            ]
            + ([self.drafts.line()] if self.drafts else []),
            emphasis={"total"},
        )


def plan_budget(
    rows: int,
    *,
    overlap: float = 0.5,
    minutes_per_label: float | None = None,
    adjudication_rate: float | None = None,
    adjudication_minutes: float = DEFAULT_ADJUDICATION_MINUTES,
    measured: TimeStats | None = None,
    kind: str | None = None,
) -> Budget:
    """Project expert hours. Minutes per label and the adjudication rate come from the
    arguments, else from `measured` (of `kind`, or all kinds), else from the defaults (3 minutes,
    30%)."""
    if rows < 0:
        raise UsageError("--rows must be 0 or more")
    if not 0 <= overlap <= 1:
        raise UsageError("--overlap is the share of rows labelled twice, from 0 to 1")
    if adjudication_rate is not None and not 0 <= adjudication_rate <= 1:
        raise UsageError("--adjudication-rate is a share, from 0 to 1")
    if (minutes_per_label is not None and minutes_per_label <= 0) or adjudication_minutes < 0:
        raise UsageError("minutes must be positive")
    source = "given"
    if minutes_per_label is None:
        got = measured.per_kind(kind) if measured else None
        minutes_per_label, source = (
            (got, "measured") if got is not None else (DEFAULT_MINUTES, "default")
        )
    if adjudication_rate is None:
        got_rate = measured.adjudication_rate if measured else None
        adjudication_rate = got_rate if got_rate is not None else DEFAULT_ADJUDICATION_RATE
    return Budget(
        rows=rows,
        minutes_per_label=minutes_per_label,
        overlap=overlap,
        adjudication_rate=adjudication_rate,
        adjudication_minutes=adjudication_minutes,
        source=source,
        drafts=measured.drafts if measured else None,
    )
