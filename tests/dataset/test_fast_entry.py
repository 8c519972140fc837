"""The dataset's fast path: a row it builds is the entry full validation gives (same values,
same fields set, same dump), and a row validation refuses never passes it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from assay.dataset import Entry, load_dataset
from assay.dataset.schema import fast_entry
from assay.errors import DataError

ODD = st.sampled_from(
    [None, "", " ", "x", 0, -1, 2, 1.5, True, False, [], {}, [[]], [[[]]], [[[""]]], [[[" "]]],
     [[["c1", " "]]], [[["c1"], []]], [[[1]]], [[["c1"]]], [[["c1", "c2"], ["c3"]], [["c4"]]],
     [[[{"doc": "d", "page": 1, "quote": "q"}]]], "gold", "silver", "draft", "expert-agreed",
     "platinum", "partial", "log", "sme", "synthetic", "2024-01-02", "20240102", "2024-13-01",
     "2024-01-02T00:00", {"relevance": {"c1": 0}}, {"k": [1, 2]}, {"relevance": 3}]
)  # fmt: skip
KEYS = st.sampled_from(
    ["answerable", "evidence_paths", "reference_answer", "label_tier", "reviewed_by",
     "created_by", "split", "source", "metadata", "as_of", "added", "key_facts", "flags",
     "ambiguous", "unknown_field"]
)  # fmt: skip


def _row(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return base | extra


@settings(max_examples=400, deadline=None)
@given(
    base=st.fixed_dictionaries(
        {"id": st.sampled_from(["q1", "", "x y"]), "query": st.sampled_from(["what?", "", " "]),
         "category": st.sampled_from(["lookup", ""])}
    ),
    extra=st.dictionaries(KEYS, ODD, max_size=6),
    drop=st.sampled_from([None, "id", "query", "category"]),
)  # fmt: skip
def test_fast_path_agrees_with_validation(
    base: dict[str, Any], extra: dict[str, Any], drop: str | None
) -> None:
    row = _row(base, extra)
    if drop:
        row.pop(drop)
    fast = fast_entry(json.loads(json.dumps(row)))
    try:
        full = Entry.model_validate(row)
    except ValidationError:
        assert fast is None, row
        return
    if fast is None:
        return  # the full model read it
    assert fast == full
    assert fast.model_fields_set == full.model_fields_set
    assert fast.model_dump() == full.model_dump()
    assert fast.to_json_dict() == full.to_json_dict()
    assert repr(fast) == repr(full)
    assert list(fast.__dict__) == list(full.__dict__)


def test_common_rows_take_the_fast_path_and_others_do_not() -> None:
    row = {"id": "q1", "query": "what?", "category": "lookup", "evidence_paths": [[["c1"]]],
           "label_tier": "gold", "source": "log", "reviewed_by": 2, "as_of": "2024-03-31",
           "metadata": {"room": "r"}}  # fmt: skip
    fast = fast_entry(row)
    assert fast is not None and fast == Entry.model_validate(row)
    assert fast.as_of == dt.date(2024, 3, 31) and fast.source is not None
    fast.evidence_paths.append([["c2"]])  # no list is shared between entries
    assert fast_entry({"id": "q2", "query": "q", "category": "c"}).evidence_paths == []  # type: ignore[union-attr]
    for odd in ({"label_tier": "expert-agreed"}, {"answerable": "partial"},
                {"metadata": {"relevance": {"c1": 2}}}, {"key_facts": []}):  # fmt: skip
        assert fast_entry(row | odd) is None  # read by the full model


def test_bad_line_still_named_with_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    good = {"id": "q1", "query": "what?", "category": "lookup", "evidence_paths": [[["c1"]]]}
    bad = good | {"id": "q2", "evidence_paths": [[["c1", " "]]]}
    odd_tier = good | {"id": "q3", "label_tier": []}  # once a TypeError out of the validator
    rows = [good, bad, odd_tier]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError) as info:
        load_dataset(path)
    assert f"{path}:2: evidence_paths" in str(info.value)
    assert f"{path}:3: label_tier" in str(info.value)


def test_the_fast_path_makes_every_default_factory_value() -> None:
    # `fast_entry` writes the empty list or dict of each factory field itself: a new factory
    # field would be missing from its entries without this list changing
    from assay.dataset.schema import _FACTORIES, _FAST_KEYS

    assert [
        ("evidence_paths", list), ("key_facts", list), ("chunk_hashes", dict), ("flags", list),
        ("metadata", dict),
    ] == _FACTORIES  # fmt: skip
    assert not _FAST_KEYS & {"key_facts", "chunk_hashes", "flags"}  # never given on this path
    a = fast_entry({"id": "q1", "query": "x?", "category": "c"})
    b = fast_entry({"id": "q2", "query": "y?", "category": "c"})
    assert a is not None and b is not None
    for name, _ in _FACTORIES:
        assert getattr(a, name) == getattr(Entry.model_validate(a.to_json_dict()), name)
        assert getattr(a, name) is not getattr(b, name)  # each entry its own container
