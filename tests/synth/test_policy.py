"""The room's boundaries: labelled documents, questions per role with gold by construction, the
guard that no principal's gold lies behind a label it may not pass, and the manifest."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from assay.dataset import load_dataset
from assay.synth.guards import RoomText, check_policy


def _golden(room: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in (room / "golden.jsonl").read_text().splitlines()]


def test_the_room_labels_its_restricted_documents_and_says_so(small_room: Path) -> None:
    docs = [json.loads(x) for x in (small_room / "documents.jsonl").read_text().splitlines()]
    kinds = {d["metadata"]["doc_type"]: d.get("access") for d in docs}
    assert kinds["board_minutes"]["groups"][0].startswith("board:")
    assert kinds["management_accounts"]["groups"][0].startswith("deal:")
    assert kinds["draft_8k"]["clearance"] == "insider" and kinds["draft_8k"]["public_from"]
    assert kinds["memo"] is None  # the injection memo is public
    assert "10-K" not in {d["form"] for d in docs if d.get("access")}
    manifest = json.loads((small_room / "manifest.json").read_text())
    assert manifest["policy"]["access_labels"] is True
    assert manifest["policy"]["restricted_documents"] == sum(1 for d in docs if d.get("access"))
    assert {"outsider", "employee", "deal_team", "insider"} <= set(manifest["policy"]["principals"])


def test_the_same_question_by_insider_and_outsider_expects_different_behaviour(
    small_room: Path,
) -> None:
    ds = load_dataset(small_room / "golden.jsonl")
    by_question: dict[tuple[str, str | None], dict[str, str]] = defaultdict(dict)
    for e in ds.entries:
        if e.category == "policy":
            assert e.principal is not None
            key = (e.query, None if e.as_of is None else e.as_of.isoformat())
            by_question[key][e.principal.role] = e.behavior().value
    pairs = [b for b in by_question.values() if "outsider" in b and len(b) > 1]
    assert pairs
    for b in pairs:
        insider = next(v for r, v in b.items() if r in ("deal_team", "insider", "hr"))
        assert (insider, b["outsider"]) == ("answer", "refuse")
        assert b.get("employee", "escalate") == "escalate"
    assert any(e.category == "injection" for e in ds.entries)


def test_the_guard_catches_an_outsider_whose_gold_is_restricted(small_room: Path) -> None:
    golden = _golden(small_room)
    docs = RoomText(small_room).docs
    assert check_policy(small_room, golden, docs) == []
    insider = next(
        e for e in golden if e["category"] == "policy" and e.get("evidence_paths")
        and e["principal"]["role"] == "deal_team"
    )  # fmt: skip
    leaked = dict(insider, id="bad", principal={"role": "outsider", "clearance": "public"})
    problems = check_policy(small_room, [*golden, leaked], docs)
    assert len(problems) == 2  # its gold, and its expected behaviour
    assert "bad: gold points at" in problems[0].message
    assert "which the outsider may not see" in problems[0].message
    assert "expects answer" in problems[1].message
