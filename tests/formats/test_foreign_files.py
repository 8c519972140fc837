"""Files made by the tools themselves, not by assay: their field names are read, the rest kept
under metadata, guesses and edits said; bad files are refused naming FILE:LINE: field, with
nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.cli.formats_cmds import FORMAT_SUMMARIES
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry
from assay.errors import DataError
from assay.formats import FORMATS, export_entries, import_file

FINANCEBENCH = next(
    (
        p / "shared" / "financebench" / "questions_dev.jsonl"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "financebench" / "questions_dev.jsonl").exists()
    ),
    Path("/nonexistent"),
)
runner = CliRunner()


def _table() -> ChunkTable:
    return ChunkTable(
        [
            Chunk("acme-10k#1", "acme-10k", "Revenue was $1,250 million in fiscal 2024.", [3]),
            Chunk("acme-10k#2", "acme-10k", "Gross margin was 41.6%.", [4]),
        ]
    )


def test_the_cli_lists_every_registered_format() -> None:
    assert set(FORMAT_SUMMARIES) == set(FORMATS)
    res = runner.invoke(app, ["import", "--help"])
    assert all(name in res.stdout for name in FORMATS)


def test_a_ragas_csv_as_pandas_writes_it(tmp_path: Path) -> None:
    f = tmp_path / "testset.csv"
    f.write_text(
        "user_input,reference_contexts,reference,synthesizer_name\n"
        '"What was revenue?","[\'Revenue  was $1,250 million in FISCAL 2024.\']","$1,250m",single_hop\n'
        "\"And margin?\",\"['Gross margin was 41.6%.', 'A context no chunk holds.']\",41.6%,multi_hop\n",
        encoding="utf-8",
    )
    got = import_file("ragas", f, table=_table())
    a, b = got.entries
    assert a.query == "What was revenue?" and a.reference_answer == "$1,250m"
    assert a.evidence_paths == [[["acme-10k#1"]]] and b.evidence_paths == [[["acme-10k#2"]]]
    assert b.metadata["unmatched_contexts"] == ["A context no chunk holds."]
    assert a.metadata["synthesizer_name"] == "single_hop"
    assert [e.id for e in got.entries] == ["testset-00001", "testset-00002"]
    notes = "\n".join(got.notes)
    assert "id: guessed for 2 entries" in notes and "category: guessed for 2" in notes
    assert "synthesizer_name: not an entry field; kept under metadata" in notes
    assert "1 texts match no chunk" in notes
    # without a chunk table the gold text is kept, and the import says how to use it
    plain = import_file("ragas", f)
    assert plain.entries[0].metadata["gold_contexts"] and not plain.entries[0].evidence_paths
    assert any("give --chunks" in n for n in plain.notes)


def test_deepeval_goldens_as_save_as_writes_them(tmp_path: Path) -> None:
    f = tmp_path / "goldens.json"
    f.write_text(
        json.dumps(
            [
                {
                    "input": "What was revenue?",
                    "expected_output": "$1,250 million",
                    "context": ["Revenue was $1,250 million in fiscal 2024."],
                    "actual_output": None,
                    "retrieval_context": None,
                    "additional_metadata": {"category": "numeric", "desk": "equity"},
                    "source_file": "acme.pdf",
                }
            ],
            indent=2,
        )
    )
    (e,) = import_file("deepeval", f, table=_table()).entries
    assert e.category == "numeric" and e.evidence_paths == [[["acme-10k#1"]]]
    assert e.metadata == {"desk": "equity", "source_file": "acme.pdf"}


def test_a_promptfoo_config_with_other_assertions(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    f = tmp_path / "promptfooconfig.yaml"
    f.write_text(
        "prompts: [file://prompt.txt]\n"
        "tests:\n"
        "  - description: rev-2024\n"
        "    vars:\n"
        "      question: What was revenue?\n"
        "      company: Acme\n"
        "    assert:\n"
        "      - type: factuality\n"
        "        value: $1,250 million\n"
        "      - {type: llm-rubric, value: 'Revenue was $1,250 million', metric: key_fact}\n"
        "      - {type: latency, threshold: 2000}\n"
    )
    (e,) = import_file("promptfoo", f).entries
    assert e.id == "rev-2024" and e.query == "What was revenue?"
    assert e.reference_answer == "$1,250 million"
    assert [k.fact for k in e.key_facts] == ["Revenue was $1,250 million"]
    assert e.metadata == {
        "company": "Acme",
        "promptfoo_asserts": [{"type": "latency", "threshold": 2000}],
    }


def test_a_label_studio_export_with_user_ids_cancellations_and_predictions(tmp_path: Path) -> None:
    f = tmp_path / "project-1.json"
    f.write_text(
        json.dumps(
            [
                {
                    "id": 17,
                    "data": {"question": "What was revenue?", "answer": "$1,250m"},
                    "annotations": [
                        {
                            "id": 1,
                            "completed_by": 3,
                            "was_cancelled": False,
                            "result": [
                                {
                                    "from_name": "correct",
                                    "to_name": "answer",
                                    "type": "choices",
                                    "value": {"choices": ["Pass"]},
                                },
                                {
                                    "from_name": "quality",
                                    "to_name": "answer",
                                    "type": "rating",
                                    "value": {"rating": 4},
                                },
                            ],
                        },
                        {"id": 2, "completed_by": 5, "was_cancelled": True, "result": []},
                    ],
                    "predictions": [{"result": []}],
                }
            ]
        )
    )
    got = import_file("label-studio", f)
    assert got.entries[0].id == "17" and got.entries[0].query == "What was revenue?"
    assert got.labels == [
        {"item": "17", "rater": "user-3", "label": "Pass", "criterion": "correct"},
        {"item": "17", "rater": "user-3", "label": 4, "criterion": "quality"},
    ]
    assert "1 cancelled annotations left out" in got.notes
    assert any("predictions" in n for n in got.notes)


def test_financebench_as_published(tmp_path: Path) -> None:
    """FinanceBench's questions file as the Hub serves it: its id, question type, question and
    answer are read as assay's; the evidence pages' text is gold given as text."""
    if not FINANCEBENCH.exists():
        pytest.skip("the FinanceBench development split is not beside the checkout")
    got = import_file("hf", FINANCEBENCH)
    assert len(got.entries) == 75
    e = got.entries[0]
    assert e.id.startswith("financebench_id_") and e.category in {
        "metrics-generated",
        "domain-relevant",
        "novel-generated",
    }
    assert e.reference_answer and e.metadata["company"] and e.metadata["gold_contexts"]
    assert not any("guessed" in n for n in got.notes)


def test_an_edit_in_the_spreadsheet_comes_back_and_is_counted(tmp_path: Path) -> None:
    e = Entry(
        id="q1", query="What was revenue?", category="numeric", evidence_paths=[[["acme-10k#1"]]]
    )
    f = tmp_path / "golden.csv"
    export_entries("csv", [e], f)
    import csv

    with f.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["query"] = "What was FY2024 revenue?"  # the column, not the whole-entry cell
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    got = import_file("csv", f)
    assert got.entries[0].query == "What was FY2024 revenue?"
    assert got.entries[0].evidence_paths == e.evidence_paths
    assert "query: edited in the file for 1 entries (the file's value was taken)" in got.notes


BAD = {
    "csv": (
        "golden.csv",
        'id,query,category\nq1,"a question\nover two lines",numeric\nq2,,numeric\n',
        4,
        "query",
    ),
    "ragas": (
        "t.json",
        '[\n {"user_input": "ok"},\n {"user_input": "x", "as_of": "2024-13-01"}\n]',
        3,
        "as_of",
    ),
    "deepeval": ("g.json", '[\n {"input": "ok"},\n\n {"input": "bad" \n]', 5, None),
    "label-studio": ("t.json", '[{"id": 1, "data": {"text": "a"}},\n {"id": 2}]', 2, "data"),
    "promptfoo": (
        "t.yaml",
        "- vars: {query: a}\n- vars: {query: b}\n  description: x\n- vars: [1]\n",
        4,
        "vars",
    ),
    "argilla": (
        "r.json",
        '[{"id": "a", "fields": {"query": "q"}},\n {"id": "a", "fields": {"query": "q"}}]',
        2,
        "id",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_names_file_line_and_field_and_writes_nothing(name: str, tmp_path: Path) -> None:
    fname, text, line, fld = BAD[name]
    f = tmp_path / fname
    f.write_text(text)
    with pytest.raises(DataError) as err:
        import_file(name, f)
    p = err.value.problems[0]
    assert (p.file, p.line, p.field) == (str(f), line, fld), str(err.value)
    out = tmp_path / "out.jsonl"
    res = runner.invoke(app, ["import", name, str(f), "--out", str(out)])
    assert res.exit_code == 2 and f"{f}:{line}" in res.output and not out.exists()
