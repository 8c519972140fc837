"""The synthetic filings room: a fictional filings corpus whose gold is recorded as it is generated.

`generate_room(out_dir, seed=7, companies=6, years=3)` writes documents (HTML + PDF),
documents.jsonl, facts.jsonl, XBRL-shaped company facts, golden.jsonl and a manifest;
`check_room(out_dir)` reads the room back as text and checks its gold (a `RoomCheck`). The question
families of the golden set are a table, `assay.synth.golden.FAMILIES`; the room's conversations
(conversations.jsonl: follow-ups that need an earlier turn) are `build_conversations`. See
docs/synth.md.
"""

from assay.synth.conversations import build_conversations, turn_entries
from assay.synth.generate import GENERATOR_VERSION, Room, RoomSummary, build_room, generate_room
from assay.synth.guards import RoomCheck, check_room

__all__ = [
    "GENERATOR_VERSION",
    "Room",
    "RoomCheck",
    "RoomSummary",
    "build_conversations",
    "build_room",
    "check_room",
    "generate_room",
    "turn_entries",
]
