from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import DataError
from assay.systems.filings.index import FilingsIndex, parse_item_spec
from assay.systems.filings.system import FilingsSystem, RetrievalConfig

from .conftest import CHUNKS, DOCS, write_corpus


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> FilingsIndex:
    return FilingsIndex.load(write_corpus(tmp_path_factory.mktemp("c") / "corpus"))


def _docs(system: FilingsSystem, query: str, as_of: dt.date | None, k: int = 10) -> list[str]:
    return [
        system.index.doc(h["chunk_id"]).doc_id for h in system.retrieve(query, as_of=as_of, k=k)
    ]


ACCEPTED = {d["doc_id"]: dt.date.fromisoformat(d["accepted_at"]) for d in DOCS}


@settings(max_examples=20, deadline=None)
@given(
    as_of=st.dates(min_value=dt.date(2023, 1, 1), max_value=dt.date(2025, 1, 1)),
    query=st.sampled_from(
        ["revenue", "Acme net sales", "directors", "Microsoft revenue fiscal 2024", "net income"]
    ),
    filters=st.booleans(),
)
def test_never_returns_a_filing_accepted_after_as_of(
    index: FilingsIndex, as_of: dt.date, query: str, filters: bool
) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=filters, understand=filters))
    for doc_id in _docs(system, query, as_of):
        assert ACCEPTED[doc_id] <= as_of


def test_undated_filings_hidden_under_as_of(tmp_path: Path) -> None:
    docs = [dict(d, accepted_at=None) if d["doc_id"] == "msft-2024-10k" else d for d in DOCS]
    index = FilingsIndex.load(write_corpus(tmp_path / "c", docs=docs))
    system = FilingsSystem(index)
    assert "msft-2024-10k" not in _docs(system, "revenue fiscal year 2024", dt.date(2030, 1, 1))
    assert "msft-2024-10k" in _docs(system, "revenue fiscal year 2024", None)


def test_part_iii_amendment_leaves_financial_statements_authoritative(index: FilingsIndex) -> None:
    system = FilingsSystem(index)
    as_of = dt.date(2024, 5, 1)  # Part III amendment visible, restatement not yet
    ids = [h["chunk_id"] for h in system.retrieve("Acme net sales net income", as_of=as_of, k=10)]
    assert "acme-2023-10k/1/0" in ids  # Item 8 of the original still answers
    directors = [h["chunk_id"] for h in system.retrieve("Acme directors", as_of=as_of, k=10)]
    assert "acme-2023-10ka-p3/1/0" in directors
    assert "acme-2023-10k/2/0" not in directors  # the original's Item 10 is superseded


def test_part_iii_amendment_not_yet_accepted_supersedes_nothing(index: FilingsIndex) -> None:
    system = FilingsSystem(index)
    ids = [
        h["chunk_id"] for h in system.retrieve("Acme directors", as_of=dt.date(2024, 3, 1), k=10)
    ]
    assert "acme-2023-10k/2/0" in ids and "acme-2023-10ka-p3/1/0" not in ids


def test_restatement_supersedes_item_8_only(index: FilingsIndex) -> None:
    system = FilingsSystem(index)
    ids = [
        h["chunk_id"]
        for h in system.retrieve("Acme net sales net income", as_of=dt.date(2024, 12, 31), k=10)
    ]
    assert "acme-2023-10ka-r/1/0" in ids
    assert "acme-2023-10k/1/0" not in ids
    mask = index.visible_mask(dt.date(2024, 12, 31))
    assert not mask[index.pos["acme-2023-10k/1/0"]]


def test_amendment_without_items_hides_nothing(tmp_path: Path) -> None:
    docs = [
        dict(d, amended_items=[]) if d["doc_id"].startswith("acme-2023-10ka") else d for d in DOCS
    ]
    index = FilingsIndex.load(write_corpus(tmp_path / "c", docs=docs))
    assert index.visible_mask(dt.date(2030, 1, 1)).all()


def test_item_specs() -> None:
    assert parse_item_spec("Part III") == {"10", "11", "12", "13", "14"}
    assert parse_item_spec("Item 8") == {"8"}
    assert parse_item_spec("Items 7 and 7A") == {"7", "7A"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Microsoft revenue FY2024", {"msft-2024-10k"}),
        ("MSFT revenue fiscal 2023", {"msft-2023-10k"}),
        ("Microsoft revenue in the third quarter of fiscal 2024", {"msft-2024q3-10q"}),
        ("Microsoft revenue latest quarter", {"msft-2024-10k"}),  # Q4 FY2024 is in the 10-K
        ("Microsoft revenue change between FY2023 and FY2024", {"msft-2024-10k"}),
        ("Acme net sales 2023", {"acme-2023-10k", "acme-2023-10ka-p3", "acme-2023-10ka-r"}),
    ],
)
def test_period_and_entity_filters(index: FilingsIndex, query: str, expected: set[str]) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=True, understand=True))
    system.retrieve(query, as_of=None, k=5)
    assert set(system.log[-1]["filters"]["docs"]) == expected


def test_latest_quarter_respects_as_of(index: FilingsIndex) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=True))
    system.retrieve("Microsoft revenue latest quarter", as_of=dt.date(2024, 5, 1), k=5)
    assert system.log[-1]["filters"]["docs"] == ["msft-2024q3-10q"]


def test_period_filter_relaxes_to_nearest_year(index: FilingsIndex) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=True))
    system.retrieve("Microsoft revenue FY2026", as_of=None, k=5)
    # no FY2026 filing: the nearest year's annual report
    assert system.log[-1]["filters"]["docs"] == ["msft-2024-10k"]


def test_bad_chunks_file_names_line_and_field(tmp_path: Path) -> None:
    bad = [*CHUNKS, {"chunk_id": "x", "doc_id": "acme-2023-10k", "text": "no page"}]
    with pytest.raises(DataError) as err:
        FilingsIndex.load(write_corpus(tmp_path / "c", chunks=bad))
    problem = err.value.problems[0]
    assert problem.line == len(bad) and problem.field == "pages"


def test_form_filter(index: FilingsIndex) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=True))
    system.retrieve("Microsoft revenue in the quarterly report", as_of=None, k=5)
    assert system.log[-1]["filters"]["docs"] == ["msft-2024q3-10q"]
    system.retrieve("Microsoft revenue in the 8-K", as_of=None, k=5)  # no 8-K: relaxed, and said so
    assert "form" in system.log[-1]["filters"]["relaxed"]


def test_forward_looking_question_falls_back_to_an_earlier_filing(index: FilingsIndex) -> None:
    system = FilingsSystem(index, RetrievalConfig(filters=True))
    system.retrieve("What revenue does Acme expect for FY2025?", as_of=None, k=5)
    assert set(system.log[-1]["filters"]["docs"]) == {
        "acme-2023-10k",
        "acme-2023-10ka-p3",
        "acme-2023-10ka-r",
    }
    system.retrieve(
        "What was Microsoft's revenue in FY2022?", as_of=None, k=5
    )  # later filing: comparatives
    assert system.log[-1]["filters"]["docs"] == ["msft-2023-10k"]
