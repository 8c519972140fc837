"""A small pure-Python PDF writer: the standard Type1 fonts, WinAnsi text, one line per text object.

No fonts are embedded (Helvetica, Helvetica-Bold and Courier are among the 14 standard fonts every
reader has), nothing depends on the clock (no /CreationDate, no /ID), and streams are compressed
with zlib at a fixed level, so the same lines give the same bytes. Text extractors such as
pypdfium2 read every line back as written.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

__all__ = ["FONTS", "PAGE_SIZE", "write_pdf"]

PAGE_SIZE = (612, 792)  # US Letter, points
FONTS = {"title": ("F2", 12), "h": ("F2", 10), "p": ("F1", 9), "mono": ("F3", 8), "foot": ("F1", 8)}
_BASE = {"F1": "Helvetica", "F2": "Helvetica-Bold", "F3": "Courier"}
LEFT = 54
TOP = 738
LEADING = 12


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _content(lines: Sequence[tuple[str, str]], footer: str) -> bytes:
    out: list[bytes] = []
    y = TOP
    for style, text in lines:
        if text:
            font, size = FONTS[style]
            out.append(
                b"BT /%s %d Tf 1 0 0 1 %d %d Tm (%s) Tj ET"
                % (font.encode(), size, LEFT, y, _escape(text))
            )
        y -= LEADING
    if footer:
        font, size = FONTS["foot"]
        out.append(
            b"BT /%s %d Tf 1 0 0 1 %d %d Tm (%s) Tj ET"
            % (font.encode(), size, 290, 30, _escape(footer))
        )
    return b"\n".join(out) + b"\n"


def write_pdf(
    pages: Sequence[Sequence[tuple[str, str]]],
    *,
    title: str = "",
    images: Mapping[int, tuple[bytes, int, int]] | None = None,
) -> bytes:
    """Render pages of (style, text) lines (style: title | h | p | mono) to PDF bytes.

    Lines are placed top-down with a fixed leading; callers wrap text to the page measure.
    `images` maps a 1-based page to a grayscale JPEG (bytes, width, height) drawn over the whole
    page instead of its text: a scanned page, which has no text layer.
    """
    images = images or {}
    objs: list[bytes] = []  # object n is objs[n-1]

    def add(body: bytes) -> int:
        objs.append(body)
        return len(objs)

    catalog = add(b"")  # placeholder, filled below
    pages_obj = add(b"")
    font_ids = {
        k: add(
            b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>"
            % v.encode()
        )
        for k, v in _BASE.items()
    }
    fonts = b" ".join(b"/%s %d 0 R" % (k.encode(), n) for k, n in font_ids.items())
    kids: list[int] = []
    for i, lines in enumerate(pages, start=1):
        if i in images:
            jpeg, w, h = images[i]
            img = add(
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream"
                % (w, h, len(jpeg), jpeg)
            )
            draw = b"q %d 0 0 %d 0 0 cm /Im1 Do Q\n" % PAGE_SIZE
            stream = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(draw), draw))
            kids.append(
                add(
                    b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Resources "
                    b"<< /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>"
                    % (pages_obj, PAGE_SIZE[0], PAGE_SIZE[1], img, stream)
                )
            )
            continue
        data = zlib.compress(_content(lines, f"- {i} -"), 6)
        stream = add(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data)
        )
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Resources << /Font << %s >> >> "
                b"/Contents %d 0 R >>" % (pages_obj, PAGE_SIZE[0], PAGE_SIZE[1], fonts, stream)
            )
        )
    objs[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objs[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    info = add(b"<< /Title (%s) /Producer (assay synth) >>" % _escape(title))
    buf = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for n, body in enumerate(objs, start=1):
        offsets.append(len(buf))
        buf += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(buf)
    buf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        buf += b"%010d 00000 n \n" % off
    buf += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1,
        catalog,
        info,
        xref,
    )
    return bytes(buf)
