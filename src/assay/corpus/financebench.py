"""FinanceBench questions (the published JSONL) -> assay entries with page anchors.

Each question becomes one entry with a single evidence path. Every distinct evidence item is one
*required* piece: FinanceBench lists several items when an answer needs several facts (two years
of a metric, a numerator and a denominator), so none of them may stand in for another, even when
two sit on the same page (at page level they then resolve to the same page, at chunk level they
may need different chunks). Exact duplicates, and items whose quote is contained in another
item's quote on the same page, are merged into one piece. The anchor is
``{"doc": doc_name, "page": evidence_page_num + 1, "quote": evidence_text}`` (FinanceBench pages
are zero-based, assay's one-based).

`as_of` is the latest acceptance date among the cited filings, so every cited filing is visible
and later filings (next year's 10-K repeating the figure) are not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay._io import iter_jsonl
from assay.corpus.documents import Document, from_financebench, load_documents_any
from assay.dataset.schema import Anchor, Entry, Source
from assay.errors import DataError, Problem

__all__ = ["import_financebench", "question_to_entry"]

_REQUIRED = ("financebench_id", "question", "question_type", "evidence")
_NAME_TYPE = re.compile(r"_(10K|10Q|8K|EARNINGS)(?:_|$)", re.I)
_NAME_PERIOD = re.compile(r"_(\d{4})(?:Q[1-4])?_")
_TOKEN = re.compile(r"[0-9]+(?:[,.][0-9]+)*|[^\W\d_]+")


def _tokens(text: str) -> Counter[str]:
    return Counter(t.replace(",", "") for t in _TOKEN.findall(text.lower()))


def _contained(small: str, big: str) -> bool:
    a, b = _tokens(small), _tokens(big)
    return sum(a.values()) > 0 and all(b[t] >= n for t, n in a.items())


def _doc_from_name(doc_name: str, company: str) -> Document | None:
    """Metadata derived from a FinanceBench doc name when no documents.jsonl is at hand."""
    t = _NAME_TYPE.search(doc_name)
    p = _NAME_PERIOD.search(doc_name + "_")
    if not t or not p:
        return None
    rec = {
        "doc_name": doc_name,
        "company": company,
        "doc_type": t.group(1).lower(),
        "doc_period": int(p.group(1)),
    }
    try:
        return from_financebench(rec)
    except (DataError, ValidationError):
        return None


def question_to_entry(
    q: dict[str, Any],
    docs: dict[str, Document],
    *,
    split: str | None = None,
    where: tuple[str, int] = ("<q>", 0),
) -> Entry:
    """One FinanceBench question -> one `Entry` (raises DataError naming file, line and field)."""
    file, line = where
    problems = [Problem(file, line, f, "required field missing") for f in _REQUIRED if f not in q]
    if problems:
        raise DataError(problems)
    evidence = q["evidence"]
    if not isinstance(evidence, list):
        raise DataError(Problem(file, line, "evidence", "must be a list"))
    items: list[Anchor] = []
    for i, ev in enumerate(evidence):
        try:
            page0 = int(ev["evidence_page_num"])
            anchor = Anchor(
                doc=str(ev["doc_name"]),
                page=page0 + 1,
                quote=str(ev["evidence_text"]).strip() or "-",
            )
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise DataError(
                Problem(file, line, f"evidence[{i}]", f"bad evidence item: {exc}")
            ) from None
        items.append(anchor)
    # merge duplicates and same-page quotes contained in another quote
    kept: list[Anchor] = []
    for a in sorted(items, key=lambda x: -len(x.quote)):
        if any(k.doc == a.doc and k.page == a.page and _contained(a.quote, k.quote) for k in kept):
            continue
        kept.append(a)
    order = {id(a): i for i, a in enumerate(items)}
    kept.sort(key=lambda a: order[id(a)])
    cited = sorted({a.doc for a in kept})
    accepted = [
        d.accepted_at for name in cited if (d := docs.get(name)) is not None and d.accepted_at
    ]
    as_of = max(accepted) if accepted and len(accepted) == len(cited) else None
    metadata: dict[str, Any] = {
        "question_reasoning": q.get("question_reasoning"),
        "justification": q.get("justification"),
        "company": q.get("company"),
        "doc_name": q.get("doc_name"),
        "question_type": q.get("question_type"),
    }
    for opt in ("domain_question_num", "dataset_subset_label"):
        if q.get(opt) is not None:
            metadata[opt] = q[opt]
    metadata = {k: v for k, v in metadata.items() if v is not None}
    if len(kept) < len(items):
        metadata["merged_evidence_items"] = len(items) - len(kept)
    try:
        return Entry(
            id=str(q["financebench_id"]),
            query=str(q["question"]),
            category=str(q["question_type"]),
            answerable=True,
            as_of=as_of,
            evidence_paths=[[[a] for a in kept]] if kept else [],
            reference_answer=(str(q["answer"]) if q.get("answer") is not None else None),
            source=Source.benchmark,
            split=split,
            metadata=metadata,
        )
    except ValidationError as exc:
        raise DataError(
            [
                Problem(file, line, ".".join(str(x) for x in e["loc"]) or None, e["msg"])
                for e in exc.errors()
            ]
        ) from None


def import_financebench(
    questions_path: str | Path,
    *,
    documents: str | Path | Sequence[Document] | None = None,
    split: str | None = None,
) -> list[Entry]:
    """Convert FinanceBench questions into entries (see the module docstring for the mapping).

    `documents` gives the filing metadata used for `as_of` (a documents.jsonl in assay's or
    FinanceBench's format, e.g. a built corpus's ``documents.jsonl`` whose acceptance dates were
    read from the filings); by default FinanceBench's ``documents.jsonl`` beside the questions
    file, else metadata derived from the doc names. All bad lines are reported together.
    """
    path = Path(questions_path)
    if documents is None:
        beside = path.parent / "documents.jsonl"
        documents = beside if beside.is_file() else []
    doc_list = (
        load_documents_any(documents) if isinstance(documents, (str, Path)) else list(documents)
    )
    docs = {d.doc_id: d for d in doc_list}
    problems: list[Problem] = []
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for lineno, q in iter_jsonl(path):
        if not isinstance(q, dict):
            problems.append(Problem(str(path), lineno, None, "expected a JSON object"))
            continue
        for ev in q.get("evidence") or []:
            name = ev.get("doc_name") if isinstance(ev, dict) else None
            if isinstance(name, str) and name not in docs:
                derived = _doc_from_name(name, str(q.get("company", "")))
                if derived is not None:
                    docs[name] = derived
        try:
            entry = question_to_entry(q, docs, split=split, where=(str(path), lineno))
        except DataError as exc:
            problems.extend(exc.problems)
            continue
        if entry.id in seen:
            problems.append(
                Problem(
                    str(path),
                    lineno,
                    "financebench_id",
                    f"duplicate id (first on line {seen[entry.id]})",
                )
            )
            continue
        seen[entry.id] = lineno
        entries.append(entry)
    if problems:
        raise DataError(problems)
    return entries
