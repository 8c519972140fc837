"""The chunk table: one retrievable span per line of `chunks.jsonl`.

Required fields: `chunk_id`, `doc_id`, `text`, and `page` (1-based) or `pages` (a list). Any other
field (kind, char_start, char_end, company, form, ...) is kept in `extra` and written back. An
optional `access` label (`assay.corpus.access`: groups, clearance, public_from) says who may see
the chunk; without one it is public.

A chunk is what it says it is. Its content hash (`content_hash`: 16 hex digits of the SHA-256 of
its document, pages, character span and text) is written in the row by `assay corpus build`, and
assay's own chunk ids end in it (``3M_2018_10K/60/2~1f0c9a2e``), so the same position in another
chunking of the same documents is another id. A table's `fingerprint` hashes every chunk's id
and content hash, in id order: two tables with one fingerprint hold the same chunks, whatever
their files' bytes (key order, other fields). A row whose recorded `content_hash` no longer
matches its text was edited after it was made, and is refused. Tables written before content
hashes carry none: they still read (`ChunkTable.content_addressed` is False, and commands say
once that such a table's ids may repeat across chunkings).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from assay._io import iter_jsonl_lenient, write_jsonl_atomic
from assay.corpus.access import AccessLabel, parse_access
from assay.errors import DataError, Problem

__all__ = [
    "Chunk",
    "ChunkTable",
    "chunk_content_hash",
    "content_chunk_id",
    "load_chunks",
    "normal_chunk_id",
    "table_fingerprint",
    "write_chunks",
]

_CORE = {"chunk_id", "doc_id", "text", "page", "pages", "kind"}
HASH_LEN = 16
ID_HASH_LEN = 8
"""Hex digits of a chunk's content hash kept in the row, and in assay's own ids."""


def chunk_content_hash(
    doc_id: str,
    pages: Iterable[int],
    text: str,
    char_start: int | None = None,
    char_end: int | None = None,
) -> str:
    """The content hash of a chunk: 16 hex digits of the SHA-256 of its document id, pages,
    character span and text (a document's version enters through its text; an amendment is a
    document of its own)."""
    h = hashlib.sha256()
    head = f"{doc_id}\x00{','.join(map(str, pages))}\x00{char_start}\x00{char_end}\x00"
    h.update(head.encode("utf-8", "surrogatepass"))
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:HASH_LEN]


def content_chunk_id(doc_id: str, page: int, n: int, content_hash: str) -> str:
    """assay's chunk id: ``{doc_id}/{page}/{n}~{8 hex digits of the content hash}`` (page and
    position 1-based). Readable, and unique across chunkings of the same documents: the same
    position holding other text is another id."""
    return f"{doc_id}/{page}/{n}~{content_hash[:ID_HASH_LEN]}"


def normal_chunk_id(chunk_id: str) -> str:
    """A chunk id with its spelling taken away, to find the chunk a respelled id names (an id in
    upper case, percent-escaped once or more, with a full-width, accented, invisible or
    look-alike character, spaces in or around it, Windows separators, full stops after it):
    percent-escapes decoded until none is left, NFKD, case-folded, combining marks, control
    characters, default-ignorable characters (format characters, variation selectors, fillers)
    and every white space dropped, backslashes read as ``/``, dashes as ``-``, tilde look-alikes
    as ``~`` and ideographic full stops as ``.``, NFKC again, and trailing full stops dropped.
    Ids are compared as the table spells them; this form only finds near misses."""
    s = chunk_id
    if "%" in s:
        for _ in range(8):  # an escape of an escape ("%252F") is still the character
            decoded = unquote(s)
            if decoded == s:
                break
            s = decoded
    if s.isascii():  # the common case: no look-alike, only case, spaces and backslashes
        s = s.lower()
        if not s.isprintable() or " " in s:
            s = s.translate(_ASCII_UNSEEN)
        return s.replace("\\", "/").rstrip(".")
    s = unicodedata.normalize("NFKD", s).casefold()
    s = "".join(map(_normal_char, s))
    return unicodedata.normalize("NFKC", s).rstrip(".")


_ASCII_UNSEEN = str.maketrans(dict.fromkeys([*map(chr, range(33)), "\x7f"]))
_NORMAL_CHAR = {
    "\\": "/",
    "\u301c": "~",
    "\u223c": "~",
    "\u02dc": "~",
    "\u2053": "~",
    "\u2212": "-",
    "\u3002": ".",
}


@functools.lru_cache(maxsize=4096)
def _normal_char(ch: str) -> str:
    """`ch` in a normal chunk id: "" when `_ignorable`, else its plain look-alike or itself."""
    if _ignorable(ch):
        return ""
    got = _NORMAL_CHAR.get(ch)
    if got is not None:
        return got
    return "-" if unicodedata.category(ch) == "Pd" else ch


def _ignorable(ch: str) -> bool:
    """Dropped from a normal chunk id: white space, combining marks, control characters and
    Unicode's default-ignorable code points (format characters, variation selectors, the
    combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian free variation
    selectors)."""
    if ch.isspace():
        return True
    cat = unicodedata.category(ch)
    if cat in ("Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp"):
        return True
    o = ord(ch)
    return (
        0xFE00 <= o <= 0xFE0F
        or 0xE0100 <= o <= 0xE01EF
        or 0x180B <= o <= 0x180F
        or o in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2800)
    )


def table_fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    """16 hex digits over (chunk id, content hash) pairs, in id order: a table's identity."""
    h = hashlib.sha256()
    for cid, ch in sorted(pairs):
        h.update(f"{cid}\x00{ch}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:HASH_LEN]


@dataclass(slots=True)
class Chunk:
    chunk_id: str
    doc_id: str
    text: str
    pages: list[int]
    kind: str = "prose"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted_at(self) -> dt.date | None:
        """When the chunk's document became public: its `accepted_at` field, else `version_date`
        (what an `as_of` filter compares); None when the table does not say."""
        for key in ("accepted_at", "version_date"):
            v = self.extra.get(key)
            if isinstance(v, str) and len(v) >= 10:
                try:
                    return dt.date.fromisoformat(v[:10])
                except ValueError:
                    continue
        return None

    @property
    def content_hash(self) -> str:
        """The chunk's content hash (`chunk_content_hash`) computed from what it holds."""
        start, end = self.extra.get("char_start"), self.extra.get("char_end")
        return chunk_content_hash(
            self.doc_id,
            self.pages,
            self.text,
            start if isinstance(start, int) else None,
            end if isinstance(end, int) else None,
        )

    @property
    def access(self) -> AccessLabel | None:
        """The chunk's access label (`assay.corpus.access`), copied from its document by the
        corpus build; None: public."""
        return parse_access(self.extra.get("access"), field=f"{self.chunk_id}: access")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "pages": self.pages,
        }
        out["kind"] = self.kind
        out.update(self.extra)
        out["text"] = self.text
        return out

    @classmethod
    def from_dict(
        cls, row: dict[str, Any], *, file: str = "<chunks>", line: int | None = None
    ) -> Chunk:
        if type(row) is dict:  # the common row, checked in one pass (same chunk as below)
            cid, doc, text = row.get("chunk_id"), row.get("doc_id"), row.get("text")
            pv, kind = row.get("pages"), row.get("kind", "prose")
            if (
                type(cid) is str
                and cid
                and type(doc) is str
                and doc
                and type(text) is str
                and type(kind) is str
                and type(pv) is list
                and pv
                and all(type(p) is int and p >= 1 for p in pv)
                and row.get("access") is None
            ):
                extra = {k: v for k, v in row.items() if k not in _CORE}
                return cls(cid, doc, text, list(pv), kind, extra)
        problems: list[Problem] = []

        def bad(fld: str, msg: str) -> None:
            problems.append(Problem(file, line, fld, msg))

        if not isinstance(row, dict):
            raise DataError("a chunk must be a JSON object", file=file, line=line)
        for key in ("chunk_id", "doc_id"):
            v = row.get(key)
            if not isinstance(v, str) or not v:
                bad(key, "required, a non-empty string")
        text = row.get("text")
        if not isinstance(text, str):
            bad("text", "required, a string")
        pages: list[int] = []
        if "pages" in row:
            pv = row["pages"]
            if (
                not isinstance(pv, list)
                or not pv
                or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in pv)
            ):
                bad("pages", "must be a non-empty list of 1-based page numbers")
            else:
                pages = list(pv)
        elif "page" in row:
            pv = row["page"]
            if not isinstance(pv, int) or isinstance(pv, bool) or pv < 1:
                bad("page", "must be a 1-based page number")
            else:
                pages = [pv]
        else:
            bad("pages", "one of 'page' (1-based) or 'pages' (list) is required")
        kind = row.get("kind", "prose")
        if not isinstance(kind, str):
            bad("kind", "must be a string (prose, table, ...)")
        if row.get("access") is not None:
            try:
                parse_access(row["access"], file=file, line=line)
            except DataError as exc:
                problems.extend(exc.problems)
        if problems:
            raise DataError(problems)
        extra = {k: v for k, v in row.items() if k not in _CORE}
        return cls(str(row["chunk_id"]), str(row["doc_id"]), str(text), pages, str(kind), extra)


class ChunkTable:
    """All chunks of an index, looked up by id and by (doc, page)."""

    def __init__(
        self,
        chunks: Iterable[Chunk],
        *,
        path: str | None = None,
        version: str | None = None,
        content_addressed: bool | None = None,
    ):
        self.chunks: list[Chunk] = list(chunks)
        self.path = path
        self.version = version
        if content_addressed is None:
            content_addressed = bool(self.chunks) and all(
                "content_hash" in c.extra for c in self.chunks
            )
        self.content_addressed = content_addressed
        self.by_id: dict[str, Chunk] = {}
        self._by_doc_page: dict[tuple[str, int], list[Chunk]] = defaultdict(list)
        self._by_doc: dict[str, list[Chunk]] = defaultdict(list)
        for c in self.chunks:
            self.by_id[c.chunk_id] = c
            self._by_doc[c.doc_id].append(c)
            for p in c.pages:
                self._by_doc_page[(c.doc_id, p)].append(c)

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def fingerprint(self) -> str:
        """The table's content fingerprint (`table_fingerprint` over every chunk's id and
        content hash): equal for two files that hold the same chunks, different for another
        chunking or another parse of the same documents."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            cached = table_fingerprint((c.chunk_id, c.content_hash) for c in self.chunks)
            self.__dict__["_fingerprint"] = cached
        return str(cached)

    def unaddressed_note(self) -> str | None:
        """One line for a table written before chunks carried content hashes, else None."""
        if self.content_addressed or not self.chunks:
            return None
        name = Path(self.path).name if self.path else "the chunk table"
        return (
            f"{name} carries no content hashes (written before "
            "content-addressed ids): its ids may repeat across chunkings, so a run made on "
            "another chunking cannot be told apart by its ids; rebuild it with `assay corpus "
            "build` to bind runs to it by content"
        )

    def require_chunks(self, purpose: str = "index") -> ChunkTable:
        """This table, or a `DataError` naming its file when it holds no chunk (nothing to
        index or resolve against: an empty file, or only blank lines)."""
        if not self.chunks:
            raise DataError(
                f"the chunk table holds no chunks: nothing to {purpose} (is it the right "
                "file? `assay corpus build` writes chunks.jsonl)",
                file=self.path or "<chunk table>",
                field="chunks",
            )
        return self

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.by_id

    def matching(self, chunk_id: str) -> list[Chunk]:
        """The chunk `chunk_id` names as the table spells it; else every chunk whose id it
        equals after `normal_chunk_id` (an id respelled by a system: what a check that must
        not be dodged by case or escapes compares). Empty when none does."""
        c = self.by_id.get(chunk_id)
        if c is not None:
            return [c]
        index: dict[str, list[Chunk]] | None = self.__dict__.get("_by_normal")
        if index is None:
            index = defaultdict(list)
            for ch in self.chunks:
                index[normal_chunk_id(ch.chunk_id)].append(ch)
            self.__dict__["_by_normal"] = index
        return list(index.get(normal_chunk_id(chunk_id), ()))

    @property
    def doc_ids(self) -> set[str]:
        return set(self._by_doc)

    def of_doc(self, doc_id: str) -> list[Chunk]:
        return self._by_doc.get(doc_id, [])

    def on_page(self, doc_id: str, page: int) -> list[Chunk]:
        return self._by_doc_page.get((doc_id, page), [])

    def pages_of(self, doc_id: str) -> list[int]:
        return sorted({p for c in self.of_doc(doc_id) for p in c.pages})

    def page_keys(self, chunk_id: str) -> list[str]:
        """`doc#page` keys of a chunk (what page-level scoring compares)."""
        c = self.by_id.get(chunk_id)
        return [] if c is None else [f"{c.doc_id}#{p}" for p in c.pages]


def load_chunks(path: str | Path) -> ChunkTable:
    """Read a chunk table, reporting every bad line (file:line: field: message) at once."""
    path = Path(path)
    problems: list[Problem] = []
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    hasher = hashlib.sha256()
    addressed = True
    pairs: list[tuple[str, str]] = []
    for lineno, row in iter_jsonl_lenient(path, problems, hasher=hasher):
        try:
            c = Chunk.from_dict(row, file=str(path), line=lineno)
        except DataError as exc:
            problems.extend(exc.problems)
            continue
        if c.chunk_id in seen:
            problems.append(
                Problem(
                    str(path),
                    lineno,
                    "chunk_id",
                    f"duplicate id {c.chunk_id!r} (first on line {seen[c.chunk_id]})",
                )
            )
            continue
        said = c.extra.get("content_hash")
        if said is not None:
            if not isinstance(said, str):
                problems.append(Problem(str(path), lineno, "content_hash", "must be a string"))
                continue
            now = c.content_hash
            if said != now:
                problems.append(
                    Problem(
                        str(path),
                        lineno,
                        "content_hash",
                        f"chunk {c.chunk_id!r} records content hash {said} but holds content "
                        f"hashing to {now}: its text, pages or span were edited after it was "
                        "made. Rebuild the table (`assay corpus build`), or drop the field",
                    )
                )
                continue
            pairs.append((c.chunk_id, now))
        else:
            addressed = False
        seen[c.chunk_id] = lineno
        chunks.append(c)
    if problems:
        raise DataError(problems)
    table = ChunkTable(
        chunks,
        path=str(path),
        version=hasher.hexdigest()[:16],
        content_addressed=addressed and bool(chunks),
    )
    if table.content_addressed:  # every hash was just computed to check it: fingerprint them
        table.__dict__["_fingerprint"] = table_fingerprint(pairs)
    return table


def write_chunks(path: str | Path, chunks: Iterable[Chunk]) -> int:
    return write_jsonl_atomic(path, (c.to_dict() for c in chunks))
