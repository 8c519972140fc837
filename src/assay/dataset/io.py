"""Reading, validating and writing golden datasets (JSONL + a manifest beside it).

Gold checked against a chunk table (`assay validate --chunks`) is `assay.gold`'s business: this
module knows entries, not chunks.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from assay._io import (
    atomic_writer,
    dumps_canonical,
    has_long_int,
    iter_jsonl_lenient,
    json_loads,
    loads_line,
    sha256_bytes,
    write_text_atomic,
)
from assay.dataset.conversations import conversation_lines, expand_conversation, is_conversation
from assay.dataset.schema import Entry, fast_entry
from assay.errors import DataError, Problem

if TYPE_CHECKING:
    from assay.dataset.tierreport import TierReport

__all__ = [
    "VERSION_RECORD",
    "Dataset",
    "entries_hash",
    "load_dataset",
    "load_manifest",
    "manifest_path",
    "parse_entries",
    "save_manifest",
    "write_dataset",
]


VERSION_RECORD = "version_content"
"""The manifest key of ``{"version", "entries_hash"}``: what the entries said (`entries_hash`)
when the named version was written (`assay.dataset.versions`)."""


def manifest_path(dataset_path: str | Path) -> Path:
    p = Path(dataset_path)
    name = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    return p.with_name(f"{name}.manifest.json")


def load_manifest(dataset_path: str | Path) -> dict[str, Any]:
    """The dataset's manifest (version, bound index, changelog, splits, fresh samples); {} if none."""
    mp = manifest_path(dataset_path)
    if not mp.exists():
        return {}
    data = json_loads(mp.read_text(encoding="utf-8"), mp)
    if not isinstance(data, dict):
        raise DataError("a manifest must be a JSON object", file=mp)
    return data


def save_manifest(dataset_path: str | Path, manifest: dict[str, Any]) -> None:
    write_text_atomic(
        manifest_path(dataset_path), json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    )


def entries_hash(entries: Iterable[Entry]) -> str:
    """SHA-256 of the entries as canonical JSON, one a line: what they say, not how the file
    spells it (key order, spacing and escapes do not change it; a value, an entry or their
    order does)."""
    return sha256_bytes("\n".join(dumps_canonical(e.to_json_dict()) for e in entries).encode())


@dataclass
class Dataset:
    """A versioned list of entries. `version` comes from the manifest, else the content hash."""

    entries: list[Entry]
    path: str | None = None
    content_hash: str = ""
    manifest: dict[str, Any] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)  # entry id -> line number in the file
    # what `assay.dataset.tiers.select_tiers` kept and left out (None: not selected)
    tiers: TierReport | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = entries_hash(self.entries)

    @functools.cached_property
    def by_id(self) -> dict[str, Entry]:
        """Every entry by its id, built on first use (a gate never looks one up)."""
        return {e.id: e for e in self.entries}

    @property
    def version(self) -> str:
        v = self.manifest.get("version")
        return str(v) if v else f"sha256:{self.content_hash[:12]}"

    def __len__(self) -> int:
        return len(self.entries)

    def categories(self) -> list[str]:
        return sorted({e.category for e in self.entries})

    def tier_notes(self) -> list[str]:
        """The sentence a result prints about the label tiers it was computed on ([] when the
        entries were not selected by tier)."""
        return [] if self.tiers is None else [self.tiers.line()]


class LineIndex(Mapping[str, int]):
    """Entry id -> line number in the file, kept as the ids in file order and their line numbers
    (none when the i-th entry is on line i + 1, a file without blank lines); the dictionary is
    built on first use. A gate never asks (lines are named on errors); at 100,000 entries the
    dictionary takes 10.9 MB (tracemalloc) and the ids 0.8 MB."""

    __slots__ = ("_ids", "_map", "_numbers")

    def __init__(self, ids: list[str], numbers: Sequence[int] | None) -> None:
        self._ids: list[str] | None = ids
        self._numbers = numbers
        self._map: dict[str, int] | None = None

    def _built(self) -> dict[str, int]:
        if self._map is None:
            assert self._ids is not None
            numbers = self._numbers if self._numbers is not None else range(1, len(self._ids) + 1)
            self._map = dict(zip(self._ids, numbers, strict=True))
            self._ids = self._numbers = None
        return self._map

    def __getitem__(self, key: str) -> int:
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._ids) if self._ids is not None else len(self._built())

    def __repr__(self) -> str:
        return f"LineIndex({self._built()!r})"


def _loc_to_field(loc: Sequence[int | str]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, str) and (
            item in {"str", "Anchor", "bool", "int", "date"} or "[" in item
        ):
            continue  # union member tags
        parts.append(str(item))
    return ".".join(parts) or "(entry)"


def _validation_problems(exc: ValidationError, file: str, line: int | None) -> list[Problem]:
    seen: dict[str, str] = {}
    for err in exc.errors(include_url=False):
        fld = _loc_to_field(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field (put free data under 'metadata')"
        elif err["type"] == "missing":
            msg = "required field is missing"
        if fld not in seen:
            seen[fld] = msg
        elif msg not in seen[fld] and len(seen[fld]) < 200:
            seen[fld] += f"; or {msg}"
    # a union error on an alternative shows up once per member; keep the most specific one
    specific = [f for f in seen if not any(o.startswith(f + ".") for o in seen)]
    return [Problem(file, line, f, seen[f]) for f in specific]


def parse_entries(
    rows: Iterable[tuple[int | None, Any]], *, file: str = "<entries>"
) -> tuple[list[Entry], dict[str, int], list[Problem]]:
    """Validate raw rows (line number, object). Returns entries, id->line, and every problem.

    A row in the common shape is built directly (`assay.dataset.schema.fast_entry`); any
    other is read by the full model, which names each problem. A conversation row (one with
    ``turns``) gives one entry per turn (`assay.dataset.conversations.expand_conversation`),
    each mapped to the conversation's line."""
    entries: list[Entry] = []
    lines: dict[str, int] = {}
    problems: list[Problem] = []
    for lineno, row in rows:
        if not isinstance(row, dict):
            problems.append(Problem(file, lineno, None, "an entry must be a JSON object"))
            continue
        if is_conversation(row):
            turns, more = expand_conversation(
                row, file=file, line=lineno, problems_of=_validation_problems
            )
            problems.extend(more)
        else:
            try:
                turns = [fast_entry(row) or Entry.model_validate(row)]
            except ValidationError as exc:
                problems.extend(_validation_problems(exc, file, lineno))
                continue
        for e in turns:
            if e.id in lines:
                problems.append(
                    Problem(
                        file, lineno, "id", f"duplicate id {e.id!r} (first on line {lines[e.id]})"
                    )
                )
                continue
            lines[e.id] = lineno or 0
            entries.append(e)
    return entries, lines, problems


def _read_valid(path: Path) -> tuple[list[Entry], LineIndex, str] | None:
    """A valid dataset file read in one pass over its bytes (entries, id -> line, SHA-256), or
    None for any file the checked reader must read: a missing or unreadable file, a line that
    is not JSON or not an object or holds a conversation (``turns``), an entry validation
    refuses, a duplicate id. The file is read and hashed whole and each line parsed by the
    checked reader's own `assay._io.loads_line` (orjson, `json` where the two may differ), so
    the line-by-line reader's per-line hashing and checks are not paid; then the checked
    reader, reading the same bytes, names every problem. Entries read here are the ones the
    checked reader gives."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    entries: list[Entry] = []
    ids: list[str] = []
    numbers: list[int] = []
    fields_sets: dict[tuple[str, ...], set[str]] = {}  # one per distinct row shape, not a line
    shared: dict[str, str] = {}  # one string per distinct category and tier, not one a line
    fast, validate = fast_entry, Entry.model_validate
    # `loads_line` asks each line for a run of 19 digits (where orjson and json may differ);
    # asked once of the whole file (a run never spans a line break), a file without one has
    # every line parsed by orjson, and a line orjson refuses by `loads_line` as before
    loads = loads_line if has_long_int(data) else orjson.loads
    try:
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                row = loads(raw)
            except orjson.JSONDecodeError:
                row = loads_line(raw)
            if type(row) is not dict or "turns" in row:
                return None  # a conversation's turns: the checked reader knows them
            e = fast(row, fields_sets=fields_sets)
            if e is None:
                e = validate(row)  # any other shape: the model reads it
            else:
                values = e.__dict__
                for name in ("category", "label_tier"):
                    v = values[name]
                    if v is not None:
                        values[name] = shared.setdefault(v, v)
            ids.append(e.id)
            numbers.append(lineno)
            entries.append(e)
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError):
        return None
    if len(set(ids)) != len(ids):
        return None  # a duplicate id: the checked reader names both lines
    consecutive = not numbers or numbers[-1] == len(numbers)  # increasing from 1: every line
    return entries, LineIndex(ids, None if consecutive else array("q", numbers)), digest


def load_dataset(path: str | Path) -> Dataset:
    """Load and validate a dataset; raises DataError listing every problem (FILE:LINE:field).

    A valid file is read in one pass (`_read_valid`); any other is read again line by line,
    which names each problem."""
    path = Path(path)
    fast = _read_valid(path)
    if fast is not None:
        entries, index, digest = fast
        return Dataset(
            entries, path=str(path), content_hash=digest, manifest=load_manifest(path), lines=index
        )
    problems: list[Problem] = []
    hasher = hashlib.sha256()
    rows = iter_jsonl_lenient(path, problems, hasher=hasher)  # read as validated: no copy held
    entries, lines, more = parse_entries(rows, file=str(path))
    problems.extend(more)
    if problems:
        raise DataError(problems)
    return Dataset(
        entries,
        path=str(path),
        content_hash=hasher.hexdigest(),
        manifest=load_manifest(path),
        lines=lines,
    )


def write_dataset(
    path: str | Path,
    entries: Iterable[Entry],
    *,
    version: str | None = None,
    changelog: str | None = None,
    index_version: str | None = None,
) -> Dataset:
    """Write entries as JSONL (atomically) and update the manifest's version and changelog.

    The turns of a conversation are written back as one ``turns`` line
    (`assay.dataset.conversations.conversation_lines`).

    A named version is recorded with the content it holds (``version_content``, see
    `assay.dataset.versions`): a new version records this content; writing other content under
    the version already recorded (``version`` None or the same) keeps the old record, so
    `assay validate` names the change that was made without a version bump."""
    path = Path(path)
    entries = list(entries)
    rows = list(conversation_lines(entries))  # a broken conversation fails before any write
    with atomic_writer(path) as fh:
        for line in rows:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    manifest = load_manifest(path)
    if version is not None:
        manifest["version"] = version
    if index_version is not None:
        manifest["index_version"] = index_version
    content_hash = sha256_bytes(path.read_bytes())
    if changelog is not None:
        # a dataset without a named version is known by its content (as scores print it)
        manifest.setdefault("changelog", []).append(
            {
                "version": manifest.get("version") or f"sha256:{content_hash[:12]}",
                "date": dt.date.today().isoformat(),
                "note": changelog,
            }
        )
    _record_version(manifest, version, entries)
    manifest["content_hash"] = content_hash
    manifest["n_entries"] = len(entries)
    save_manifest(path, manifest)
    return Dataset(entries, path=str(path), content_hash=content_hash, manifest=manifest)


def _record_version(manifest: dict[str, Any], version: str | None, entries: list[Entry]) -> None:
    """Record what `entries` say as the content of `version` (the writer named it), unless the
    manifest already records other content for that version (then the record stays, and the
    drift shows). A write without a version records nothing: it does not say what it names."""
    if version is None:
        return
    rec = manifest.get(VERSION_RECORD)
    if isinstance(rec, dict) and rec.get("version") == version and rec.get("entries_hash"):
        return
    manifest[VERSION_RECORD] = {"version": version, "entries_hash": entries_hash(entries)}
