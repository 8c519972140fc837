"""Imports into the workbench: the corpus experts search, golden entries as items with labelling
tasks, and a system run's answers as judging tasks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay._io import iter_jsonl
from assay.dataset import Entry, parse_entries
from assay.errors import DataError, Problem, UsageError
from assay.workbench.db import Database
from assay.workbench.models import Chunk, Document, Item, Output, Task
from assay.workbench.payloads import bad_text, current_criteria
from assay.workbench.service.access import refresh_access
from assay.workbench.service.policy import is_policy_item
from assay.workbench.service.sql import entry_with_database, sql_output
from assay.workbench.service.tools import is_tool_item, row_tool_calls, tool_gold

__all__ = ["ImportSummary", "import_corpus", "import_entries", "import_run"]


@dataclass(frozen=True)
class ImportSummary:
    what: str
    added: int
    updated: int
    tasks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "added": self.added,
            "updated": self.updated,
            "tasks": self.tasks,
        }


_DOC_FIELDS = (
    "company",
    "ticker",
    "sector",
    "form",
    "fiscal_year",
    "fiscal_quarter",
    "period_end",
    "version_date",
)


def _doc_from_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in _DOC_FIELDS:
        v = row.get(f)
        if f in ("fiscal_year", "fiscal_quarter"):
            out[f] = (
                int(v)
                if isinstance(v, int | float) or (isinstance(v, str) and v.isdigit())
                else None
            )
        else:
            out[f] = None if v is None else str(v)
    if out["version_date"] is None:
        out["version_date"] = row.get("accepted_at") and str(row["accepted_at"])
    return out


def _doc_from_document(doc: Any) -> dict[str, Any]:
    """The store's columns of a `assay.corpus.documents.Document`."""
    version = doc.version_date or doc.accepted_at
    return {
        "company": doc.company,
        "ticker": doc.ticker,
        "sector": doc.sector,
        "form": doc.form,
        "fiscal_year": doc.fiscal_year,
        "fiscal_quarter": doc.fiscal_quarter,
        "period_end": doc.period_end.isoformat() if doc.period_end else None,
        "version_date": version.isoformat() if version else None,
        "meta": doc.model_dump(mode="json"),
    }


MAX_CHUNK_TEXT = 1_000_000  # characters of one chunk (a chunk is a passage, not a document)


def import_corpus(
    db: Database, chunks_path: str | Path, documents_path: str | Path | None = None
) -> ImportSummary:
    """Load a chunk table (chunks.jsonl) and optional document metadata (documents.jsonl).

    Chunks need chunk_id, doc_id, text and page or pages; document fields (company, form,
    fiscal_year, version_date, ...) come from the documents file or, failing that, from the
    chunk rows. The documents file is read as `assay corpus build --meta` reads it: assay's
    documents.jsonl or FinanceBench's (doc_name, company, doc_type, doc_period). Re-importing
    updates chunks in place. Nothing is written when any row is bad. A facts table
    (``facts.jsonl``, `assay.corpus.facts`) beside the chunk table is kept in each document's
    metadata (``meta["facts"]``): the reference form shows it for the 'not disclosed' lookup.
    """
    problems: list[Problem] = []
    docs: dict[str, dict[str, Any]] = {}
    if documents_path is not None:
        from assay.corpus import load_documents_any

        for doc in load_documents_any(documents_path):  # DataError naming FILE:LINE: field
            docs[doc.doc_id] = _doc_from_document(doc)
            found = bad_text(docs[doc.doc_id])
            if found is not None:
                problems.append(
                    Problem(str(documents_path), None, f"{doc.doc_id}: {found[0]}", found[1])
                )
    chunks: list[dict[str, Any]] = []
    seen: set[str] = set()
    seq: dict[str, int] = defaultdict(int)
    for line, row in iter_jsonl(chunks_path):
        if not isinstance(row, dict):
            problems.append(Problem(str(chunks_path), line, None, "a chunk row must be an object"))
            continue
        for f in ("chunk_id", "doc_id", "text"):
            if not isinstance(row.get(f), str) or not row[f]:
                problems.append(Problem(str(chunks_path), line, f, "missing or not a string"))
        found = bad_text(row)
        if found is not None:
            problems.append(Problem(str(chunks_path), line, *found))
            continue
        for f, most in (("chunk_id", 300), ("doc_id", 200), ("text", MAX_CHUNK_TEXT)):
            if isinstance(row.get(f), str) and len(row[f]) > most:
                problems.append(
                    Problem(str(chunks_path), line, f, f"longer than {most:,} characters")
                )
        pages = row.get("pages", [row["page"]] if "page" in row else None)
        if not isinstance(pages, list) or not all(isinstance(p, int) and p >= 1 for p in pages):
            problems.append(
                Problem(str(chunks_path), line, "page", "need page (1-based int) or pages")
            )
            continue
        if row.get("access") is not None:  # an access label: checked as the corpus reads it
            from assay.corpus import parse_access

            try:
                parse_access(row["access"], file=str(chunks_path), line=line)
            except DataError as exc:
                problems.extend(exc.problems)
                continue
        cid = row.get("chunk_id")
        if isinstance(cid, str) and cid in seen:
            problems.append(Problem(str(chunks_path), line, "chunk_id", f"duplicate {cid!r}"))
        if problems:
            continue
        seen.add(row["chunk_id"])
        doc_id = row["doc_id"]
        if doc_id not in docs:
            docs[doc_id] = _doc_from_row(row) | {"meta": {}}
        extra = {
            k: v
            for k, v in row.items()
            if k not in ("chunk_id", "doc_id", "text", "page", "pages", "kind", *_DOC_FIELDS)
        }
        chunks.append(
            {
                "chunk_id": row["chunk_id"],
                "doc_id": doc_id,
                "seq": seq[doc_id],
                "text": row["text"],
                "pages": pages,
                "kind": row.get("kind"),
                "extra": extra,
            }
        )
        seq[doc_id] += 1
    if problems:
        raise DataError(problems)
    from assay.corpus import load_facts

    facts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in load_facts(Path(chunks_path).parent / "facts.jsonl"):
        facts[fact.doc_id].append(fact.to_dict())
    for doc_id, rows in facts.items():
        if doc_id in docs:
            docs[doc_id]["meta"] = dict(docs[doc_id]["meta"]) | {"facts": rows}
    added = updated = 0
    with db.write() as s:
        for doc_id, d in docs.items():
            s.merge(Document(doc_id=doc_id, **d))
        existing = set(s.scalars(select(Chunk.chunk_id)))
        for c in chunks:
            if c["chunk_id"] in existing:
                updated += 1
                s.merge(Chunk(**c))
            else:
                added += 1
                s.add(Chunk(**c))
        s.flush()
        # access keys of these documents and their chunks, then of every task and user
        refresh_access(s, doc_ids=set(docs))
    return ImportSummary("chunks", added, updated)


def _domain_of(entry: Entry, s: Session) -> str:
    md = entry.metadata
    for key in ("company", "domain", "sector"):
        if isinstance(md.get(key), str) and md[key]:
            return str(md[key])
    ids = sorted(entry.chunk_ids())
    if ids:
        doc_id = s.scalar(select(Chunk.doc_id).where(Chunk.chunk_id == ids[0]))
        if doc_id is not None:
            company = s.scalar(select(Document.company).where(Document.doc_id == doc_id))
            if company:
                return company
    return "general"


def import_entries(
    db: Database,
    path: str | Path,
    *,
    kinds: Iterable[str] = ("evidence", "reference"),
    overlap: int = 2,
    calibration: Iterable[str] = (),
) -> ImportSummary:
    """Import golden entries as items and open one task per kind, each labelled by `overlap` experts.

    The domain (queue batch) of an item is metadata.company, metadata.domain or metadata.sector,
    else the company of its first evidence chunk, else "general". Items named in `calibration`
    (or with metadata.calibration true) become calibration items: served first in each session to
    every expert, scored against the imported entry.
    """
    kinds = tuple(kinds)
    for k in kinds:
        if k not in ("evidence", "reference"):
            raise UsageError(f"entries open evidence or reference tasks, not {k!r}")
    _check_overlap(overlap)
    calib = set(calibration)
    problems = _validate_entries(path)
    if problems:
        raise DataError(problems)
    # a conversation line gives one item per turn (ids CONV#N), each showing its earlier turns
    entries: list[Entry] = parse_entries(iter_jsonl(path), file=str(path))[0]
    unknown = sorted(calib - {e.id for e in entries})
    if unknown:
        raise DataError(
            f"entry ids not in {path}: {', '.join(unknown[:10])}"
            + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""),
            file="--calibration",
            field="calibration",
        )
    added = updated = ntasks = 0
    with db.write() as s:
        for e in entries:
            is_cal = e.id in calib or bool(e.metadata.get("calibration"))
            data = entry_with_database(e.to_json_dict(), Path(path).parent)
            item = s.get(Item, e.id)
            domain = _domain_of(e, s)
            if item is None:
                added += 1
                item = Item(
                    id=e.id,
                    query=e.query,
                    category=e.category,
                    domain=domain,
                    as_of=e.as_of.isoformat() if e.as_of else None,
                    entry=data,
                    calibration=is_cal,
                )
                s.add(item)
            else:
                updated += 1
                item.query, item.category, item.entry = e.query, e.category, data
                item.domain, item.calibration = domain, is_cal
            s.flush()
            for kind in kinds:
                gold = _entry_gold(e, kind) if is_cal else None
                task = s.scalar(
                    select(Task).where(
                        Task.item_id == e.id, Task.kind == kind, Task.output_id.is_(None)
                    )
                )
                if task is None:
                    ntasks += 1
                    s.add(
                        Task(
                            item_id=e.id,
                            kind=kind,
                            output_id=None,
                            domain=domain,
                            overlap=overlap,
                            n_claimed=0,
                            calibration=is_cal,
                            gold=gold,
                        )
                    )
                else:
                    task.calibration, task.gold, task.domain = is_cal, gold, domain
        s.flush()
        refresh_access(s)  # the tasks' material may name restricted chunks
    return ImportSummary("entries", added, updated, ntasks)


MAX_OVERLAP = 1000  # experts per item (load tests use 50); more is a typo, not a design


def _check_overlap(overlap: int) -> None:
    if not 1 <= overlap <= MAX_OVERLAP:
        raise UsageError(f"--overlap: experts per item, 1 to {MAX_OVERLAP} (got {overlap})")


def _validate_entries(path: str | Path) -> list[Problem]:
    """The file's problems as `assay validate` finds them (schema, duplicate ids, ...), and NUL
    characters anywhere (a text column cannot store them), each as FILE:LINE: field."""
    from assay.gold import validate_file

    problems = list(validate_file(path))
    if problems:
        return problems
    for line, row in iter_jsonl(path):
        found = bad_text(row)
        if found is not None:
            problems.append(Problem(str(path), line, *found))
    return problems


def _reference_draft(row: dict[str, Any]) -> dict[str, Any] | None:
    """The run's answer and key facts as a draft reference answer: `answer`, and key facts from
    `key_facts` (strings or {fact, critical}) at the top level or under `extra`."""
    answer = row.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        return None
    raw = row.get("key_facts")
    if raw is None and isinstance(row.get("extra"), dict):
        raw = row["extra"].get("key_facts")
    facts: list[dict[str, Any]] = []
    for kf in raw if isinstance(raw, list) else []:
        if isinstance(kf, str) and kf.strip():
            facts.append({"fact": kf.strip()[:1000], "critical": True})
        elif isinstance(kf, dict) and isinstance(kf.get("fact"), str) and kf["fact"].strip():
            facts.append(
                {"fact": kf["fact"].strip()[:1000], "critical": kf.get("critical") is not False}
            )
    return {"reference_answer": answer.strip()[:10000], "key_facts": facts}


def _entry_gold(e: Entry, kind: str) -> dict[str, Any] | None:
    if kind == "evidence":
        if any(not isinstance(a, str) for path in e.evidence_paths for p in path for a in p):
            return None  # anchors are compared after alignment, not here
        return {"paths": [[list(p) for p in path] for path in e.evidence_paths]}
    if kind == "reference" and e.reference_answer is not None:
        return {
            "reference_answer": e.reference_answer,
            "answerable": e.answerable,
            "expected_behavior": e.behavior().value,
        }
    return None


def _policy_gold(gold: Any) -> dict[str, Any] | None:
    """A calibration policy task's known verdict: the judging gold's ``policy`` criterion."""
    verdicts = gold.get("verdicts") if isinstance(gold, dict) else None
    if not isinstance(verdicts, dict) or verdicts.get("policy") not in ("pass", "fail"):
        return None
    critique = (gold.get("critiques") or {}).get("policy", "")
    return {"verdict": verdicts["policy"], "critique": str(critique)}


def import_run(
    db: Database,
    path: str | Path,
    *,
    run_name: str | None = None,
    overlap: int = 2,
    calibration: Iterable[str] = (),
) -> ImportSummary:
    """Import a run file's answers as system outputs and open a judging task for each.

    Rows need id (an imported item) and answer; retrieved chunks (ids or {chunk_id, score}) are
    shown inline, and the tool calls of the row's `trace` when it has them. The file is checked
    as `assay score` reads a run (finite scores, ...) and for duplicate ids and NUL characters.
    The answer (with the row's `key_facts`, if any) becomes the draft that prefills the item's
    reference-answer task. A row on an item with `sql` gold opens a SQL task instead
    (`assay.workbench.service.sql`): its query (``sql``, else the answer) is the output. A row
    on a policy item (`is_policy_item`: the entry names a principal, or expects a refusal or an
    escalation) opens a policy task besides its judging task (`assay.workbench.service.policy`).
    A row whose item expects tool calls (`expected_tool_calls`), or that made tool calls
    (``tool_calls``, else its trace's), opens a tool task (`assay.workbench.service.tools`); a
    row without an answer opens only that one. An optional `draft` object ({"verdicts": {...},
    "critiques": {...}}) pre-fills the judging form. Rows named in `calibration` become calibration tasks whose known verdicts
    come from the row's `gold` object (else its draft); their draft is never shown. A
    calibration tool task's known label is its entry's tool-call gold (`tools.tool_gold`: the
    gold call each call made answers, its known verdict, each missing call needed).
    """
    from assay.runs import load_run

    _check_overlap(overlap)
    name = run_name or Path(path).stem
    calib = set(calibration)
    load_run(path, fast=False)  # checked as `assay score` reads it: ids, hits, finite scores
    problems: list[Problem] = []
    rows: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            problems.append(Problem(str(path), line, "id", "missing id"))
            continue
        found = bad_text(row)
        if found is not None:
            problems.append(Problem(str(path), line, *found))
            continue
        if row["id"] in seen:
            problems.append(Problem(str(path), line, "id", f"duplicate id {row['id']!r}"))
            continue
        seen.add(row["id"])
        if not isinstance(row.get("answer"), str) and row_tool_calls(row) is None:
            continue  # retrieval-only rows have nothing to judge
        rows.append((line, row))
    if problems:
        raise DataError(problems)
    added = updated = ntasks = 0
    with db.write() as s:
        items = {i.id: i for i in s.scalars(select(Item))}
        for line, row in rows:
            item = items.get(row["id"])
            if item is None:
                problems.append(Problem(str(path), line, "id", f"no imported item {row['id']!r}"))
                continue
            retrieved = [
                r if isinstance(r, str) else r.get("chunk_id")
                for r in row.get("retrieved", [])
                if isinstance(r, str | dict)
            ]
            draft = current_criteria(row["draft"]) if isinstance(row.get("draft"), dict) else None
            answered = isinstance(row.get("answer"), str)
            kind, answer = "judge", str(row["answer"]) if answered else ""
            if answered and item.entry.get("sql"):  # a text-to-SQL item: the query: a SQL task
                kind = "sql"
                answer, draft = sql_output(row, item.entry)
            calls = row_tool_calls(row)
            if not answered and not (calls or is_tool_item(item.entry)):
                continue  # no answer and no tool call to label
            ref_draft = _reference_draft(row)
            out = s.scalar(select(Output).where(Output.item_id == item.id, Output.run_name == name))
            if out is None:
                added += 1
                out = Output(
                    item_id=item.id,
                    run_name=name,
                    answer=answer,
                    retrieved=[r for r in retrieved if r],
                    citations=list(row.get("citations") or []),
                    draft=draft,
                    reference_draft=ref_draft,
                    tool_calls=calls,
                )
                s.add(out)
                s.flush()
            else:
                updated += 1
                out.answer, out.draft = answer, draft
                out.retrieved = [r for r in retrieved if r]
                out.citations = list(row.get("citations") or [])
                out.reference_draft, out.tool_calls = ref_draft, calls
            kinds = (
                [kind] + (["policy"] if kind == "judge" and is_policy_item(item.entry) else [])
                if answered
                else []
            )
            if calls or is_tool_item(item.entry):
                kinds.append("tool")
            is_cal = item.id in calib
            for k in kinds:
                task = s.scalar(
                    select(Task).where(
                        Task.item_id == item.id, Task.kind == k, Task.output_id == out.id
                    )
                )
                if task is not None:
                    continue
                if k == "judge":
                    gold = row.get("gold") or draft
                    gold = current_criteria(gold) if isinstance(gold, dict) else gold
                elif k == "policy":  # the known verdict on the judging gold's policy criterion
                    gold = _policy_gold(row.get("gold") or draft)
                elif k == "tool":  # the known label: the entry's tool-call gold, per call made
                    gold = tool_gold(dict(item.entry), calls) if is_cal else None
                else:
                    gold = row.get("gold")
                s.add(
                    Task(
                        item_id=item.id,
                        kind=k,
                        output_id=out.id,
                        domain=item.domain,
                        overlap=overlap,
                        n_claimed=0,
                        calibration=is_cal,
                        gold=gold if is_cal else None,
                    )
                )
                ntasks += 1
        s.flush()
        refresh_access(s)  # what the outputs retrieved and cited may be restricted
        if problems:
            raise DataError(problems)
    return ImportSummary(f"run {name}", added, updated, ntasks)
