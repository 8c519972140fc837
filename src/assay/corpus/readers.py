"""Any supported file -> a `ParsedFile`: page texts, pre-cut table regions, line boxes, page sources.

`read_file(path)` dispatches on the suffix: PDF (pypdfium2 text layer, with a box per text line
in PDF points, origin bottom-left; image-only pages are read by OCR when an OCR engine is
installed, see `assay.corpus.ocr`), HTML, plain text, spreadsheets (.xlsx: a page per sheet and a
region per table), Word (.docx) and e-mail (.eml: the body is page 1, then every attachment is
read by its own reader and its pages follow, each page naming the attachment it came from).
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from assay.corpus.chunking import ChunkSettings, TextChunk, chunk_document
from assay.corpus.office import Region, parse_docx_bytes, parse_xlsx_bytes
from assay.corpus.parse import _clean, each_pdf_page, parse_html, parse_text
from assay.errors import DataError, Problem

__all__ = [
    "READER_REVISION",
    "READ_SUFFIXES",
    "Box",
    "ParsedFile",
    "chunk_parsed",
    "read_bytes",
    "read_file",
]

READER_REVISION = 1
READ_SUFFIXES = (".pdf", ".html", ".htm", ".txt", ".text", ".xlsx", ".docx", ".eml")

Box = tuple[float, float, float, float]


@dataclass(slots=True)
class ParsedFile:
    """What a reader yields for one file (pages are 1-based in `regions`, `line_boxes`, `sources`)."""

    pages: list[str]
    regions: list[Region] = field(default_factory=list)
    line_boxes: dict[int, list[Box | None]] = field(default_factory=dict)
    sources: dict[int, dict[str, Any]] = field(default_factory=dict)  # page -> provenance

    def to_dict(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "regions": [r.to_dict() for r in self.regions],
            "line_boxes": {str(k): v for k, v in self.line_boxes.items()},
            "sources": {str(k): v for k, v in self.sources.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ParsedFile:
        return cls(
            list(d["pages"]),
            [Region.from_dict(r) for r in d.get("regions", [])],
            {
                int(k): [tuple(b) if b else None for b in v]
                for k, v in d.get("line_boxes", {}).items()
            },
            {int(k): v for k, v in d.get("sources", {}).items()},
        )

    def shifted(self, offset: int, source: dict[str, Any]) -> ParsedFile:
        """The same content with page numbers moved by `offset` and `source` merged into each."""
        return ParsedFile(
            self.pages,
            [
                Region(r.page + offset, r.text, r.char_start, r.char_end, r.extra)
                for r in self.regions
            ],
            {p + offset: b for p, b in self.line_boxes.items()},
            {p + offset: source | self.sources.get(p, {}) for p in range(1, len(self.pages) + 1)},
        )


# ------------------------------------------------------------------------------------- PDF

OcrFn = Callable[[Any], tuple[list[str], list[Box | None]]]


def _union(boxes: list[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _line_boxes(tp: Any, raw: str) -> list[Box | None]:
    """A box per line of `_clean(raw)`: the union of its first and last characters' boxes
    (two lookups a line, so a 200-page filing costs milliseconds, not minutes)."""
    out: list[Box | None] = []
    pos = 0
    n = tp.count_chars()
    for part in re.split(r"(\r\n|\r|\n)", raw):
        start = pos
        pos += len(part)
        if part in ("\r\n", "\r", "\n") or not _clean(part):
            continue
        lead = len(part) - len(part.lstrip())
        trail = len(part.rstrip())
        i0, i1 = start + lead, start + trail - 1
        if not (0 <= i0 <= i1 < n):
            out.append(None)
            continue
        a, b = tp.get_charbox(i0), tp.get_charbox(i1)
        box = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
        out.append(tuple(round(float(v), 1) for v in box))  # type: ignore[arg-type]
    return out


def read_pdf(path: str | Path, *, ocr: OcrFn | None = None) -> ParsedFile:
    """Text per page with a box per line; image-only pages go through `ocr` when given."""
    out = ParsedFile(pages=[])

    def read(i: int, page: Any, tp: Any) -> None:
        raw = tp.get_text_range()
        text = _clean(raw)
        pno = i + 1
        if not text.strip() and ocr is not None and _has_image(page):
            lines, boxes = ocr(page)
            out.pages.append("\n".join(lines))
            out.line_boxes[pno] = boxes
            out.sources[pno] = {"ocr": True}
        else:
            out.pages.append(text)
            out.line_boxes[pno] = _line_boxes(tp, raw)

    each_pdf_page(Path(path), read)
    return out


def _has_image(page: Any) -> bool:
    import pypdfium2.raw as raw

    return any(obj.type == raw.FPDF_PAGEOBJ_IMAGE for obj in page.get_objects())


# ----------------------------------------------------------------------------------- e-mail


def _read_eml(path: Path, data: bytes, ocr: OcrFn | None) -> ParsedFile:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    head = [f"{h}: {msg[h]}" for h in ("From", "To", "Date", "Subject") if msg[h]]
    body_part = msg.get_body(preferencelist=("plain", "html"))
    body = ""
    if body_part is not None:
        content = body_part.get_content()
        if body_part.get_content_type() == "text/html":
            import tempfile

            with tempfile.NamedTemporaryFile(suffix=".html") as tmp:
                tmp.write(str(content).encode())
                tmp.flush()
                body = "\n".join(parse_html(tmp.name))
        else:
            body = _clean(str(content))
    out = ParsedFile(pages=[_clean("\n".join([*head, body]))], sources={1: {"part": "body"}})
    for part in msg.iter_attachments():
        name = part.get_filename() or "attachment"
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        suffix = Path(name).suffix.lower()
        if suffix not in READ_SUFFIXES or suffix == ".eml":
            continue
        try:
            sub = read_bytes(payload, suffix, name=f"{path}:{name}", ocr=ocr)
        except DataError as exc:
            raise DataError(
                exc.problems[0].message, file=path, field=f"attachment {name}"
            ) from None
        moved = sub.shifted(len(out.pages), {"attachment": name})
        out.pages.extend(moved.pages)
        out.regions.extend(moved.regions)
        out.line_boxes.update(moved.line_boxes)
        out.sources.update(moved.sources)
    return out


# -------------------------------------------------------------------------------- dispatch


def read_bytes(
    data: bytes, suffix: str, *, name: str = "<bytes>", ocr: OcrFn | None = None
) -> ParsedFile:
    """Read a file's bytes as a file of type `suffix` (what e-mail attachments go through)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"file{suffix}"
        p.write_bytes(data)
        try:
            return read_file(p, ocr=ocr)
        except DataError as exc:
            raise DataError(
                [Problem(name, pr.line, pr.field, pr.message) for pr in exc.problems]
            ) from None


def read_file(path: str | Path, *, ocr: OcrFn | None = None) -> ParsedFile:
    """Read one file of any supported type (see the module docstring)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return read_pdf(path, ocr=ocr)
    if suffix in (".html", ".htm"):
        return ParsedFile(parse_html(path))
    if suffix in (".txt", ".text"):
        return ParsedFile(parse_text(path))
    if suffix not in READ_SUFFIXES:
        raise DataError(
            f"unsupported file type {suffix!r} (expected {', '.join(READ_SUFFIXES)})", file=path
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc}", file=path) from None
    try:
        if suffix == ".xlsx":
            pages, regions = parse_xlsx_bytes(data)
            return ParsedFile(
                pages,
                regions,
                sources={i + 1: {"sheet": _sheet(regions, i + 1)} for i in range(len(pages))},
            )
        if suffix == ".docx":
            return ParsedFile(parse_docx_bytes(data))
        return _read_eml(path, data, ocr)
    except DataError as exc:  # the readers' own problems are this file's
        where = {"<input>": str(path)}
        raise DataError(
            [Problem(where.get(p.file, p.file), p.line, p.field, p.message) for p in exc.problems]
        ) from None
    except Exception as exc:  # a damaged office file or message is this file's problem
        raise DataError(
            f"cannot read {suffix[1:]}: {type(exc).__name__}: {exc}", file=path
        ) from None


def _sheet(regions: list[Region], page: int) -> str | None:
    return next((str(r.extra["sheet"]) for r in regions if r.page == page), None)


# -------------------------------------------------------------------------------- chunking


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for raw in text.split("\n"):
        spans.append((pos, pos + len(raw)))
        pos += len(raw) + 1
    return spans


def chunk_parsed(
    doc_id: str, parsed: ParsedFile, settings: ChunkSettings | None = None
) -> list[TextChunk]:
    """Chunk a parsed file: its regions as they are, every other page by `chunk_document`.

    Chunks on pages with line boxes carry `box` (the union) and `line_boxes` (one per line of the
    chunk's own span); chunks of an attachment or a sheet carry where they came from.
    """
    region_pages = {r.page for r in parsed.regions}
    out: list[TextChunk] = []
    by_page: dict[int, list[TextChunk]] = {}
    for ch in chunk_document(doc_id, parsed.pages, settings):
        if ch.page not in region_pages:
            by_page.setdefault(ch.page, []).append(ch)
    for r in parsed.regions:
        by_page.setdefault(r.page, []).append(
            TextChunk(
                "", doc_id, r.page, 0, r.char_start, r.char_end, "table", r.text, dict(r.extra)
            )
        )
    for page in sorted(by_page):
        spans = _line_spans(parsed.pages[page - 1]) if page in parsed.line_boxes else []
        boxes = parsed.line_boxes.get(page, [])
        src = parsed.sources.get(page, {})
        for n, ch in enumerate(by_page[page], start=1):
            ch.number(n)
            for key in ("attachment", "ocr"):
                if key in src:
                    ch.extra[key] = src[key]
            if spans:
                mine = [
                    b
                    for (s, e), b in zip(spans, boxes, strict=False)
                    if b is not None and s < ch.char_end and e > ch.char_start
                ]
                if mine:
                    ch.extra["box"] = list(_union(mine))
                    ch.extra["line_boxes"] = [list(b) for b in mine]
            out.append(ch)
    return out
