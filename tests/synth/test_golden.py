"""The question families are a table: a row added to it is asked, and the default room is pinned."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.synth import guards
from assay.synth.facts_ledger import Company, fact_id
from assay.synth.filings import fmt_cell
from assay.synth.generate import Room, build_room, generate_room
from assay.synth.golden import FAMILIES, build_golden
from assay.synth.questions import Family, GoldWriter, Question, Year, companies, years

# sha256 of golden.jsonl and facts.jsonl of the default room (seed 7, 6 companies x 3 years) as
# the generator wrote them (2.1: access labels, principals, policy and injection entries appended
# after the existing ones, whose ids and content are unchanged; 2.2: clarify_with and false_premise
# on the clarify and correct-premise entries). If you change the room on purpose,
# bump GENERATOR_VERSION and update these. Every entry states `label_tier: gold` (gold by
# construction); with that key removed from each line the file hashes to the 2.2 pin
# fd7d8a668eae8f5f00e0b981aca1898a66d3aacbd611954ef958132da5cb4e74.
GOLDEN_SHA256 = "0026b78b5aa82d3ff2306022e863d451b919ea8ff4c9c3baa2eea41cfb8d5d3e"
FACTS_SHA256 = "dbd11326473aa8fa2137c6e133d5ffd716c415c997052c1589e5392a1e7809d1"


def _employees(g: GoldWriter, y: Year) -> Iterator[Question]:
    """A toy answer function: headcount at a fiscal year end, stated once in each 10-K."""
    c, fy = y
    fid = fact_id(c.cid, "employees", fy)
    anchors = g.anchors(fid)
    if anchors:
        value = fmt_cell(c, "employees", g.ledger.current_value(fid))
        yield Question(c, [fid], [[anchors]], vars={"fy": fy, "value": value})


EMPLOYEES: Family[Any] = Family(
    "toy:employees",
    "numeric_lookup",
    each=years,
    lookup=_employees,
    phrasings=("{c.ticker} headcount FYE{yy}",),  # one phrasing, no placeholder drawn: no draw
    answer="{c.name} had {value} full-time employees at the end of {fiscal}.",
    key_facts=("{value} full-time employees",),
)


def _ask_everyone(g: GoldWriter, c: Company) -> Iterator[Question]:
    fid = f"{c.cid}:text:risk"
    yield Question(c, [fid], [[g.anchors(fid)]])


RISK_FOR_ALL: Family[Any] = Family(
    "toy:risk_again",
    "narrative",
    each=companies,
    lookup=_ask_everyone,
    scope="room",
    phrasings=("{who} risks", "risks of {who}"),  # drawn: the rng moves on
    answer="{c.name} says a risk specific to its business is that {c.risk}.",
    key_facts=("{c.risk}",),
)


@pytest.fixture(scope="module")
def room() -> Room:
    return build_room(seed=11, companies=4, years=2)


def _without_ids(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "id"} for e in entries]


def test_a_company_family_row_is_asked_for_every_company_and_year(room: Room) -> None:
    base = build_golden(room.ledger, room.docs, seed=11)
    assert base == room.golden
    grown = build_golden(room.ledger, room.docs, seed=11, families=(*FAMILIES, EMPLOYEES))
    toy = [e for e in grown if e["metadata"]["template"] == "toy:employees"]
    n_companies, n_years = (
        len(room.ledger.companies),
        room.ledger.last_fy - room.ledger.first_fy + 1,
    )
    assert len(toy) == n_companies * n_years == len(grown) - len(base)
    # the toy row is asked after each company's other families and draws nothing from the
    # generator, so every other entry is as it was but for its id
    others = [e for e in grown if e["metadata"]["template"] != "toy:employees"]
    assert _without_ids(others) == _without_ids(base)
    e = toy[0]
    c = room.ledger.companies[0]
    assert e["metadata"]["company"] == c.cid and e["category"] == "numeric_lookup"
    assert e["query"] == f"{c.ticker} headcount FYE{room.ledger.first_fy % 100}"
    assert e["reference_answer"].startswith(f"{c.name} had ")
    assert e["key_facts"][0]["supporting"] == e["evidence_paths"][0][0]
    # the toy gold is real gold: its quotes are on their pages and its answers match the ledger
    assert guards.check_built(room.ledger, room.docs, grown) == []


def test_a_room_family_appended_leaves_every_earlier_entry_as_it_was(room: Room) -> None:
    grown = build_golden(room.ledger, room.docs, seed=11, families=(*FAMILIES, RISK_FOR_ALL))
    assert grown[: len(room.golden)] == room.golden
    toy = grown[len(room.golden) :]
    assert [e["metadata"]["company"] for e in toy] == [c.cid for c in room.ledger.companies]
    assert [e["id"] for e in toy] == [
        f"syn-{i:04d}" for i in range(len(room.golden) + 1, len(grown) + 1)
    ]
    assert guards.check_built(room.ledger, room.docs, grown) == []


def test_rows_sharing_a_loop_are_asked_item_by_item(room: Room) -> None:
    """A year's latest-quarter question comes before that year's latest-year-end question."""
    c = room.ledger.companies[0]
    temporal = [
        (e["metadata"]["fact_ids"][0], e["metadata"]["template"].split(":")[1])
        for e in room.golden
        if e["category"] == "temporal" and e["metadata"]["company"] == c.cid
    ]
    kinds = [k for _, k in temporal]
    assert kinds == ["latest_quarter", "latest_fye"] * (len(kinds) // 2)
    years_asked = [fid.split(":")[2][:6] for fid, _ in temporal]
    assert years_asked == sorted(years_asked)


def test_template_mistakes_are_named() -> None:
    room = build_room(seed=3, companies=2, years=1)
    drawn_in_answer = Family(
        "toy:bad",
        "narrative",
        each=companies,
        lookup=_ask_everyone,
        phrasings=("{who} risks",),
        answer="{who} says so.",
    )
    with pytest.raises(KeyError, match="only phrasings may use it"):
        build_golden(room.ledger, room.docs, seed=3, families=(drawn_in_answer,))
    unknown = Family(
        "toy:bad",
        "narrative",
        each=companies,
        lookup=_ask_everyone,
        phrasings=("{nope} risks",),
        answer="x",
    )
    with pytest.raises(KeyError, match="unknown placeholder"):
        build_golden(room.ledger, room.docs, seed=3, families=(unknown,))
    kinds_on_room = Family(
        "toy:bad",
        "narrative",
        each=companies,
        lookup=_ask_everyone,
        scope="room",
        kinds=("bank",),
        phrasings=("risks",),
        answer="x",
    )
    with pytest.raises(ValueError, match="company families only"):
        build_golden(room.ledger, room.docs, seed=3, families=(kinds_on_room,))


def test_an_unanswerable_family_carrying_evidence_is_refused() -> None:
    room = build_room(seed=3, companies=2, years=1)
    unanswerable_with_evidence = Family(
        "toy:unanswerable_risk",
        "unanswerable",
        each=companies,
        lookup=_ask_everyone,  # yields the risk paragraph as an evidence path
        answerable=False,
        behavior="abstain",
        phrasings=("{who} risks next decade",),
        answer="x",
    )
    with pytest.raises(ValueError, match="toy:unanswerable_risk: an unanswerable family"):
        build_golden(room.ledger, room.docs, seed=3, families=(unanswerable_with_evidence,))
    for e in room.golden:  # the table's own unanswerable families carry none
        if e.get("answerable") is False:
            assert not e.get("evidence_paths"), e["id"]


def test_every_family_of_the_table_is_asked_in_the_default_room() -> None:
    room = build_room()
    asked = Counter(e["metadata"]["template"] for e in room.golden)
    for f in FAMILIES:
        pattern = re.compile(re.sub(r"\\{[a-z_]+\\}", "[A-Za-z_0-9]+", re.escape(f.template)))
        assert any(pattern.fullmatch(t) for t in asked), f.template


def test_default_room_gold_is_pinned(tmp_path: Path) -> None:
    """The default room's golden set and facts, byte for byte (the PDFs do not change them)."""
    generate_room(tmp_path / "room", seed=7, formats=("html",))
    golden = hashlib.sha256((tmp_path / "room" / "golden.jsonl").read_bytes()).hexdigest()
    facts = hashlib.sha256((tmp_path / "room" / "facts.jsonl").read_bytes()).hexdigest()
    assert (golden, facts) == (GOLDEN_SHA256, FACTS_SHA256)
