from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assay.corpus import Chunk, ChunkTable
from assay.dataset import Anchor
from assay.gold.align import containment, normalize_tokens, resolve_anchor


def test_number_formatting_is_folded() -> None:
    assert normalize_tokens("$1,234.50") == normalize_tokens("1234.5")
    assert normalize_tokens("(12)") == ["12"]
    assert normalize_tokens("4.20%") == ["4.2"]
    assert normalize_tokens("NET   Income\n") == ["net", "income"]


def test_eighty_percent_rule() -> None:
    text = "Total deposits were 10,000 at year end"
    assert containment("total deposits were 10000 at year", text) == 1.0
    # 4 of 5 tokens present -> 0.8 holds, 3 of 5 does not
    assert containment("total deposits were 10000 missing", text) == 0.8
    assert containment("total deposits xx 10000 missing", text) == 0.6
    table = ChunkTable(
        [Chunk("a", "d", text, [1]), Chunk("b", "d", "unrelated", [1]), Chunk("c", "d", text, [2])]
    )
    res = resolve_anchor(Anchor(doc="d", page=1, quote="total deposits were 10000 missing"), table)
    assert res.chunk_ids == ("a",)
    res = resolve_anchor(Anchor(doc="d", quote="total deposits were 10000"), table)
    assert res.chunk_ids == ("a", "c")


@given(st.text(min_size=1, max_size=80))
def test_containment_in_unit_interval_and_self_is_one(s: str) -> None:
    c = containment(s, s)
    assert c == (1.0 if normalize_tokens(s) else 0.0)
    assert 0.0 <= containment(s, "fixed text 123") <= 1.0
