from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.audit import audit_leakage
from assay.audit.overlap import normalise
from assay.cli import app
from assay.dataset import load_dataset
from assay.errors import DataError
from tests.audit.conftest import write_jsonl

runner = CliRunner()

Q_TEST = "What was Acme's total revenue in fiscal 2023 per the 10-K?"  # 11 tokens, 7 5-grams
Q_DEV = "How many employees did Beta Bank have at year end 2024?"


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "golden.jsonl",
        [
            {
                "id": "t1",
                "query": Q_TEST,
                "category": "c",
                "split": "test",
                "reference_answer": "Acme reported total revenue of $1,234 million for fiscal 2023.",
            },
            {
                "id": "t2",
                "query": "NIM trend for Beta over the last three years",
                "category": "c",
                "split": "fresh",
                "reference_answer": "Yes",
            },
            {"id": "t3", "query": "ACME EPS 2Q24", "category": "c", "split": "test"},
            {"id": "d1", "query": Q_DEV, "category": "c", "split": "dev"},
        ],
    )


def test_normalisation() -> None:
    assert normalise("Revenue was $1,234.5 MILLION.") == "revenue was 1234.5 million"
    assert normalise("Acme's  10-K") == "acme s 10 k"


def test_rows_found_in_few_shot_and_text_files(golden: Path, tmp_path: Path) -> None:
    fewshot = write_jsonl(
        tmp_path / "fewshot.jsonl",
        [
            {"q": "Unrelated question about inventory turns", "a": "4.1x"},
            # t1's question, re-cased and re-punctuated, inside a prompt; d1 is not held out
            {
                "messages": [
                    {
                        "role": "user",
                        "content": "WHAT WAS ACME'S total revenue, in fiscal 2023 per the 10-K",
                    }
                ],
                "dev": Q_DEV,
            },
        ],
    )
    text = tmp_path / "prompt.txt"
    # t1's reference answer, broken across lines, starting on line 2
    text.write_text(
        "You are an analyst.\nAcme reported total revenue\nof $1,234 million for fiscal 2023.\n"
    )
    rep = audit_leakage(load_dataset(golden), [fewshot, text])
    got = {(lk.id, lk.field, Path(lk.file).name, lk.file_line) for lk in rep.leaks}
    assert got == {("t1", "query", "fewshot.jsonl", 2), ("t1", "reference_answer", "prompt.txt", 2)}
    assert all(lk.overlap == 1.0 for lk in rep.leaks)
    assert rep.n_rows == 3  # test and fresh rows only
    assert rep.n_too_short == 1  # "Yes"
    assert not rep.ok


def test_threshold_is_a_share_of_ngrams(golden: Path, tmp_path: Path) -> None:
    ds = load_dataset(golden)
    toks = normalise(Q_TEST).split()  # "acme s" and "10 k": 13 tokens, 9 distinct 5-grams
    assert len(toks) == 13
    five = tmp_path / "five.txt"
    five.write_text(" ".join(toks[:9]) + "\n")  # holds 5 of the 9 5-grams
    four = tmp_path / "four.txt"
    four.write_text(" ".join(toks[:8]) + "\n")  # holds 4 of 9
    assert [lk.overlap for lk in audit_leakage(ds, [five]).leaks] == [5 / 9]
    assert audit_leakage(ds, [four]).leaks == []
    assert [lk.overlap for lk in audit_leakage(ds, [four], threshold=4 / 9).leaks] == [4 / 9]


def test_short_texts_match_whole(golden: Path, tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("examples: acme eps 2q24 and more\n")
    rep = audit_leakage(load_dataset(golden), [f])
    assert [(lk.id, lk.file_line) for lk in rep.leaks] == [("t3", 1)]
    f.write_text("acme eps 2q245\n")
    assert audit_leakage(load_dataset(golden), [f]).leaks == []


def test_splits_all_checks_every_row(golden: Path, tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "train.jsonl", [{"text": Q_DEV}])
    assert audit_leakage(load_dataset(golden), [f]).leaks == []
    assert [lk.id for lk in audit_leakage(load_dataset(golden), [f], splits=None).leaks] == ["d1"]


def test_bad_jsonl_line_names_file_and_line(golden: Path, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"ok": 1}\n{oops\n')
    with pytest.raises(DataError) as exc:
        audit_leakage(load_dataset(golden), [f])
    assert f"{f}:2" in str(exc.value)


def test_text_that_is_not_utf8_names_its_line(golden: Path, tmp_path: Path) -> None:
    f = tmp_path / "prompt.txt"
    f.write_bytes(b"fine\nbad \xff byte\n")
    with pytest.raises(DataError) as exc:
        audit_leakage(load_dataset(golden), [f])
    assert f"{f}:2: not UTF-8" in str(exc.value)


def test_cli_exit_codes(golden: Path, tmp_path: Path) -> None:
    clean = write_jsonl(tmp_path / "clean.jsonl", [{"q": "nothing held out here at all"}])
    res = runner.invoke(app, ["audit", "leakage", str(golden), str(clean), "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["ok"] is True
    leaky = write_jsonl(tmp_path / "leaky.jsonl", [{"q": Q_TEST}])
    res = runner.invoke(app, ["audit", "leakage", str(golden), str(leaky)])
    assert res.exit_code == 1, res.output
    assert "t1" in res.output
