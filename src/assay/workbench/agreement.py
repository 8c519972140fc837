"""The agreement panel: how far experts agree on judging verdicts, per criterion and per pair,
and on the verdicts of tool tasks, per call (criterion `TOOL_CALL`: each call an agent made is
one item, Pass or Fail).

The statistics come from `assay.stats.agreement`: per criterion Krippendorff's alpha (nominal),
Gwet's AC1 and raw agreement over every judged output with at least two blind labels; per
annotator pair and criterion Cohen's kappa over the outputs both judged. Every figure carries
`assay.stats.agreement`'s default interval over items (kappa and alpha: the goodness-of-fit
interval on two labels, the score interval on three or more; the others: the jackknife on the Fisher-z scale; BCa bootstrap, seeded, where neither
is defined), and the panel names the intervals it shows (``intervals``). Calibration items
are left out (everyone labels them against known gold; they are not a sample of the queue).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.workbench.db import Database
from assay.workbench.models import Adjudication, Label, LabelRevision, Task, User
from assay.workbench.payloads import CRITERIA, current_criteria

__all__ = [
    "PANEL_CRITERIA",
    "TOOL_CALL",
    "agreement_panel",
    "blind_payloads",
    "judge_label_records",
    "tool_label_records",
]

TOOL_CALL = "tool_call"
"""The criterion of tool tasks' per-call verdicts on the panel and in the label export."""

PANEL_CRITERIA = (*CRITERIA, TOOL_CALL)
"""The criteria the panel reports, in its order."""


def blind_payloads(s: Session, label_ids: list[int]) -> dict[int, dict[str, Any]]:
    """For labels revised after their author could see the others (`revised_after_seen`), the
    last version stored before that: the author's own blind answer, which is what agreement
    measures (a copied answer is not agreement)."""
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(label_ids), 500):
        batch = label_ids[start : start + 500]
        for rev in s.scalars(
            select(LabelRevision)
            .where(LabelRevision.label_id.in_(batch), LabelRevision.after_seen.is_(False))
            .order_by(LabelRevision.id)
        ):
            out[rev.label_id] = rev.payload  # the latest blind version wins
    return out


def _complete_labels(db: Database, kind: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(task id, rater, blind payload) of every label on the non-calibration tasks of `kind`
    whose labels are all in (or that are adjudicated), in task then rater order."""
    with db.read() as s:
        found = s.execute(
            select(Label.task_id, User.username, Label.payload, Task.overlap, Label.id)
            .join(Task, Task.id == Label.task_id)
            .join(User, User.id == Label.user_id)
            .where(Task.kind == kind, Task.calibration.is_(False))
            .order_by(Label.task_id, User.username)
        ).all()
        flagged = list(s.scalars(select(Label.id).where(Label.revised_after_seen.is_(True))))
        blind = blind_payloads(s, flagged)
        adjudicated = set(s.scalars(select(Adjudication.task_id)))
    rows = [
        (tid, who, blind.get(lid, payload), overlap) for tid, who, payload, overlap, lid in found
    ]
    n = Counter(tid for tid, *_ in rows)
    return [
        (tid, who, payload)
        for tid, who, payload, overlap in rows
        if tid in adjudicated or n[tid] >= max(2, overlap)
    ]


def judge_label_records(db: Database) -> list[dict[str, Any]]:
    """Judging verdicts in the long format of `assay.stats.agreement` (item, rater, label,
    criterion): one record per label and criterion; the item is the judging task. Only tasks
    whose labels are all in (or that are adjudicated) count: the panel must not tell a labeller
    still working on a task how the others judged it. A label revised after its author saw the
    others counts as its blind version (`blind_payloads`)."""
    return [
        {"item": f"task-{tid}", "rater": who, "label": verdicts[c], "criterion": c}
        for tid, who, payload in _complete_labels(db, "judge")
        for verdicts in (current_criteria(payload)["verdicts"],)
        for c in CRITERIA
    ]


def tool_label_records(db: Database) -> list[dict[str, Any]]:
    """Tool tasks' verdicts in the same long format: one record per label and call made, the
    item being the call (``task-ID#call-N``, N from 1 in the order made), the criterion
    `TOOL_CALL`; complete tasks only and blind versions, as `judge_label_records`."""
    return [
        {
            "item": f"task-{tid}#call-{i}",
            "rater": who,
            "label": c["verdict"],
            "criterion": TOOL_CALL,
        }
        for tid, who, payload in _complete_labels(db, "tool")
        for i, c in enumerate(payload.get("calls") or [], start=1)
    ]


def _est(d: dict[str, Any], methods: set[str]) -> dict[str, Any]:
    if d["low"] is not None:
        methods.add(d["method"])
    return {
        "value": d["value"],
        "low": d["low"],
        "high": d["high"],
        "note": d["note"],
        "method": d["method"],
    }


def agreement_panel(
    db: Database, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Agreement on judging verdicts and on tool calls' verdicts; recomputed from the store on
    every call."""
    records = judge_label_records(db) + tool_label_records(db)
    out: dict[str, Any] = {
        "criteria": [],
        "columns": [],  # the criteria reported, in the panel's order
        "pairs": [],
        "n_items": 0,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "intervals": "",
    }
    if not records:
        return out
    # scipy: import on first use
    from assay.stats.agreement import agreement_by_criterion, describe_intervals

    methods: set[str] = set()

    # the scale is named, so coefficients that need both categories stay defined when one
    # category went unused in a batch
    by = agreement_by_criterion(
        records,
        categories=["pass", "fail"],
        positive="pass",
        rng=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        max_disagreements=50,
    )
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for c in PANEL_CRITERIA:
        res = by.get(c)
        if res is None:
            continue
        st = res.statistics
        out["n_items"] = max(out["n_items"], res.n_items_multi)
        out["criteria"].append(
            {
                "criterion": c,
                "n_items": res.n_items_multi,
                "alpha": _est(st["alpha_nominal"].to_dict(), methods),
                "ac1": _est(st["gwet_ac1"].to_dict(), methods),
                "raw": _est(st["raw_agreement"].to_dict(), methods),
                "messages": list(res.messages),
            }
        )
        for p in res.pairs:
            row = pairs.setdefault(
                (p.rater_a, p.rater_b), {"a": p.rater_a, "b": p.rater_b, "n": p.n}
            )
            row["n"] = max(row["n"], p.n)
            row[c] = {
                "kappa": _est(p.cohen_kappa.to_dict(), methods),
                "raw": _est(p.raw_agreement.to_dict(), methods),
            }
    out["pairs"] = [pairs[k] for k in sorted(pairs)]
    out["columns"] = [row["criterion"] for row in out["criteria"]]
    out["intervals"] = describe_intervals(methods)
    return out
