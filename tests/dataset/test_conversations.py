"""Conversation lines: expansion into turn entries, FILE:LINE errors, the writer's round trip."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from assay.dataset import (
    ConversationRef,
    by_conversation,
    has_conversations,
    history_of,
    load_dataset,
    write_dataset,
)
from assay.errors import DataError

CONV: dict[str, Any] = {
    "id": "conv-1",
    "category": "carried_context",
    "as_of": "2024-03-01",
    "label_tier": "gold",
    "turns": [
        {
            "query": "What was Averix's total revenue in fiscal 2023?",
            "evidence_paths": [[["c1"]]],
            "key_facts": [{"fact": "$4.2 billion"}],
            "reference_answer": "Averix's revenue was $4.2 billion in fiscal 2023.",
            "expected_behavior": "answer",
        },
        {
            "query": "And the year before?",
            "depends_on": [1],
            "evidence_paths": [[["c2"]]],
            "key_facts": [{"fact": "$3.9 billion"}],
            "reference_answer": "Averix's revenue was $3.9 billion in fiscal 2022.",
            "as_of": "2024-04-01",
        },
    ],
    "criteria": ["kept_context"],
    "metadata": {"company": "Averix"},
}
PLAIN = {"id": "q1", "query": "What is X?", "category": "lookup", "evidence_paths": [[["c9"]]]}


def _write(tmp_path: Path, *rows: Any) -> Path:
    p = tmp_path / "ds.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_a_conversation_line_expands_into_turn_entries(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path, PLAIN, CONV))
    assert [e.id for e in ds.entries] == ["q1", "conv-1#1", "conv-1#2"]
    t1, t2 = ds.entries[1:]
    assert t1.conversation is not None and t2.conversation is not None
    assert (t1.conversation.turn, t1.conversation.turns, t1.conversation.depends_on) == (1, 2, ())
    assert (t2.conversation.turn, t2.conversation.depends_on) == (2, (1,))
    assert t2.conversation.criteria == ("kept_context",)
    # conversation defaults reach every turn; a turn overrides them
    assert t1.category == t2.category == "carried_context"
    assert str(t1.as_of) == "2024-03-01" and str(t2.as_of) == "2024-04-01"
    assert t1.label_tier == "gold" and t2.metadata == {"company": "Averix"}
    assert t1.expected_behavior is not None and t2.expected_behavior is None
    assert ds.lines == {"q1": 1, "conv-1#1": 2, "conv-1#2": 2}
    assert has_conversations(ds.entries) and not has_conversations(ds.entries[:1])
    assert [e.id for e in by_conversation(ds.entries)["conv-1"]] == ["conv-1#1", "conv-1#2"]


def test_each_turns_place_is_what_validation_gives(tmp_path: Path) -> None:
    # the loader checks the place's fields itself and builds it without validating it again:
    # it must be the very object validation builds (types, fields set, equality, its dump)
    three = CONV | {
        "turns": [*CONV["turns"], {"query": "And in 2021?", "depends_on": [1, 2]}],
        "criteria": ["kept_context", "no_contradiction"],
    }
    ds = load_dataset(_write(tmp_path, three))
    for e in ds.entries:
        ref = e.conversation
        assert ref is not None
        valid = ConversationRef.model_validate(ref.model_dump())
        assert ref == valid and ref.model_dump() == valid.model_dump()
        assert ref.model_fields_set == valid.model_fields_set
        assert type(ref.depends_on) is tuple and type(ref.criteria) is tuple
        assert all(type(d) is int for d in ref.depends_on)
    assert [e.conversation.depends_on for e in ds.entries if e.conversation] == [(), (1,), (1, 2)]
    assert ds.entries[2].conversation is not None
    assert ds.entries[2].conversation.turns == 3
    assert ds.entries[2].conversation.criteria == ("kept_context", "no_contradiction")


def test_writing_groups_turns_back_and_is_a_fixed_point(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path, PLAIN, CONV))
    out1 = tmp_path / "a.jsonl"
    write_dataset(out1, ds.entries)
    lines = [json.loads(s) for s in out1.read_text().splitlines()]
    assert len(lines) == 2
    line = lines[1]
    assert line["id"] == "conv-1" and "query" not in line and len(line["turns"]) == 2
    assert line["category"] == "carried_context" and line["criteria"] == ["kept_context"]
    assert "as_of" not in line  # the turns differ: each keeps its own
    assert line["turns"][1]["depends_on"] == [1] and "depends_on" not in line["turns"][0]
    again = load_dataset(out1)
    assert [e.to_json_dict() for e in again.entries] == [e.to_json_dict() for e in ds.entries]
    out2 = tmp_path / "b.jsonl"
    write_dataset(out2, again.entries)
    assert out2.read_bytes() == out1.read_bytes()


def test_a_conversation_is_written_whole(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path, CONV))
    with pytest.raises(ValueError, match="conv-1"):
        write_dataset(tmp_path / "x.jsonl", ds.entries[1:])
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"turns": []}, "turns", "at least one turn"),
        ({"turns": None}, "turns", "at least one turn"),
        ({"query": "hi"}, "query", "no top-level query"),
        ({"turns": [{"key_facts": []}]}, "turn 1.query", "needs a query"),
        ({"turns": [{"query": "a"}, {"query": "  "}]}, "turn 2.query", "needs a query"),
        ({"turns": [{"query": "a", "depends_on": [2]}, {"query": "b"}]}, "turn 1.depends_on",
         "later turn"),
        ({"turns": [{"query": "a"}, {"query": "b", "depends_on": [2]}]}, "turn 2.depends_on",
         "itself"),
        ({"turns": [{"query": "a"}, {"query": "b", "depends_on": [0]}]}, "turn 2.depends_on",
         "earlier turns are 1..1"),
        ({"turns": [{"query": "a", "id": "x"}]}, "turn 1.id", "not a turn's field"),
        ({"turns": [{"query": "a", "answerable": "yes"}]}, "turn 1.answerable", ""),
        ({"as_of": "March"}, "as_of", "ISO date"),
        ({"criteria": "kept_context"}, "criteria", "list of check names"),
    ],
)  # fmt: skip
def test_bad_conversation_lines_name_file_line_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, words: str
) -> None:
    p = _write(tmp_path, PLAIN, CONV | change)
    with pytest.raises(DataError) as info:
        load_dataset(p)
    shown = [(pr.line, pr.field) for pr in info.value.problems]
    assert (2, field) in shown, shown
    assert f"{p}:2: {field}: " in str(info.value) and words in str(info.value)


def test_duplicate_ids_after_expansion(tmp_path: Path) -> None:
    clash = PLAIN | {"id": "conv-1#2"}
    with pytest.raises(DataError, match=r":2: id: duplicate id 'conv-1#2' \(first on line 1\)"):
        load_dataset(_write(tmp_path, clash, CONV))


def test_history_own_gold_none(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path, CONV))
    turns = by_conversation(ds.entries)["conv-1"]
    t1, t2 = turns
    own = {"conv-1#1": "It was $4.2bn."}
    assert history_of(t1, turns, "own", own.get) == []
    assert history_of(t2, turns, "own", own.get) == [
        {"role": "user", "content": t1.query},
        {"role": "assistant", "content": "It was $4.2bn."},
    ]
    assert history_of(t2, turns, "gold")[1]["content"] == t1.reference_answer
    assert history_of(t2, turns, "none") == []
    assert history_of(t2, turns, "own", {}.get)[1]["content"] == ""
    with pytest.raises(ValueError, match="own, gold, none"):
        history_of(t2, turns, "all")


def test_a_split_keeps_each_conversations_turns_on_one_side(tmp_path: Path) -> None:
    """Turns of one conversation always land on one side (they are one group, with or without
    --group-by), so the halves can be written back whole and a sealed half never holds half a
    conversation."""
    from assay.dataset import split_dataset

    rows: list[dict[str, Any]] = []
    for i in range(12):
        conv = json.loads(json.dumps(CONV))
        conv["id"] = f"conv-{i}"
        conv["metadata"] = {"company": f"C{i % 3}"}
        rows.append(conv)
    rows += [{**PLAIN, "id": f"q{i}", "category": "carried_context"} for i in range(6)]
    src = _write(tmp_path, *rows)
    for seed in range(4):
        for group_by in (None, "metadata.company"):
            train, test = tmp_path / f"tr{seed}.jsonl", tmp_path / f"te{seed}.jsonl"
            got = split_dataset(
                src, test_size=0.5, seed=seed, group_by=group_by, train_out=train, test_out=test
            )
            sides = {
                e.conversation.id: side
                for side, es in (("train", got.train), ("test", got.test))
                for e in es
                if e.conversation is not None
            }
            assert len(sides) == 12
            for side, es in (("train", got.train), ("test", got.test)):
                turns = [e for e in es if e.conversation is not None]
                assert all(sides[e.conversation.id] == side for e in turns)
                assert len(turns) == 2 * len({e.conversation.id for e in turns})
            assert 0 < len(got.test) < len(rows) * 2
            assert len(load_dataset(train).entries) + len(load_dataset(test).entries) == 30


def test_the_gold_index_records_whether_any_entry_is_a_turn(tmp_path: Path) -> None:
    """Scoring reads it from the gold index (built once per dataset) instead of looking at
    every entry on every scoring; both the fast and the general resolution record it, and a
    recorded False means no roll-up even when the entries say otherwise."""
    from assay.gold import resolve_gold
    from assay.runs import Run
    from assay.score import score_retrieval

    turns = load_dataset(_write(tmp_path, CONV, PLAIN)).entries
    plain = load_dataset(_write(tmp_path, PLAIN)).entries
    graded = json.loads(json.dumps(CONV))
    graded["metadata"]["relevance"] = {"c1": 2}  # graded gold takes the general loop
    general = load_dataset(_write(tmp_path, graded)).entries
    assert resolve_gold(turns).conversations is True
    assert resolve_gold(general).conversations is True
    assert resolve_gold(plain).conversations is False
    run = Run.from_rows([{"id": e.id, "retrieved": ["c1", "c2", "c9"]} for e in turns])
    assert score_retrieval(turns, run, k=5).conversations is not None
    gold = dataclasses.replace(resolve_gold(turns), conversations=False)
    assert score_retrieval(turns, run, k=5, gold=gold).conversations is None
