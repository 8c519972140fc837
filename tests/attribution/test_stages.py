"""Failure attribution: planted failures at every stage come back as the stage planted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write_jsonl
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.attribution import STAGES, attribute, attribute_files
from assay.cli import app
from assay.corpus import load_chunks
from assay.dataset import load_dataset
from assay.errors import DataError
from assay.runs import load_run, write_run

# The parser's text of each page of one filing, "d1".
PAGES = {
    1: "Item 7. Overview of the year.",  # the parser lost the revenue sentence
    2: "Net income rose to 120 million driven by lower costs and higher sales volumes overall.",
    3: "Gross margin improved to 45 percent on pricing.",
    4: "Research and development spending was 88 million for the year.",
    5: "Operating margin was 31.5 percent for the year.",
    6: "Capital expenditures were $42 million for the year.",
    7: "The company leases its headquarters building.",
    8: "Dividends paid were 15 million.",
}
# The chunker's output: page 2 split mid-sentence; every other page one chunk (page 1 as parsed).
CHUNKS = [
    ("c1", 1, PAGES[1]),
    ("c2a", 2, "Net income rose to 120 million"),
    ("c2b", 2, "driven by lower costs and higher sales volumes overall."),
    *((f"c{p}", p, PAGES[p]) for p in range(3, 9)),
    *((f"noise{i}", 7, f"Unrelated boilerplate number {i}.") for i in range(10)),
]


def anchor(page: int, quote: str) -> dict[str, Any]:
    return {"doc": "d1", "page": page, "quote": quote}


ENTRIES = [
    {"id": "e-parse", "query": "revenue", "category": "lookup",
     "evidence_paths": [[[anchor(1, "Revenue was 500 million in fiscal 2023")]]]},
    {"id": "e-chunk", "query": "net income", "category": "lookup",
     "evidence_paths": [[[anchor(2, PAGES[2])]]]},
    {"id": "e-recall", "query": "gross margin", "category": "lookup",
     "evidence_paths": [[[anchor(3, PAGES[3])]]]},
    {"id": "e-rerank", "query": "research spending", "category": "narrative",
     "evidence_paths": [[[anchor(4, PAGES[4])]]]},
    {"id": "e-generation", "query": "What was the operating margin?", "category": "narrative",
     "reference_answer": "Operating margin was 31.5%.",
     "evidence_paths": [[[anchor(5, PAGES[5])]]]},
    {"id": "e-grounding", "query": "How much were capital expenditures?", "category": "narrative",
     "reference_answer": "Capital expenditures were $42 million.",
     "evidence_paths": [[[anchor(6, PAGES[6])]]]},
    {"id": "e-pass", "query": "How much was spent on capital expenditures?", "category": "narrative",
     "reference_answer": "Capital expenditures were $42 million.",
     "evidence_paths": [[[anchor(6, PAGES[6])]]]},
    {"id": "e-unanswerable", "query": "CEO's shoe size", "category": "lookup", "answerable": False},
]  # fmt: skip

NOISE = [f"noise{i}" for i in range(10)]
ROWS = [
    {"id": "e-parse", "retrieved": NOISE[:5]},
    {"id": "e-chunk", "retrieved": ["c2a", "c2b", *NOISE[:3]]},
    {"id": "e-recall", "retrieved": NOISE[:5],
     "trace": {"candidates": NOISE[:8], "reranked": NOISE[:8]}},
    {"id": "e-rerank", "retrieved": NOISE[:5],
     "trace": {"candidates": [NOISE[0], "c4", *NOISE[1:6]],
               "reranked": [*NOISE[:6], "c4"]}},
    {"id": "e-generation", "retrieved": ["c5", *NOISE[:4]],
     "answer": "Operating margin was 25.0%.", "citations": ["c5"]},
    {"id": "e-grounding", "retrieved": ["c6", *NOISE[:4]],
     "answer": "Capital expenditures were $42 million.", "citations": ["c7"]},
    {"id": "e-pass", "retrieved": [NOISE[0], "c6", *NOISE[1:4]],
     "answer": "Capital expenditures were $42 million.", "citations": ["c6"]},
    {"id": "e-unanswerable", "retrieved": NOISE[:5]},
]  # fmt: skip

PLANTED = {
    "e-parse": "parse",
    "e-chunk": "chunk",
    "e-recall": "recall",
    "e-rerank": "rerank",
    "e-generation": "generation",
    "e-grounding": "grounding",
}


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        root / "chunks.jsonl",
        [{"chunk_id": c, "doc_id": "d1", "page": p, "text": t} for c, p, t in CHUNKS],
    )
    write_jsonl(
        root / "pages.jsonl", [{"doc_id": "d1", "page": p, "text": t} for p, t in PAGES.items()]
    )
    return root


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, Path]:
    corpus = write_corpus(tmp_path / "corpus")
    ds = write_jsonl(tmp_path / "golden.jsonl", ENTRIES)
    run = tmp_path / "run.jsonl"
    write_run(run, ROWS)
    return ds, run, corpus


def test_every_planted_failure_gives_its_stage(case: tuple[Path, Path, Path]) -> None:
    ds, run, corpus = case
    result = attribute(load_dataset(ds), load_run(run), corpus=corpus, k=5)
    got = {e.id: e.stage for e in result.entries}
    assert {i: s for i, s in got.items() if s is not None} == PLANTED
    assert got["e-pass"] is None
    assert "e-unanswerable" not in got and result.unanswerable == 1
    assert result.unseen_stages == []
    by_id = {e.id: e for e in result.entries}
    assert by_id["e-rerank"].pieces[0].pool_rank == 2
    assert by_id["e-rerank"].pieces[0].rank is None
    assert by_id["e-pass"].pieces[0].rank == 2
    assert "unverified figures" in by_id["e-grounding"].detail


def test_json_shape_and_counts_sum_to_the_failing_entries(case: tuple[Path, Path, Path]) -> None:
    ds, run, corpus = case
    d = json.loads(attribute_files(ds, run, corpus=corpus).to_json())
    assert set(d["categories"]) == {"lookup", "narrative"}
    for cat, cell in d["categories"].items():
        assert sum(cell["stages"].values()) == cell["n_failed"], cat
        assert cell["n_failed"] == sum(e["category"] == cat for e in d["entries"])
    assert d["categories"]["lookup"]["stages"] == {
        "parse": 1, "chunk": 1, "recall": 1, "rerank": 0, "generation": 0, "grounding": 0
    }  # fmt: skip
    assert d["categories"]["narrative"] == {
        "n": 4, "n_passed": 1, "n_failed": 3,
        "stages": {"parse": 0, "chunk": 0, "recall": 0, "rerank": 1, "generation": 1,
                   "grounding": 1},
    }  # fmt: skip
    for e in d["entries"]:
        assert {"id", "stage", "group"} <= set(e)
        assert e["stage"] in STAGES
    assert {e["id"]: (e["stage"], e["group"]) for e in d["entries"]}["e-chunk"] == ("chunk", 0)
    assert d["unseen_stages"] == [] and d["k"] == 5


def test_without_a_trace_the_rerank_stage_is_unseen_and_recall_is_at_k(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, _, corpus = case
    bare = [{kk: v for kk, v in r.items() if kk != "trace"} for r in ROWS]
    run = tmp_path / "bare.jsonl"
    write_run(run, bare)
    result = attribute_files(ds, run, corpus=corpus)
    got = {e.id: e.stage for e in result.entries}
    assert got["e-rerank"] == "recall"
    assert "rerank" in result.unseen_stages
    assert "rerank" not in result.to_dict()["categories"]["narrative"]["stages"]


def test_without_answers_or_page_text_those_stages_are_unseen(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, _, corpus = case
    retrieval_only = [
        {kk: v for kk, v in r.items() if kk not in ("answer", "citations")} for r in ROWS
    ]
    run = tmp_path / "ret.jsonl"
    write_run(run, retrieval_only)
    result = attribute(load_dataset(ds), load_run(run), chunks=load_chunks(corpus / "chunks.jsonl"))
    assert result.unseen_stages == ["parse", "generation", "grounding"]
    got = {e.id: e.stage for e in result.entries}
    # the quote the parser lost is in no chunk either: without page text that reads as chunking
    assert got["e-parse"] == "chunk"
    assert got["e-generation"] is None and got["e-grounding"] is None
    text = result.to_markdown()
    assert "not seen" in text and "parse, generation, grounding" in text


def test_best_path_is_the_one_nearest_to_complete(case: tuple[Path, Path, Path]) -> None:
    _, _, corpus = case
    entry = {
        "id": "two-paths", "query": "q", "category": "lookup",
        "evidence_paths": [
            [[anchor(1, "Revenue was 500 million in fiscal 2023")], ["c8"]],  # parse + retrieved
            [[anchor(4, PAGES[4])], ["c8"]],  # reranked away + retrieved: further along
        ],
    }  # fmt: skip
    row = {
        "id": "two-paths",
        "retrieved": ["c8", *NOISE[:4]],
        "trace": {"candidates": ["c8", "c4"], "reranked": ["c8", *NOISE[:4], "c4"]},
    }
    from assay.dataset import Entry
    from assay.runs import Run

    result = attribute([Entry.model_validate(entry)], Run.from_rows([row]), corpus=corpus)
    (e,) = result.entries
    assert (e.stage, e.path, e.group) == ("rerank", 1, 0)
    assert [p.stage for p in e.pieces] == ["rerank", None]


def test_an_alternative_that_survives_saves_its_piece(case: tuple[Path, Path, Path]) -> None:
    """A piece is lost at the furthest stage any of its alternatives reached."""
    from assay.dataset import Entry
    from assay.runs import Run

    _, _, corpus = case
    entry = Entry.model_validate(
        {"id": "alt", "query": "q", "category": "c",
         "evidence_paths": [[[anchor(1, "Revenue was 500 million in fiscal 2023"),
                              anchor(3, PAGES[3])]]]}
    )  # fmt: skip
    lost = attribute([entry], Run.from_rows([{"id": "alt", "retrieved": NOISE[:5]}]), corpus=corpus)
    assert lost.entries[0].stage == "recall"  # not "parse": the second alternative got further
    found = attribute([entry], Run.from_rows([{"id": "alt", "retrieved": ["c3"]}]), corpus=corpus)
    assert found.entries[0].stage is None


def test_stale_gold_is_refused_unless_skipped(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, run, corpus = case
    rows = [json.loads(x) for x in ds.read_text().splitlines()]
    rows[1]["evidence_paths"] = [[["no-such-chunk"]]]
    rows[2]["evidence_paths"] = [[[{"doc": "gone", "page": 1, "quote": "x y z"}]]]
    bad = write_jsonl(tmp_path / "stale.jsonl", rows)
    with pytest.raises(DataError) as err:
        attribute_files(bad, run, corpus=corpus)
    msgs = [str(p) for p in err.value.problems]
    assert any("stale.jsonl:2: evidence_paths.0.0.0" in m and "no-such-chunk" in m for m in msgs)
    assert any("stale.jsonl:3" in m and "'gone'" in m for m in msgs)
    result = attribute_files(bad, run, corpus=corpus, skip_stale=True)
    assert set(result.excluded) == {"e-chunk", "e-recall"}


def test_a_document_that_failed_to_parse_is_lost_at_parse(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from assay.dataset import Entry
    from assay.runs import Run

    _, _, corpus = case
    manifest = {
        "format": "assay.corpus/1", "corpus_hash": "x", "parser": "p", "chunker": "c",
        "chunk_settings": {}, "files": {}, "n_documents": 1, "n_pages": 8, "n_chunks": 1,
        "outputs": {}, "failures": [{"file": "/src/broken.pdf", "message": "not parsed"}],
    }  # fmt: skip
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    entry = Entry.model_validate(
        {"id": "b", "query": "q", "category": "c",
         "evidence_paths": [[[{"doc": "broken", "page": 1, "quote": "anything at all"}]]]}
    )  # fmt: skip
    result = attribute([entry], Run.from_rows([{"id": "b", "retrieved": []}]), corpus=corpus)
    assert result.entries[0].stage == "parse"


def test_bad_traces_and_missing_rows_name_the_field(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, _, corpus = case
    rows = [dict(r) for r in ROWS]
    rows[2] = {**rows[2], "trace": {"candidates": [{"score": 1.0}]}}
    run = tmp_path / "badtrace.jsonl"
    write_run(run, rows)
    with pytest.raises(DataError, match=r"trace\.candidates\.0: entry e-recall"):
        attribute_files(ds, run, corpus=corpus)
    write_run(run, ROWS[1:])
    with pytest.raises(DataError, match="1 answerable entries have no row in the run: e-parse"):
        attribute_files(ds, run, corpus=corpus)
    result = attribute_files(ds, run, corpus=corpus, allow_missing=True)
    assert {e.id: e.stage for e in result.entries}["e-parse"] == "parse"


runner = CliRunner()


def test_cli_formats_and_bad_input(case: tuple[Path, Path, Path], tmp_path: Path) -> None:
    ds, run, corpus = case
    res = runner.invoke(
        app, ["attribute", str(ds), str(run), "--corpus", str(corpus), "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert {e["id"]: e["stage"] for e in d["entries"]} == PLANTED
    res = runner.invoke(
        app, ["attribute", str(ds), str(run), "--corpus", str(corpus), "-f", "markdown", "-k", "1"]
    )
    assert res.exit_code == 0, res.output
    assert "| lookup |" in res.stdout and "e-rerank" in res.stdout
    res = runner.invoke(app, ["attribute", str(ds), str(run), "--corpus", str(corpus)])
    assert res.exit_code == 0 and "Where entries were lost" in res.stdout
    res = runner.invoke(app, ["attribute", str(ds), str(run)])
    assert res.exit_code == 2 and "--corpus" in res.output
    res = runner.invoke(app, ["attribute", str(ds), str(run), "--corpus", str(corpus), "-k", "0"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_by_slices_the_funnel_by_an_entry_metadata_key(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """--by format: the same stages, grouped by each entry's metadata.format; entries without
    the key fall in "(none)"; a key no entry has is refused."""
    _, run, corpus = case
    fmt = {eid: ("scan" if i % 2 else "xlsx") for i, eid in enumerate(sorted(PLANTED))}
    entries = [
        {**e, "metadata": {**e.get("metadata", {}), "format": fmt[e["id"]]}}
        if e["id"] in fmt
        else e
        for e in ENTRIES
    ]
    ds = write_jsonl(tmp_path / "formats.jsonl", entries)
    d = json.loads(attribute_files(ds, run, corpus=corpus, by="format").to_json())
    assert d["by"] == "format"
    want: dict[str, dict[str, int]] = {}
    for eid, stage in PLANTED.items():
        cell = want.setdefault(fmt[eid], {})
        cell[stage] = cell.get(stage, 0) + 1
    for group, stages in want.items():
        got = d["categories"][group]
        assert {s: n for s, n in got["stages"].items() if n} == stages, group
        assert got["n_failed"] == sum(stages.values())
    assert d["categories"]["(none)"]["n_failed"] == 0  # e-pass has no format
    with pytest.raises(DataError, match=r"metadata\.messiness"):
        attribute_files(ds, run, corpus=corpus, by="messiness")
    res = runner.invoke(
        app,
        ["attribute", str(ds), str(run), "--corpus", str(corpus), "--by", "format", "-f", "json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["categories"] == d["categories"]


def test_a_row_without_retrieved_is_refused_like_a_missing_row(
    case: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """e-parse has retrieval gold; its row says nothing of retrieval (a text-to-SQL row)."""
    ds, _, corpus = case
    run = tmp_path / "sqlrow.jsonl"
    write_run(run, [{"id": "e-parse", "sql": "SELECT 1"}, *ROWS[1:]])
    with pytest.raises(DataError) as ei:
        attribute_files(ds, run, corpus=corpus)
    assert [(p.file, p.line, p.field) for p in ei.value.problems] == [(str(run), 1, "retrieved")]
    assert "e-parse" in str(ei.value)
    result = attribute_files(ds, run, corpus=corpus, allow_missing=True)
    assert {e.id: e.stage for e in result.entries}["e-parse"] == "parse"
