"""The guards pass on a generated room and fail on each kind of defect they exist to catch."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assay.synth.facts_ledger as ledger_mod
from assay.synth import guards
from assay.synth.facts_ledger import Restatement, fact_id
from assay.synth.generate import generate_room
from assay.synth.layout import Row, row_text


def _copy(room: Path, tmp: Path) -> Path:
    dst = tmp / "room"
    shutil.copytree(room, dst)
    return dst


def _golden(room: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (room / "golden.jsonl").read_text().splitlines()]


def _write_golden(room: Path, entries: list[dict[str, Any]]) -> None:
    (room / "golden.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))


@pytest.fixture(scope="module")
def base_text(small_room_text: guards.RoomText) -> guards.RoomText:
    """Pages of the pristine room, read once and shared by the mutation tests."""
    return small_room_text


def _check(
    room: Path, name: str, base: guards.RoomText, changed: tuple[str, ...] = ()
) -> list[str]:
    _, ledger, golden, facts = guards.read_room(room)
    text = guards.RoomText(room).share(base, except_docs=changed)
    fn = getattr(guards, name)
    if name in ("check_anchors",):
        probs = fn(room, golden, text)
    elif name == "check_unanswerable":
        probs = fn(room, golden, text, ledger, facts)
    elif name == "check_restatements":
        probs = fn(room, ledger, text)
    elif name == "check_temporal":
        probs = fn(room, golden, ledger, text)
    elif name == "check_reference_answers":
        probs = fn(room, golden, ledger)
    else:
        probs = fn(room, golden, ledger, text)
    return [str(p) for p in probs]


def test_generated_room_passes_every_guard(small_room: Path, base_text: guards.RoomText) -> None:
    assert guards.check_room(small_room, text=base_text).problems == []


def test_norm_tokens_folds_money_and_punctuation() -> None:
    assert guards.norm_tokens("Net income was $1,234.5 million (restated).") == [
        "net",
        "income",
        "was",
        "1234.5",
        "million",
        "restated",
    ]
    assert guards.norm_tokens("NIM 3.10%") == ["nim", "3.1"]


def test_anchor_on_wrong_page_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    e = next(e for e in entries if e["category"] == "numeric_lookup")
    anchor = e["evidence_paths"][0][0][0]
    anchor["page"] = anchor["page"] + 1 if anchor["page"] > 1 else 2
    _write_golden(room, entries)
    assert any(e["id"] in p and "not on" in p for p in _check(room, "check_anchors", base_text))


def test_anchor_quote_with_wrong_number_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    e = next(e for e in entries if e["category"] == "numeric_lookup")
    anchor = e["evidence_paths"][0][0][0]
    anchor["quote"] = re.sub(r"\d", "9", anchor["quote"])
    _write_golden(room, entries)
    assert any(e["id"] in p for p in _check(room, "check_anchors", base_text))


def test_evidence_after_as_of_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    e = next(e for e in entries if e["category"] == "temporal")
    e["as_of"] = "2000-01-01"
    _write_golden(room, entries)
    assert any("after as_of" in p for p in _check(room, "check_anchors", base_text))


def test_a_filing_that_answers_an_unanswerable_entry_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    e = next(
        e for e in _golden(room) if e["metadata"]["template"] == "unanswerable:forward_looking"
    )
    manifest = json.loads((room / "manifest.json").read_text())
    nxt = manifest["scale"]["last_fiscal_year"] + 1
    cid = e["metadata"]["company"]
    html = room / "docs" / f"{cid}-{nxt - 1}-10k.html"
    phrase = (
        "total revenues"
        if "fiscal" in html.read_text() and "Subscription" in html.read_text()
        else "net interest income"
    )
    period = f"fiscal {nxt}" if phrase == "total revenues" else str(nxt)
    raw = html.read_text().replace(
        "</body>",
        f'<div class="page"><p>Actual {phrase} for {period} were $999 million.</p></div></body>',
    )
    html.write_text(raw)
    assert any(
        e["id"] in p and "answers" in p
        for p in _check(room, "check_unanswerable", base_text, (html.stem,))
    )


def test_adjacent_quarter_disclosure_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    e = next(e for e in _golden(room) if "adjacent_quarter" in e["metadata"]["template"])
    pattern = e["metadata"]["absent"]["patterns"][0]
    date = pattern.split("as\\ of\\ ")[-1].replace("\\", "")
    cid = e["metadata"]["company"]
    doc = sorted((room / "docs").glob(f"{cid}-*-10q.html"))[0]
    what = (
        "customers with annual recurring revenue over $100,000"
        if "customers" in pattern
        else "Criticized loans totaled $5.0 million"
    )
    doc.write_text(
        doc.read_text().replace(
            "</body>", f'<div class="page"><p>We had 12 {what} as of {date}.</p></div></body>'
        )
    )
    assert any(e["id"] in p for p in _check(room, "check_unanswerable", base_text, (doc.stem,)))


def test_contradicted_restatement_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    _, ledger, _, _ = guards.read_room(room)
    quiet = next(
        r for r in ledger.restatements.values() if r.quiet and ledger.facts[r.fact_id].fq is None
    )
    fact = ledger.facts[quiet.fact_id]
    c = ledger.company(fact.cid)
    from assay.synth.filings import fmt_cell

    old, new = fmt_cell(c, fact.concept, quiet.old), fmt_cell(c, fact.concept, quiet.new)
    doc = (
        room / "docs" / f"{quiet.via}.html"
    )  # the later 10-K whose comparative shows the new value
    raw = doc.read_text()
    assert f">{new}<" in raw
    doc.write_text(raw.replace(f">{new}<", f">{old}<"))
    assert any(
        "superseded" in p for p in _check(room, "check_restatements", base_text, (doc.stem,))
    )


def _bump(m: re.Match[str]) -> str:
    return f"{int(m.group(0).replace(',', '')) + 1:,}"


def test_wrong_reference_number_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    for cat in ("numeric_lookup", "comparison", "temporal", "amendment_restatement"):
        e = next(
            e
            for e in entries
            if e["category"] == cat and re.search(r"\d,\d", e["reference_answer"])
        )
        e["reference_answer"] = re.sub(r"\d{1,3}(?:,\d{3})+", _bump, e["reference_answer"], count=1)
    _write_golden(room, entries)
    assert len({p.split(":")[3] for p in _check(room, "check_reference_answers", base_text)}) >= 4


def test_missing_evidence_page_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    e = next(
        e
        for e in entries
        if e["category"] == "numeric_lookup"
        and len(e["evidence_paths"][0][0]) >= 3
        and any(
            a["quote"][0].isupper() and a["quote"].split()[-1][0].isdigit()
            for a in e["evidence_paths"][0][0]
        )
    )
    piece = e["evidence_paths"][0][0]
    dropped = next(a for a in piece if a["quote"].split()[-1][0].isdigit())
    keep = [a for a in piece if (a["doc"], a["page"]) != (dropped["doc"], dropped["page"])]
    e["evidence_paths"][0][0] = keep
    e["key_facts"] = []
    _write_golden(room, entries)
    assert any(
        e["id"] in p and "not in the gold" in p
        for p in _check(room, "check_completeness", base_text)
    )


# --- defect classes found while building: each test fails on the generator that had the defect ---


def test_noop_restatement_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounding once made a restated diluted EPS equal the original (0.15 -> 0.15)."""
    real = ledger_mod._plant_restatements

    def plant_noop(ledger: ledger_mod.Ledger, rng: Any) -> None:
        real(ledger, rng)
        r = next(r for r in ledger.restatements.values() if not r.quiet)
        f = ledger.facts[fact_id(ledger.facts[r.fact_id].cid, "eps", ledger.facts[r.fact_id].fy)]
        ledger.restatements[f.fact_id] = Restatement(
            f.fact_id, f.value, f.value, r.effective, r.via, False
        )

    monkeypatch.setattr(ledger_mod, "_plant_restatements", plant_noop)
    generate_room(tmp_path / "room", seed=11, companies=2, years=2)
    probs = _check(tmp_path / "room", "check_restatements", guards.RoomText(tmp_path / "room"))
    assert any("does not change" in p for p in probs)


def test_guard_scan_ignores_equal_numbers_of_other_periods() -> None:
    """The completeness scan once read another quarter's equal provision as the fact."""
    row = {"fiscal_year": 2024, "fiscal_quarter": 1, "form": "10-Q"}
    assert guards._may_show(row, 2024, 1, "provision")
    assert not guards._may_show(row, 2024, 3, "provision")
    assert not guards._may_show(row, 2022, 1, "provision")
    assert guards._may_show(row, 2023, None, "deposits")  # prior year-end balance column
    assert not guards._may_show(row, 2023, None, "provision")


def test_long_row_labels_are_refused_not_truncated() -> None:
    """A truncated label would put a quote on the page that the page does not contain."""
    with pytest.raises(ValueError):
        row_text(Row("Customers with annual recurring revenue over $100,000", ["1"]))


def test_every_anchor_resolves_onto_windowed_chunks(
    small_room: Path, base_text: guards.RoomText
) -> None:
    """Quotes are short enough to sit inside one chunk of a plain token-window chunker."""
    from assay.corpus import Chunk, ChunkTable
    from assay.dataset import Anchor
    from assay.gold.align import resolve_anchor

    chunks: list[Chunk] = []
    for doc in sorted(base_text.docs):
        for pno, page in enumerate(base_text.pages(doc), start=1):
            words = page.split()
            for k, start in enumerate(range(0, max(len(words), 1), 90)):  # 120 words, 30 overlap
                text = " ".join(words[start : start + 120])
                chunks.append(Chunk(f"{doc}#p{pno}c{k}", doc, text, [pno]))
    table = ChunkTable(chunks)
    misses = []
    for e in _golden(small_room):
        for path in e.get("evidence_paths", []):
            for piece in path:
                for alt in piece:
                    if not resolve_anchor(Anchor.model_validate(alt), table).ok:
                        misses.append((e["id"], alt["doc"], alt["quote"]))
    assert misses == []


def test_golden_validates_with_the_dataset_loader(small_room: Path) -> None:
    from assay.gold import validate_file

    assert validate_file(small_room / "golden.jsonl") == []


def test_stale_latest_quarter_is_caught(
    small_room: Path, tmp_path: Path, base_text: guards.RoomText
) -> None:
    """An as_of a quarter later makes the entry's quarter no longer the latest."""
    room = _copy(small_room, tmp_path)
    entries = _golden(room)
    e = next(e for e in entries if e["metadata"]["template"].startswith("temporal:latest_quarter"))
    y, m, d = (int(x) for x in e["as_of"].split("-"))
    e["as_of"] = f"{y + (m + 3 > 12)}-{(m + 2) % 12 + 1:02d}-{min(d, 28):02d}"
    _write_golden(room, entries)
    assert any(
        e["id"] in p and "latest quarter" in p for p in _check(room, "check_temporal", base_text)
    )


def test_room_from_another_seed_or_version_is_reported_not_crashed(
    small_room: Path, tmp_path: Path
) -> None:
    room = _copy(small_room, tmp_path)
    manifest = json.loads((room / "manifest.json").read_text())
    manifest["seed"] += 1
    (room / "manifest.json").write_text(json.dumps(manifest))
    probs = guards.check_room(room).problems
    assert len(probs) == 1 and "does not match the ledger" in probs[0].message


@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), companies=st.integers(2, 5), years=st.integers(1, 3))
def test_any_seed_and_scale_passes_the_layout_guards(seed: int, companies: int, years: int) -> None:
    from assay.synth.generate import build_room

    room = build_room(seed=seed, companies=companies, years=years)
    assert guards.check_built(room.ledger, room.docs, room.golden) == []
