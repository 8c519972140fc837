"""The document model shared by the filing builders and the HTML/PDF renderers.

A document is a list of blocks (title, heading, paragraph, table, page break). `paginate` lays the
blocks onto pages with the same line metrics the PDF writer uses, so the HTML (one `<div
class="page">` per page) and the PDF have identical pages, and every `Mark` (a short quote that
states ledger facts) gets the 1-based page it will be read back from. Blocks never split across
pages, so a quote never straddles a page break.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "BODY_LINES",
    "PROSE_CHARS",
    "Block",
    "Doc",
    "Mark",
    "Row",
    "paginate",
    "row_text",
    "table_lines",
]

PROSE_CHARS = 100  # Helvetica 9 pt on a 504 pt measure
BODY_LINES = 58  # 12 pt leading on a 700 pt body
LABEL_WIDTH = 50
CELL_WIDTH = 14


@dataclass(frozen=True, slots=True)
class Mark:
    """A quote that states ledger facts; `page` is filled in by `paginate`."""

    facts: tuple[str, ...]
    quote: str
    role: str = "value"  # value | narrative | identifier | restated
    page: int = 0


@dataclass(slots=True)
class Row:
    label: str
    cells: list[str]
    style: Literal["", "subtotal", "total", "head"] = ""
    facts: tuple[str, ...] = ()
    role: str = "value"


@dataclass(slots=True)
class Block:
    kind: Literal["title", "h", "p", "table", "break"]
    text: str = ""
    header: list[str] = field(default_factory=list)
    unit_line: str = ""
    rows: list[Row] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    def lines(self) -> list[tuple[str, str]]:
        """(style, text) lines as the PDF writer draws them: style in title|h|p|mono."""
        if self.kind == "title":
            return [("title", t) for t in textwrap.wrap(self.text, 70)] + [("p", "")]
        if self.kind == "h":
            return [("h", t) for t in textwrap.wrap(self.text, 80)] + [("p", "")]
        if self.kind == "p":
            return [("p", t) for t in textwrap.wrap(self.text, PROSE_CHARS)] + [("p", "")]
        if self.kind == "table":
            return [("mono", t) for t in table_lines(self)] + [("p", "")]
        return []


def row_text(row: Row) -> str:
    """The row as one monospace line: label left, cells right-aligned in fixed columns."""
    if len(row.label) >= LABEL_WIDTH:
        raise ValueError(f"row label longer than {LABEL_WIDTH - 1} characters: {row.label!r}")
    return (row.label.ljust(LABEL_WIDTH) + "".join(c.rjust(CELL_WIDTH) for c in row.cells)).rstrip()


def table_lines(b: Block) -> list[str]:
    out: list[str] = []
    if b.text:
        out.append(b.text)
    if b.unit_line:
        out.append(b.unit_line)
    if b.header:
        out.append(row_text(Row("", b.header, "head")))
    out.extend(row_text(r) for r in b.rows)
    return out


@dataclass(slots=True)
class Doc:
    meta: dict[str, Any]
    blocks: list[Block]
    pages: list[list[Block]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    @property
    def doc_id(self) -> str:
        return str(self.meta["doc_id"])


def paginate(doc: Doc, *, max_pages: int | None = None) -> Doc:
    """Lay blocks onto pages; give every mark its page. Returns the same (mutated) doc."""
    pages: list[list[Block]] = [[]]
    used = 0
    for b in doc.blocks:
        if b.kind == "break":
            if pages[-1]:
                pages.append([])
                used = 0
            continue
        n = len(b.lines())
        if n > BODY_LINES:
            raise ValueError(f"{doc.doc_id}: a block of {n} lines does not fit on one page")
        if used + n > BODY_LINES and pages[-1]:
            pages.append([])
            used = 0
        pages[-1].append(b)
        used += n
    if not pages[-1]:
        pages.pop()
    if max_pages is not None and len(pages) > max_pages:
        raise ValueError(f"{doc.doc_id}: {len(pages)} pages, at most {max_pages} allowed")
    doc.pages = pages
    marks: list[Mark] = []
    for pno, blocks in enumerate(pages, start=1):
        for b in blocks:
            marks.extend(Mark(m.facts, m.quote, m.role, pno) for m in b.marks)
            if b.kind == "table":
                marks.extend(
                    Mark(r.facts, " ".join([r.label, *r.cells]), r.role, pno)
                    for r in b.rows
                    if r.facts
                )
    doc.marks = marks
    return doc
