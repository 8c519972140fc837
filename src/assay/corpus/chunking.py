"""Page-aware chunking of filing text into retrievable spans, with tables kept as tables.

A chunk never crosses a page, so page-level gold maps onto chunks exactly. Its id is
``{doc_id}/{page}/{n}~{hash}`` with the page and the chunk's position on the page both 1-based
and the first 8 hex digits of its content hash (``3M_2018_10K/60/2~1f0c9a2e``;
`assay.corpus.chunks.content_chunk_id`): readable, stable as long as the text and the chunker
settings are, and never shared by another chunking's chunk that holds other text.

Tables are found in the text itself: a run of lines that end in several numeric cells
(``Depreciation and amortization 1,488 1,544 1,474``) is a table; a row is never split. The
table's header lines (the title and column-heading lines just above, e.g. ``(Millions) 2018 2017
2016``) and its unit line (``in millions``, ``in thousands, except per share data``) are carried
into every chunk of that table, and such chunks have ``kind: "table"``. A table that starts at the
top of a page with no header of its own continues the last table of the previous page and
inherits its header and unit. Everything else is prose, cut at line (or sentence) boundaries
into chunks of about `target_tokens` whitespace tokens with `overlap_tokens` of overlap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from assay.corpus.chunks import chunk_content_hash, content_chunk_id

__all__ = [
    "CHUNKER_NAME",
    "ChunkSettings",
    "TextChunk",
    "chunk_document",
    "chunk_page",
    "find_unit",
    "is_table_row",
    "numeric_tail",
]

CHUNKER_NAME = "assay.corpus.chunking/2"

Kind = Literal["prose", "table"]


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """Chunk sizes in whitespace tokens (about 0.75 model tokens each for filings text)."""

    target_tokens: int = 260
    max_tokens: int = 350
    overlap_tokens: int = 40
    table_max_tokens: int = 450
    min_table_rows: int = 2
    merge_below_tokens: int = 30
    table_gap_lines: int = 8
    table_gap_tokens: int = 40
    header_max_lines: int = 12
    header_max_tokens: int = 50

    def __post_init__(self) -> None:
        if not 0 < self.target_tokens <= self.max_tokens:
            raise ValueError("need 0 < target_tokens <= max_tokens")
        if not 0 <= self.overlap_tokens < self.target_tokens:
            raise ValueError("need 0 <= overlap_tokens < target_tokens")
        if self.table_max_tokens < 20:
            raise ValueError("table_max_tokens must be at least 20")
        if self.min_table_rows < 1:
            raise ValueError("min_table_rows must be at least 1")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class TextChunk:
    chunk_id: str
    doc_id: str
    page: int
    n: int
    char_start: int
    char_end: int
    kind: Kind
    text: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "pages": [self.page],
            "char_start": self.char_start,
            "char_end": self.char_end,
            "kind": self.kind,
            "text": self.text,
        }
        row.update(self.extra)
        row["content_hash"] = self.content_hash
        return row

    @property
    def content_hash(self) -> str:
        return chunk_content_hash(
            self.doc_id, [self.page], self.text, self.char_start, self.char_end
        )

    def number(self, n: int) -> None:
        """Give the chunk its position on its page (1-based) and its content-addressed id."""
        self.n = n
        self.chunk_id = content_chunk_id(self.doc_id, self.page, n, self.content_hash)


# ------------------------------------------------------------------ line classification

_NUM = re.compile(
    r"^[(\[]?[-−–]?[$€£¥]?[(]?[-−–]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?[)\]]?%?[)\]]?[*†]?$"
)
_NIL = frozenset(
    {
        "—",
        "–",
        "-",
        "--",
        "―",
        "n/a",
        "N/A",
        "nm",
        "NM",
        "n/m",
        "N/M",
        "n.m.",
        "NMF",
        "*",
        "#",
        "**",
    }
)
_SKIP = frozenset({"$", "%", "€", "£", ")", "(", "$(", "bps"})
_YEAR = re.compile(r"^(?:FY|fiscal)?'?(?:19[5-9]\d|20[0-4]\d)[*)]?$", re.I)
_UNIT = re.compile(
    r"\b(?:in|\$|dollars|amounts|usd)\s*(?:in\s+)?(?:millions|thousands|billions)\b|"
    r"\((?:\$\s*)?(?:in\s+)?(?:millions|thousands|billions)\b|"
    r"\b(?:millions|thousands|billions)\s+of\s+(?:u\.s\.\s+)?dollars\b|"
    r"except\s+(?:per\s+share|share|per-share)|\bin\s+(?:millions|thousands|billions)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.;!?][\"')\]]?$")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"])")


def numeric_tail(tokens: Sequence[str]) -> tuple[int, list[str]]:
    """Count the numeric cells at the end of a tokenised line (skipping bare '$' and '%')."""
    n = 0
    cells: list[str] = []
    for tok in reversed(tokens):
        if tok in _SKIP:
            continue
        if _NUM.match(tok) or tok in _NIL:
            n += 1
            cells.append(tok)
            continue
        break
    cells.reverse()
    return n, cells


def is_table_row(line: str) -> bool:
    """A line that ends in at least two numeric cells."""
    return numeric_tail(line.split())[0] >= 2


def find_unit(line: str) -> bool:
    return bool(_UNIT.search(line)) and len(line.split()) <= 30


@dataclass(slots=True)
class _Line:
    start: int
    end: int
    text: str
    ntok: int
    tail: int  # numeric cells at the end
    years_only: bool  # every numeric cell at the end is a year (a column-heading line)

    @property
    def is_row(self) -> bool:
        return self.tail >= 2

    @property
    def looks_heading(self) -> bool:
        """Short and not the end of a sentence (a title, a column heading, 'Current assets:')."""
        return self.ntok <= 14 and (self.ntok <= 4 or not _SENTENCE_END.search(self.text))


def _lines(page_text: str) -> list[_Line]:
    out: list[_Line] = []
    pos = 0
    for raw in page_text.split("\n"):
        start, end = pos, pos + len(raw)
        pos = end + 1
        text = raw.strip()
        if not text:
            continue
        start += len(raw) - len(raw.lstrip())
        end = start + len(text)
        toks = text.split()
        tail, cells = numeric_tail(toks)
        years_only = tail >= 1 and all(_YEAR.match(c) for c in cells)
        out.append(_Line(start, end, text, len(toks), tail, years_only))
    return out


@dataclass(slots=True)
class _Table:
    head: list[_Line]  # title / column-heading lines (part of this table's own text)
    rows: list[_Line]
    unit: str | None
    inherited_head: list[str] = field(default_factory=list)
    continued: bool = False


def _find_tables(lines: list[_Line], settings: ChunkSettings) -> list[tuple[int, int]]:
    """[start, end) line ranges of table bodies (rows and label lines between them)."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].is_row:
            i += 1
            continue
        j = i + 1
        last_row = i
        while j < n:
            ln = lines[j]
            if ln.tail >= 1:
                last_row = j
                j += 1
                continue
            # label lines inside the table (section headings, wrapped row labels, one word per
            # line in some PDFs): kept when a row follows within a few lines and the gap is short
            nxt = next(
                (
                    k
                    for k in range(j + 1, min(n, j + 1 + settings.table_gap_lines))
                    if lines[k].tail >= 1
                ),
                None,
            )
            if (
                nxt is not None
                and sum(lines[k].ntok for k in range(j, nxt)) <= settings.table_gap_tokens
            ):
                j = nxt
                continue
            break
        end = last_row + 1
        strong = sum(1 for k in range(i, end) if lines[k].is_row and not lines[k].years_only)
        if strong >= settings.min_table_rows:
            spans.append((i, end))
        i = end
    return spans


def chunk_page(
    doc_id: str, page: int, page_text: str, settings: ChunkSettings | None = None
) -> list[TextChunk]:
    """Chunk one page on its own (no table carried over from a previous page)."""
    return _chunk_page(doc_id, page, page_text, settings or ChunkSettings(), carry=None)[0]


def _chunk_page(
    doc_id: str,
    page: int,
    page_text: str,
    settings: ChunkSettings,
    *,
    carry: _Table | None = None,
) -> tuple[list[TextChunk], _Table | None]:
    """Chunk one page; `carry` is the last table of the previous page (for continued tables)."""
    lines = _lines(page_text)
    spans = _find_tables(lines, settings)
    # Build segments: ("prose", [lines]) and ("table", _Table), in page order.
    segments: list[tuple[Kind, Any]] = []
    cursor = 0
    last_table: _Table | None = None
    for ti, (s, e) in enumerate(spans):
        head_start = s
        # column-heading rows at the top of the body (years only) belong to the header
        body_start = s
        while body_start < e and lines[body_start].years_only:
            body_start += 1
        # title lines above: short heading-like lines not used by a previous segment
        k, head_tok = s - 1, 0
        while (
            k >= cursor
            and s - k <= settings.header_max_lines
            and lines[k].looks_heading
            and not lines[k].is_row
            and head_tok + lines[k].ntok <= settings.header_max_tokens
        ):
            head_tok += lines[k].ntok
            head_start = k
            k -= 1
        # the unit may sit in the header or a few lines above it
        unit: str | None = None
        for ln in lines[head_start:body_start]:
            if find_unit(ln.text):
                unit = ln.text
                break
        unit_in_head = unit is not None
        if unit is None:
            for ln in reversed(lines[max(cursor, head_start - 6) : head_start]):
                if find_unit(ln.text):
                    unit = ln.text
                    break
        if head_start > cursor:
            segments.append(("prose", lines[cursor:head_start]))
        table = _Table(
            head=lines[head_start:body_start],
            rows=lines[body_start:e],
            unit=None if unit_in_head else unit,
        )
        own_head_has_columns = any(ln.years_only for ln in table.head)
        at_top = sum(ln.ntok for ln in lines[:head_start]) <= 8 and ti == 0
        if carry is not None and at_top and not own_head_has_columns:
            table.continued = True
            table.inherited_head = [
                ln.text for ln in carry.head if ln.years_only or find_unit(ln.text)
            ]
            if not table.inherited_head:
                table.inherited_head = [ln.text for ln in carry.head[-2:]]
            if unit is None:
                table.unit = carry.unit or next(
                    (ln.text for ln in carry.head if find_unit(ln.text)), None
                )
        segments.append(("table", table))
        last_table = table
        cursor = e
    if cursor < len(lines):
        segments.append(("prose", lines[cursor:]))

    chunks: list[TextChunk] = []
    pending_prefix: list[_Line] = []  # tiny prose to glue onto the next table chunk
    for idx, (kind, seg) in enumerate(segments):
        if kind == "prose":
            seg_lines: list[_Line] = seg
            ntok = sum(ln.ntok for ln in seg_lines)
            prev_is_table = bool(chunks) and chunks[-1].kind == "table"
            next_is_table = idx + 1 < len(segments) and segments[idx + 1][0] == "table"
            if ntok < settings.merge_below_tokens and prev_is_table:
                last = chunks[-1]
                last.text += "\n" + "\n".join(ln.text for ln in seg_lines)
                last.char_end = seg_lines[-1].end
                continue
            if ntok < settings.merge_below_tokens and next_is_table:
                pending_prefix.extend(seg_lines)
                continue
            for start, end, text in _prose_pieces(seg_lines, settings):
                chunks.append(TextChunk("", doc_id, page, 0, start, end, "prose", text))
        else:
            chunks.extend(_table_chunks(doc_id, page, seg, settings, pending_prefix))
            pending_prefix = []
    for n, ch in enumerate(chunks, start=1):
        ch.number(n)
    # a table at the very bottom of the page may continue on the next page
    tail_carry = (
        last_table if (last_table is not None and segments and segments[-1][0] == "table") else None
    )
    if tail_carry is None and last_table is not None:
        trailing = segments[-1][1] if segments[-1][0] == "prose" else []
        if sum(ln.ntok for ln in trailing) <= settings.merge_below_tokens:
            tail_carry = last_table
    return chunks, tail_carry


def _table_chunks(
    doc_id: str, page: int, table: _Table, settings: ChunkSettings, prefix: list[_Line]
) -> list[TextChunk]:
    head_text = [*table.inherited_head, *(ln.text for ln in table.head)]
    carried: list[str] = []
    if table.unit and not any(table.unit == h for h in head_text):
        carried.append(table.unit)
    carried.extend(head_text)
    carried_tok = sum(len(t.split()) for t in carried)
    budget = max(settings.table_max_tokens - carried_tok, 20)
    groups: list[list[_Line]] = []
    cur: list[_Line] = []
    cur_tok = 0
    for row in table.rows:
        if cur and cur_tok + row.ntok > budget:
            groups.append(cur)
            cur, cur_tok = [], 0
        cur.append(row)
        cur_tok += row.ntok
    if cur:
        groups.append(cur)
    out: list[TextChunk] = []
    first_start = min([ln.start for ln in (*prefix, *table.head)] or [table.rows[0].start])
    for gi, group in enumerate(groups):
        lead = [ln.text for ln in prefix] if gi == 0 else []
        text = "\n".join([*lead, *carried, *(r.text for r in group)])
        start = first_start if gi == 0 else group[0].start
        extra: dict[str, Any] = {"table_part": gi + 1, "table_parts": len(groups)}
        if table.unit or any(find_unit(h) for h in head_text):
            extra["unit"] = table.unit or next(h for h in head_text if find_unit(h))
        if table.continued:
            extra["continued"] = True
        out.append(TextChunk("", doc_id, page, 0, start, group[-1].end, "table", text, extra))
    return out


def _split_long(line: _Line, max_tokens: int) -> list[_Line]:
    """Split an over-long line (an HTML paragraph) at sentence ends, then at token counts."""
    if line.ntok <= max_tokens:
        return [line]
    pieces: list[_Line] = []
    pos = 0
    parts = _SENT_SPLIT.split(line.text)
    for part in parts:
        idx = line.text.index(part, pos)
        pos = idx + len(part)
        toks = part.split()
        if len(toks) <= max_tokens:
            pieces.append(_Line(line.start + idx, line.start + pos, part, len(toks), 0, False))
            continue
        # hard split by tokens
        off = idx
        for t0 in range(0, len(toks), max_tokens):
            sub = " ".join(toks[t0 : t0 + max_tokens])
            sidx = line.text.index(toks[t0], off)
            eidx = line.text.index(toks[min(t0 + max_tokens, len(toks)) - 1], sidx) + len(
                toks[min(t0 + max_tokens, len(toks)) - 1]
            )
            pieces.append(
                _Line(line.start + sidx, line.start + eidx, sub, len(sub.split()), 0, False)
            )
            off = eidx
    return pieces


def _prose_pieces(lines: list[_Line], settings: ChunkSettings) -> list[tuple[int, int, str]]:
    units: list[_Line] = []
    for ln in lines:
        units.extend(_split_long(ln, max(settings.target_tokens // 2, 8)))
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(units)
    while i < n:
        j, tok = i, 0
        best_cut = -1
        while j < n and (tok + units[j].ntok <= settings.max_tokens or j == i):
            tok += units[j].ntok
            j += 1
            if tok >= settings.target_tokens * 0.8 and _SENTENCE_END.search(units[j - 1].text):
                best_cut = j
            if tok >= settings.target_tokens:
                break
        end = best_cut if (best_cut > i and j < n and tok > settings.target_tokens) else j
        group = units[i:end]
        out.append((group[0].start, group[-1].end, "\n".join(u.text for u in group)))
        if end >= n:
            break
        # overlap: step back over whole units worth <= overlap_tokens
        back, k = 0, end
        while k - 1 > i and back + units[k - 1].ntok <= settings.overlap_tokens:
            k -= 1
            back += units[k].ntok
        i = k if k > i else end
    return out


def chunk_document(
    doc_id: str, pages: Sequence[str], settings: ChunkSettings | None = None
) -> list[TextChunk]:
    """Chunk every page of one document (pages are 1-based in ids and `pages`)."""
    settings = settings or ChunkSettings()
    out: list[TextChunk] = []
    carry: _Table | None = None
    for i, text in enumerate(pages, start=1):
        chunks, carry = _chunk_page(doc_id, i, text, settings, carry=carry)
        out.extend(chunks)
    return out
