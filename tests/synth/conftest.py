from __future__ import annotations

from pathlib import Path

import pytest

from assay.synth.generate import generate_room
from assay.synth.guards import RoomText

SMALL = {"seed": 11, "companies": 4, "years": 2, "scans": 1}


@pytest.fixture(scope="session")
def small_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A room with both restatement kinds, both sectors and a shared alias (4 companies x 2 years)."""
    out = tmp_path_factory.mktemp("synth") / "room"
    generate_room(out, **SMALL)
    return out


@pytest.fixture(scope="session")
def small_room_text(small_room: Path) -> RoomText:
    """The small room's pages, read once (PDF and HTML) and shared by the guard tests."""
    return RoomText(small_room)
