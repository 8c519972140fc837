"""Office files -> pages: spreadsheets (.xlsx, openpyxl) and Word documents (.docx, python-docx).

A workbook gives one page per sheet (in workbook order). Each sheet is cut into *table regions*:
runs of non-empty rows separated by at least one empty row. A region becomes one chunk (split
into parts of at most `max_rows` rows, each repeating the header row), and records where it lives
(`sheet`, `cells` as an A1 range such as ``B3:E9``, and its header row), so gold recorded as
sheet + cell range aligns onto it. Cell values are written as a reader would see them: integers
with thousands separators, other numbers with up to four decimals, dates in ISO form.

A Word document gives its paragraphs and table rows (cells joined by spaces) in body order; an
explicit page break (``w:br w:type="page"``) starts a new page, otherwise the document is one page.

Both are zip files of XML, so a small file can unpack to a great deal: what is read is bounded
(`OfficeLimits`): the bytes the zip unpacks to, in all and in any XML part parsed whole, and, in
a workbook, the rows walked and the cells read (only the cells a sheet holds are walked: a sheet
whose one value is at ``XFD1048576`` is one cell, not 17 billion). Past a bound the file is
refused with a `DataError` that names the bound, before the work is done.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from dataclasses import asdict, dataclass, field
from typing import Any

from assay.errors import DataError

__all__ = [
    "OfficeLimits",
    "Region",
    "cell_text",
    "col_letter",
    "parse_docx_bytes",
    "parse_xlsx_bytes",
]

MAX_REGION_ROWS = 40


@dataclass(frozen=True)
class OfficeLimits:
    """What reading one office file may take. `unzipped_bytes`: all its parts unpacked;
    `xml_part_bytes`: one XML part that is parsed whole (a Word body, a workbook's shared
    strings: their parse takes some ten times their size in memory; worksheets are streamed);
    `rows`: rows walked in a workbook (the empty rows between two rows that hold cells count);
    `cells`: cells walked (a row is as wide as its last cell)."""

    unzipped_bytes: int = 512 << 20
    xml_part_bytes: int = 32 << 20
    rows: int = 1_048_576
    cells: int = 20_000_000


LIMITS = OfficeLimits()


def _too_big(what: str, got: int, limit: int, unit: str = " bytes") -> DataError:
    return DataError(
        f"{what}: {got:,}{unit}, over the limit of {limit:,} (assay.corpus.office.OfficeLimits): "
        "not read"
    )


def _check_zip(data: bytes, limits: OfficeLimits, *, streamed: str = "") -> None:
    """Refuse an office file whose parts unpack past `limits` (the sizes its zip directory
    declares: the reader stops at a part's declared size, so a part cannot unpack to more). XML
    parts whose names start with `streamed` are read as a stream and bounded by rows and cells
    instead of `xml_part_bytes`."""
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except zipfile.BadZipFile:
        return  # not a zip: the reader says what is wrong with it
    total = sum(i.file_size for i in infos)
    if total > limits.unzipped_bytes:
        raise _too_big(f"its {len(infos)} parts unpacked", total, limits.unzipped_bytes)
    for i in infos:
        streaming = bool(streamed) and i.filename.startswith(streamed)
        if i.filename.endswith(".xml") and not streaming and i.file_size > limits.xml_part_bytes:
            raise _too_big(f"{i.filename} unpacked", i.file_size, limits.xml_part_bytes)


@dataclass(slots=True)
class Region:
    """A pre-cut span of a page (a sheet's table region): becomes one chunk as it is."""

    page: int  # 1-based
    text: str
    char_start: int
    char_end: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

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


def parse_xlsx_bytes(data: bytes, limits: OfficeLimits = LIMITS) -> tuple[list[str], list[Region]]:
    """Pages (one per sheet) and table regions of a workbook, within `limits`."""
    import openpyxl

    _check_zip(data, limits, streamed="xl/worksheets/")
    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    pages: list[str] = []
    regions: list[Region] = []
    walked_rows = walked_cells = 0
    try:
        for pno, ws in enumerate(wb.worksheets, start=1):
            # the rows the sheet holds, as wide as their last cell (not as its <dimension> claims)
            ws.reset_dimensions()
            blocks: list[list[tuple[int, list[tuple[int, str]]]]] = []
            cur: list[tuple[int, list[tuple[int, str]]]] = []
            for r_idx, row in enumerate(ws.iter_rows(values_only=True), start=1):
                walked_rows += 1
                walked_cells += len(row)
                if walked_rows > limits.rows:
                    raise _too_big(f"sheet {ws.title!r}: rows walked", walked_rows, limits.rows, "")
                if walked_cells > limits.cells:
                    raise _too_big(
                        f"sheet {ws.title!r}: cells walked", walked_cells, limits.cells, ""
                    )
                cells = [(c, t) for c, v in enumerate(row, start=1) if (t := cell_text(v))]
                if cells:
                    cur.append((r_idx, cells))
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


def parse_docx_bytes(data: bytes, limits: OfficeLimits = LIMITS) -> list[str]:
    """Paragraphs and table rows of a Word document in body order, split at page breaks, within
    `limits`."""
    import docx
    from docx.oxml.ns import qn

    _check_zip(data, limits)
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
