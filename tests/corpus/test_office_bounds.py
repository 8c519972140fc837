"""Office readers bound what they read: a workbook is walked by the cells its sheets hold (a
1.4 KB xlsx with one value at XFD1048576 hung `corpus build` past 300 s), and a zip that unpacks
past a bound (a 0.95 MB docx took 2.25 GB) is refused with a clear error naming the file, the
part and the bound, before it is parsed."""

from __future__ import annotations

import contextlib
import io
import signal
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import docx
import openpyxl
import pytest
from typer.testing import CliRunner

import assay.cli.corpus_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.corpus import OfficeLimits, parse_docx_bytes, parse_xlsx_bytes, read_file
from assay.errors import DataError


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise TimeoutError(f"still reading after {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _far_xlsx(cell: str = "XFD1048576") -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws["A1"] = "Revenue"
    ws["B1"] = 5_000_000
    ws[cell] = 42
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_a_value_at_the_last_cell_is_read_at_once(tmp_path: Path) -> None:
    f = tmp_path / "far.xlsx"
    f.write_bytes(_far_xlsx())
    assert f.stat().st_size < 10_000
    t0 = time.perf_counter()
    with _deadline(20):
        parsed = read_file(f)
    assert time.perf_counter() - t0 < 5
    cells = [(r.text, r.extra["cells"]) for r in parsed.regions]
    assert cells == [("Revenue 5,000,000", "A1:B1"), ("42", "XFD1048576:XFD1048576")]


def test_rows_and_cells_walked_are_bounded() -> None:
    with pytest.raises(DataError, match=r"sheet 'Sheet': rows walked: 101, over the limit of 100"):
        parse_xlsx_bytes(_far_xlsx("C500"), OfficeLimits(rows=100))
    with pytest.raises(DataError, match=r"cells walked: 1,002, over the limit of 1,000"):
        parse_xlsx_bytes(_far_xlsx("ALL2"), OfficeLimits(cells=1000))  # ALL is column 1000
    pages, _ = parse_xlsx_bytes(_far_xlsx("C500"), OfficeLimits(rows=500))
    assert pages == ["Revenue 5,000,000\n42"]


def _docx_bomb(xml_bytes: int) -> bytes:
    """A Word document whose body unpacks to about `xml_bytes` of XML from a small zip."""
    d = docx.Document()
    d.add_paragraph("Revenue was $5 million.")
    buf = io.BytesIO()
    d.save(buf)
    src = zipfile.ZipFile(buf)
    body = src.read("word/document.xml").decode()
    para = "<w:p><w:r><w:t>" + "x" * 50 + "</w:t></w:r></w:p>"
    at = body.index("<w:sectPr")
    big = body[:at] + para * (xml_bytes // len(para)) + body[at:]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            data = big.encode() if info.filename == "word/document.xml" else src.read(info)
            z.writestr(info.filename, data)
    return out.getvalue()


def test_a_docx_that_unpacks_past_the_bound_is_refused_unread(tmp_path: Path) -> None:
    f = tmp_path / "bomb.docx"
    f.write_bytes(_docx_bomb(34 << 20))
    assert f.stat().st_size < 1 << 20
    t0 = time.perf_counter()
    with pytest.raises(DataError) as err:
        read_file(f)
    assert time.perf_counter() - t0 < 2  # refused before parsing
    (p,) = err.value.problems
    assert p.file == str(f)
    assert (
        "word/document.xml unpacked:" in p.message and "over the limit of 33,554,432" in p.message
    )
    # the whole zip is bounded too
    small = _docx_bomb(200_000)
    assert parse_docx_bytes(small)[0].startswith("Revenue was $5 million.")
    with pytest.raises(DataError, match=r"parts unpacked: .* over the limit of 100,000"):
        parse_docx_bytes(small, OfficeLimits(unzipped_bytes=100_000))


def test_corpus_build_names_the_refused_file_and_builds_the_rest(tmp_path: Path) -> None:
    src = tmp_path / "files"
    src.mkdir()
    (src / "bomb.docx").write_bytes(_docx_bomb(34 << 20))
    (src / "far.xlsx").write_bytes(_far_xlsx())
    out = tmp_path / "corpus"
    with _deadline(60):
        res = CliRunner().invoke(
            app, ["corpus", "build", str(src), "--out", str(out), "--workers", "1", "--no-progress"]
        )
    assert res.exit_code == 1, res.output
    assert "bomb.docx: not parsed" in res.output and "word/document.xml unpacked" in res.output
    assert "XFD1048576" in (out / "chunks.jsonl").read_text()
