"""What changed between two versions of a dataset, entry by entry and field by field.

Entries are matched by id. An entry in one set only is added or removed; an entry in both is
compared on every field of the schema (whatever fields it has, so fields added later compare
too) and on each key of its `metadata`. The changes people look for first have names: the query
reworded, the gold moved (evidence pieces added, removed or given other alternatives; paths
regrouped), the tier changed (`label_tier`), the behaviour changed (`answerable`,
`expected_behavior`, `must_acknowledge_gap`), the ambiguity flag changed (`ambiguous`).

`diff_datasets(old, new)` is the library call behind `assay diff OLD NEW`; its `DatasetDiff` renders
as a table, JSON and pull-request markdown like every other report.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import dumps_canonical
from assay.dataset.io import Dataset, load_dataset
from assay.dataset.schema import Alternative, Entry
from assay.errors import DataError, Problem
from assay.report import ReportMixin, Tabular, markdown_table

__all__ = ["DatasetDiff", "EntryChange", "FieldChange", "GoldMove", "diff_datasets"]

KINDS: dict[str, str] = {
    "query": "query reworded",
    "evidence_paths": "gold moved",
    "label_tier": "tier changed",
    "answerable": "behaviour changed",
    "expected_behavior": "behaviour changed",
    "must_acknowledge_gap": "behaviour changed",
    "ambiguous": "ambiguity changed",
    "category": "category changed",
    "as_of": "as_of changed",
    "reference_answer": "reference answer changed",
    "key_facts": "key facts changed",
}
"""The names of the changes people look for; any other field is "FIELD changed"."""

GOLD_LEGEND = (
    "gold: [a or b] is a piece (any one of its alternatives satisfies it); -[..] removed, "
    "+[..] added, ~[..] the same piece with other alternatives, before and after"
)

CELL = 120  # characters of a value shown in a table or markdown cell (JSON keeps it whole)


def _alt_id(alt: Alternative) -> str:
    return alt if isinstance(alt, str) else dumps_canonical(alt.model_dump(mode="json"))


def _alt_label(alt: Alternative) -> str:
    return alt if isinstance(alt, str) else alt.key()


Piece = tuple[str, ...]  # the sorted ids of a piece's alternatives


@dataclass(frozen=True)
class GoldMove:
    """How an entry's evidence moved: pieces (sets of interchangeable alternatives, each shown
    as a chunk id or ``doc@pN:quote``) added, removed, or kept with other alternatives, and the
    paths before and after."""

    paths_before: int
    paths_after: int
    added: list[list[str]] = field(default_factory=list)
    removed: list[list[str]] = field(default_factory=list)
    # a piece that kept some alternatives: (before, after)
    changed: list[tuple[list[str], list[str]]] = field(default_factory=list)
    regrouped: bool = False  # the same pieces, in other paths

    @classmethod
    def of(cls, old: Entry, new: Entry) -> GoldMove:
        labels: dict[str, str] = {}

        def pieces(e: Entry) -> tuple[list[Piece], set[tuple[Piece, ...]]]:
            seen: list[Piece] = []
            paths: set[tuple[Piece, ...]] = set()
            for path in e.evidence_paths:
                canon: list[Piece] = []
                for piece in path:
                    for alt in piece:
                        labels.setdefault(_alt_id(alt), _alt_label(alt))
                    p = tuple(sorted({_alt_id(a) for a in piece}))
                    canon.append(p)
                    if p not in seen:
                        seen.append(p)
                paths.add(tuple(sorted(canon)))
            return seen, paths

        before, old_paths = pieces(old)
        after, new_paths = pieces(new)
        gone = [p for p in before if p not in after]
        came = [p for p in after if p not in before]
        changed: list[tuple[Piece, Piece]] = []
        for p in list(came):
            match = next((q for q in gone if set(p) & set(q)), None)
            if match is not None:
                changed.append((match, p))
                gone.remove(match)
                came.remove(p)

        def show(p: Piece) -> list[str]:
            return [labels[a] for a in p]

        return cls(
            paths_before=len(old.evidence_paths),
            paths_after=len(new.evidence_paths),
            added=[show(p) for p in came],
            removed=[show(p) for p in gone],
            changed=[(show(a), show(b)) for a, b in changed],
            regrouped=not came and not gone and not changed and old_paths != new_paths,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "paths": {"before": self.paths_before, "after": self.paths_after},
            "pieces_added": self.added,
            "pieces_removed": self.removed,
            "pieces_changed": [{"before": a, "after": b} for a, b in self.changed],
            "regrouped": self.regrouped,
        }

    def was_now(self) -> tuple[str, str]:
        """Two short cells: what went, what came (`GOLD_LEGEND`)."""

        def piece(p: Sequence[str]) -> str:
            return "[" + " or ".join(p) + "]"

        was = [f"-{piece(p)}" for p in self.removed] + [f"~{piece(a)}" for a, _ in self.changed]
        now = [f"+{piece(p)}" for p in self.added] + [f"~{piece(b)}" for _, b in self.changed]
        paths = f"{self.paths_before} path(s)"
        if self.paths_after != self.paths_before or self.regrouped:
            now.append(
                f"{self.paths_after} path(s)" + (", pieces regrouped" if self.regrouped else "")
            )
            was.append(paths)
        return "; ".join(was) or "-", "; ".join(now) or "-"


@dataclass(frozen=True)
class FieldChange:
    """One field of one entry, before and after (JSON values; None when absent)."""

    field: str  # "query", "evidence_paths", "metadata.room", ...
    before: Any
    after: Any
    gold: GoldMove | None = None

    @property
    def kind(self) -> str:
        return KINDS.get(self.field, f"{self.field} changed")

    def to_dict(self) -> dict[str, Any]:
        out = {"field": self.field, "kind": self.kind, "before": self.before, "after": self.after}
        if self.gold is not None:
            out["gold"] = self.gold.to_dict()
        return out

    def cells(self) -> tuple[str, str]:
        if self.gold is not None:
            return self.gold.was_now()
        return _cell(self.before), _cell(self.after)


def _cell(value: Any) -> str:
    text = "-" if value is None else value if isinstance(value, str) else dumps_canonical(value)
    return text if len(text) <= CELL else text[: CELL - 1] + "…"


@dataclass(frozen=True)
class EntryChange:
    """An entry in both sets whose fields differ."""

    id: str
    line_before: int | None
    line_after: int | None
    changes: list[FieldChange]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line_before": self.line_before,
            "line_after": self.line_after,
            "changes": [c.to_dict() for c in self.changes],
        }


def _fields(e: Entry) -> dict[str, Any]:
    """The fields an entry sets (JSON values), metadata spread into its keys."""
    d = e.to_json_dict()
    meta = d.pop("metadata", None) or {}
    return d | {f"metadata.{k}": v for k, v in meta.items()}


@functools.cache
def _default(name: str) -> Any:
    """What an unset field is worth (``answerable`` true, a list empty, ...); None if unknown."""
    info = Entry.model_fields.get(name)
    if info is None or info.is_required():
        return None
    value = info.get_default(call_default_factory=True)
    plain = (bool, int, float, str, list, dict)
    return value if value is None or isinstance(value, plain) else None


def _entry_changes(old: Entry, new: Entry) -> list[FieldChange]:
    a, b = _fields(old), _fields(new)
    out: list[FieldChange] = []
    for name in [*a, *(k for k in b if k not in a)]:
        before = a[name] if name in a else _default(name)
        after = b[name] if name in b else _default(name)
        if before == after:
            continue
        gold = GoldMove.of(old, new) if name == "evidence_paths" else None
        out.append(FieldChange(name, before, after, gold))
    return out


@dataclass
class DatasetDiff(ReportMixin):
    """Entries added, removed and changed (field by field) from `old` to `new`, matched by id;
    with both versions and the index each is bound to."""

    old: str
    new: str
    old_version: str
    new_version: str
    reordered: bool = False  # the same ids in another order (order is content: it is hashed)
    old_index: str | None = None  # the manifests' index_version: the index the gold is bound to
    new_index: str | None = None
    added: list[Entry] = field(default_factory=list)
    removed: list[Entry] = field(default_factory=list)
    changed: list[EntryChange] = field(default_factory=list)
    unchanged: int = 0
    lines_old: dict[str, int] = field(default_factory=dict, repr=False)
    lines_new: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def content_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.reordered)

    @property
    def version_bumped(self) -> bool:
        return self.old_version != self.new_version

    def summary(self) -> str:
        counts = (
            f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed, "
            f"{self.unchanged} unchanged"
        )
        if not self.content_changed:
            state = "same content"
        elif not (self.added or self.removed or self.changed):
            state = "the same entries in another order" + (
                "" if self.version_bumped else f", under the same version ({self.new_version})"
            )
        elif self.version_bumped:
            state = f"version {self.old_version} -> {self.new_version}"
        else:
            state = f"content changed but the version did not (both {self.new_version})"
        if self.old_index != self.new_index:
            state += (
                f"; bound to index {self.old_index or '(none)'} -> {self.new_index or '(none)'}"
            )
        return f"{counts}; {state}"

    def to_dict(self) -> dict[str, Any]:
        def brief(e: Entry, lines: dict[str, int]) -> dict[str, Any]:
            return {"id": e.id, "line": lines.get(e.id), "category": e.category, "query": e.query}

        return {
            "old": {
                "file": self.old,
                "version": self.old_version,
                "index_version": self.old_index,
            },
            "new": {
                "file": self.new,
                "version": self.new_version,
                "index_version": self.new_index,
            },
            "content_changed": self.content_changed,
            "reordered": self.reordered,
            "version_bumped": self.version_bumped,
            "counts": {
                "added": len(self.added),
                "removed": len(self.removed),
                "changed": len(self.changed),
                "unchanged": self.unchanged,
            },
            "added": [brief(e, self.lines_new) for e in self.added],
            "removed": [brief(e, self.lines_old) for e in self.removed],
            "changed": [c.to_dict() for c in self.changed],
        }

    def tabular(self) -> list[Tabular]:
        title = f"{self.old} ({self.old_version}) -> {self.new} ({self.new_version})"
        tables = [
            Tabular(
                title=title,
                header=["added", "removed", "changed", "unchanged", "versions"],
                rows=[
                    [
                        str(len(self.added)),
                        str(len(self.removed)),
                        str(len(self.changed)),
                        str(self.unchanged),
                        self.summary().split("; ", 1)[1],
                    ]
                ],
                emphasis=set(),
            )
        ]
        for name, entries in (("Added", self.added), ("Removed", self.removed)):
            if entries:
                tables.append(
                    Tabular(
                        title=f"{name} ({len(entries)})",
                        header=["id", "category", "query"],
                        rows=[[e.id, e.category, _cell(e.query)] for e in entries],
                        emphasis=set(),
                    )
                )
        if self.changed:
            rows = [
                [c.id, fc.kind, *fc.cells()] for c in self.changed for fc in c.changes
            ]  # fmt: skip
            moved = any(fc.gold is not None for c in self.changed for fc in c.changes)
            tables.append(
                Tabular(
                    title=f"Changed ({len(self.changed)})",
                    header=["id", "change", "was", "now"],
                    rows=rows,
                    footer=[GOLD_LEGEND] if moved else [],
                    emphasis=set(),
                )
            )
        return tables

    def to_table(self) -> Any:
        """The tables for a terminal; cells escaped, so ``[c1 or c2]`` is not read as markup."""
        from rich.console import Group
        from rich.markup import escape

        from assay.report import rich_table

        tables = []
        for t in self.tabular():
            t.rows = [[escape(c) for c in r] for r in t.rows]
            tables.append(rich_table(t))
        return Group(*tables)

    def to_markdown(self) -> str:
        """For a pull request: a heading, the counts and versions, then a table per kind of
        change (cells left-aligned; values cut at 120 characters)."""
        tables = self.tabular()
        parts = [
            f"### Dataset diff: `{self.old}` -> `{self.new}`\n",
            f"{self.summary()}.\n",
        ]
        if self.content_changed and not self.version_bumped:
            parts.append(
                f":warning: the content changed and the version did not: results made on either "
                f"set name the same version ({self.new_version}).\n"
            )
        for t in tables[1:]:
            parts.append(
                f"**{t.title}**\n\n"
                + markdown_table(t.header, t.rows, "l" * len(t.header))
                + "".join(f"\n{line}\n" for line in t.footer)
            )
        return "\n".join(parts)


def _load(path: Dataset | str | Path, problems: list[Problem]) -> Dataset | None:
    if isinstance(path, Dataset):
        return path
    try:
        return load_dataset(path)
    except DataError as exc:
        problems.extend(exc.problems)
    except FileNotFoundError:
        problems.append(Problem(str(path), None, None, "file not found"))
    return None


def _index(ds: Dataset) -> str | None:
    bound = ds.manifest.get("index_version")
    return str(bound) if bound else None


def diff_datasets(old: Dataset | str | Path, new: Dataset | str | Path) -> DatasetDiff:
    """Entries added, removed and changed field by field from `old` to `new` (datasets or
    paths), matched by id. Raises DataError with every problem of both files when either does
    not load."""
    problems: list[Problem] = []
    a, b = _load(old, problems), _load(new, problems)
    if problems or a is None or b is None:
        raise DataError(problems)
    changed: list[EntryChange] = []
    unchanged = 0
    for e in b.entries:
        before = a.by_id.get(e.id)
        if before is None:
            continue
        fields = [] if before == e else _entry_changes(before, e)
        if fields:
            changed.append(EntryChange(e.id, a.lines.get(e.id), b.lines.get(e.id), fields))
        else:
            unchanged += 1
    return DatasetDiff(
        old=a.path or "<old>",
        new=b.path or "<new>",
        old_version=a.version,
        new_version=b.version,
        reordered=[e.id for e in a.entries if e.id in b.by_id]
        != [e.id for e in b.entries if e.id in a.by_id],
        old_index=_index(a),
        new_index=_index(b),
        added=[e for e in b.entries if e.id not in a.by_id],
        removed=[e for e in a.entries if e.id not in b.by_id],
        changed=changed,
        unchanged=unchanged,
        lines_old=dict(a.lines),
        lines_new=dict(b.lines),
    )
