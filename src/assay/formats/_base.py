"""What every format shares: the flat record an entry becomes, the way a record becomes an entry
again (with what was edited, guessed or kept aside said out loud), labels in long format, and
readers that keep line numbers for JSON arrays, CSV and YAML.

The flat record is the meeting point: a format module renames its keys to the format's own
names on the way out and back on the way in. Keys:

- ``id``, ``query``, ``category``, ``reference_answer``, ``answerable``, ``as_of``,
  ``label_tier``: the entry's fields of those names;
- ``key_facts``: the facts' texts (a list of strings);
- ``gold_chunk_ids``: every chunk id the gold names (a list; each becomes a required piece of
  one path when a file from elsewhere gives ids and no assay entry);
- ``gold_contexts``: the gold chunks' texts (written when a chunk table is given; read back
  onto chunk ids through a chunk table, matched on whitespace- and case-normalised text);
- ``assay_entry``: the whole entry as assay writes it (`Entry.to_json_dict`), so nothing a
  format cannot hold is lost. On import it is the starting point, and a named field that was
  edited in the file (a query reworded in a spreadsheet) wins, with a note.

Anything else a record carries goes to the entry's ``metadata`` under its own name.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import json_loads
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry
from assay.errors import DataError, Problem

__all__ = [
    "ASSAY_FIELD",
    "ExportOptions",
    "FormatSpec",
    "RawImport",
    "Record",
    "entries_from_records",
    "flat_record",
    "json_array_lines",
    "label_rows",
]

ASSAY_FIELD = "assay_entry"
SCALAR_FIELDS = ("id", "query", "category", "reference_answer", "answerable", "as_of", "label_tier")
LIST_FIELDS = ("key_facts", "gold_chunk_ids", "gold_contexts")
FLAT_FIELDS = (*SCALAR_FIELDS, *LIST_FIELDS, ASSAY_FIELD)
GUESSED_CATEGORY = "uncategorised"

Record = tuple[int | None, dict[str, Any]]
"""One record of a file: its line (None when the format has no lines) and its flat fields."""


@dataclass(frozen=True)
class ExportOptions:
    """How an export is written: `table` gives gold contexts their text; `plain` leaves out the
    ``assay_entry`` carrier (the file is then the format alone, and the export says what it
    could not hold)."""

    table: ChunkTable | None = None
    plain: bool = False
    variant: str | None = None
    resolver: Any = None  # a GoldResolver on `table`, shared by every entry of one export


@dataclass
class RawImport:
    """What a format's reader found: flat records, long-format label rows, and notes."""

    records: list[Record]
    labels: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Writer = Callable[[Path, list[dict[str, Any]], list[dict[str, Any]], ExportOptions], list[str]]


@dataclass(frozen=True)
class FormatSpec:
    """One format: its name on the command line, what it is, which files it reads and writes,
    its reader (path -> `RawImport`) and writer (path, flat records, label rows, options ->
    notes), and whether it carries each annotator's labels."""

    name: str
    summary: str
    suffixes: tuple[str, ...]
    read: Callable[[Path], RawImport]
    write: Writer
    carries_labels: bool = False
    directory: bool = False
    variants: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# entry -> flat record


def _gold_ids(entry: Entry) -> list[str]:
    out: list[str] = []
    for path in entry.evidence_paths:
        for piece in path:
            for alt in piece:
                if isinstance(alt, str) and alt not in out:
                    out.append(alt)
    return out


def gold_chunks(entry: Entry, options: ExportOptions) -> list[Chunk]:
    """The chunks of the entry's first evidence path, a piece by its first alternative that the
    table resolves (chunk ids and anchors alike), each chunk once: the text a format that
    reads gold as text (ragas, deepeval) gets."""
    from assay.gold.resolve import GoldResolver

    assert options.table is not None
    resolver = options.resolver or GoldResolver(options.table)
    out: dict[str, Chunk] = {}
    for piece in entry.evidence_paths[0] if entry.evidence_paths else []:
        for alt in piece:
            got = resolver.resolve(alt).chunks
            if got:
                out.update((c.chunk_id, c) for c in got)
                break
    return list(out.values())


def flat_record(entry: Entry, options: ExportOptions) -> dict[str, Any]:
    """The flat record of one entry (see the module's docstring for the keys)."""
    full = entry.to_json_dict()
    rec: dict[str, Any] = {k: full[k] for k in SCALAR_FIELDS if k in full}
    rec["key_facts"] = [k.fact for k in entry.key_facts]
    ids = _gold_ids(entry)
    rec["gold_chunk_ids"] = ids
    if options.table is not None:
        rec["gold_contexts"] = [c.text for c in gold_chunks(entry, options)]
    if not options.plain:
        rec[ASSAY_FIELD] = full
    return rec


# ---------------------------------------------------------------------------------------------
# flat record -> entry


def _norm_text(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).casefold().split())


def _as_list(v: Any) -> list[str] | None:
    """A list field as a file gives it: a list, a JSON list in a string, or lines of text."""
    if v is None or v == "":
        return None
    if isinstance(v, list):
        return [t for t in (_item_text(x) for x in v) if t]
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                got = json_loads(s)
            except ValueError:
                got = None
            if got is None:  # a list as Python prints it (pandas writes ragas' CSVs so)
                import ast

                try:
                    got = ast.literal_eval(s)
                except (ValueError, SyntaxError):
                    got = None
            if isinstance(got, list):
                return [t for t in (_item_text(x) for x in got) if t]
        return [line.strip() for line in s.splitlines() if line.strip()]
    return [str(v)]


def _item_text(x: Any) -> str:
    """One list item's text: a string, or the text an object carries (FinanceBench's evidence
    objects carry ``evidence_text``)."""
    if isinstance(x, dict):
        for key in ("evidence_text", "text", "content", "page_content", "fact"):
            if isinstance(x.get(key), str):
                return str(x[key])
        return json.dumps(x, ensure_ascii=False, sort_keys=True)
    return "" if x is None else str(x)


_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


def _scalar(name: str, v: Any) -> Any:
    """A scalar as the entry model wants it: CSV's strings read back into booleans and dates."""
    if isinstance(v, str):
        v = v.strip()
        if v == "":
            return None
        if name == "answerable":
            low = v.lower()
            return True if low in _TRUE else False if low in _FALSE else v
    if name == "as_of" and v is not None and not isinstance(v, str):
        return str(v)[:10]
    return v


def _carrier(v: Any, file: str, line: int | None) -> dict[str, Any]:
    if v is None or v == "":
        return {}
    if isinstance(v, str):
        try:
            v = json_loads(v)
        except ValueError as exc:
            raise DataError(f"not JSON: {exc}", file=file, line=line, field=ASSAY_FIELD) from None
    if not isinstance(v, dict):
        raise DataError("must be a JSON object", file=file, line=line, field=ASSAY_FIELD)
    return dict(v)


class _Notes:
    """Counts of what an import edited, guessed or kept aside, said once per kind."""

    def __init__(self) -> None:
        self.edited: Counter[str] = Counter()
        self.metadata: Counter[str] = Counter()
        self.guessed: Counter[str] = Counter()
        self.unmatched_contexts = 0
        self.contexts_unresolved = 0

    def lines(self) -> list[str]:
        out: list[str] = []
        for k, n in sorted(self.edited.items()):
            out.append(f"{k}: edited in the file for {n} entries (the file's value was taken)")
        for k, n in sorted(self.guessed.items()):
            out.append(f"{k}: guessed for {n} entries ({_GUESSES[k]})")
        for k, n in sorted(self.metadata.items()):
            out.append(f"{k}: not an entry field; kept under metadata.{k} ({n} entries)")
        if self.contexts_unresolved:
            out.append(
                f"gold contexts: {self.contexts_unresolved} entries give gold as text only; kept "
                "under metadata.gold_contexts (give --chunks to match them onto chunk ids)"
            )
        if self.unmatched_contexts:
            out.append(
                f"gold contexts: {self.unmatched_contexts} texts match no chunk of the table; "
                "kept under metadata.unmatched_contexts"
            )
        return out


_GUESSES = {
    "id": "none given: the file's name and the record's position",
    "category": f"none given: {GUESSED_CATEGORY!r}",
}


def _overlay(
    base: dict[str, Any], rec: dict[str, Any], notes: _Notes, has_base: bool
) -> dict[str, Any]:
    row = dict(base)
    for name in SCALAR_FIELDS:
        v = _scalar(name, rec.get(name))
        if v is None:
            continue
        if has_base and name in base and base[name] != v:
            notes.edited[name] += 1
        row[name] = v
    facts = _as_list(rec.get("key_facts"))
    if facts is not None:
        before = [k.get("fact") for k in base.get("key_facts", []) if isinstance(k, dict)]
        if facts != before:
            if has_base:
                notes.edited["key_facts"] += 1
            row["key_facts"] = [{"fact": f} for f in facts]
    ids = _as_list(rec.get("gold_chunk_ids"))
    if ids is not None and has_base:
        before_ids = _gold_ids_of(base.get("evidence_paths", []))
        if ids != before_ids:
            notes.edited["gold_chunk_ids"] += 1
            row["evidence_paths"] = [[[i] for i in ids]] if ids else []
    elif ids is not None:
        row["evidence_paths"] = [[[i] for i in ids]] if ids else []
    return row


def _gold_ids_of(paths: Any) -> list[str]:
    out: list[str] = []
    for path in paths if isinstance(paths, list) else []:
        for piece in path if isinstance(path, list) else []:
            for alt in piece if isinstance(piece, list) else []:
                if isinstance(alt, str) and alt not in out:
                    out.append(alt)
    return out


def _contexts(
    row: dict[str, Any], texts: list[str], index: dict[str, list[str]] | None, notes: _Notes
) -> None:
    """Gold given as text: matched onto chunk ids through the table, else kept aside. A text
    that several chunks hold (a figure repeated in a 10-K and its press release) becomes one
    piece with each of them as an alternative."""
    if row.get("evidence_paths"):
        return
    meta = row.setdefault("metadata", {})
    if index is None:
        meta["gold_contexts"] = texts
        notes.contexts_unresolved += 1
        return
    pieces: list[list[str]] = []
    missing: list[str] = []
    for t in texts:
        held = index.get(_norm_text(t))
        if held is None:
            missing.append(t)
        elif held not in pieces:
            pieces.append(held)
    if pieces:
        row["evidence_paths"] = [pieces]
    if missing:
        meta["unmatched_contexts"] = missing
        notes.unmatched_contexts += len(missing)


def entries_from_records(
    records: Sequence[Record], *, file: str, table: ChunkTable | None = None
) -> tuple[list[Entry], list[str]]:
    """Entries from flat records, and the notes saying what was edited, guessed or kept aside.

    Every problem in the file is collected and raised at once as `DataError` (FILE:LINE: field:
    message, the line being the record's); the records are validated as a dataset's lines are
    (`assay.dataset.parse_entries`: a duplicate id is a problem)."""
    from assay.dataset import parse_entries

    notes = _Notes()
    index: dict[str, list[str]] | None = None
    if table is not None:
        index = {}
        for c in table:
            index.setdefault(_norm_text(c.text), []).append(c.chunk_id)
    stem = Path(file).stem
    rows: list[tuple[int | None, Any]] = []
    problems: list[Problem] = []
    for pos, (line, rec) in enumerate(records, start=1):
        try:
            base = _carrier(rec.get(ASSAY_FIELD), file, line)
        except DataError as exc:
            problems.extend(exc.problems)
            continue
        row = _overlay(base, rec, notes, bool(base))
        for k, v in rec.items():
            if k not in FLAT_FIELDS and v not in (None, ""):
                row.setdefault("metadata", {})[k] = v
                notes.metadata[k] += 1
        contexts = _as_list(rec.get("gold_contexts"))
        if contexts and not base:
            _contexts(row, contexts, index, notes)
        if not row.get("id"):
            row["id"] = f"{stem}-{pos:05d}"
            notes.guessed["id"] += 1
        row["id"] = str(row["id"])
        if not row.get("category"):
            row["category"] = GUESSED_CATEGORY
            notes.guessed["category"] += 1
        rows.append((line if line is not None else pos, row))
    entries, _, more = parse_entries(rows, file=file)
    problems.extend(more)
    if problems:
        raise DataError(sorted(problems, key=lambda p: p.line or 0))
    return entries, notes.lines()


# ---------------------------------------------------------------------------------------------
# labels


def label_rows(labels: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Long-format label rows (item, rater, label, criterion) grouped by item, in file order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in labels:
        out.setdefault(str(row["item"]), []).append(dict(row))
    return out


# ---------------------------------------------------------------------------------------------
# readers that keep line numbers


def json_array_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """The elements of a JSON array (or the lines of JSONL) with the line each starts on.

    Bad JSON raises `DataError` naming the file and line."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped.startswith("["):
        from assay._io import iter_jsonl

        yield from iter_jsonl(path)
        return
    dec = json.JSONDecoder()
    i = text.index("[") + 1
    line, counted = 1, 0
    n = len(text)
    while True:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n:
            raise DataError("the JSON array is not closed", file=path, line=line)
        if text[i] == "]":
            return
        line += text.count("\n", counted, i)
        counted = i
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise DataError(f"bad JSON: {exc.msg}", file=path, line=exc.lineno) from None
        yield line, obj


_BAD_CELL = re.compile(r"[\x00]")


def csv_records(path: Path, *, delimiter: str = ",") -> Iterator[tuple[int, dict[str, Any]]]:
    """CSV rows as dicts with the line each starts on (a quoted cell may span lines)."""
    import csv

    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        if reader.fieldnames is None:
            raise DataError("empty file: no header row", file=path, line=1)
        start = reader.line_num + 1
        for row in reader:
            line = start
            start = reader.line_num + 1
            if None in row:
                raise DataError("more cells than the header has columns", file=path, line=line)
            for k, v in row.items():
                if isinstance(v, str) and _BAD_CELL.search(v):
                    raise DataError("NUL character in the cell", file=path, line=line, field=k)
            yield line, {k: v for k, v in row.items() if v not in (None, "")}


def write_csv(path: Path, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    """CSV with the given columns (lists one item a line in their cell, objects as JSON)."""
    import csv
    import io

    from assay._io import atomic_writer

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="raise", lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: _cell(row.get(k)) for k in columns})
    with atomic_writer(path) as fh:
        fh.write(buf.getvalue())


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list) and all(
        isinstance(x, str) and "\n" not in x and not x.startswith("[") for x in v
    ):
        return "\n".join(v) if v else ""
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def write_json(path: Path, obj: Any, *, lines: bool = False) -> None:
    """JSON (or JSONL when `lines`) written atomically, UTF-8, keys in the order given."""
    from assay._io import atomic_writer

    with atomic_writer(path) as fh:
        if lines:
            for row in obj:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            fh.write(json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def rename(rec: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A record with its keys renamed by `names` (others kept as they are)."""
    return {names.get(k, k): v for k, v in rec.items()}


def unrename(rec: Mapping[str, Any], names: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A file's record with the format's names read back to flat keys; `names` maps each flat
    key to the names the format (and its common variants) use for it, first match wins."""
    out: dict[str, Any] = {}
    taken: set[str] = set()
    for flat, spellings in names.items():
        for s in spellings:
            if s in rec and rec[s] not in (None, ""):
                out[flat] = rec[s]
                taken.update(spellings)
                break
        else:
            taken.update(spellings)
    for k, v in rec.items():
        if k not in taken:
            out[k] = v
    return out
