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

Every entry is ``label_tier: silver`` with ``reviewed_by: 1``: the questions, answers and
evidence pages were written by the benchmark's financial experts and published (Islam et al.,
2023), which is one expert team's word, checked by its authors but not by a second, independent
expert against this corpus, and never adjudicated here. That is silver, not gold: a gate on the
imported set needs ``--tiers gold,silver`` (the refusal says so), and the entries an analyst of
this team reviews (the workbench export) become gold. ``metadata.reviewers`` names the
annotators.

A question whose `financebench_id`, `question`, `question_type` or `evidence` is missing or null
is refused (file, line and field named; nothing is written). `import_dataset` writes the dataset
and says which questions cite filings the corpus lacks (`missing_filings`): their evidence cannot
be retrieved from that corpus, so they would score as stale labels, not as retrieval misses.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from assay._io import iter_jsonl, json_loads, sha256_file
from assay.corpus import Document, from_financebench, load_documents_any
from assay.dataset import Anchor, Entry, Source
from assay.errors import DataError, Problem
from assay.judge.keyfacts import DRAFTS_KEY, draft_key_facts
from assay.report import ReportMixin, Tabular

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset

__all__ = [
    "FINANCEBENCH_TIER",
    "FinanceBenchImport",
    "corpus_documents",
    "import_dataset",
    "import_financebench",
    "missing_filings",
    "question_to_entry",
    "questions_dataset",
]

FINANCEBENCH_TIER = "silver"
"""The tier of an imported FinanceBench entry: one published expert team's labels."""
FINANCEBENCH_REVIEWERS = "FinanceBench annotators (Islam et al., 2023, arXiv 2311.11944)"

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
    problems = [
        Problem(file, line, f, "required field missing" if f not in q else "must not be null")
        for f in _REQUIRED
        if q.get(f) is None
    ]
    question = q.get("question")
    if question is not None and (not isinstance(question, str) or not question.strip()):
        problems.append(Problem(file, line, "question", "must be a non-empty string"))
    if problems:
        raise DataError(problems)
    evidence = q["evidence"]
    if not isinstance(evidence, list):
        raise DataError("must be a list", file=file, line=line, field="evidence")
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
                f"bad evidence item: {exc}", file=file, line=line, field=f"evidence[{i}]"
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
    metadata["reviewers"] = FINANCEBENCH_REVIEWERS
    if isinstance(q.get("answer"), str) and isinstance(question, str):
        # key facts drafted from the reference answer, for an expert to confirm (no check
        # decides on them: `assay.judge.keyfacts`)
        metadata[DRAFTS_KEY] = draft_key_facts(q["answer"], question)
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
            created_by="import financebench",
            label_tier=FINANCEBENCH_TIER,
            reviewed_by=1,
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


# ------------------------------------------------------------------ filings the corpus lacks


def corpus_documents(
    *,
    corpus: str | Path | None = None,
    documents: str | Path | None = None,
    chunks: str | Path | ChunkTable | None = None,
) -> tuple[frozenset[str] | None, str]:
    """The doc ids a corpus holds, and where that was read from.

    The user's own chunk table (``chunks``, what their index was built from) decides first:
    a filing is present when at least one chunk comes from it. Else a built corpus
    (``corpus``) holds the documents in its ``documents.jsonl``. Without either,
    ``documents`` says it: every filing an assay documents.jsonl lists, or the FinanceBench
    records whose ``pdf_in_corpus`` is not false. ``(None, why)`` when none is given.
    """
    if chunks is not None:
        from assay.corpus import ChunkTable as _Table
        from assay.corpus import load_chunks

        table = chunks if isinstance(chunks, _Table) else load_chunks(chunks)
        table.require_chunks("check the questions against")
        return frozenset(c.doc_id for c in table), f"the chunk table {table.path or chunks}"
    if corpus is not None:
        path = Path(corpus) / "documents.jsonl"
        ids = frozenset(d.doc_id for d in load_documents_any(path))
        return ids, f"the built corpus {corpus}"
    if documents is not None:
        ids = frozenset(d.doc_id for d in load_documents_any(documents, only_in_corpus=True))
        return ids, f"the filings {documents} lists as present"
    return None, "unknown: no corpus and no documents.jsonl to say which filings are present"


def missing_filings(entries: Sequence[Entry], present: Collection[str]) -> dict[str, list[str]]:
    """Entry id -> the cited filings (anchor docs) not in ``present``; entries citing none left out."""
    out: dict[str, list[str]] = {}
    for e in entries:
        absent = sorted({a.doc for a in e.anchors() if a.doc not in present})
        if absent:
            out[e.id] = absent
    return out


@dataclass
class FinanceBenchImport(ReportMixin):
    """What `import_dataset` wrote, and which questions cite filings the corpus lacks."""

    out: str
    questions: str
    entries: int
    anchors: int
    categories: dict[str, int]
    index_version: str | None
    corpus: str
    missing: dict[str, list[str]] | None  # None: the corpus is unknown

    @property
    def missing_documents(self) -> list[str]:
        return sorted({d for docs in (self.missing or {}).values() for d in docs})

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "out": self.out,
            "questions": self.questions,
            "entries": self.entries,
            "anchors": self.anchors,
            "index_version": self.index_version,
        }
        d |= {f"category:{k}": v for k, v in sorted(self.categories.items())}
        d["corpus"] = self.corpus
        if self.missing is None:
            d |= {
                "questions_citing_missing_filings": None,
                "missing_filings": None,
                "note": "which filings are present is unknown: pass --corpus or --documents",
            }
        else:
            d |= {
                "questions_citing_missing_filings": len(self.missing),
                "missing_filings": dict(self.missing),
                "missing_documents": self.missing_documents,
            }
        return d

    def tabular(self) -> list[Tabular]:
        rows = [
            ["out", self.out],
            ["entries", str(self.entries)],
            ["anchors", str(self.anchors)],
            ["index_version", str(self.index_version)],
            *([f"category:{k}", str(v)] for k, v in sorted(self.categories.items())),
            ["corpus", self.corpus],
            [
                "questions citing filings the corpus lacks",
                "unknown" if self.missing is None else str(len(self.missing)),
            ],
        ]
        tables = [Tabular("FinanceBench import", ["field", "value"], rows, emphasis=set())]
        if self.missing:
            tables.append(
                Tabular(
                    "missing filings",
                    ["question", "cites filings the corpus lacks"],
                    [[qid, ", ".join(docs)] for qid, docs in self.missing.items()],
                    emphasis=set(),
                )
            )
        return tables


def import_dataset(
    questions: str | Path,
    *,
    out: str | Path,
    documents: str | Path | None = None,
    corpus: str | Path | None = None,
    chunks: str | Path | None = None,
    split: str | None = None,
) -> FinanceBenchImport:
    """Import FinanceBench questions, write them as an assay dataset, and report what is missing.

    ``corpus`` (a built corpus folder) binds the dataset to its hash and, unless ``documents``
    is given, supplies the filing metadata. ``chunks`` (the user's own chunk table) decides
    which filings are present, and binds the dataset to that table's version when no corpus is
    given. Nothing is written when any question is bad.
    """
    from assay.corpus import load_manifest
    from assay.dataset import write_dataset

    q_path, out_path = Path(questions), Path(out)
    if out_path.resolve() == q_path.resolve():
        raise DataError("is the questions file; choose another path", file=out_path, field="out")
    index_version = None
    if corpus is not None:
        index_version = load_manifest(corpus).corpus_hash[:16]
        if documents is None:
            documents = Path(corpus) / "documents.jsonl"
    if documents is None and (q_path.parent / "documents.jsonl").is_file():
        documents = q_path.parent / "documents.jsonl"
    table = None
    if chunks is not None:
        from assay.corpus import load_chunks

        table = load_chunks(chunks)
        index_version = index_version or table.version
    present, where = corpus_documents(corpus=corpus, documents=documents, chunks=table)
    entries = import_financebench(q_path, documents=documents or [], split=split)
    write_dataset(
        out_path,
        entries,
        version=f"financebench-{q_path.stem}-{sha256_file(q_path)[:12]}",
        index_version=index_version,
        changelog=f"imported {len(entries)} FinanceBench questions from {q_path.name}",
    )
    return FinanceBenchImport(
        out=str(out_path),
        questions=str(q_path),
        entries=len(entries),
        anchors=sum(len(e.anchors()) for e in entries),
        categories=dict(Counter(e.category for e in entries)),
        index_version=index_version,
        corpus=where,
        missing=None if present is None else missing_filings(entries, present),
    )


def questions_dataset(path: str | Path, corpus: str | Path) -> Dataset:
    """An assay dataset, or FinanceBench questions converted with the corpus' documents."""
    from assay.dataset import Dataset, load_dataset

    path = Path(path)
    first: Any = None
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    first = json_loads(line)
                    break
    except (OSError, UnicodeDecodeError, ValueError):
        first = None  # load_dataset names the file, line and field
    if isinstance(first, dict) and "financebench_id" in first:
        docs = Path(corpus) / "documents.jsonl"
        entries = import_financebench(path, documents=docs if docs.exists() else None)
        return Dataset(entries=list(entries), path=str(path))
    return load_dataset(path)
