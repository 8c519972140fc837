"""Filings -> pages of text: PDF (pypdfium2), HTML (stdlib html.parser, table rows kept as rows), text.

Every parser returns a list of page texts (page 1 is index 0) with normalised line ends, one line
per visual line (PDF) or per block / table row (HTML). HTML and plain text have no pages: a form
feed (``\\f``) or an explicit page-break style splits them; otherwise the whole file is one page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from assay.errors import DataError

__all__ = [
    "PARSER_NAME",
    "SUPPORTED_SUFFIXES",
    "parse_file",
    "parse_html",
    "parse_pdf",
    "parse_text",
    "parser_version",
]

PARSER_NAME = "assay.corpus.parse"
PARSER_REVISION = 1  # bump when the text a parser yields changes (forces re-parsing)
SUPPORTED_SUFFIXES = (".pdf", ".html", ".htm", ".txt", ".text")


def parser_version() -> str:
    """Parser identity stamped into the manifest: our revision plus the pypdfium2/PDFium builds."""
    import pypdfium2

    info = getattr(pypdfium2, "version", None)
    pdfium = str(getattr(info, "PDFIUM_INFO", "?")) if info else "?"
    pypdfium = str(getattr(info, "PYPDFIUM_INFO", "?")) if info else "?"
    return f"{PARSER_NAME}/{PARSER_REVISION} pypdfium2={pypdfium} pdfium={pdfium}"


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = text.replace("\xa0", " ").replace("\ufffe", "").replace("\x02", "-")
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def each_pdf_page(path: Path, read: Callable[[int, Any, Any], None]) -> None:
    """``read(index, page, text page)`` for each page of a PDF, in order (page 1 is index 0).

    A file PDFium cannot open raises DataError naming the file; a page it cannot read (in
    ``read`` too), one naming the page.
    """
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(str(path))
    except (pypdfium2.PdfiumError, OSError) as exc:
        raise DataError(f"cannot read PDF: {exc}", file=path) from None
    try:
        for i in range(len(pdf)):
            try:
                page = pdf[i]
                textpage = page.get_textpage()
                read(i, page, textpage)
                textpage.close()
                page.close()
            except pypdfium2.PdfiumError as exc:
                raise DataError(
                    f"cannot read page: {exc}", file=path, field=f"page {i + 1}"
                ) from None
    finally:
        pdf.close()


def parse_pdf(path: str | Path) -> list[str]:
    """Text of each page of a PDF. A file PDFium cannot open raises DataError naming the file."""
    pages: list[str] = []
    each_pdf_page(Path(path), lambda _i, _page, tp: pages.append(_clean(tp.get_text_range())))
    return pages


_BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "title",
        "pre",
        "blockquote",
        "hr",
        "dt",
        "dd",
    ]
)
_SKIP_TAGS = frozenset({"script", "style", "head", "noscript"})
_VOID_TAGS = frozenset({"hr", "br", "img", "wbr"})
_PAGE_BREAK = re.compile(
    r"page-break-(?:before|after)\s*:\s*always|break-(?:before|after)\s*:\s*page", re.I
)


class _HTMLText(HTMLParser):
    """Collects visible text; a table row becomes one line with cells separated by spaces."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pages: list[list[str]] = [[]]
        self.buf: list[str] = []
        self.skip = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.break_after: list[list[Any]] = []  # [tag, nested same-name tags still open]

    def _flush(self) -> None:
        text = " ".join("".join(self.buf).split())
        if text:
            self.pages[-1].append(text)
        self.buf = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self.skip += 1
            return
        style = " ".join(v or "" for k, v in attrs if k == "style")
        m = _PAGE_BREAK.search(style) if style else None
        if m and ("before" in m.group(0).lower() or tag in _VOID_TAGS):
            self._new_page()
        elif m:
            self.break_after.append([tag, 0])  # the page ends where this element ends
        elif self.break_after and self.break_after[-1][0] == tag:
            self.break_after[-1][1] += 1
        if tag == "tr":
            self._flush()
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
        elif tag in _BLOCK_TAGS and self.cell is None:
            self._flush()

    def _new_page(self) -> None:
        self._flush()
        if self.pages[-1]:
            self.pages.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
            return
        if self.break_after and self.break_after[-1][0] == tag:
            if self.break_after[-1][1] > 0:
                self.break_after[-1][1] -= 1
            else:
                self.break_after.pop()
                self._end_element(tag)
                self._new_page()
                return
        self._end_element(tag)

    def _end_element(self, tag: str) -> None:
        if tag in ("td", "th") and self.row is not None and self.cell is not None:
            cell = " ".join("".join(self.cell).split())
            if cell:
                self.row.append(cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            line = _join_cells(self.row)
            if line:
                self.pages[-1].append(line)
            self.row = None
        elif tag in _BLOCK_TAGS and self.cell is None:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.cell is not None:
            self.cell.append(data)
        elif self.row is None:
            self.buf.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def _join_cells(cells: list[str]) -> str:
    """Join cells, gluing '$' and ')' / '%' fragments that filings put in cells of their own."""
    out: list[str] = []
    for c in cells:
        if out and c in (")", "%", ")%") and out[-1]:
            out[-1] += c
        elif out and out[-1] == "$":
            out[-1] = f"$ {c}"
        else:
            out.append(c)
    return " ".join(out)


def _read(path: str | Path, what: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise DataError(f"cannot read {what}: {exc}", file=Path(path)) from None


def parse_html(path: str | Path) -> list[str]:
    raw = _read(path, "HTML")
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    pages = [_clean("\n".join(lines)) for lines in parser.pages]
    while len(pages) > 1 and not pages[-1]:
        pages.pop()
    return pages or [""]


def parse_text(path: str | Path) -> list[str]:
    return [_clean(p) for p in _read(path, "text").split("\f")]


def parse_file(path: str | Path) -> list[str]:
    """Dispatch on the file suffix (.pdf, .html/.htm, .txt/.text)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return parse_pdf(path)
    if suffix in (".html", ".htm"):
        return parse_html(path)
    if suffix in (".txt", ".text"):
        return parse_text(path)
    raise DataError(
        f"unsupported file type {suffix!r} (expected {', '.join(SUPPORTED_SUFFIXES)})", file=path
    )
