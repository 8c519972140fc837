"""Readers for spreadsheets, Word documents and e-mail, PDF line boxes, and a corpus built from them."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import docx
import openpyxl
import pytest

from assay.corpus import (
    Document,
    build_corpus,
    cell_text,
    col_letter,
    load_chunks,
    read_bytes,
    read_file,
)
from assay.dataset import Anchor
from assay.errors import DataError
from assay.gold.align import resolve_anchor

MakePdf = Callable[[list[list[str]]], bytes]


def _xlsx() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Management accounts"
    ws.append(["Line item", "FY2024", "FY2023"])
    ws.append(["Revenue", 1234567, 1111000])
    ws.append(["Operating margin", 0.2125, 0.19])
    ws.append([])
    ws.append(["Covenant", "Limit", "Actual"])
    ws.append(["Net leverage", 3.5, 2.25])
    ws2 = wb.create_sheet("Segments")
    ws2["B2"] = "Segment"
    ws2["C2"] = "Revenue"
    ws2["B3"] = "Cloud"
    ws2["C3"] = 800
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _docx() -> bytes:
    d = docx.Document()
    d.add_heading("Minutes of the Board", 1)
    d.add_paragraph("The board approved the dividend of $0.42 per share.")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text = "Facility"
    t.cell(0, 1).text = "Amount"
    t.cell(1, 0).text = "Revolver"
    t.cell(1, 1).text = "$250 million"
    d.add_page_break()
    d.add_paragraph("Second page text.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _eml(attachment: bytes) -> bytes:
    m = EmailMessage()
    m["From"] = "cfo@example.com"
    m["To"] = "board@example.com"
    m["Subject"] = "Covenant certificate"
    m.set_content("Please find the covenant compliance schedule attached.")
    m.add_attachment(
        attachment,
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        filename="covenants.xlsx",
    )
    return bytes(m)


def test_cell_text_and_columns() -> None:
    assert [col_letter(n) for n in (1, 26, 27, 52, 703)] == ["A", "Z", "AA", "AZ", "AAA"]
    assert cell_text(1234567) == "1,234,567"
    assert cell_text(2.0) == "2"
    assert cell_text(0.2125) == "0.2125"
    assert cell_text(None) == ""


def test_xlsx_regions_carry_sheet_cells_and_header(tmp_path: Path) -> None:
    f = tmp_path / "m.xlsx"
    f.write_bytes(_xlsx())
    p = read_file(f)
    assert len(p.pages) == 2
    got = [(r.page, r.extra["sheet"], r.extra["cells"], r.extra["header"]) for r in p.regions]
    assert got == [
        (1, "Management accounts", "A1:C3", ["Line item", "FY2024", "FY2023"]),
        (1, "Management accounts", "A5:C6", ["Covenant", "Limit", "Actual"]),
        (2, "Segments", "B2:C3", ["Segment", "Revenue"]),
    ]
    assert (
        p.regions[0].text
        == "Line item FY2024 FY2023\nRevenue 1,234,567 1,111,000\nOperating margin 0.2125 0.19"
    )
    # region spans index the page text
    r = p.regions[1]
    assert p.pages[0][r.char_start : r.char_end] == r.text


def test_docx_paragraphs_tables_and_page_breaks(tmp_path: Path) -> None:
    f = tmp_path / "b.docx"
    f.write_bytes(_docx())
    pages = read_file(f).pages
    assert pages[0].splitlines() == [
        "Minutes of the Board",
        "The board approved the dividend of $0.42 per share.",
        "Facility Amount",
        "Revolver $250 million",
    ]
    assert pages[1] == "Second page text."


def test_eml_body_then_attachment_pages(tmp_path: Path) -> None:
    f = tmp_path / "c.eml"
    f.write_bytes(_eml(_xlsx()))
    p = read_file(f)
    assert "Subject: Covenant certificate" in p.pages[0]
    assert "covenant compliance schedule attached" in p.pages[0]
    assert len(p.pages) == 3  # body + two sheets
    assert p.sources[2] == {"attachment": "covenants.xlsx", "sheet": "Management accounts"}
    assert {r.page for r in p.regions} == {2, 3}


def test_damaged_office_file_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "bad.xlsx"
    f.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(DataError) as exc:
        read_file(f)
    assert exc.value.problems[0].file == str(f)
    with pytest.raises(DataError) as exc2:
        read_bytes(b"garbage", ".docx", name="mail.eml:x.docx")
    assert exc2.value.problems[0].file == "mail.eml:x.docx"


def test_pdf_lines_get_their_boxes(tmp_path: Path, pdf_factory: MakePdf) -> None:
    f = tmp_path / "a.pdf"
    f.write_bytes(pdf_factory([["Revenue 1,234 1,111", "Net income 99 88"]]))
    p = read_file(f)
    boxes = p.line_boxes[1]
    assert len(boxes) == 2 and all(b is not None for b in boxes)
    (x0, y0, x1, y1), (_, _, _, y1b) = boxes  # type: ignore[misc]
    assert 30 <= x0 < x1 <= 612 and y0 < y1
    assert y1b <= y0  # the second line is below the first (origin bottom-left)


def test_corpus_build_reads_every_format_and_sheet_gold_aligns(
    tmp_path: Path, pdf_factory: MakePdf
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "acct.xlsx").write_bytes(_xlsx())
    (src / "minutes.docx").write_bytes(_docx())
    (src / "mail.eml").write_bytes(_eml(_xlsx()))
    (src / "filing.pdf").write_bytes(pdf_factory([["Revenue 1,234 1,111", "Net income 99 88"]]))
    docs = [
        Document(doc_id=n, company="Acme", form="OTHER", file=f)
        for n, f in [
            ("acct", "acct.xlsx"),
            ("minutes", "minutes.docx"),
            ("mail", "mail.eml"),
            ("filing", "filing.pdf"),
        ]
    ]
    man = build_corpus(src, meta=docs, out_dir=tmp_path / "out", workers=1)
    assert man.ok and man.n_documents == 4
    table = load_chunks(tmp_path / "out" / "chunks.jsonl")
    sheet = [c for c in table.of_doc("acct")]
    assert [c.extra["cells"] for c in sheet] == ["A1:C3", "A5:C6", "B2:C3"]
    assert all(c.kind == "table" for c in sheet)
    mail = table.of_doc("mail")
    assert {c.extra.get("attachment") for c in mail} == {None, "covenants.xlsx"}
    pdf = table.of_doc("filing")
    assert pdf[0].extra["box"] and len(pdf[0].extra["line_boxes"]) == 2
    gold = Anchor(
        doc="acct", sheet="Management accounts", cells="B6:C6", quote="Net leverage 3.5 2.25"
    )
    assert [c.split("~")[0] for c in resolve_anchor(gold, table).chunk_ids] == ["acct/1/2"]
    in_mail = Anchor(
        doc="mail", sheet="Management accounts", cells="A2:B2", quote="Revenue 1,234,567"
    )
    assert [c.split("~")[0] for c in resolve_anchor(in_mail, table).chunk_ids] == ["mail/2/1"]
    # a rebuild reuses every parse from the cache and writes the same chunk table
    again = build_corpus(src, meta=docs, out_dir=tmp_path / "out", workers=1)
    assert sorted(again.reused) == sorted(d.doc_id for d in docs)
    assert again.corpus_hash == man.corpus_hash
    rows = [json.loads(x) for x in (tmp_path / "out" / "chunks.jsonl").read_text().splitlines()]
    assert any(r.get("sheet") == "Segments" for r in rows)
