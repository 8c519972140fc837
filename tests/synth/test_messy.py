"""Room v2: deal documents (xlsx, docx, eml), planted conflicts and decoys, and their guards firing."""

from __future__ import annotations

import email
import email.policy
import io
import json
import shutil
from pathlib import Path
from typing import Any

import openpyxl

from assay.corpus import read_file
from assay.synth import guards
from assay.synth.facts_ledger import build_ledger
from assay.synth.generate import ROOM_VERSION
from assay.synth.messy import AUTHORITY, deal_book, deal_pages, render_deal_doc


def _golden(room: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (room / "golden.jsonl").read_text().splitlines()]


def _copy(room: Path, tmp: Path) -> Path:
    dst = tmp / "room"
    shutil.copytree(room, dst)
    return dst


def _set_cell(path: Path, sheet: str, ref: str, value: Any) -> None:
    wb = openpyxl.load_workbook(path)
    wb[sheet][ref] = value
    wb.save(path)


def test_rooms_are_version_2_with_every_format_and_its_messiness(small_room: Path) -> None:
    manifest = json.loads((small_room / "manifest.json").read_text())
    assert manifest["room_version"] == ROOM_VERSION == 4  # 3: plus access labels; 4: conversations
    assert set(manifest["counts"]["formats"]) == {"pdf", "html", "xlsx", "docx", "eml"}
    rows = [json.loads(x) for x in (small_room / "documents.jsonl").read_text().splitlines()]
    assert {r["metadata"]["messiness"] for r in rows} <= {"clean", "scan-light", "scan-heavy"}
    cats = {e["category"] for e in _golden(small_room)}
    assert {"conflict", "decoy"} <= cats
    fmts = {e["metadata"].get("format") for e in _golden(small_room) if e.get("evidence_paths")}
    assert {"pdf", "xlsx", "docx", "eml"} <= fmts


def test_conflicts_name_the_authority_that_decides(small_room: Path) -> None:
    for e in _golden(small_room):
        if e["category"] != "conflict":
            continue
        conf = e["metadata"]["conflict"]
        assert conf["authority"]["tier"] < conf["superseded"]["tier"]
        assert AUTHORITY[conf["authority"]["kind"]] == conf["authority"]["tier"]
        assert conf["value"] in e["reference_answer"]
        assert conf["value"] != conf["superseded"]["value"]
        docs = {a["doc"] for p in e["evidence_paths"] for piece in p for a in piece}
        assert conf["authority"]["doc"] in docs and conf["superseded"]["doc"] not in docs


def test_reader_pages_match_the_in_memory_pages() -> None:
    """What the corpus readers get back from each rendered file is what the layout guards check."""
    ledger = build_ledger(3, companies=2, years=1)
    book = deal_book(ledger, ledger.companies[0])
    rendered: dict[str, bytes] = {}
    for d in book.docs:
        rendered[d.doc_id] = render_deal_doc(d, book, rendered)
    for d in book.docs:
        got = read_file_bytes(rendered[d.doc_id], d.fmt)
        want = deal_pages(d, book)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert guards.norm_tokens(w) == guards.norm_tokens(g) or set(
                guards.norm_tokens(w)
            ) <= set(guards.norm_tokens(g)), d.doc_id
    msg = email.message_from_bytes(rendered[book.docs[-1].doc_id], policy=email.policy.default)
    assert [p.get_filename() for p in msg.iter_attachments()] == [f"{book.docs[1].doc_id}.xlsx"]


def read_file_bytes(data: bytes, fmt: str) -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"x.{fmt}"
        p.write_bytes(data)
        return read_file(p).pages


def test_a_document_contradicting_a_planted_conflict_is_caught(
    small_room: Path, tmp_path: Path
) -> None:
    room = _copy(small_room, tmp_path)
    e = next(x for x in _golden(room) if x["metadata"]["template"] == "conflict:max_leverage")
    conf = e["metadata"]["conflict"]
    # the management accounts now also carry the schedule's (wrong) leverage threshold
    mgmt = room / "docs" / f"{conf['authority']['doc'].replace('-credit', '-mgmt')}.xlsx"
    _set_cell(mgmt, "P&L", "A20", "Net leverage covenant (max)")
    _set_cell(mgmt, "P&L", "B20", float(conf["superseded"]["value"]))
    probs = [str(p) for p in guards.check_conflicts(room, _golden(room), guards.RoomText(room))]
    assert any(e["id"] in p and "contradicting the planted conflict" in p for p in probs), probs
    # and the authority no longer stating its value is caught too
    room2 = _copy(small_room, tmp_path / "b")
    ni = next(x for x in _golden(room2) if x["metadata"]["template"] == "conflict:net_income")
    sup = room2 / "docs" / f"{ni['metadata']['conflict']['superseded']['doc']}.xlsx"
    wb = openpyxl.load_workbook(sup)
    ws = wb["P&L"]
    for row in ws.iter_rows():
        if row[0].value == "Net income":
            row[1].value = 1
    wb.save(sup)
    probs = [str(p) for p in guards.check_conflicts(room2, _golden(room2), guards.RoomText(room2))]
    assert any(ni["id"] in p and "superseded document" in p for p in probs), probs


def test_a_spreadsheet_answering_an_unanswerable_question_is_caught(
    small_room: Path, tmp_path: Path
) -> None:
    room = _copy(small_room, tmp_path)
    e = next(
        x for x in _golden(room) if x["metadata"]["template"] == "unanswerable:forward_looking"
    )
    manifest = json.loads((room / "manifest.json").read_text())
    nxt = manifest["scale"]["last_fiscal_year"] + 1
    cid = e["metadata"]["company"]
    mgmt = room / "docs" / f"{cid}-{nxt - 1}-mgmt.xlsx"
    rows = read_file(mgmt).pages[0]
    phrase = "total revenues" if "Total revenues" in rows else "net interest income"
    period = f"fiscal {nxt}" if phrase == "total revenues" else str(nxt)
    _set_cell(mgmt, "P&L", "A30", f"Actual {phrase} for {period} were $999 million.")
    _, ledger, golden, facts = guards.read_room(room)
    probs = [
        str(p)
        for p in guards.check_unanswerable(room, golden, guards.RoomText(room), ledger, facts)
    ]
    assert any(e["id"] in p and "(xlsx)" in p and "answers" in p for p in probs), probs


def test_a_decoy_equal_to_its_answer_is_caught(small_room: Path, tmp_path: Path) -> None:
    room = _copy(small_room, tmp_path)
    golden = _golden(room)
    e = next(x for x in golden if x["category"] == "decoy")
    e["metadata"]["decoy"]["decoy_value"] = e["metadata"]["decoy"]["value"]
    probs = [str(p) for p in guards.check_decoys(room, golden)]
    assert any(e["id"] in p and "equals the answer" in p for p in probs)


def test_office_bytes_are_stable() -> None:
    ledger = build_ledger(5, companies=2, years=1)
    book = deal_book(ledger, ledger.companies[1])
    a: dict[str, bytes] = {}
    b: dict[str, bytes] = {}
    for d in book.docs:
        a[d.doc_id] = render_deal_doc(d, book, a)
    for d in book.docs:
        b[d.doc_id] = render_deal_doc(d, book, b)
    assert a == b
    wb = openpyxl.load_workbook(io.BytesIO(a[book.docs[0].doc_id]))
    assert wb.sheetnames[0] == "P&L"
