"""`assay._io.loads_line` (orjson where it reads the same value) gives what `json.loads` gives,
value or error, on every line the standard library reads differently from orjson."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._io import loads_line

ODD = [
    b'{"a": 123456789012345678901234567890}',  # beyond 64 bits: orjson reads a float
    b'{"a": -18446744073709551616}',
    b'{"a": NaN, "b": Infinity, "c": -Infinity}',
    b'{"a": "\\ud800"}',  # a lone surrogate escape
    b'\xef\xbb\xbf{"a": 1}',  # a byte order mark
    '{"a": "\u00e9"}'.encode("utf-16"),
    b'{"a": 1e400}',
    b'{"a": 1, "a": 2}',
    b'{"a": -0, "b": 0.1, "c": "\\u00e9\\n"}',
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("raw", ODD)
def test_odd_lines_read_as_json_reads_them(raw: bytes) -> None:
    assert _same(loads_line(raw), json.loads(raw))


@pytest.mark.parametrize("raw", [b'{"a": ', b"{'a': 1}", b'{"a": 1}}', b"\xff\xfe\xfa"])
def test_bad_lines_fail_as_json_fails(raw: bytes) -> None:
    with pytest.raises(ValueError) as ours:
        loads_line(raw)
    with pytest.raises(ValueError) as theirs:
        json.loads(raw)
    assert type(ours.value) is type(theirs.value)


def test_parse_constant_is_used_for_non_finite_numbers() -> None:
    assert loads_line(b'{"s": NaN}', parse_constant=lambda t: f"<{t}>") == {"s": "<NaN>"}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON, ascii_only=st.booleans())
def test_any_json_value_reads_back_as_json_reads_it(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(raw)
    except ValueError:
        with pytest.raises(ValueError):
            loads_line(raw)
        return
    assert _same(loads_line(raw), expected)


def test_has_long_int_agrees_with_the_per_line_pattern() -> None:
    import re

    import numpy as np

    from assay._io import has_long_int

    pattern = re.compile(rb"\d{19}")
    rng = np.random.default_rng(0)
    alphabet = b"0123456789 \n\x00\xff\xd9a"  # digits, blanks, a line break, non-ASCII bytes
    for _ in range(300):
        n = int(rng.integers(0, 60))
        weights = rng.dirichlet(np.ones(len(alphabet)) * 0.3)
        data = bytes(rng.choice(list(alphabet), size=n, p=weights).tolist())
        assert has_long_int(data) == bool(pattern.search(data)), data
    assert has_long_int(b'{"n": 1234567890123456789}')
    assert not has_long_int(b'{"n": 123456789012345678}')
    assert not has_long_int(b"123456789\n0123456789")  # a line break ends a run
    assert not has_long_int("١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩".encode())  # not ASCII digits
