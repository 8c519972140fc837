"""`resolve_gold` flattens chunk-id gold at C speed (`_chunk_id_gold`) and gives the index the
general loop gives, or hands the dataset to the loop (anchors, grades, hashes, stale ids)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assay.gold.resolve as resolve
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry
from assay.errors import DataError
from assay.gold import GoldIndex

TABLE = ChunkTable(
    [
        Chunk(f"c{i}", f"d{i // 4}", f"chunk {i} text", pages=[1 + i % 4, 2 + i % 4])
        for i in range(12)
    ]
)
_ids = st.sampled_from([f"c{i}" for i in range(12)] + ["gone"])  # "gone": not in the table
_piece = st.lists(_ids, min_size=1, max_size=3)
_path = st.lists(_piece, min_size=1, max_size=3)


@st.composite
def _entries(draw: st.DrawFn) -> list[Entry]:
    out = []
    for i in range(draw(st.integers(1, 8))):
        row: dict[str, Any] = {
            "id": f"q{i}",
            "query": "q?",
            "category": draw(st.sampled_from("ab")),
        }
        row["evidence_paths"] = draw(st.lists(_path, max_size=2))
        if draw(st.booleans()):
            row["answerable"] = draw(st.booleans())
        row["label_tier"] = draw(st.sampled_from(["gold", "draft", None]))
        extra = draw(st.sampled_from(["", "", "room", "relevance", "hash"]))
        ids = [a for p in row["evidence_paths"] for q in p for a in q]
        if extra == "room":
            row["metadata"] = {"room": draw(st.sampled_from(["r1", "r2"]))}
        elif extra == "relevance" and ids:
            row["metadata"] = {"relevance": {ids[0]: 2}}
        elif extra == "hash" and ids:
            row["chunk_hashes"] = {ids[0]: "0" * 16}
        out.append(Entry.model_validate(row))
    return out


def _outcome(entries: list[Entry], **kw: Any) -> Any:
    try:
        return resolve.resolve_gold(entries, **kw)
    except DataError as exc:
        return [(p.line, p.field, p.message) for p in exc.problems]


def _same(a: Any, b: Any) -> None:
    if not isinstance(a, GoldIndex):
        assert a == b
        return
    assert isinstance(b, GoldIndex)
    for f in ("entry_ids", "categories", "alt_keys", "level", "unanswerable", "excluded"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.excluded_kinds == b.excluded_kinds and a.rooms == b.rooms
    assert a.judged_keys == b.judged_keys
    for f in ("alt_piece", "alt_gain", "piece_path", "path_entry", "judged_entry", "alt_pair"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=_entries(),
    where=st.sampled_from([("chunk", True), ("page", True), ("chunk", False)]),
    skip=st.booleans(),
)
def test_the_quick_path_and_the_loop_agree(
    entries: list[Entry], where: tuple[str, bool], skip: bool
) -> None:
    level, table = where
    kw: dict[str, Any] = {"chunks": TABLE if table else None, "level": level, "skip_stale": skip}
    quick = _outcome(entries, **kw)
    real = resolve._chunk_id_gold
    try:
        resolve._chunk_id_gold = lambda *a: None  # type: ignore[assignment]
        loop = _outcome(entries, **kw)
    finally:
        resolve._chunk_id_gold = real
    _same(quick, loop)


def test_chunk_id_gold_takes_the_quick_path_and_anchors_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    took: list[bool] = []
    real = resolve._chunk_id_gold

    def spy(*a: Any) -> Any:
        out = real(*a)
        took.append(out is not None)
        return out

    monkeypatch.setattr(resolve, "_chunk_id_gold", spy)
    plain = Entry.model_validate(
        {"id": "a", "query": "q", "category": "x", "evidence_paths": [[["c1"], ["c2", "c3"]]]}
    )
    anchored = Entry.model_validate(
        {
            "id": "b",
            "query": "q",
            "category": "x",
            "evidence_paths": [[[{"doc": "d0", "page": 2, "quote": "chunk 1 text"}]]],
        }
    )
    gold = resolve.resolve_gold([plain], chunks=TABLE, level="page")
    assert gold.alt_keys == ["d0#2", "d0#3", "d0#3", "d0#4", "d0#4", "d0#5"]
    assert gold.alt_piece.tolist() == [0, 0, 1, 1, 1, 1]
    resolve.resolve_gold([plain, anchored], chunks=TABLE)
    assert took == [True, False]
