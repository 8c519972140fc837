"""The one gold resolver: validate and score find the same stale gold and say it the same way;
page-level anchors on absent documents stop scoring; chunk fingerprints; as_of; unknown hits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Dataset, Entry
from assay.errors import DataError
from assay.gold import (
    check_gold,
    chunk_fingerprint,
    record_chunk_hashes,
    resolve_gold,
    validate_file,
)
from assay.runs import Run
from assay.score import score_retrieval


def E(eid: str, paths: list[Any], cat: str = "c", **kw: Any) -> Entry:
    return Entry.model_validate(
        {"id": eid, "query": "q", "category": cat, "evidence_paths": paths, **kw}
    )


def R(rows: dict[str, list[str]]) -> Run:
    return Run.from_rows([{"id": k, "retrieved": v} for k, v in rows.items()])


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


TABLE = ChunkTable(
    [
        Chunk("d/1/0", "d", "Net interest income was $1,234.5 million in 2023.", [1]),
        Chunk("d/2/0", "d", "Deposits grew.", [2]),
        Chunk("e/1/0", "e", "Revenue was 10 million.", [1]),
    ]
)


# ---------------------------------------------------------------- one resolver, one message


def test_validate_and_score_report_stale_gold_identically() -> None:
    entries = [
        E("a", [[["d/1/0"], ["ghost"]]]),
        E("b", [[[{"doc": "d", "page": 2, "quote": "net interest income"}]]]),
        E("c", [[[{"doc": "absent-10k", "page": 4, "quote": "revenue"}]]]),
        E("ok", [[[{"doc": "d", "page": 1, "quote": "net interest income was 1234.50 million"}]]]),
    ]
    ds = Dataset(entries, path="g.jsonl", lines={"a": 1, "b": 2, "c": 3, "ok": 4})
    validated = check_gold(ds, TABLE)
    with pytest.raises(DataError) as ei:
        score_retrieval(ds, R({e.id: [] for e in entries}), chunks=TABLE)
    assert validated == ei.value.problems  # same problems, same words, same FILE:LINE: field
    assert [(p.line, p.field) for p in validated] == [
        (1, "evidence_paths.0.1.0"),
        (2, "evidence_paths.0.0.0"),
        (3, "evidence_paths.0.0.0"),
    ]
    msgs = [p.message for p in validated]
    assert msgs[0] == "entry a: chunk id 'ghost' is not in the chunk table"
    assert msgs[1].startswith(
        "entry b: anchor matches no chunk of d page 2: the quote is not in its text (best "
        "containment"
    )
    assert "document 'absent-10k', which the chunk table lacks" in msgs[2]


def test_page_level_anchor_on_a_missing_document_stops_scoring() -> None:
    """Today such an anchor becomes a doc#page key no hit can match: a retrieval miss, exit 0."""
    entries = [
        E("fb-1", [[[{"doc": "AES_2022_10K", "page": 5, "quote": "x"}]]]),
        E("fb-2", [[[{"doc": "e", "page": 1, "quote": "revenue"}]]]),
    ]
    run = R({"fb-1": ["e/1/0"], "fb-2": ["e/1/0"]})
    with pytest.raises(DataError) as ei:
        score_retrieval(entries, run, k=1, chunks=TABLE, level="page")
    assert len(ei.value.problems) == 1
    assert "entry fb-1" in str(ei.value) and "'AES_2022_10K'" in str(ei.value)
    s = score_retrieval(entries, run, k=1, chunks=TABLE, level="page", skip_stale=True)
    assert s.ids == ["fb-2"] and s.rows[0]["recall@1"] == 1.0
    assert list(s.excluded) == ["fb-1"] and "AES_2022_10K" in s.excluded["fb-1"]
    assert s.to_dict()["excluded_stale_gold"]["n"] == 1


def test_page_level_scores_unchanged_when_every_document_is_there() -> None:
    e = E("a", [[[{"doc": "d", "page": 2, "quote": "anything, not aligned at page level"}]]])
    s = score_retrieval([e], R({"a": ["d/1/0", "d/2/0"]}), k=2, chunks=TABLE, level="page")
    assert s.rows[0]["recall@2"] == 1.0 and s.rows[0]["mrr"] == 0.5
    assert s.excluded == {}


def test_skip_stale_excludes_whole_entries_only() -> None:
    entries = [E("a", [[["d/1/0"], ["ghost"]]]), E("b", [[["d/2/0"]]])]
    gold = resolve_gold(entries, chunks=TABLE, skip_stale=True)
    assert gold.entry_ids == ["b"] and set(gold.excluded) == {"a"}
    assert gold.excluded["a"].startswith("evidence_paths.0.1.0: entry a: chunk id 'ghost'")


def test_usage_errors_still_refuse_without_a_chunk_table() -> None:
    with pytest.raises(DataError, match="pass the chunk table"):
        resolve_gold([E("a", [[[{"doc": "d", "quote": "x"}]]])])
    with pytest.raises(DataError, match="needs the chunk table"):
        resolve_gold([E("a", [[["d/1/0"]]])], level="page")


# ---------------------------------------------------------------- score --skip-missing, unknown hits


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [
            {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "pages": c.pages, "text": c.text}
            for c in TABLE
        ],
    )
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"id": "fb-1", "query": "q", "category": "metrics",
             "evidence_paths": [[[{"doc": "AES_2022_10K", "page": 5, "quote": "x"}]]]},
            {"id": "fb-2", "query": "q", "category": "metrics",
             "evidence_paths": [[[{"doc": "e", "page": 1, "quote": "revenue"}]]]},
        ],
    )  # fmt: skip
    run = write_jsonl(
        tmp_path / "run.jsonl",
        [
            {"id": "fb-1", "retrieved": ["e/1/0", "AES_2022_10K/5/0"]},
            {"id": "fb-2", "retrieved": ["e/1/0", "AES_2022_10K/5/0", "other/1/0"]},
        ],
    )
    return {"chunks": chunks, "ds": ds, "run": run}


def _score(files: dict[str, Path], *extra: str) -> Any:
    args = ["score", str(files["ds"]), str(files["run"]), "--chunks", str(files["chunks"])]
    return CliRunner().invoke(app, [*args, "--level", "page", "--k", "2", *extra])


def test_cli_score_stops_on_stale_page_gold_and_skip_missing_reports_the_count(
    files: dict[str, Path],
) -> None:
    r = _score(files, "-f", "json")
    assert r.exit_code == 2, r.output
    assert "fb-1" in r.output and "AES_2022_10K" in r.output and "Traceback" not in r.output
    r = _score(files, "--skip-missing", "-f", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["overall"]["n"] == 1 and data["excluded_stale_gold"]["n"] == 1
    assert list(data["excluded_stale_gold"]["entries"]) == ["fb-1"]
    for fmt in ("markdown", "table"):
        r = _score(files, "--skip-missing", "-f", fmt)
        assert r.exit_code == 0, r.output
        out = " ".join(r.stdout.split())
        assert "1 entry left out because its gold does not resolve on this chunk table" in out
        assert "1 document absent: fb-1" in out


def test_cli_score_counts_retrieved_ids_unknown_to_the_chunk_table(files: dict[str, Path]) -> None:
    r = _score(files, "--skip-missing", "-f", "json")
    unknown = json.loads(r.stdout)["unknown_retrieved"]
    assert unknown == {
        "hits": 3,
        "distinct": 2,
        "examples": ["AES_2022_10K/5/0", "other/1/0"],
    }
    for fmt in ("markdown", "table"):
        out = " ".join(_score(files, "--skip-missing", "-f", fmt).stdout.split())
        assert "3 retrieved hits (2 distinct ids" in out and "not in the chunk table" in out


def test_unknown_retrieved_is_not_counted_without_a_chunk_table() -> None:
    s = score_retrieval([E("a", [[["x"]]])], R({"a": ["x", "y"]}), k=1)
    assert s.unknown_retrieved is None and s.to_dict()["unknown_retrieved"] is None
    s = score_retrieval([E("a", [[["d/1/0"]]])], R({"a": ["d/1/0"]}), k=1, chunks=TABLE)
    assert s.to_dict()["unknown_retrieved"] == {"hits": 0, "distinct": 0, "examples": []}
    # nothing about unknown hits; what is said is that this in-memory run recorded no table
    # and carries no text (unbound), and that the table was written without content hashes
    assert not any("not in the chunk table" in n for n in s.notes())
    assert [n.split(":")[0] for n in s.notes()] == [
        "the scored run is unbound",
        "the chunk table carries no content hashes (written before content-addressed ids)",
    ]


# ---------------------------------------------------------------- chunk fingerprints


def test_fingerprint_ignores_layout_and_number_formatting_but_not_words() -> None:
    base = chunk_fingerprint("Net interest income was $1,234.50 million.")
    assert len(base) == 16 and int(base, 16) >= 0
    assert chunk_fingerprint("net   interest\nincome was 1234.5 million") == base
    assert chunk_fingerprint("Net interest income was $1,234.60 million.") != base
    assert chunk_fingerprint("Net interest expense was $1,234.50 million.") != base


def test_validate_flags_a_chunk_whose_text_changed_after_rechunking(tmp_path: Path) -> None:
    old = "Net interest income was $1,234.5 million in 2023."
    entry = {
        "id": "a",
        "query": "q",
        "category": "c",
        "evidence_paths": [[["d/1/0"]]],
        "chunk_hashes": {"d/1/0": chunk_fingerprint(old)},
    }
    ds = write_jsonl(tmp_path / "g.jsonl", [entry])
    same = write_jsonl(
        tmp_path / "same.jsonl",
        [{"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": old.replace(" ", "\n")}],
    )
    assert validate_file(ds, same) == []
    moved = write_jsonl(  # a re-chunk: the positional id now holds the next paragraph
        tmp_path / "moved.jsonl",
        [{"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": "Deposits grew."}],
    )
    probs = validate_file(ds, moved)
    assert len(probs) == 1 and probs[0].line == 1 and probs[0].field == "evidence_paths.0.0.0"
    assert "chunk 'd/1/0' changed since it was labelled" in probs[0].message
    # and scoring refuses to score against it, like any other stale gold
    from assay.corpus import load_chunks
    from assay.dataset import load_dataset

    with pytest.raises(DataError, match="changed since it was labelled"):
        score_retrieval(load_dataset(ds), R({"a": ["d/1/0"]}), chunks=load_chunks(moved))


def test_chunk_hashes_are_optional_and_checked_for_shape() -> None:
    plain = E("a", [[["d/1/0"]]])
    assert plain.chunk_hashes == {} and "chunk_hashes" not in plain.to_json_dict()
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="16 lowercase hex digits"):
        E("a", [[["d/1/0"]]], chunk_hashes={"d/1/0": "not-a-hash"})
    with pytest.raises(ValidationError, match="does not: other"):
        E("a", [[["d/1/0"]]], chunk_hashes={"other": "0123456789abcdef"})


def test_record_chunk_hashes() -> None:
    e = E(
        "a",
        [[["d/1/0"], ["gone"]]],
        key_facts=[{"fact": "f", "supporting": ["d/2/0"]}],
        chunk_hashes={"gone": "00000000000000aa"},
    )
    got = record_chunk_hashes(e, TABLE)
    assert got.chunk_hashes == {
        "d/1/0": chunk_fingerprint(TABLE.by_id["d/1/0"].text),
        "d/2/0": chunk_fingerprint("Deposits grew."),
        "gone": "00000000000000aa",  # not in the table: what was recorded stays
    }
    assert Entry.model_validate(got.to_json_dict()) == got
    assert record_chunk_hashes(e, {"d/1/0": "x"}).chunk_hashes["d/1/0"] == chunk_fingerprint("x")


# ---------------------------------------------------------------- as_of


def test_validate_flags_evidence_accepted_after_as_of(tmp_path: Path) -> None:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [
            {"chunk_id": "k23/1/0", "doc_id": "k23", "page": 1, "accepted_at": "2024-02-27",
             "text": "Net interest income was 1,842 million in 2023."},
            {"chunk_id": "k22/1/0", "doc_id": "k22", "page": 1, "accepted_at": "2023-02-24",
             "text": "Net interest income was 1,655 million in 2022."},
            {"chunk_id": "n/1/0", "doc_id": "n", "page": 1, "text": "No date known."},
        ],
    )  # fmt: skip
    anchor23 = {"doc": "k23", "page": 1, "quote": "net interest income was 1842 million"}
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"id": "early", "query": "q", "category": "c", "as_of": "2023-12-31",
             "evidence_paths": [[["k22/1/0"], ["k23/1/0"]], [[anchor23]]]},
            {"id": "late", "query": "q", "category": "c", "as_of": "2024-03-01",
             "evidence_paths": [[["k22/1/0"], ["k23/1/0"]]]},
            {"id": "undated", "query": "q", "category": "c", "as_of": "2020-01-01",
             "evidence_paths": [[["n/1/0"]]]},
            {"id": "no-as-of", "query": "q", "category": "c",
             "evidence_paths": [[["k23/1/0"]]]},
            {"id": "fact", "query": "q", "category": "c", "as_of": "2023-06-30",
             "answerable": False, "key_facts": [{"fact": "f", "supporting": ["k23/1/0"]}]},
        ],
    )  # fmt: skip
    probs = validate_file(ds, chunks)
    assert [(p.line, p.field) for p in probs] == [
        (1, "evidence_paths.0.1.0"),
        (1, "evidence_paths.1.0.0"),
        (5, "key_facts.0.supporting.0"),
    ]
    assert probs[0].message == (
        "entry early: evidence 'k23/1/0' was accepted 2024-02-27, after the entry's as_of "
        "2023-12-31 (a system that honours as_of can never retrieve it)"
    )
    assert "evidence anchor on k23 page 1 was accepted 2024-02-27" in probs[1].message


def test_cli_validate_exits_1_on_stale_gold(tmp_path: Path) -> None:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [{"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": "Deposits grew."}],
    )
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {"id": "a", "query": "q", "category": "c",
             "evidence_paths": [[[{"doc": "absent", "page": 1, "quote": "x"}]]]},
        ],
    )  # fmt: skip
    r = CliRunner().invoke(app, ["validate", str(ds), "--chunks", str(chunks)])
    assert r.exit_code == 1
    assert (
        f"{ds}:1: evidence_paths.0.0.0: entry a: document absent: the anchor names document 'absent'"
        in " ".join(r.output.split())
    )
