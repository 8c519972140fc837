"""``--cluster FIELD`` compares values as what they say, not how they are spelt.

A cluster split by a spelling (``60`` and ``60.0``, "Apple Inc." and "APPLE INC", a filing named
with and without ``.pdf``) counts one document's questions as independent draws again; an empty
string merged into one cluster joins entries that share nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from assay.dataset import Entry, clustering_for, evidence_doc
from assay.errors import DataError


def _entry(i: str, evidence: list[Any] | None = None, **meta: Any) -> Entry:
    return Entry(id=i, query="q?", category="c", evidence_paths=evidence or [], metadata=meta)


def _clusters(entries: list[Entry], field: str) -> list[set[str]]:
    """The clusters as sets of entry ids, in order of first appearance."""
    c = clustering_for(entries, field)
    assert c is not None
    out: dict[str, set[str]] = {}
    for e in entries:
        out.setdefault(c.of[e.id], set()).add(e.id)
    return list(out.values())


def test_a_number_spelt_three_ways_is_one_cluster() -> None:
    es = [_entry("a", n=60), _entry("b", n=60.0), _entry("c", n="60"), _entry("d", n=61)]
    assert _clusters(es, "metadata.n") == [{"a", "b", "c"}, {"d"}]
    # a leading zero is an identifier, not a number
    es = [_entry("a", n="007"), _entry("b", n=7)]
    assert _clusters(es, "metadata.n") == [{"a"}, {"b"}]


def test_an_empty_or_blank_value_is_no_value() -> None:
    es = [_entry("a", n=""), _entry("b", n="  "), _entry("c", n="x"), _entry("d", n=" x ")]
    assert _clusters(es, "metadata.n") == [{"a"}, {"b"}, {"c", "d"}]
    c = clustering_for(es, "metadata.n")
    assert c is not None and c.of["a"] == "entry:a"
    with pytest.raises(DataError, match=r"no entry has metadata\.n"):
        clustering_for([_entry("a", n=""), _entry("b", n="")], "metadata.n")


def test_a_nested_metadata_field_clusters() -> None:
    es = [_entry("a", src={"doc": "x"}), _entry("b", src={"doc": "x"}), _entry("c", src={})]
    assert _clusters(es, "metadata.src.doc") == [{"a", "b"}, {"c"}]
    # a key that holds the dot itself is read as it is
    assert _clusters([_entry("a", **{"src.doc": "y"})], "metadata.src.doc") == [{"a"}]


def test_unicode_normal_forms_are_one_value() -> None:
    es = [_entry("a", n="Soci\u00e9t\u00e9"), _entry("b", n="Socie\u0301te\u0301")]
    assert _clusters(es, "metadata.n") == [{"a", "b"}]


def test_company_spellings_are_one_company() -> None:
    es = [
        _entry("a", company="Apple Inc."),
        _entry("b", company="APPLE INC"),
        _entry("c", company="Apple, Inc."),
        _entry("d", company="Applied Materials"),
    ]
    assert _clusters(es, "company") == [{"a", "b", "c"}, {"d"}]
    c = clustering_for(es, "company")
    assert c is not None and c.of["b"] == "company:Apple Inc."  # the first spelling names it


def _anchored(i: str, doc: str) -> Entry:
    return _entry(i, [[[{"doc": doc, "page": 1, "quote": "q"}]]])


def test_filing_spellings_are_one_document() -> None:
    es = [
        _anchored("a", "AAPL_2022_10K.pdf"),
        _anchored("b", "aapl_2022_10k"),
        _anchored("c", " AAPL_2022_10K "),
        _anchored("d", "AAPL_2022_10K.PDF"),
        _anchored("e", "AAPL_2023_10K"),
    ]
    assert _clusters(es, "doc") == [{"a", "b", "c", "d"}, {"e"}]


def test_a_chunk_fragment_counts_to_its_document() -> None:
    es = [
        _entry("a", [[["AAPL_2022_10K#p3"]]]),
        _entry("b", [[["AAPL_2022_10K#p4"]]]),
        _entry("c", [[["bank-04/10-K/fy2023#mdna-nii-table"]]]),
        _entry("d", [[["bank-04/10-K/fy2022#mdna-nii-table"]]]),
        _entry("e", [[["d1/3/2~ab12"]]]),
        _entry("f", [[["d1/4/1~cd34"]]]),
    ]
    assert evidence_doc(es[0]) == "AAPL_2022_10K"
    assert evidence_doc(es[2]) == "bank-04/10-K/fy2023"
    # two filings of one bank are two documents; two chunks of one document are one
    assert _clusters(es, "doc") == [{"a", "b"}, {"c"}, {"d"}, {"e", "f"}]
