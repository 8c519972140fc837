"""`assay validate`: every problem in a dataset file, and in its gold against a chunk table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl_lenient
from assay.corpus.chunks import load_chunks
from assay.dataset.io import Dataset, parse_entries
from assay.dataset.tiers import tier_contradiction, tier_of
from assay.errors import DataError, Problem
from assay.gold.index import Level
from assay.gold.resolve import gold_problems
from assay.report import ReportMixin, Tabular  # assay.report, from the layer gold may use

__all__ = ["EntryValidator", "ValidationReport", "validate", "validate_file"]

EntryValidator = Callable[..., list[Problem]]
"""More checks on parsed entries, from a layer above this one: called as
``fn(entries, base_dir, file=..., lines={id: line})``, returning problems. `assay validate`
passes the gold SQL validator (`assay.sql.gold.validate_sql_gold`), which runs every gold query
read-only against its database and compares it with the stored result."""


def validate_file(
    path: str | Path,
    chunks_path: str | Path | None = None,
    *,
    level: Level = "chunk",
    skip_missing: bool = False,
    validators: Sequence[EntryValidator] = (),
) -> list[Problem]:
    """Every problem in a dataset file (and its gold against a chunk table); [] when clean.

    Without a chunk table: JSON, schema and duplicate ids. With one, also every alternative of
    every entry's evidence and key facts (`assay.gold.check_gold`, at ``level``): chunk ids the
    table lacks, documents it lacks, pages beyond a document, anchors no chunk holds, chunks
    whose text changed since they were labelled, and evidence accepted after the entry's `as_of`.
    Always: a ``label_tier`` its ``reviewed_by`` contradicts (`assay.dataset.tiers.
    tier_contradiction`: gold with fewer than two reviewers, silver without exactly one, a draft
    someone reviewed).
    With ``skip_missing`` gold that does not resolve is not a problem (scoring with
    --skip-missing leaves those entries out; `validate` lists them as skipped).
    Each of `validators` adds its problems (`EntryValidator`).
    """
    problems, stale = _validate(Path(path), chunks_path, level, validators)
    return problems if skip_missing else sorted(problems + stale, key=_order)


def _order(p: Problem) -> tuple[str, int]:
    return (p.file, p.line or 0)


def _validate(
    path: Path,
    chunks_path: str | Path | None,
    level: Level,
    validators: Sequence[EntryValidator] = (),
) -> tuple[list[Problem], list[Problem]]:
    """(problems, stale gold) of a dataset file."""
    problems: list[Problem] = []
    stale: list[Problem] = []
    rows = list(iter_jsonl_lenient(path, problems))
    entries, lines, more = parse_entries(rows, file=str(path))
    problems.extend(more)
    for e in entries:  # a tier its provenance contradicts (gold with one reviewer, ...)
        why = tier_contradiction(e)
        if why is not None:
            problems.append(Problem(str(path), lines.get(e.id), "label_tier", why))
    for check in validators:
        problems.extend(check(entries, path.parent, file=str(path), lines=lines))
    if chunks_path is not None:
        try:
            table = load_chunks(chunks_path)
        except DataError as exc:
            return problems + exc.problems, []
        ds = Dataset(entries, path=str(path), lines=lines)
        for p, kind in gold_problems(ds, table, file=str(path), level=level):
            (problems if kind is None else stale).append(p)
    problems.sort(key=_order)
    stale.sort(key=_order)
    return problems, stale


@dataclass
class ValidationReport(ReportMixin):
    """What `assay validate` found: every problem (FILE:LINE: field: message) and, when the file
    is clean, its counts. `ok` is True when there is no problem."""

    file: str
    chunks: str | None = None
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)  # stale gold, with --skip-missing
    level: str = "chunk"
    version: str | None = None
    entries: int = 0
    answerable: int = 0
    categories: int = 0
    sql: int = 0  # entries with gold SQL (every gold query ran and gave its stored result)
    drafts: int = 0  # entries without evidence marked label_tier "draft": not yet labelled
    tiers: dict[str, int] = field(
        default_factory=dict
    )  # entries per label tier (assay.dataset.tiers)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def unanswerable(self) -> int:
        """Entries without evidence, less the drafts (not labelled yet, not unanswerable)."""
        return self.entries - self.answerable - self.drafts

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "chunks": self.chunks,
            "ok": self.ok,
            "counts": {
                "problems": len(self.problems),
                "entries": self.entries,
                "answerable": self.answerable,
                "unanswerable": self.unanswerable,
                "drafts": self.drafts,
                "categories": self.categories,
                "sql": self.sql,
                "tiers": dict(self.tiers),
            },
            "version": self.version,
            "level": self.level,
            "skipped": [
                {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
                for p in self.skipped
            ],
            "problems": [
                {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
                for p in self.problems
            ],
        }

    def notes(self) -> list[str]:
        """What scoring with --skip-missing would leave out, entry by entry."""
        if not self.skipped:
            return []
        ids = sorted({p.message.split(":", 1)[0].removeprefix("entry ") for p in self.skipped})
        return [
            f"{len(self.skipped)} gold alternative(s) in {len(ids)} entries do not resolve on "
            "this chunk table; --skip-missing leaves those entries out:",
            *(str(p) for p in self.skipped),
        ]

    def tabular(self) -> Tabular:
        if self.problems:
            return Tabular(
                title=f"{self.file}: {len(self.problems)} problem(s)",
                header=["file", "line", "field", "message"],
                rows=[
                    [p.file, "" if p.line is None else str(p.line), p.field or "", p.message]
                    for p in self.problems
                ],
                emphasis=set(),
            )
        return Tabular(
            title=f"{self.file}: ok"
            + (" (gold checked against the chunk table)" if self.chunks else ""),
            header=["entries", "answerable", "unanswerable", "categories", "version"],
            rows=[
                [
                    str(self.entries),
                    str(self.answerable),
                    str(self.unanswerable),
                    str(self.categories),
                    str(self.version),
                ]
            ],
            footer=self.notes(),
            emphasis=set(),
        )


def validate(
    path: str | Path,
    chunks_path: str | Path | None = None,
    *,
    level: Level = "chunk",
    skip_missing: bool = False,
    validators: Sequence[EntryValidator] = (),
) -> ValidationReport:
    """`validate_file` as a report: the problems, or the counts of a clean dataset. With
    ``skip_missing`` gold that does not resolve is listed in ``skipped``, not as problems."""
    from assay.dataset.io import load_dataset

    problems, stale = _validate(Path(path), chunks_path, level, validators)
    if not skip_missing:
        problems, stale = sorted(problems + stale, key=_order), []
    chunks = None if chunks_path is None else str(chunks_path)
    if problems:
        return ValidationReport(str(path), chunks, problems, level=level)
    ds = load_dataset(path)
    return ValidationReport(
        str(path),
        chunks,
        [],
        stale,
        level=level,
        version=ds.version,
        entries=len(ds),
        answerable=sum(e.is_answerable for e in ds.entries),
        categories=len(ds.categories()),
        sql=sum(e.sql is not None for e in ds.entries),
        drafts=sum(not e.is_answerable and e.label_tier == "draft" for e in ds.entries),
        tiers=dict(Counter(tier_of(e) or "unknown" for e in ds.entries)),
    )
