"""One query normaliser (`assay._text`), and each place that compares queries reads through it:
another spelling of a question (full-width letters, curly quotes, case, extra spaces, trailing
punctuation) is the same question to the run binding, the fresh-sample seal, log matching and
the lexical tokenisers; fingerprints and content keys stored before it still match."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._text import fold_text, normalise_query
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry, entry_fingerprint, fresh
from assay.logs.classify import Classifier
from assay.logs.model import normalize_query
from assay.runs.binding import changed_entries
from assay.runs.model import Run
from assay.systems.bm25 import BM25System
from assay.systems.filings.index import tokenize

PLAIN = "What was Fernleaf's FY2024 revenue - in $ millions?"
SPELLINGS = [
    "  what WAS   fernleaf's fy2024 revenue - in $ millions ",  # case and spaces
    "What was Fernleaf\u2019s FY2024 revenue \u2013 in $ millions?",  # curly quote, en dash
    "What was Fernleaf's FY2024 revenue - in $ millions\u00a0?",  # no-break space
    "\uff37\uff48\uff41\uff54 was Fernleaf's \uff26\uff39\uff12\uff10\uff12\uff14 revenue"
    " - in $ millions?",  # full-width letters and digits
]


def _entry(query: str, **kw: Any) -> Entry:
    row = {
        "id": "f-1",
        "query": query,
        "category": "lookup",
        "as_of": "2024-12-31",
        "evidence_paths": [
            [[{"doc": "fern-10k", "page": 3, "quote": "Revenue was $5,050 million"}]]
        ],
    }
    return Entry.model_validate({**row, **kw})


def test_contract() -> None:
    want = "what was fernleaf's fy2024 revenue - in $ millions"
    assert normalise_query(PLAIN) == want
    assert [normalise_query(s) for s in SPELLINGS] == [want] * len(SPELLINGS)
    # what tells two questions apart stays
    assert normalise_query("R&D 10-K y/y 4.5%?") == "r&d 10-k y/y 4.5%"
    assert normalise_query("revenue 2023") != normalise_query("revenue 2024")
    assert normalise_query("Stra\u00dfe") == normalise_query("STRASSE")  # casefold, not lower
    assert fold_text("\ufb01nance \u201cNet\u201d") == 'finance "net"'  # ligature, curly quotes


@given(st.text(max_size=40))
def test_idempotent(text: str) -> None:
    once = normalise_query(text)
    assert normalise_query(once) == once
    assert fold_text(fold_text(text)) == fold_text(text)


def test_the_logs_api_name_is_the_one_normaliser() -> None:
    assert normalize_query is normalise_query


def _run(fp: str) -> Run:
    row = {"id": "f-1", "retrieved": [{"chunk_id": "c"}], "as_of": "2024-12-31", "entry_fp": fp}
    return Run.from_rows([row])


def test_run_binding_reads_another_spelling_as_the_same_question() -> None:
    fp = entry_fingerprint(_entry(PLAIN))
    assert {entry_fingerprint(_entry(s)) for s in SPELLINGS} == {fp}
    run = _run(fp)
    for s in SPELLINGS:
        assert changed_entries([_entry(s)], run) == []
    assert [c.field for c in changed_entries([_entry("FY2023 revenue")], run)] == ["query"]


def test_run_rows_written_before_the_normaliser_still_bind() -> None:
    """A row carries the fingerprint of its day: case folded and whitespace collapsed only."""
    old = json.dumps([" ".join(PLAIN.casefold().split()), "2024-12-31"], ensure_ascii=False)
    fp = hashlib.sha256(old.encode("utf-8")).hexdigest()[:16]
    run = _run(fp)
    assert changed_entries([_entry(PLAIN)], run) == []
    assert len(changed_entries([_entry("What was Fernleaf's FY2023 revenue?")], run)) == 1


def _sealed(tmp_path: Path) -> Path:
    p = tmp_path / "fresh-2026-12.jsonl"
    p.write_text(_entry(PLAIN).model_dump_json(exclude_none=True) + "\n", encoding="utf-8")
    fresh.seal(p)
    assert fresh.record_use(p, command="score") is not None
    return p


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_fresh_seal_knows_the_sample_in_another_spelling(tmp_path: Path, spelling: str) -> None:
    _sealed(tmp_path)
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use([_entry(spelling, id="renamed")], command="score")


def test_a_registry_sealed_before_the_normaliser_still_knows_its_sample(
    tmp_path: Path, _isolated_fresh_registry: Path
) -> None:
    """Its fingerprints table holds content/1 keys (and no query texts to compare)."""
    _sealed(tmp_path)
    e = _entry(PLAIN)
    v1 = json.dumps(
        ["content/1", " ".join(PLAIN.casefold().split()), sorted(fresh.evidence_tokens(e))],
        ensure_ascii=False,
    )
    with sqlite3.connect(_isolated_fresh_registry) as con:
        con.execute(
            "UPDATE fingerprints SET fingerprint = ?", (hashlib.sha256(v1.encode()).hexdigest(),)
        )
        con.execute("DELETE FROM contents")
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use([_entry("  " + PLAIN.upper(), id="renamed")], command="score")


def test_log_matching_reads_another_spelling_as_the_golden_question() -> None:
    clf = Classifier([(PLAIN, "lookup")])
    for s in SPELLINGS:
        c = clf.classify(s)
        assert (c.category, c.method, c.confidence) == ("lookup", "golden", 1.0)


def test_the_filings_tokeniser_folds_like_the_normaliser() -> None:
    plain = tokenize("Fernleaf's financial FY2024 revenue")
    assert tokenize(
        "\uff26ernleaf\u2019s \ufb01nancial \uff26\uff39\uff12\uff10\uff12\uff14 REVENUE"
    ) == (plain)


def test_the_bm25_baseline_finds_another_spelling() -> None:
    texts = [
        "Subscription revenue was $5,050 million.",
        "The \ufb01nancial covenant allows 3.5 times.",
        "Employees numbered 4,100 at year end.",
    ]
    chunks = ChunkTable(
        Chunk.from_dict({"chunk_id": c, "doc_id": "d", "page": 1, "text": t})
        for c, t in zip("abc", texts, strict=True)
    )
    bm25 = BM25System(chunks)
    assert [h["chunk_id"] for h in bm25.retrieve("financial covenant", as_of=None, k=1)] == ["b"]
    wide = "\uff33\uff35\uff22\uff33\uff23\uff32\uff29\uff30\uff34\uff29\uff2f\uff2e revenue"
    assert bm25.retrieve(wide, as_of=None, k=3) == bm25.retrieve(
        "subscription revenue", as_of=None, k=3
    )
