"""The room's conversations (issue 41): enough of them, each follow-up needing an earlier turn,
gold that the room's text and ledger hold, several wordings, the same conversations from a seed."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assay.dataset import Entry
from assay.synth.conversations import build_conversations, turn_entries
from assay.synth.facts_ledger import fact_id
from assay.synth.filings import fmt_cell
from assay.synth.generate import Room, build_room, generate_room
from assay.synth.guards import RoomText, check_built, check_conversations, read_room
from assay.systems.filings import parse_periods


@pytest.fixture(scope="module")
def room() -> Room:
    return build_room(seed=7)


def _names(room: Room) -> dict[str, list[str]]:
    """Every way a company of the room is written: name, short name, ticker, aliases."""
    return {
        c.cid: [c.name, c.name.replace(", Inc.", ""), c.ticker, *c.aliases]
        for c in room.ledger.companies
    }


def _named(query: str, spellings: list[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query) for s in spellings)


def test_the_room_has_forty_conversations_of_two_or_three_turns(room: Room) -> None:
    convs = room.conversations
    assert len(convs) == 40
    assert len({c["id"] for c in convs}) == 40
    assert all(2 <= len(c["turns"]) <= 3 for c in convs)
    assert all("query" not in c and c["criteria"] for c in convs)
    cats = Counter(c["category"] for c in convs)
    assert set(cats) == {"carried_context", "topic_switch", "ambiguous_followup"}
    kinds = Counter(c["metadata"]["kind"] for c in convs)
    assert set(kinds) == {
        "prior_year", "other_measure", "change", "prior_quarter", "switch", "clarify_alias",
        "clarify_year", "clarify_company",
    }  # fmt: skip
    assert sum(len(c["turns"]) == 3 for c in convs) >= 10


def test_every_follow_up_needs_an_earlier_turn(room: Room) -> None:
    """A follow-up lists the earlier turns it needs, and alone it lacks what they give: it names
    no fiscal year, and no company unless it switches to one (then not the earlier one)."""
    names = _names(room)
    follow_ups = 0
    for conv in room.conversations:
        first = conv["turns"][0]
        assert "depends_on" not in first and first["expected_behavior"] == "answer"
        assert any(p.fiscal_year is not None for p in parse_periods(first["query"]))
        opener = conv["metadata"]["turns"][0]["company"]
        assert all(_named(first["query"], names[cid]) for cid in opener), first["query"]
        for n, turn in enumerate(conv["turns"][1:], start=2):
            follow_ups += 1
            deps = turn["depends_on"]
            assert deps and all(1 <= d < n for d in deps), (conv["id"], deps)
            assert not [p for p in parse_periods(turn["query"]) if p.fiscal_year], turn["query"]
            kind = conv["metadata"]["turns"][n - 1]["follow_up"]
            named = [cid for cid, sp in names.items() if _named(turn["query"], sp)]
            if kind == "switch_company":
                assert named and not set(named) & set(opener), turn["query"]
            elif kind == "ambiguous_company" and conv["metadata"]["kind"] == "clarify_alias":
                shared = set(conv["metadata"]["turns"][n - 1]["company"])
                assert len(shared) == 2 and set(named) <= shared, turn["query"]
            else:
                assert named == [], turn["query"]
    assert follow_ups >= 50


def test_a_switch_moves_the_gold_to_the_new_company(room: Room) -> None:
    switches = [c for c in room.conversations if c["metadata"]["kind"] == "switch"]
    assert len(switches) >= 4
    for conv in switches:
        first, new = conv["metadata"]["companies"]
        t1, t2, t3 = conv["metadata"]["turns"]
        assert t1["company"] == [first] and t2["company"] == t3["company"] == [new]
        assert all(f.startswith(f"{new}:") for f in t2["fact_ids"] + t3["fact_ids"])
        f2 = room.ledger.facts[t2["fact_ids"][0]]
        f3 = room.ledger.facts[t3["fact_ids"][0]]
        assert (f3.concept, f3.fy) == (f2.concept, f2.fy - 1)  # "the year before": of the new one


def test_follow_up_gold_is_the_period_and_measure_the_wording_asks(room: Room) -> None:
    """ "the year before" is fy - 1 of the turn before, "the quarter before" q - 1, "what about
    X" the same period of another measure, a change both years."""
    facts = room.ledger.facts
    seen = Counter()
    for conv in room.conversations:
        meta = conv["metadata"]["turns"]
        for n in range(1, len(meta)):
            kind, prev = meta[n]["follow_up"], [facts[f] for f in meta[n - 1]["fact_ids"]]
            mine = [facts[f] for f in meta[n]["fact_ids"]]
            seen[kind] += 1
            if kind == "prior_year":
                assert (mine[0].fy, mine[0].fq) == (prev[0].fy - 1, prev[0].fq)
                assert mine[0].concept == prev[0].concept
            elif kind == "other_measure":
                assert (mine[0].fy, mine[0].cid) == (prev[0].fy, prev[0].cid)
                assert mine[0].concept != prev[0].concept
            elif kind == "prior_quarter":
                assert (mine[0].fy, mine[0].fq) == (prev[0].fy, prev[0].fq - 1)  # type: ignore[operator]
            elif kind == "same_quarter_prior_year":
                assert (mine[0].fy, mine[0].fq) == (prev[0].fy - 1, prev[0].fq)
            elif kind == "change":
                assert sorted(f.fy for f in mine) == [prev[0].fy - 1, prev[0].fy]
    assert {"prior_year", "other_measure", "change", "switch_company"} <= set(seen)
    assert seen["prior_quarter"] + seen["same_quarter_prior_year"] == 6


def test_ambiguous_follow_ups_expect_a_clarifying_question_with_every_reading(room: Room) -> None:
    clar = [
        (c, t)
        for c in room.conversations
        for t in c["turns"]
        if t["expected_behavior"] == "clarify"
    ]
    assert len(clar) == 6
    for conv, turn in clar:
        assert conv["category"] == "ambiguous_followup" and conv["criteria"] == ["clarified"]
        assert len(turn["clarify_with"]) == 2
        assert len(turn["evidence_paths"]) == 2  # one path per reading
        for reading in turn["clarify_with"]:
            assert reading in turn["reference_answer"]


def test_turns_are_valid_entries_and_their_gold_holds_against_the_room(room: Room) -> None:
    """Each turn, expanded as the loader will, is a valid entry; the room's guards (anchor quote
    on its page, reference answer stating the ledger's figure) pass on every turn."""
    turns = [e for c in room.conversations for e in turn_entries(c)]
    assert len(turns) == sum(len(c["turns"]) for c in room.conversations)
    for e in turns:
        entry = Entry.model_validate(e)
        assert entry.label_tier == "gold"
        if entry.expected_behavior != "clarify":
            assert entry.evidence_paths and entry.key_facts and entry.reference_answer
    assert check_built(room.ledger, room.docs, turns) == []
    # and the reference answer states each figure the turn asks about (the ledger's value)
    for e in turns:
        for fid in e["metadata"]["fact_ids"]:
            f = room.ledger.facts[fid]
            c = room.ledger.company(f.cid)
            assert fmt_cell(c, f.concept, room.ledger.current_value(fid)) in e["reference_answer"]
            assert not room.ledger.restatements.get(fid)


def test_a_broken_gold_is_caught(room: Room) -> None:
    """The guard the previous test relies on fails on a quote moved to the wrong page and on a
    reference answer with another figure."""
    conv = json.loads(json.dumps(room.conversations[0]))
    turn = conv["turns"][1]
    anchor = turn["evidence_paths"][0][0][0]
    anchor["page"] = anchor["page"] + 1 if anchor["page"] == 1 else 1
    fid = conv["metadata"]["turns"][1]["fact_ids"][0]
    f = room.ledger.facts[fid]
    c = room.ledger.company(f.cid)
    right = fmt_cell(c, f.concept, room.ledger.current_value(fid))
    turn["reference_answer"] = turn["reference_answer"].replace(right, "1")
    problems = check_built(room.ledger, room.docs, turn_entries(conv))
    fields = Counter(p.field for p in problems)
    assert fields["evidence_paths"] >= 1 and fields["reference_answer"] >= 1


def test_wordings_vary(room: Room) -> None:
    by_kind: dict[str, set[str]] = {}
    for conv in room.conversations:
        for meta, turn in zip(conv["metadata"]["turns"], conv["turns"], strict=True):
            by_kind.setdefault(meta["follow_up"], set()).add(turn["query"])
    assert len(by_kind["prior_year"]) >= 4
    assert len(by_kind["change"]) >= 3
    openers = {re.sub(r"\S*\d\S*", "#", c["turns"][0]["query"]) for c in room.conversations}
    assert len(openers) >= 20


def test_the_same_seed_gives_the_same_conversations(room: Room) -> None:
    again = build_conversations(room.ledger, room.docs, seed=7)
    assert again == room.conversations
    other = build_conversations(room.ledger, room.docs, seed=8)
    assert other != room.conversations and len(other) == 40
    twelve = build_conversations(room.ledger, room.docs, seed=7, n=12)
    assert len(twelve) == 12 and twelve == build_conversations(room.ledger, room.docs, n=12)


def test_n_and_small_rooms() -> None:
    small = build_room(seed=4, companies=2, years=2)
    assert 30 <= len(small.conversations) <= 40
    assert build_room(seed=9, companies=2, years=1).conversations == []
    with pytest.raises(ValueError, match="at least 1"):
        build_conversations(small.ledger, small.docs, n=0)
    assert len(build_conversations(small.ledger, small.docs, n=5)) == 5


def test_generate_room_writes_and_checks_the_conversations(
    small_room: Path, small_room_text: RoomText
) -> None:
    rows = [json.loads(x) for x in (small_room / "conversations.jsonl").read_text().splitlines()]
    manifest = json.loads((small_room / "manifest.json").read_text())
    assert len(rows) == manifest["counts"]["conversations"] == 40
    assert "conversations.jsonl" in manifest["files"]
    assert {r["metadata"]["room"] for r in rows} == {manifest["room"]}
    # check_room runs this guard (tests/synth/test_guards.py checks the room passes them all)
    _, ledger, _, _ = read_room(small_room)
    assert check_conversations(small_room, ledger, small_room_text) == []


def test_check_room_names_the_conversation_line_of_a_bad_turn(
    small_room: Path, small_room_text: RoomText, tmp_path: Path
) -> None:
    room = tmp_path / "room"
    shutil.copytree(small_room, room)
    path = room / "conversations.jsonl"
    rows: list[dict[str, Any]] = [json.loads(x) for x in path.read_text().splitlines()]
    rows[4]["turns"][1]["evidence_paths"][0][0][0]["quote"] = "no such words on any page"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, ledger, _, _ = read_room(room)
    bad = check_conversations(room, ledger, RoomText(room).share(small_room_text))
    # the quote is missing from the page in each rendering (HTML and PDF)
    assert bad and {(p.file, p.line, p.field) for p in bad} == {(str(path), 5, "evidence_paths")}
    assert all("conv-005#2: quote 'no such words on any page'" in p.message for p in bad)


def test_fact_ids_name_ledger_facts(room: Room) -> None:
    for conv in room.conversations:
        for meta in conv["metadata"]["turns"]:
            for fid in meta["fact_ids"]:
                f = room.ledger.facts[fid]
                assert fid == fact_id(f.cid, f.concept, f.fy, f.fq)


def test_anchors_on_scanned_pages_carry_their_box(tmp_path: Path) -> None:
    """As the golden set's: a turn's anchor on a page rendered as a scan gets the box of its
    quote (the OCR text may misread it; `assay synth check` needs the box)."""
    generate_room(tmp_path / "r", seed=7, companies=2, years=2, formats=("pdf",), scans=2)
    scanned: dict[str, set[int]] = {}
    for line in (tmp_path / "r" / "documents.jsonl").read_text().splitlines():
        row = json.loads(line)
        for shot in (row.get("metadata") or {}).get("scan") or []:
            scanned.setdefault(row["doc_id"], set()).add(int(shot["page"]))
    on_scans = [
        a
        for line in (tmp_path / "r" / "conversations.jsonl").read_text().splitlines()
        for e in turn_entries(json.loads(line))
        for path in e["evidence_paths"]
        for piece in path
        for a in piece
        if a["page"] in scanned.get(a["doc"], set())
    ]
    assert on_scans and all(len(a["box"]) == 4 for a in on_scans)
