"""`assay validate`: every problem in a dataset file, and in its gold against a chunk table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl_lenient
from assay.corpus import load_chunks
from assay.dataset import (
    Dataset,
    Entry,
    VersionCheck,
    not_disclosed_shortfall,
    parse_entries,
    tier_contradiction,
    tier_of,
)
from assay.errors import DataError, Problem
from assay.gold.index import Level
from assay.gold.resolve import gold_problems
from assay.report import ReportMixin, Tabular  # assay.report, from the layer gold may use

__all__ = ["MIN_UNANSWERABLE", "EntryValidator", "ValidationReport", "validate", "validate_file"]

MIN_UNANSWERABLE = 0.10
"""The least share of unanswerable or partial entries, overall and per category, before
`validate` warns (the labelling guide asks for 10-15%)."""

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
    someone reviewed); an unanswerable or partial entry marked gold without two reviewers and a
    ``structured_lookup`` (`assay.dataset.tiers.not_disclosed_shortfall`).
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
        why = not_disclosed_shortfall(e) or tier_contradiction(e)
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
    partial: int = 0  # entries marked answerable "partial" (with evidence: scored)
    # coverage: per category (labelled entries, unanswerable or partial ones), and the least
    # share asked for; a share below it is a warning
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)
    min_unanswerable: float = MIN_UNANSWERABLE
    version_check: VersionCheck | None = None
    warnings: list[Problem] = field(default_factory=list)
    tiers: dict[str, int] = field(
        default_factory=dict
    )  # entries per label tier (assay.dataset.tiers)

    @property
    def ok(self) -> bool:
        """No problem (warnings do not count: `assay validate --strict` makes them count)."""
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
            "coverage": self.coverage_dict(),
            "version": self.version,
            "version_check": None if self.version_check is None else self.version_check.to_dict(),
            "warnings": [
                {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
                for p in self.warnings
            ],
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

    def coverage_dict(self) -> dict[str, Any]:
        """The share of unanswerable or partial entries, overall and per category (drafts,
        not labelled yet, are in neither count)."""

        def cell(n: int, k: int) -> dict[str, Any]:
            return {"n": n, "unanswerable_or_partial": k, "share": k / n if n else None}

        n = sum(v[0] for v in self.coverage.values())
        k = sum(v[1] for v in self.coverage.values())
        return {
            "min_share": self.min_unanswerable,
            "overall": cell(n, k),
            "categories": {c: cell(*v) for c, v in sorted(self.coverage.items())},
        }

    def notes(self) -> list[str]:
        """Warnings, whether the version still names the content when that cannot be told, and
        what scoring with --skip-missing would leave out, entry by entry."""
        out = [f"warning: {p}" for p in self.warnings]
        if self.version_check is not None and self.version_check.status == "unknown":
            out.append(f"note: {self.version_check.message}")
        if not self.skipped:
            return out
        ids = sorted({p.message.split(":", 1)[0].removeprefix("entry ") for p in self.skipped})
        return [
            *out,
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
            + (f", {len(self.warnings)} warning(s)" if self.warnings else "")
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
            footer=[self.coverage_line(), *self.notes()],
            emphasis=set(),
        )

    def coverage_line(self) -> str:
        """One line: how many labelled entries are unanswerable or partial, against the ask."""
        overall = self.coverage_dict()["overall"]
        share = overall["share"]
        return (
            f"unanswerable or partial: {overall['unanswerable_or_partial']} of {overall['n']} "
            "labelled entries"
            + ("" if share is None else f" ({share:.0%})")
            + (
                f"; at least {self.min_unanswerable:.0%} asked for, overall and per category"
                if self.min_unanswerable > 0
                else "; not checked (--min-unanswerable 0)"
            )
        )


def validate(
    path: str | Path,
    chunks_path: str | Path | None = None,
    *,
    level: Level = "chunk",
    skip_missing: bool = False,
    validators: Sequence[EntryValidator] = (),
    min_unanswerable: float = MIN_UNANSWERABLE,
) -> ValidationReport:
    """`validate_file` as a report: the problems, or the counts of a clean dataset. With
    ``skip_missing`` gold that does not resolve is listed in ``skipped``, not as problems.

    A clean dataset is also checked for what is not an error but weakens it, each a warning:
    fewer than ``min_unanswerable`` (a share; 0 turns it off) of its labelled entries
    unanswerable or partial, overall or in a category (a set that never asks what the filings do
    not answer cannot catch a system that always answers); and content changed since its named
    version was written, without a version bump (`assay.dataset.versions`; a manifest that
    cannot tell is said in the notes)."""
    from assay.dataset import content_changed_since_version, load_dataset

    if not 0.0 <= min_unanswerable <= 1.0:
        raise ValueError(f"min_unanswerable must be a share in [0, 1], got {min_unanswerable}")
    problems, stale = _validate(Path(path), chunks_path, level, validators)
    if not skip_missing:
        problems, stale = sorted(problems + stale, key=_order), []
    chunks = None if chunks_path is None else str(chunks_path)
    if problems:
        return ValidationReport(str(path), chunks, problems, level=level)
    ds = load_dataset(path)
    version_check = content_changed_since_version(ds)
    coverage = _coverage(ds.entries)
    warnings = _coverage_warnings(str(path), coverage, min_unanswerable)
    if version_check.changed:
        warnings.append(Problem(str(path), None, "version", version_check.message))
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
        drafts=sum(_is_draft(e) for e in ds.entries),
        partial=sum(e.answerable == "partial" for e in ds.entries),
        coverage=coverage,
        min_unanswerable=min_unanswerable,
        version_check=version_check,
        warnings=warnings,
        tiers=dict(Counter(tier_of(e) or "unknown" for e in ds.entries)),
    )


def _is_draft(e: Entry) -> bool:
    """Not labelled yet: no evidence, marked label_tier "draft" (not an unanswerable entry)."""
    return not e.is_answerable and e.label_tier == "draft"


def _coverage(entries: Sequence[Entry]) -> dict[str, tuple[int, int]]:
    """Per category: (labelled entries, those unanswerable or partial)."""
    out: dict[str, tuple[int, int]] = {}
    for e in entries:
        if _is_draft(e):
            continue
        n, k = out.get(e.category, (0, 0))
        out[e.category] = (n + 1, k + (e.answerable is not True or not e.is_answerable))
    return out


def _coverage_warnings(
    file: str, coverage: dict[str, tuple[int, int]], min_share: float
) -> list[Problem]:
    """A warning when fewer than `min_share` of the labelled entries are unanswerable or
    partial: overall, then per category."""
    if min_share <= 0:
        return []
    cells = [("", sum(v[0] for v in coverage.values()), sum(v[1] for v in coverage.values()))]
    cells += [(f"category {c!r}: ", n, k) for c, (n, k) in sorted(coverage.items())]
    return [
        Problem(
            file,
            None,
            "answerable",
            f"{where}{k} of {n} labelled entries ({k / n:.0%}) are unanswerable or partial, "
            f"under the {min_share:.0%} asked for (--min-unanswerable): add questions the "
            "filings do not (fully) answer",
        )
        for where, n, k in cells
        if n and k / n < min_share
    ]
