"""The seasonal audit: golden entries that a filing season may have made stale.

An entry is flagged for review when

- its query asks about time relative to now (`TIME_WORDS`: "latest", "most recent", "current"
  (not "current assets" or "current liabilities"), "this year", "last quarter", "year to date",
  ...): its answer moves whenever a filing arrives,
  or
- a newer filing has arrived for one of its evidence documents: a document of the same company
  (ticker, else name) and the same form type (``10-K/A`` counts as ``10-K``) whose period ends
  later, or one that amends the evidence document itself, accepted (``accepted_at``) after the
  entry's reference date (the later of its ``added`` and ``as_of``; with neither, the evidence
  document's own acceptance date), and on or after ``since`` when given. A filing that is
  itself among the entry's evidence documents is not news to it.

An evidence document is named by an anchor's ``doc`` or by a chunk id (looked up in the
corpus's chunk table when there is one, else the part before the first ``/``, as
`assay corpus build` names chunks). The audit never edits an entry: it lists them with the
filings that arrived, and `--to-workbench` queues them for review.

Unanswerable and partly answerable entries are re-checked apart (`assay.audit.recheck`): they are
listed under ``recheck`` when a filing of their company covering their fiscal period arrived after
their reference date (or, undated, on or after ``since``); `--queue` sends them to the workbench.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.audit.recheck import Recheck, recheck_entries
from assay.corpus import Document
from assay.dataset import Dataset, Entry
from assay.report import ReportMixin, Tabular

__all__ = [
    "TIME_WORDS",
    "Arrival",
    "SeasonalFlag",
    "SeasonalReport",
    "audit_seasonal",
    "evidence_docs",
    "load_corpus_documents",
    "time_words",
]

#: Phrases that make a question's answer depend on when it is asked (matched on word boundaries,
#: case-insensitive).
TIME_WORDS = (
    r"latest",
    r"most recent(?:ly)?",
    r"recent(?:ly)?",
    r"currently",
    r"current(?!\s+(?:assets?|liabilit|portion|ratio|income tax|expected))",
    r"this (?:fiscal )?(?:year|quarter|month)",
    r"last (?:fiscal )?(?:year|quarter|month)",
    r"past (?:year|quarter|twelve months|12 months)",
    r"(?:trailing|last) (?:twelve|12) months",
    r"ttm",
    r"ytd",
    r"year[- ]to[- ]date",
    r"to date",
    r"so far",
    r"as of (?:today|now)",
    r"today",
)
_TIME_RE = re.compile(r"\b(?:" + "|".join(TIME_WORDS) + r")\b", re.IGNORECASE)


def time_words(query: str) -> list[str]:
    """The relative-time phrases in a query, lower-cased, in order, without repeats."""
    out: list[str] = []
    for m in _TIME_RE.finditer(query):
        w = m.group(0).lower()
        if w not in out:
            out.append(w)
    return out


@dataclass(frozen=True)
class Arrival:
    """A filing that arrived after an entry was labelled, and the evidence document it follows."""

    doc_id: str
    form: str
    period_end: dt.date | None
    accepted_at: dt.date
    follows: str
    kind: str  # "newer period" or "amendment"

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "form": self.form,
            "period_end": self.period_end.isoformat() if self.period_end else None,
            "accepted_at": self.accepted_at.isoformat(),
            "follows": self.follows,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class SeasonalFlag:
    id: str
    line: int | None
    category: str
    query: str
    reference_date: dt.date | None
    time_words: list[str]
    arrivals: list[Arrival]
    unknown_docs: list[str] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        out = []
        if self.time_words:
            out.append("query says " + ", ".join(repr(w) for w in self.time_words))
        if self.arrivals:
            out.append(f"{len(self.arrivals)} newer filing(s) of its evidence documents")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "category": self.category,
            "query": self.query,
            "reference_date": self.reference_date.isoformat() if self.reference_date else None,
            "time_words": self.time_words,
            "arrivals": [a.to_dict() for a in self.arrivals],
            "reasons": self.reasons,
        }


@dataclass
class SeasonalReport(ReportMixin):
    dataset: str | None
    dataset_version: str
    since: dt.date | None
    n_entries: int
    n_documents: int
    flagged: list[SeasonalFlag]
    unknown_docs: list[str] = field(default_factory=list)
    queued: dict[str, Any] | None = None
    recheck: list[Recheck] = field(default_factory=list)
    undated_unanswerable: list[str] = field(default_factory=list)
    queued_recheck: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "assay.audit.seasonal/1",
            "dataset": self.dataset,
            "dataset_version": self.dataset_version,
            "since": self.since.isoformat() if self.since else None,
            "n_entries": self.n_entries,
            "n_documents": self.n_documents,
            "n_flagged": len(self.flagged),
            "n_time_words": sum(1 for f in self.flagged if f.time_words),
            "n_newer_filings": sum(1 for f in self.flagged if f.arrivals),
            "flagged": [f.to_dict() for f in self.flagged],
            "unknown_docs": self.unknown_docs,
            "queued": self.queued,
            "n_recheck": len(self.recheck),
            "recheck": [r.to_dict() for r in self.recheck],
            "undated_unanswerable": self.undated_unanswerable,
            "queued_recheck": self.queued_recheck,
        }

    def tabular(self) -> Tabular:
        rows = []
        for f in self.flagged:
            shown = [a.doc_id for a in f.arrivals[:3]]
            more = len(f.arrivals) - len(shown)
            arrived = ", ".join(shown) + (f" (+{more})" if more else "")
            why = ", ".join(f.time_words) if f.time_words else "-"
            rows.append([f.id, f.category, why, arrived or "-"])
        sections = {len(rows) - 1} if rows and self.recheck else set()
        for r in self.recheck:
            shown = [c.doc_id for c in r.filings[:3]]
            more = len(r.filings) - len(shown)
            arrived = ", ".join(shown) + (f" (+{more})" if more else "")
            what = "unanswerable" if r.answerable == "false" else "partial"
            rows.append([r.id, r.category, f"{what}: re-check {', '.join(r.periods)}", arrived])
        footer = [
            f"{len(self.flagged)} of {self.n_entries} entries to re-check "
            f"({sum(1 for f in self.flagged if f.time_words)} say relative time, "
            f"{sum(1 for f in self.flagged if f.arrivals)} have newer filings); "
            f"dataset {self.dataset_version}, {self.n_documents} filings in the corpus"
            + (f", filings accepted since {self.since.isoformat()}" if self.since else "")
        ]
        footer.append(
            f"{len(self.recheck)} unanswerable or partial entries to re-check: a filing of their "
            "company covering their period arrived since they were written"
            + (
                f"; {len(self.undated_unanswerable)} have no added / as_of date (give --since)"
                if self.undated_unanswerable
                else ""
            )
        )
        if self.unknown_docs:
            footer.append(
                f"{len(self.unknown_docs)} evidence document(s) not in the corpus: "
                + ", ".join(self.unknown_docs[:10])
            )
        if self.queued is not None:
            footer.append(f"queued for review in the workbench: {self.queued}")
        if self.queued_recheck is not None:
            footer.append(f"queued for re-check in the workbench: {self.queued_recheck}")
        return Tabular(
            title="Seasonal audit: entries a filing season may have made stale",
            header=["entry", "category", "relative time", "filings that arrived"],
            rows=rows,
            footer=footer,
            sections=sections,
        )


def _base_form(form: str) -> str:
    return form[:-2] if form.endswith("/A") else form


def _company_key(d: Document) -> str:
    return (d.ticker or d.company).strip().lower()


def _chunk_doc(chunk_id: str, chunk_docs: dict[str, str] | None) -> str:
    if chunk_docs is not None and chunk_id in chunk_docs:
        return chunk_docs[chunk_id]
    return chunk_id.split("/", 1)[0]


def evidence_docs(entry: Entry, chunk_docs: dict[str, str] | None = None) -> list[str]:
    """The documents an entry's gold points at (anchors' docs and chunk ids' documents)."""
    docs = {a.doc for a in entry.anchors()}
    docs.update(_chunk_doc(c, chunk_docs) for c in entry.chunk_ids())
    return sorted(docs)


def audit_seasonal(
    dataset: Dataset,
    documents: Sequence[Document],
    *,
    since: dt.date | None = None,
    chunk_docs: dict[str, str] | None = None,
) -> SeasonalReport:
    """Flag entries whose query speaks of relative time or whose evidence has newer filings.

    `chunk_docs` maps chunk id -> doc id (from a chunk table); without it a chunk id's document
    is the part before its first ``/``.
    """
    by_id = {d.doc_id: d for d in documents}
    by_company_form: dict[tuple[str, str], list[Document]] = defaultdict(list)
    amendments: dict[str, list[Document]] = defaultdict(list)
    for d in documents:
        by_company_form[(_company_key(d), _base_form(d.form))].append(d)
        if d.amends:
            amendments[d.amends].append(d)
    flagged: list[SeasonalFlag] = []
    unknown: set[str] = set()
    evidence: dict[str, list[str]] = {}
    for e in dataset.entries:
        words = time_words(e.query)
        dates = [x for x in (e.added, e.as_of) if x is not None]
        ref_entry = max(dates) if dates else None
        arrivals: dict[str, Arrival] = {}
        missing: list[str] = []
        own = evidence[e.id] = evidence_docs(e, chunk_docs)
        for doc_id in own:
            ev = by_id.get(doc_id)
            if ev is None:
                missing.append(doc_id)
                continue
            ref = ref_entry or ev.accepted_at
            if ref is None:
                continue

            def arrived(d: Document, ref: dt.date = ref) -> bool:
                return (
                    d.accepted_at is not None
                    and d.accepted_at > ref
                    and (since is None or d.accepted_at >= since)
                )

            for d in amendments.get(doc_id, []):
                if arrived(d) and d.doc_id not in arrivals and d.doc_id not in own:
                    assert d.accepted_at is not None
                    arrivals[d.doc_id] = Arrival(
                        d.doc_id, d.form, d.period_end, d.accepted_at, doc_id, "amendment"
                    )
            if ev.period_end is None:
                continue
            for d in by_company_form[(_company_key(ev), _base_form(ev.form))]:
                if (
                    d.doc_id != doc_id
                    and d.period_end is not None
                    and d.period_end > ev.period_end
                    and arrived(d)
                    and d.doc_id not in arrivals
                    and d.doc_id not in own
                ):
                    assert d.accepted_at is not None
                    arrivals[d.doc_id] = Arrival(
                        d.doc_id, d.form, d.period_end, d.accepted_at, doc_id, "newer period"
                    )
        unknown.update(missing)
        if words or arrivals:
            flagged.append(
                SeasonalFlag(
                    id=e.id,
                    line=dataset.lines.get(e.id),
                    category=e.category,
                    query=e.query,
                    reference_date=ref_entry,
                    time_words=words,
                    arrivals=sorted(arrivals.values(), key=lambda a: (a.accepted_at, a.doc_id)),
                    unknown_docs=missing,
                )
            )
    recheck, undated = recheck_entries(
        dataset.entries, documents, since=since, evidence=evidence, lines=dataset.lines
    )
    return SeasonalReport(
        dataset=dataset.path,
        dataset_version=dataset.version,
        since=since,
        n_entries=len(dataset),
        n_documents=len(documents),
        flagged=flagged,
        unknown_docs=sorted(unknown),
        recheck=recheck,
        undated_unanswerable=undated,
    )


def load_corpus_documents(corpus: str | Path) -> tuple[list[Document], dict[str, str] | None]:
    """A corpus folder's documents.jsonl (and chunk id -> doc id from its chunks.jsonl when
    present), or a documents.jsonl file itself."""
    from assay.corpus import load_documents_any

    p = Path(corpus)
    if p.is_dir():
        docs_path = p / "documents.jsonl"
        chunk_docs = None
        if (p / "chunks.jsonl").exists():
            from assay.corpus import load_chunks

            chunk_docs = {c.chunk_id: c.doc_id for c in load_chunks(p / "chunks.jsonl")}
        return load_documents_any(docs_path), chunk_docs
    return load_documents_any(p), None
