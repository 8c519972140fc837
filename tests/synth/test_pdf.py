from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from assay.synth.pdf import write_pdf


def _read(path: Path) -> list[list[str]]:
    pdf = pdfium.PdfDocument(str(path))
    out = []
    for i in range(len(pdf)):
        page = pdf[i]
        tp = page.get_textpage()
        text = tp.get_text_range()
        out.append([" ".join(ln.split()) for ln in text.splitlines() if ln.strip()])
        tp.close()
        page.close()
    pdf.close()
    return out


def test_text_reads_back_line_for_line(tmp_path: Path) -> None:
    pages = [
        [
            ("title", "Results (as restated)"),
            ("p", r"Back\slash, caf" + "\u00e9" + " and $1,234.5 million"),
        ],
        [
            ("mono", "Net interest income                      1,234        (1,100)   12%"),
            ("p", ""),
        ],
        [("h", "Item 7. Management's Discussion")],
    ]
    path = tmp_path / "x.pdf"
    path.write_bytes(write_pdf(pages, title="t"))
    got = _read(path)
    assert len(got) == 3
    assert got[0][0] == "Results (as restated)"
    assert got[0][1] == r"Back\slash, caf" + "\u00e9" + " and $1,234.5 million"
    assert got[1][0] == "Net interest income 1,234 (1,100) 12%"
    assert got[2][0] == "Item 7. Management's Discussion"
    assert got[0][-1] == "- 1 -"  # footer page number


def test_bytes_are_deterministic_and_clock_free() -> None:
    pages = [[("p", "same text")]] * 3
    a, b = write_pdf(pages, title="x"), write_pdf(pages, title="x")
    assert a == b
    assert b"CreationDate" not in a and b"/ID" not in a
    assert b"/BaseFont /Helvetica" in a and b"/WinAnsiEncoding" in a and b"FontFile" not in a
