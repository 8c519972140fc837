"""`assay export` / `assay import` for every format: a round trip gives back the same entries and
the same `assay score` output; each annotator's labels survive Label Studio and Argilla; files
from the tools themselves (Label Studio's and Argilla's record models, `datasets`) read them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.corpus import load_chunks
from assay.dataset import load_dataset, write_dataset
from assay.formats import FORMATS, ExportOptions, export_entries, import_file

sys.path.insert(0, str(Path(__file__).parents[1] / "compare"))
from room_runs import room, write_chunks, write_run_file

runner = CliRunner()
TARGET = {
    "csv": "golden.csv",
    "hf": "golden-hf",
    "label-studio": "tasks.json",
    "argilla": "records.json",
    "ragas": "testset.csv",
    "deepeval": "goldens.json",
    "promptfoo": "tests.yaml",
}
LABELS = [
    {"item": "", "rater": "ana", "label": "pass", "criterion": "correct"},
    {"item": "", "rater": "ben", "label": "fail", "criterion": "correct"},
    {"item": "", "rater": "ana", "label": True, "criterion": "faithful"},
    {"item": "", "rater": "ben", "label": 4, "criterion": "complete"},
    {"item": "", "rater": "cy", "label": "pass", "criterion": "correct"},
]


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("room")
    golden = room(d)
    chunks = d / "chunks.jsonl"
    gold = write_chunks(golden, chunks)
    run = write_run_file(golden, gold, d / "run.jsonl", missed=list(gold)[:5])
    # the room's file as assay writes datasets (the room's own writer orders keys otherwise),
    # so that the version stamped in a score, the content hash, can be compared too
    golden = write_dataset(d / "golden-assay.jsonl", load_dataset(golden).entries).path
    return {"dir": d, "golden": Path(golden), "chunks": chunks, "run": run}


def _score(dataset: Path, case: dict[str, Path]) -> dict[str, Any]:
    res = runner.invoke(
        app,
        ["score", str(dataset), str(case["run"]), "--chunks", str(case["chunks"]), "-f", "json"],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    out.pop("dataset", None)  # the path; the content hash stays in `versions`
    return out


_ORIGINAL: dict[str, dict[str, Any]] = {}


def _original_score(case: dict[str, Path]) -> dict[str, Any]:
    """The original dataset's score, computed once for every format's comparison."""
    key = str(case["golden"])
    if key not in _ORIGINAL:
        _ORIGINAL[key] = _score(case["golden"], case)
    return _ORIGINAL[key]


def test_every_format_is_tested() -> None:
    assert set(FORMATS) == set(TARGET)


@pytest.mark.parametrize("name", sorted(TARGET))
def test_round_trip_gives_the_same_entries_and_scores(
    name: str, case: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / TARGET[name]
    res = runner.invoke(
        app,
        [
            "export-as",
            name,
            str(case["golden"]),
            "--out",
            str(out),
            "--chunks",
            str(case["chunks"]),
        ],
    )
    assert res.exit_code == 0, res.output
    back = tmp_path / "back.jsonl"
    res = runner.invoke(app, ["import", name, str(out), "--out", str(back), "-f", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["entries"] == len(load_dataset(case["golden"]))
    assert not any("edited" in n or "guessed" in n for n in report["notes"]), report["notes"]
    before = [e.to_json_dict() for e in load_dataset(case["golden"]).entries]
    after = [e.to_json_dict() for e in load_dataset(back).entries]
    assert after == before
    assert _score(back, case) == _original_score(case)


@pytest.mark.parametrize("name", ["label-studio", "argilla"])
def test_each_annotators_labels_survive(name: str, case: dict[str, Path], tmp_path: Path) -> None:
    entries = load_dataset(case["golden"]).entries[:3]
    labels = [dict(r, item=e.id) for e in entries for r in LABELS]
    out = tmp_path / TARGET[name]
    export_entries(name, entries, out, labels=labels)
    got = import_file(name, out)
    key = lambda r: (r["item"], r["rater"], r["criterion"])  # noqa: E731
    assert sorted(got.labels, key=key) == sorted(labels, key=key)
    assert {type(r["label"]) for r in got.labels} == {str, bool, int}


def test_label_studio_tasks_follow_the_published_task_format(
    case: dict[str, Path], tmp_path: Path
) -> None:
    """Label Studio's import format (labelstud.io/guide/tasks, /guide/export): a list of tasks,
    each with a `data` object of the values the config names ($query, $reference_answer), and
    `annotations` whose results name `from_name`/`to_name`/`type` and a `value` of that type;
    the config beside the file names every choice the results use."""
    import xml.etree.ElementTree as ET

    entries = load_dataset(case["golden"]).entries[:2]
    out = tmp_path / "tasks.json"
    export_entries(
        "label-studio", entries, out, labels=[dict(r, item=entries[0].id) for r in LABELS]
    )
    tasks = json.loads(out.read_text())
    config = ET.parse(tmp_path / "tasks.label_config.xml").getroot()
    names = {t.get("name"): t for t in config}
    for task in tasks:
        assert isinstance(task["id"], int) and isinstance(task["data"], dict)
        for t in config.iter("Text"):
            assert t.get("value", "").removeprefix("$") in task["data"]
        for ann in task["annotations"]:
            assert isinstance(ann["completed_by"]["id"], int) and ann["was_cancelled"] is False
            for res in ann["result"]:
                assert res["to_name"] == "answer" and res["type"] in ("choices", "number")
                assert set(res["value"]) == {res["type"] if res["type"] == "number" else "choices"}
                if res["type"] == "choices":
                    allowed = {c.get("value") for c in names[res["from_name"]]}
                    assert set(res["value"]["choices"]) <= allowed


def test_argilla_reads_the_records(case: dict[str, Path], tmp_path: Path) -> None:
    rg = pytest.importorskip("argilla")
    entries = load_dataset(case["golden"]).entries[:3]
    out = tmp_path / "records.json"
    export_entries("argilla", entries, out, labels=[dict(r, item=entries[1].id) for r in LABELS])
    for raw in json.loads(out.read_text()):
        rec = rg.Record.from_dict(raw)
        assert rec.id == raw["id"] and rec.fields["query"]
    rec = rg.Record.from_dict(json.loads(out.read_text())[1])
    by_q = {r.question_name: r for r in rec.responses}
    assert by_q["correct"].value in ("pass", "fail") and by_q["complete"].value == 4


@pytest.mark.parametrize("variant", ["jsonl", "parquet"])
def test_hugging_face_datasets_loads_the_folder(
    variant: str, case: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    datasets = pytest.importorskip("datasets")
    entries = load_dataset(case["golden"]).entries
    out = tmp_path / "golden-hf"
    export_entries("hf", entries, out, options=ExportOptions(variant=variant))
    ds = datasets.load_dataset(str(out), split="test")
    assert ds.num_rows == len(entries)
    assert ds["query"] == [e.query for e in entries]
    assert [json.loads(s)["id"] for s in ds["assay_entry"]] == [e.id for e in entries]


def test_plain_export_says_what_it_cannot_hold(case: dict[str, Path], tmp_path: Path) -> None:
    entries = load_dataset(case["golden"]).entries
    table = load_chunks(case["chunks"])
    out = tmp_path / "plain.csv"
    got = export_entries("ragas", entries, out, options=ExportOptions(table=table, plain=True))
    assert any(
        "not given back as they were by the plain format" in n and "as_of" in n for n in got.notes
    )
    assert out.read_text().splitlines()[0] == "user_input,reference,reference_contexts"
    back = import_file("ragas", out, table=table)
    assert [e.query for e in back.entries] == [e.query for e in entries]

    # gold given as text comes back onto the chunks it was written from (anchors included)
    from assay.gold.resolve import GoldResolver

    resolver = GoldResolver(table)

    def first_path(e: Any) -> set[str]:
        return {
            c.chunk_id
            for path in e.evidence_paths[:1]
            for piece in path
            for c in resolver.resolve(piece[0]).chunks
        }

    def ids(e: Any) -> set[str]:
        return {a for p in e.evidence_paths for piece in p for a in piece if isinstance(a, str)}

    text = {c.chunk_id: c.text for c in table}
    with_gold = [(a, b) for a, b in zip(entries, back.entries, strict=True) if a.evidence_paths]
    assert len(with_gold) > 50
    for a, b in with_gold:  # each gold chunk, and as alternatives the chunks of the same text
        assert first_path(a) <= ids(b), a.id
        assert {text[i] for i in ids(b)} == {text[i] for i in first_path(a)}, a.id
