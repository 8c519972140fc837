"""`Chunk.from_dict` reads the common row in one pass; every row, well formed or not, gives the
same chunk (or the same problems) as the full field-by-field check, which a dict subclass takes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.corpus import Chunk
from assay.errors import DataError


class _Row(dict[str, Any]):
    """A row that is not exactly a dict: `from_dict` reads it field by field."""


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 5),
    st.text(max_size=3),
    st.lists(st.one_of(st.integers(-1, 4), st.booleans(), st.text(max_size=1)), max_size=3),
    st.fixed_dictionaries({"tier": st.text(max_size=2)}),
)
_keys = st.sampled_from(
    ["chunk_id", "doc_id", "text", "page", "pages", "kind", "access", "char_start", "extra"]
)
_good = st.fixed_dictionaries(
    {
        "chunk_id": st.text(min_size=1, max_size=4),
        "doc_id": st.text(min_size=1, max_size=4),
        "text": st.text(max_size=8),
        "pages": st.lists(st.one_of(st.integers(-1, 9), st.booleans()), max_size=3),
    },
    optional={
        "kind": st.one_of(st.text(max_size=5), st.integers()),
        "char_start": st.integers(0, 9),
        "page": st.integers(),
        "access": st.one_of(st.none(), st.just("public"), st.integers()),
    },
)


def _read(row: dict[str, Any]) -> Chunk | list[tuple[str | None, str]]:
    try:
        return Chunk.from_dict(row, file="c.jsonl", line=3)
    except DataError as exc:
        return [(p.field, p.message) for p in exc.problems]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        _good,
        st.dictionaries(_keys, _values, max_size=7),
        _good.flatmap(
            lambda g: st.dictionaries(_keys, _values, max_size=3).map(lambda d: {**g, **d})
        ),
    )
)
def test_the_one_pass_read_gives_what_the_full_check_gives(row: dict[str, Any]) -> None:
    fast, full = _read(dict(row)), _read(_Row(row))
    assert fast == full
    if isinstance(fast, Chunk):
        assert type(fast.pages) is list and fast.pages is not row.get("pages")


def test_a_well_formed_row_keeps_its_extra_fields() -> None:
    row = {"chunk_id": "d/1/1", "doc_id": "d", "text": "t", "pages": [2], "kind": "table", "x": 1}
    c = Chunk.from_dict(row)
    assert (c.chunk_id, c.doc_id, c.pages, c.kind, c.extra) == (
        "d/1/1",
        "d",
        [2],
        "table",
        {"x": 1},
    )
