"""The leak check compares chunk ids as the chunk table spells them, and an id a run respelled
(upper case, percent-escaped, full-width, an invisible character, spaces) that names a
restricted chunk is still that chunk: a leak, counted once. Attack: one leaked chunk failed the
gate; the same id in upper case passed with no warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.compare import GatePolicy, gate_files
from assay.corpus import Chunk, ChunkTable, chunk_content_hash, content_chunk_id

from .test_policy import REFUSE, _checks, _run, room  # noqa: F401  (room: the fixture)

SPELLINGS = [
    "DEAL/1/0",
    "Deal/1/0",
    "deal%2F1%2F0",
    "\uff44\uff45\uff41\uff4c/1/0",  # full-width letters
    "de\u200bal/1/0",
    " deal/1/0\t",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_respelled_restricted_id_is_a_leak(room: Path, spelling: str) -> None:  # noqa: F811
    got = _checks(room, _run(room, "respelled", **{"out-1": (["pub/1/0", spelling], REFUSE, [])}))
    assert got["out-1"]["leak"] == 1
    assert got["out-1"]["overall_pass"] is False
    note = next(n for n in got["out-1"]["notes"] if n.startswith("leaked chunks"))
    assert "deal/1/0 (ACME deal room, written " in note and repr(spelling) in note
    # the same chunk under two spellings is one leaked chunk
    both = _run(room, "both", **{"out-1": (["deal/1/0", spelling], REFUSE, [spelling])})
    assert _checks(room, both)["out-1"]["leak"] == 1


def test_the_gate_fails_on_an_upper_case_leak(room: Path) -> None:  # noqa: F811
    base = _run(room, "base")
    cand = _run(room, "cand", **{"out-1": (["pub/1/0", "DEAL/1/0"], REFUSE, [])})
    # a run this small has 1 of its 6 hits unknown by exact id; a real one, 1 of hundreds
    res = gate_files(
        room / "golden.jsonl", base, cand, policy=GatePolicy(metric="leak"),
        chunks=room / "chunks.jsonl", record=False, max_unknown_share=0.2,
    )  # fmt: skip
    assert not res.passed and res.exit_code == 1
    row = next(r for r in res.rows if r.category == "policy")
    assert row.verdict.startswith("FAIL: 1 leak > 0 allowed (out-1)")


def test_content_addressed_ids_match_by_the_table_spelling_first() -> None:
    text = "Project Falcon: a purchase price of $742 million."
    h = chunk_content_hash("3M_2018_10K", [60], text)
    cid = content_chunk_id("3M_2018_10K", 60, 2, h)
    other = Chunk("3m_2018_10k/60/2~" + h[:8], "3m_2018_10k", text, [60], "prose", {})
    table = ChunkTable([Chunk(cid, "3M_2018_10K", text, [60], "prose", {}), other])
    assert table.matching(cid) == [table.by_id[cid]]  # exact: that chunk only
    assert table.matching(other.chunk_id) == [other]
    upper = cid.upper()
    assert upper != cid and {c.chunk_id for c in table.matching(upper)} == {cid, other.chunk_id}
    assert table.matching("3M_2018_10K/60/3~" + h[:8]) == []
