"""Chunk-id respellings one ring further out (issue 40): combining marks on a letter or after the
id, full stops after it (ASCII, full-width, ideographic, an ellipsis), control characters and a
percent-escaped full stop still name the chunk, and a restricted id so respelled is a leak.
Before, each passed the leak check as an unknown id."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.test_leak_spellings import REFUSE, _checks, _run, room  # noqa: F401

from assay.corpus import Chunk, ChunkTable, normal_chunk_id

CID = "acme-10k/3/2~1a2b3c4d"
RESPELLED = [
    "acme-10k/3/2~1a\u03012b3c4d",  # a combining acute on a letter (composes to "á")
    "acme-10k/3/2~1a2b3c4d\u0301",  # a combining mark after the id
    "acme-10k/3/2~1a2b3c4d\u20dd",  # an enclosing mark
    "acme-10k/3/2~1a2b3c4d.",  # a full stop after it
    "acme-10k/3/2~1a2b3c4d...",
    "acme-10k/3/2~1a2b3c4d\uff0e",  # full-width full stop
    "acme-10k/3/2~1a2b3c4d\u3002",  # ideographic full stop
    "ACME-10K/3/2~1A2B3C4D\u2026",  # an ellipsis
    "acme-10k/3/2~1a2b3c4d%2E",
    "acme-10k/3/2~1a2b3c4d\x00",  # a control character
    "\x1bacme-10k/3/2~1a2b3c4d",
    "ａｃｍｅ\u2010１０ｋ/3/2~1a2b3c4d\u00a0.",  # full-width, a hyphen, NBSP and a full stop
]


@pytest.mark.parametrize("spelling", RESPELLED)
def test_a_respelling_names_the_chunk(spelling: str) -> None:
    assert normal_chunk_id(spelling) == normal_chunk_id(CID)
    table = ChunkTable([Chunk(CID, "acme-10k", "text", [3], "prose", {})])
    assert [c.chunk_id for c in table.matching(spelling)] == [CID]


def test_other_ids_stay_apart() -> None:
    for other in ("acme-10k/3/3~1a2b3c4d", "acme-10k/3/2~1a2b3c4e", "acme10k/3/2~1a2b3c4d"):
        assert normal_chunk_id(other) != normal_chunk_id(CID), other
    assert normal_chunk_id("a.b/1") != normal_chunk_id("ab/1")  # a full stop inside stays


@pytest.mark.parametrize(
    "spelling", ["deal/1/0.", "deal/1/0\u0301", "DEAL/1/0\u3002", "de\u0301al/1/0"]
)
def test_a_respelled_restricted_id_is_a_leak(room: Path, spelling: str) -> None:  # noqa: F811
    got = _checks(room, _run(room, "respelled", **{"out-1": (["pub/1/0", spelling], REFUSE, [])}))
    assert got["out-1"]["leak"] == 1
    assert got["out-1"]["overall_pass"] is False
