from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay.corpus import parse_file, parse_html, parse_pdf, parse_text, parser_version
from assay.errors import DataError

MakePdf = Callable[[list[list[str]]], bytes]


def test_pdf_pages_and_lines(tmp_path: Path, pdf_factory: MakePdf) -> None:
    f = tmp_path / "a.pdf"
    f.write_bytes(
        pdf_factory(
            [["First page title", "Revenue $ 1,234 $ 1,111"], ["Second page (in millions)"]]
        )
    )
    pages = parse_pdf(f)
    assert pages == ["First page title\nRevenue $ 1,234 $ 1,111", "Second page (in millions)"]


def test_corrupt_pdf_names_the_file(tmp_path: Path, pdf_factory: MakePdf) -> None:
    f = tmp_path / "broken.pdf"
    f.write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    with pytest.raises(DataError) as exc:
        parse_pdf(f)
    assert exc.value.problems[0].file == str(f)
    assert "cannot read PDF" in exc.value.problems[0].message


def test_truncated_pdf_is_an_error(tmp_path: Path, pdf_factory: MakePdf) -> None:
    data = pdf_factory([["hello"]])
    f = tmp_path / "cut.pdf"
    f.write_bytes(data[: len(data) // 3])
    with pytest.raises(DataError):
        parse_file(f)


def test_html_keeps_table_rows_as_rows(tmp_path: Path) -> None:
    f = tmp_path / "f.html"
    f.write_text(
        "<html><head><style>p{}</style><title>t</title></head><body>"
        "<p>Intro <b>text</b> here.</p>"
        "<table><tr><td>(in millions)</td><td>2023</td><td>2022</td></tr>"
        "<tr><td>Net sales</td><td>$</td><td>1,234</td><td>$</td><td>1,111</td></tr>"
        "<tr><td>Margin</td><td>41.2</td><td>%</td><td>(3</td><td>)</td></tr></table>"
        '<div style="page-break-before: always">Second page</div>'
        "<script>var x = 1;</script></body></html>",
        encoding="utf-8",
    )
    pages = parse_html(f)
    assert len(pages) == 2
    lines = pages[0].splitlines()
    assert "Intro text here." in lines
    assert "(in millions) 2023 2022" in lines
    assert "Net sales $ 1,234 $ 1,111" in lines
    assert "Margin 41.2% (3)" in lines
    assert pages[1] == "Second page"
    assert "var x" not in "".join(pages)


def test_text_form_feed_pages(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("page one\n\n  spaced   out \fpage two", encoding="utf-8")
    assert parse_text(f) == ["page one\nspaced out", "page two"]


def test_unsupported_suffix(tmp_path: Path) -> None:
    f = tmp_path / "x.docx"
    f.write_bytes(b"")
    with pytest.raises(DataError, match="unsupported file type"):
        parse_file(f)


def test_parser_version_names_pdfium() -> None:
    v = parser_version()
    assert v.startswith("assay.corpus.parse/") and "pdfium=" in v


def test_html_page_breaks_after_elements(tmp_path: Path) -> None:
    f = tmp_path / "f.htm"
    f.write_text(
        '<div style="page-break-after: always"><div>one</div><p>still one</p></div>'
        "<p>two</p>"
        '<hr style="page-break-after:always"/>'
        "<p>three</p>",
        encoding="utf-8",
    )
    assert parse_html(f) == ["one\nstill one", "two", "three"]


@pytest.mark.parametrize("reader", ["parse_pdf", "read_pdf"])
def test_a_page_pdfium_cannot_read_is_named(
    tmp_path: Path, pdf_factory: MakePdf, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """Both PDF readers (pages of text; pages with line boxes) name the file and the page."""
    import pypdfium2

    from assay.corpus.readers import read_pdf

    f = tmp_path / "a.pdf"
    f.write_bytes(pdf_factory([["one"], ["two"], ["three"]]))
    assert parse_pdf(f) == read_pdf(f).pages == ["one", "two", "three"]
    real = pypdfium2.PdfPage.get_textpage
    seen: list[int] = []

    def flaky(page: pypdfium2.PdfPage) -> pypdfium2.PdfTextPage:
        seen.append(1)
        if len(seen) == 2:
            raise pypdfium2.PdfiumError("bad text layer")
        return real(page)

    monkeypatch.setattr(pypdfium2.PdfPage, "get_textpage", flaky)
    with pytest.raises(DataError) as exc:
        (parse_pdf if reader == "parse_pdf" else read_pdf)(f)
    problem = exc.value.problems[0]
    assert (problem.file, problem.field) == (str(f), "page 2")
    assert "cannot read page: bad text layer" in problem.message
