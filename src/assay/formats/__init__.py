"""Golden sets in and out of the formats teams already keep them in.

`import_file(FORMAT, PATH)` reads a file (or a Hugging Face folder) into validated entries and,
for formats that carry them, each annotator's labels in long format; `export_file(FORMAT,
DATASET, OUT)` writes a dataset (and labels) in the format. Every format keeps the whole entry
in its free-form slot (``assay_entry``) unless asked for the plain format, so a round trip gives
back the same entries and the same scores; what a format cannot hold, or what an import had to
guess, is said in the result's notes. Formats are found by module (one per format in this
package, each with a ``FORMAT``), listed by `FORMATS`:

- ``csv``: plain CSV; ``hf``: Hugging Face datasets (JSONL or Parquet, with a dataset card);
- ``label-studio``: Label Studio tasks with annotations; ``argilla``: Argilla records;
- ``ragas``: ragas test sets (CSV/JSON/JSONL); ``deepeval``: deepeval goldens (JSON);
- ``promptfoo``: promptfoo test cases (YAML).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.corpus import ChunkTable
from assay.dataset import Entry
from assay.errors import UsageError
from assay.formats._base import ExportOptions, FormatSpec, entries_from_records, flat_record
from assay.report import ReportMixin, Tabular

__all__ = [
    "FORMATS",
    "ExportOptions",
    "Exported",
    "FormatSpec",
    "Imported",
    "export_entries",
    "export_file",
    "format_names",
    "get_format",
    "import_file",
]


def _discover() -> dict[str, FormatSpec]:
    found: dict[str, FormatSpec] = {}
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        spec = getattr(importlib.import_module(f"{__name__}.{mod.name}"), "FORMAT", None)
        if isinstance(spec, FormatSpec):
            found[spec.name] = spec
    return dict(sorted(found.items()))


FORMATS: dict[str, FormatSpec] = _discover()


def format_names() -> list[str]:
    """The formats' names, sorted (what ``assay import`` and ``assay export-as`` take)."""
    return list(FORMATS)


def get_format(name: str) -> FormatSpec:
    """The format called `name`; an unknown name is a `UsageError` listing the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UsageError(f"unknown format {name!r}; known: {', '.join(format_names())}") from None


@dataclass(frozen=True)
class Imported(ReportMixin):
    """What an import read: entries, long-format labels (item, rater, label, criterion), and
    notes on what was edited in the file, guessed, kept under metadata or left out."""

    format: str
    source: str
    entries: list[Entry]
    labels: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "entries": len(self.entries),
            "labels": len(self.labels),
            "raters": sorted({str(r["rater"]) for r in self.labels}),
            "notes": self.notes,
        }

    def tabular(self) -> Tabular:
        raters = len({r["rater"] for r in self.labels})
        rows = [
            ["entries", str(len(self.entries))],
            ["labels", f"{len(self.labels)} by {raters} raters"],
        ]
        return Tabular(f"imported {self.source} ({self.format})", ["", "count"], rows, self.notes)


@dataclass(frozen=True)
class Exported(ReportMixin):
    """What an export wrote: where, how many entries and labels, and what the format could not
    hold."""

    format: str
    path: str
    entries: int
    labels: int
    notes: list[str] = field(default_factory=list)

    def tabular(self) -> Tabular:
        rows = [["entries", str(self.entries)], ["labels", str(self.labels)]]
        return Tabular(f"wrote {self.path} ({self.format})", ["", "count"], rows, self.notes)


def import_file(name: str, path: str | Path, *, table: ChunkTable | None = None) -> Imported:
    """Read `path` in format `name` into validated entries and labels.

    `table` matches gold given as text (ragas' reference contexts, deepeval's context) onto
    chunk ids. Every problem in the file raises one `DataError` naming FILE:LINE: field."""
    spec = get_format(name)
    path = Path(path)
    raw = spec.read(path)
    entries, notes = entries_from_records(raw.records, file=str(path), table=table)
    return Imported(spec.name, str(path), entries, raw.labels, [*raw.notes, *notes])


def export_entries(
    name: str,
    entries: Sequence[Entry],
    out: str | Path,
    *,
    labels: Sequence[dict[str, Any]] = (),
    options: ExportOptions | None = None,
) -> Exported:
    """Write `entries` (and long-format `labels`, for formats that carry them) to `out`."""
    spec = get_format(name)
    opts = options or ExportOptions()
    if opts.variant is not None and opts.variant not in spec.variants:
        raise UsageError(
            f"{spec.name} has no variant {opts.variant!r}"
            + (f"; it has {', '.join(spec.variants)}" if spec.variants else "")
        )
    if labels and not spec.carries_labels:
        raise UsageError(f"{spec.name} does not carry labels; use label-studio or argilla")
    if opts.table is not None and opts.resolver is None:
        from dataclasses import replace

        from assay.gold.resolve import GoldResolver

        opts = replace(opts, resolver=GoldResolver(opts.table))
    records = [flat_record(e, opts) for e in entries]
    out = Path(out)
    notes = spec.write(out, records, list(labels), opts)
    if opts.plain:
        lost = _lost_fields(spec, out, entries, opts.table)
        if lost:
            notes.append("not given back as they were by the plain format: " + ", ".join(lost))
    return Exported(spec.name, str(out), len(records), len(labels), notes)


def _lost_fields(
    spec: FormatSpec, out: Path, entries: Sequence[Entry], table: ChunkTable | None
) -> list[str]:
    """The entry fields a plain file does not give back, found by reading it back (with the
    same chunk table): each with the number of entries that lose it."""
    back, _ = entries_from_records(spec.read(out).records, file=str(out), table=table)
    lost: dict[str, int] = {}
    for a, b in zip(entries, back, strict=True):
        was, now = a.to_json_dict(), b.to_json_dict()
        for k in dict.fromkeys([*was, *now]):
            if was.get(k) != now.get(k):
                lost[k] = lost.get(k, 0) + 1
    return [f"{k} ({n} entries)" for k, n in sorted(lost.items())]


def export_file(
    name: str,
    dataset: str | Path,
    out: str | Path,
    *,
    labels: str | Path | None = None,
    options: ExportOptions | None = None,
) -> Exported:
    """Write the dataset file `dataset` (and the long-format labels file `labels`) to `out`."""
    from assay.dataset import load_dataset

    rows: list[dict[str, Any]] = []
    if labels is not None:
        from assay.label_files import load_labels

        rows = [
            {"item": r.item, "rater": r.rater, "label": r.label, "criterion": r.criterion}
            for r in load_labels(labels)
        ]
    return export_entries(name, load_dataset(dataset).entries, out, labels=rows, options=options)
