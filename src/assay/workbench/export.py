"""Gold out of the workbench: a dataset JSONL the core validates, and judge few-shot examples."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import select

from assay._io import atomic_writer
from assay.dataset import Entry, load_manifest, write_dataset
from assay.errors import DataError, Problem
from assay.gold import record_chunk_hashes
from assay.workbench.db import Database
from assay.workbench.models import (
    Adjudication,
    Chunk,
    DatasetVersion,
    Flag,
    Item,
    Label,
    Output,
    Task,
    User,
)
from assay.workbench.payloads import current_criteria
from assay.workbench.service import gold_for_task, settings_get, settings_put
from assay.workbench.service.sql import entry_with_relative_database

__all__ = [
    "DRAFT_TIER",
    "FEWSHOT_SPLIT",
    "bump_version",
    "export_fewshot",
    "export_gold",
    "export_labels_long",
    "labels_long",
]

DRAFT_TIER = "draft"
AMBIGUOUS_FLAG = "ambiguous_question"  # an expert's quick flag (assay.workbench.payloads.FLAGS)
AMBIGUOUS_CAUSE = "ambiguous_item"  # an adjudication's root cause

FEWSHOT_SPLIT = "judge-fewshot"


def bump_version(version: str | None) -> str:
    """Next minor version: 1.4.2 -> 1.5.0, 3 -> 3.1.0; nothing (or a content hash) -> 1.0.0."""
    if not version:
        return "1.0.0"
    m = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", version.strip())
    if not m:
        return "1.0.0"
    return f"{int(m.group(1))}.{int(m.group(2) or 0) + 1}.0"


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3]) or (0,)


def export_gold(
    db: Database,
    out: str | Path,
    *,
    message: str = "",
    include_unlabelled: bool = False,
    today: dt.date | None = None,
) -> dict[str, Any]:
    """Write the items whose gold the experts settled (agreed or adjudicated) as Entries; the
    others are left out and counted (`n_left_out`), or with `include_unlabelled` written as they
    were imported, marked `label_tier: "draft"` (never as unanswerable: validate and scoring
    count a draft without evidence as not labelled yet).

    A task's gold is its adjudication or, once `overlap` experts agree, the earliest label.
    Evidence gold sets evidence_paths; reference gold sets reference_answer, key_facts,
    answerable, expected_behavior, acceptable_response_notes and the structured-data lookup
    behind a 'not disclosed' label (`structured_lookup`, with who looked and when). reviewed_by counts the distinct
    experts behind the settled gold (adjudicators included) and sets the tier (`label_tier`):
    gold when two or more experts agree or an adjudicator settled it, silver for one expert's
    label (a task of overlap 1). An item an expert flagged ambiguous_question, or whose
    adjudication names the root cause ambiguous_item, is written `ambiguous: true` with the
    reason (reported apart, never scored or gated); quick flags go into `flags`; items
    with an adjudicated hard judging case get split "judge-fewshot" so a judge is never tested
    on its own few-shot examples. Entries whose gold the workbench set record, in
    `chunk_hashes`, the fingerprint of each chunk id's text in the store (what the experts read),
    so a later re-chunk that changes a chunk's text is flagged by `assay validate --chunks`. The
    version is the newest of the output manifest's and the store's, bumped by one minor step,
    with a changelog entry; every entry is validated first.
    """
    today = today or dt.date.today()
    with db.read() as s:
        items = list(s.scalars(select(Item).order_by(Item.id)))
        tasks = list(s.scalars(select(Task).order_by(Task.id)))
        labels: dict[int, list[Label]] = defaultdict(list)
        for lab in s.scalars(select(Label).order_by(Label.id)):
            labels[lab.task_id].append(lab)
        adjs = {a.task_id: a for a in s.scalars(select(Adjudication))}
        names = {u.id: u.username for u in s.scalars(select(User))}
        flags: dict[str, set[str]] = defaultdict(set)
        for f in s.scalars(select(Flag)):
            flags[f.item_id].add(f.flag)
    by_item: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_item[t.item_id].append(t)
    entries: list[Entry] = []
    with_gold: list[int] = []  # positions in `entries` whose gold the workbench set
    problems: list[Problem] = []
    n_updated = n_adjudicated = n_left_out = n_drafts = 0
    for item in items:
        data = dict(item.entry)
        reviewers: set[int] = set()
        touched = adjudicated = fewshot = False
        ambiguous: list[str] = []
        for t in by_item.get(item.id, []):
            if t.calibration:
                continue
            adj = adjs.get(t.id)
            if adj is not None and adj.root_cause == AMBIGUOUS_CAUSE:
                ambiguous.append(
                    f"adjudicated as an ambiguous item ({t.kind}): {adj.note}".strip(": ")
                )
            gold = gold_for_task(t, labels[t.id], adj)
            if gold is None:
                continue
            if t.kind in ("judge", "policy", "tool"):  # verdicts on an output, not entry gold
                if adj is not None and adj.hard_case and t.kind != "tool":
                    fewshot = True
                continue
            if t.kind == "sql":  # only an edited gold query changes the entry
                if not gold.get("gold_query"):
                    continue
                g = dict(data["sql"])
                # the edited query replaces the gold; its result is recomputed from it
                g["queries"], g["result"] = [gold["gold_query"]], None
                data["sql"] = g
            touched = True
            reviewers.update(lab.user_id for lab in labels[t.id])
            if adj is not None:
                adjudicated = True
                reviewers.add(adj.adjudicator_id)
            if t.kind == "evidence":
                data["evidence_paths"] = gold["paths"]
                grades = gold.get("relevance") or {}
                if grades:  # graded relevance per chunk id, as qrels and nDCG read it
                    meta = dict(data.get("metadata") or {})
                    meta["relevance"] = {k: int(v) for k, v in sorted(grades.items())}
                    data["metadata"] = meta
            elif t.kind == "reference":
                data["reference_answer"] = gold["reference_answer"] or None
                data["key_facts"] = gold["key_facts"]
                data["answerable"] = gold["answerable"]
                data["expected_behavior"] = gold["expected_behavior"]
                data["acceptable_response_notes"] = gold["acceptable_response_notes"] or None
                lookup = gold.get("structured_lookup")
                # who looked and when: the adjudicator, else the author of the settled label
                by, at = (
                    (adj.adjudicator_id, adj.created_at)
                    if adj is not None
                    else (labels[t.id][0].user_id, labels[t.id][0].created_at)
                )
                data["structured_lookup"] = lookup and dict(lookup) | {
                    "by": names.get(by),
                    "at": at.date().isoformat(),
                }
                if gold.get("from_draft"):  # the expert started from the system's draft
                    data["metadata"] = dict(data.get("metadata") or {}) | {
                        "reference_from_draft": True
                    }
        # an item whose only settled gold is a hard judging case is written as imported, in
        # the few-shot split (out of the judge's test split)
        if not touched and not fewshot and not include_unlabelled:
            n_left_out += 1
            continue
        if not touched and not fewshot:
            n_drafts += 1
            data["label_tier"] = DRAFT_TIER
            data.pop("reviewed_by", None)
        if touched:
            n_updated += 1
            n_adjudicated += adjudicated
            data["reviewed_by"] = len(reviewers)
            # two experts agreeing, or an adjudication (its adjudicator counted among the
            # reviewers), is gold; one expert's label, or one person adjudicating their own, silver
            data["label_tier"] = "gold" if len(reviewers) >= 2 else "silver"
            data.setdefault("added", today.isoformat())
            if not data.get("source"):
                data["source"] = "hand"
            data.pop("chunk_hashes", None)  # recorded afresh below, for the gold set here
        if flags.get(item.id):
            data["flags"] = sorted(set(data.get("flags", [])) | flags[item.id])
        if AMBIGUOUS_FLAG in flags.get(item.id, ()):
            ambiguous.append("flagged ambiguous_question by an expert in the workbench")
        if ambiguous:  # reported apart, never scored or gated
            data["ambiguous"] = True
            data["ambiguous_reason"] = "; ".join(
                [data.get("ambiguous_reason") or "", *ambiguous]
            ).strip("; ")
        if fewshot:
            data["split"] = FEWSHOT_SPLIT
        data = {k: v for k, v in data.items() if v is not None}
        data = entry_with_relative_database(data, Path(out).parent)
        try:
            entries.append(Entry.model_validate(data))
        except Exception as exc:  # pydantic.ValidationError
            problems.append(Problem(f"item {item.id}", None, None, str(exc).splitlines()[0]))
            continue
        if touched:
            with_gold.append(len(entries) - 1)
    if problems:
        raise DataError(problems)
    wanted = sorted({cid for i in with_gold for cid in entries[i].chunk_ids()})
    texts: dict[str, str] = {}
    with db.read() as s:
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            texts.update(
                (c.chunk_id, c.text)
                for c in s.scalars(select(Chunk).where(Chunk.chunk_id.in_(batch)))
            )
    for i in with_gold:
        entries[i] = record_chunk_hashes(entries[i], texts)
    out = Path(out)
    previous = [
        v for v in (load_manifest(out).get("version"), settings_get(db, "dataset_version")) if v
    ]
    version = bump_version(max(previous, key=_version_key) if previous else None)
    note = (
        f"workbench export: {len(entries)} entries, {n_updated} with expert gold "
        f"({n_adjudicated} adjudicated)"
        + (f", {n_drafts} unlabelled drafts" if n_drafts else "")
        + (f"; {n_left_out} unlabelled items left out" if n_left_out else "")
        + (f"; {message}" if message else "")
    )
    ds = write_dataset(out, entries, version=version, changelog=note)
    with db.write() as s:
        settings_put(s, "dataset_version", version)
        s.add(
            DatasetVersion(
                version=version,
                change=note,
                n_entries=len(entries),
                sha256=ds.content_hash,
            )
        )
    return {
        "path": str(out),
        "version": version,
        "n_entries": len(entries),
        "n_with_gold": n_updated,
        "n_adjudicated": n_adjudicated,
        "n_drafts": n_drafts,
        "n_left_out": n_left_out,
        "changelog": note,
    }


def export_fewshot(db: Database, out: str | Path) -> dict[str, Any]:
    """Adjudicated hard judging and policy cases as judge few-shot examples (JSONL, one per
    case).

    Each row holds the question, the system answer, the retrieved chunk ids, the final verdicts
    and critiques (a policy case: the `policy_ok` verdict, and the entry's principal), the root
    cause and the split "judge-fewshot"; the gold export puts the same items in that split, so a
    judge's test split never contains its own examples.
    """
    version = settings_get(db, "dataset_version")
    rows: list[dict[str, Any]] = []
    with db.read() as s:
        q = (
            select(Adjudication, Task, Item, Output, User.username)
            .join(Task, Task.id == Adjudication.task_id)
            .join(Item, Item.id == Task.item_id)
            .join(Output, Output.id == Task.output_id)
            .join(User, User.id == Adjudication.adjudicator_id)
            .where(Adjudication.hard_case.is_(True), Task.kind.in_(("judge", "policy")))
            .order_by(Item.id, Output.run_name, Task.kind)
        )
        for adj, task, item, output, who in s.execute(q):
            if task.kind == "policy":
                verdicts = {"policy_ok": adj.payload["verdict"]}
                critiques = (
                    {"policy_ok": adj.payload["critique"]} if adj.payload.get("critique") else {}
                )
            else:
                final = current_criteria(adj.payload)
                verdicts, critiques = final["verdicts"], final.get("critiques", {})
            rows.append(
                {
                    "kind": task.kind,
                    "id": item.id,
                    "query": item.query,
                    "as_of": item.as_of,
                    "run": output.run_name,
                    "answer": output.answer,
                    "retrieved": list(output.retrieved),
                    "principal": item.entry.get("principal"),
                    "verdicts": verdicts,
                    "critiques": critiques,
                    "root_cause": adj.root_cause,
                    "note": adj.note,
                    "adjudicated_by": who,
                    "split": FEWSHOT_SPLIT,
                    "dataset_version": version,
                }
            )
    with atomic_writer(out) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return {"path": str(out), "n_examples": len(rows), "dataset_version": version}


def labels_long(db: Database) -> list[dict[str, Any]]:
    """Every raw expert label (calibration tasks aside) in the long format `assay agreement`
    reads: one {item, rater, label, criterion} per judged field. Judging labels give one row per
    criterion (pass or fail) on item `ID@RUN`; policy labels one row of criterion `policy_ok`
    (the check of that name, which `assay judge calibrate --criterion policy_ok` calibrates)
    and SQL labels one of criterion `sql_ok`, both on `ID@RUN`; reference labels their
    `answerable` and
    `expected_behavior`; tool labels one row per call made (item `ID@RUN#call-N`, N from 1 in the
    order made, criterion `tool_call`, pass or fail, with the `tool` called and the `critique`)
    and one per expected call no call answered (item `ID@RUN#expected-N`, N its place in the
    gold, criterion `tool_call_needed`, `needed` or `not_needed`); evidence labels their set of evidence paths (as one canonical text)
    and, per chunk id graded, `relevance:CHUNK` (0-3). Raters are usernames. A label revised
    after its author saw the others is written as its blind version (the answer agreement
    measures; see `assay.workbench.agreement.blind_payloads`)."""
    from assay.workbench.agreement import blind_payloads
    from assay.workbench.payloads import CRITERIA, agreement_key

    rows: list[dict[str, Any]] = []
    with db.read() as s:
        flagged = list(s.scalars(select(Label.id).where(Label.revised_after_seen.is_(True))))
        blind = blind_payloads(s, flagged)
        q = (
            select(Label, Task, User.username, Output.run_name)
            .join(Task, Task.id == Label.task_id)
            .join(User, User.id == Label.user_id)
            .outerjoin(Output, Output.id == Task.output_id)
            .where(Task.calibration.is_(False))
            .order_by(Task.item_id, Task.kind, Label.task_id, User.username)
        )
        panels: dict[int, Any] = {}  # tool tasks' panels, by task id
        for lab, task, who, run in s.execute(q):
            p = current_criteria(blind.get(lab.id, lab.payload))
            if task.kind == "judge":
                item = f"{task.item_id}@{run}"
                for c in CRITERIA:
                    rows.append(
                        {"item": item, "rater": who, "label": p["verdicts"][c], "criterion": c}
                    )
            elif task.kind in ("policy", "sql"):
                rows.append(
                    {
                        "item": f"{task.item_id}@{run}",
                        "rater": who,
                        "label": p["verdict"],
                        "criterion": "policy_ok" if task.kind == "policy" else "sql_ok",
                    }
                )
            elif task.kind == "tool":
                rows.extend(_tool_rows(s, task, run, who, p, panels))
            elif task.kind == "reference":
                for field in ("answerable", "expected_behavior"):
                    value = p.get(field)
                    rows.append(
                        {
                            "item": task.item_id,
                            "rater": who,
                            "label": value if isinstance(value, bool) else str(value),
                            "criterion": field,
                        }
                    )
            else:
                key = agreement_key("evidence", p)
                rows.append(
                    {
                        "item": task.item_id,
                        "rater": who,
                        "label": json.dumps(key, separators=(",", ":")),
                        "criterion": "evidence_paths",
                    }
                )
                for chunk, grade in sorted((p.get("relevance") or {}).items()):
                    rows.append(
                        {
                            "item": task.item_id,
                            "rater": who,
                            "label": int(grade),
                            "criterion": f"relevance:{chunk}",
                        }
                    )
    return rows


def _tool_rows(
    s: Any, task: Task, run: str | None, who: str, p: dict[str, Any], panels: dict[int, Any]
) -> list[dict[str, Any]]:
    """The long rows of one tool label (see `labels_long`)."""
    from assay.workbench.agreement import TOOL_CALL
    from assay.workbench.service.tools import tool_panel

    panel = panels.get(task.id)
    if panel is None:
        item = s.get(Item, task.item_id)
        out = s.get(Output, task.output_id) if task.output_id is not None else None
        panel = panels[task.id] = tool_panel(
            dict(item.entry) if item else {}, out.tool_calls if out else None
        )
    base = f"{task.item_id}@{run}"
    rows = [
        {
            "item": f"{base}#call-{call['index']}",
            "rater": who,
            "label": v["verdict"],
            "criterion": TOOL_CALL,
            "tool": call["name"],
            "critique": v.get("critique", ""),
        }
        for call, v in zip(panel.calls, p.get("calls") or [], strict=False)
    ]
    rows += [
        {
            "item": f"{base}#expected-{gone['index']}",
            "rater": who,
            "label": "needed" if v["needed"] else "not_needed",
            "criterion": "tool_call_needed",
            "tool": gone["name"],
            "critique": v.get("critique", ""),
        }
        for gone, v in zip(panel.missing, p.get("missing") or [], strict=False)
    ]
    return rows


def export_labels_long(db: Database, out: str | Path) -> dict[str, Any]:
    """Write `labels_long` as JSONL (atomically); returns the path and the row count."""
    from assay._io import write_jsonl_atomic

    n = write_jsonl_atomic(out, labels_long(db))
    return {"path": str(out), "n_rows": n}
