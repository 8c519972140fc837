"""Office files -> pages: spreadsheets (.xlsx, openpyxl) and Word documents (.docx, python-docx).

A workbook gives one page per sheet (in workbook order). Each sheet is cut into *table regions*:
runs of non-empty rows separated by at least one empty row. A region becomes one chunk (split
into parts of at most `max_rows` rows, each repeating the header row), and records where it lives
(`sheet`, `cells` as an A1 range such as ``B3:E9``, and its header row), so gold recorded as
sheet + cell range aligns onto it. Cell values are written as a reader would see them: integers
with thousands separators, other numbers with up to four decimals, dates in ISO form.

A Word document gives its paragraphs and table rows (cells joined by spaces) in body order; an
explicit page break (``w:br w:type="page"``) starts a new page, otherwise the document is one page.
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Region", "cell_text", "col_letter", "parse_docx_bytes", "parse_xlsx_bytes"]

MAX_REGION_ROWS = 40


@dataclass(slots=True)
class Region:
    """A pre-cut span of a page (a sheet's table region): becomes one chunk as it is."""

    page: int  # 1-based
    text: str
    char_start: int
    char_end: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "text": self.text,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Region:
        return cls(
            int(d["page"]), str(d["text"]), int(d["char_start"]), int(d["char_end"]), d["extra"]
        )


def col_letter(col: int) -> str:
    """1 -> A, 27 -> AA."""
    out = ""
    while col > 0:
        col, rem = divmod(col - 1, 26)
        out = chr(65 + rem) + out
    return out


def cell_text(value: Any) -> str:
    """A cell value as text: 1234 -> '1,234', 0.125 -> '0.125', dates ISO, None -> ''."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()[:10]
    return " ".join(str(value).split())


def parse_xlsx_bytes(data: bytes) -> tuple[list[str], list[Region]]:
    """Pages (one per sheet) and table regions of a workbook."""
    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    pages: list[str] = []
    regions: list[Region] = []
    try:
        for pno, ws in enumerate(wb.worksheets, start=1):
            rows: list[tuple[int, list[tuple[int, str]]]] = []
            for r_idx, row in enumerate(ws.iter_rows(values_only=True), start=1):
                cells = [(c_idx, cell_text(v)) for c_idx, v in enumerate(row, start=1)]
                cells = [(c, t) for c, t in cells if t]
                rows.append((r_idx, cells))
            blocks: list[list[tuple[int, list[tuple[int, str]]]]] = []
            cur: list[tuple[int, list[tuple[int, str]]]] = []
            for r in rows:
                if r[1]:
                    cur.append(r)
                elif cur:
                    blocks.append(cur)
                    cur = []
            if cur:
                blocks.append(cur)
            page_lines: list[str] = []
            pos = 0
            for block in blocks:
                header_row, header_cells = block[0]
                header = [t for _, t in header_cells]
                body = block[1:] or block[:1]
                for part in range(0, len(body), MAX_REGION_ROWS):
                    group = body[part : part + MAX_REGION_ROWS]
                    lines = [" ".join(header)] if group[0][0] != header_row else []
                    lines += [" ".join(t for _, t in cells) for _, cells in group]
                    text = "\n".join(lines)
                    c0 = min(c for _, cells in (block[:1] + group) for c, _ in cells)
                    c1 = max(c for _, cells in (block[:1] + group) for c, _ in cells)
                    r0 = header_row if part == 0 else group[0][0]
                    r1 = group[-1][0]
                    start = pos
                    page_lines.append(text)
                    pos += len(text) + 1
                    regions.append(
                        Region(
                            pno,
                            text,
                            start,
                            start + len(text),
                            {
                                "sheet": ws.title,
                                "cells": f"{col_letter(c0)}{r0}:{col_letter(c1)}{r1}",
                                "header": header,
                                "header_row": header_row,
                            },
                        )
                    )
            pages.append("\n".join(page_lines))
    finally:
        wb.close()
    return pages, regions


def parse_docx_bytes(data: bytes) -> list[str]:
    """Paragraphs and table rows of a Word document in body order, split at page breaks."""
    import docx
    from docx.oxml.ns import qn

    d = docx.Document(io.BytesIO(data))
    pages: list[list[str]] = [[]]
    body = d.element.body
    for el in body.iterchildren():
        if el.tag == qn("w:p"):
            texts: list[str] = []
            for node in el.iter():
                if node.tag == qn("w:t") and node.text:
                    texts.append(node.text)
                elif node.tag == qn("w:tab"):
                    texts.append(" ")
                elif node.tag == qn("w:br") and node.get(qn("w:type")) == "page":
                    line = " ".join("".join(texts).split())
                    if line:
                        pages[-1].append(line)
                    texts = []
                    pages.append([])
            line = " ".join("".join(texts).split())
            if line:
                pages[-1].append(line)
        elif el.tag == qn("w:tbl"):
            for tr in el.iter(qn("w:tr")):
                cells = []
                for tc in tr.iter(qn("w:tc")):
                    cell = " ".join("".join(t.text or "" for t in tc.iter(qn("w:t"))).split())
                    if cell:
                        cells.append(cell)
                if cells:
                    pages[-1].append(" ".join(cells))
    while len(pages) > 1 and not pages[-1]:
        pages.pop()
    return ["\n".join(p) for p in pages]
