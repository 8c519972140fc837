"""The next ring of the leak check's id spellings (issue 40): an id respelled with an invisible
character that is not a format character (a variation selector, the combining grapheme joiner,
a Hangul filler), escaped twice, with a space inside, Windows separators, another dash or a
tilde look-alike still names the restricted chunk: a leak. Before, each of these passed the
check as an unknown id."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judge.test_leak_spellings import REFUSE, _checks, _run, room  # noqa: F401

from assay.corpus import Chunk, ChunkTable, normal_chunk_id

CID = "acme-10k/3/2~1a2b3c4d"
RESPELLED = [
    "acme-10k/3/2\ufe0f~1a2b3c4d",  # variation selector 16
    "acme-10k/3/2~1a2b\u034f3c4d",  # combining grapheme joiner
    "acme-10k/3/2~1a2b3c4d\u3164",  # Hangul filler
    "acme-10k/3/2~1a2b3c4d\U000e0101",  # variation selector 18
    "acme%252D10k%252F3%252F2~1a2b3c4d",  # escaped twice
    "acme-10k/3/2 ~1a2b3c4d",  # a space inside
    "acme-10k/3/\u00a02~1a2b3c4d",  # a no-break space inside
    "acme-10k\\3\\2~1a2b3c4d",  # Windows separators
    "acme\u201010k/3/2~1a2b3c4d",  # hyphen
    "acme\u201310k/3/2~1a2b3c4d",  # en dash
    "acme\u221210k/3/2~1a2b3c4d",  # minus sign
    "acme-10k/3/2\u301c1a2b3c4d",  # wave dash
    "ACME\u201010K\\3\\2\u301c1A2B3C4D\ufe0f",  # all at once
]


@pytest.mark.parametrize("spelling", RESPELLED)
def test_a_respelling_names_the_chunk(spelling: str) -> None:
    assert normal_chunk_id(spelling) == normal_chunk_id(CID)
    table = ChunkTable([Chunk(CID, "acme-10k", "text", [3], "prose", {})])
    assert [c.chunk_id for c in table.matching(spelling)] == [CID]


def test_other_ids_stay_apart() -> None:
    for other in ("acme-10k/3/3~1a2b3c4d", "acme-10k/3/2~1a2b3c4e", "acme10k/3/2~1a2b3c4d"):
        assert normal_chunk_id(other) != normal_chunk_id(CID), other


@pytest.mark.parametrize(
    "spelling",
    [
        "deal/1/0\ufe0f",
        "deal%252F1%252F0",
        "deal\\1\\0",
        "deal/ 1/0",
        "DEAL\\1\\0\u3164",
    ],
)
def test_a_respelled_restricted_id_is_a_leak(room: Path, spelling: str) -> None:  # noqa: F811
    got = _checks(room, _run(room, "respelled", **{"out-1": (["pub/1/0", spelling], REFUSE, [])}))
    assert got["out-1"]["leak"] == 1
    assert got["out-1"]["overall_pass"] is False
