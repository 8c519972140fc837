"""Reading label and verdict files: every problem named FILE:LINE: field, stats' refusals included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import DataError
from assay.label_files import agreement_file, calibrate_files, load_labels, read_verdict
from assay.stats._errors import StatsInputError


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_parse_errors_name_file_line_and_field(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "labels.jsonl",
        [
            {"item": "a", "rater": "x", "label": True},
            {"item": "a", "rater": "x", "label": False},
            {"rater": "y", "label": True},
            {"item": "b", "rater": "y", "label": [1]},
        ],
    )
    with pytest.raises(DataError) as exc:
        load_labels(p)
    where = {(pr.file, pr.line, pr.field) for pr in exc.value.problems}
    assert where == {(str(p), 2, "rater"), (str(p), 3, "item"), (str(p), 4, "label")}
    assert str(exc.value.problems[0]).startswith(f"{p}:2: rater: rater 'x' labelled item 'a'")


def test_stats_refusals_on_a_file_name_the_file_and_line(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "labels.jsonl",
        [{"item": "a", "rater": "x", "label": 1}, {"item": "a", "rater": "y", "label": "one"}],
    )
    with pytest.raises(DataError) as exc:
        agreement_file(p, n_resamples=10)
    assert {(pr.file, pr.line, pr.field) for pr in exc.value.problems} == {
        (str(p), 1, "label"),
        (str(p), 2, "label"),
    }
    assert all("labels mix kinds" in str(pr) for pr in exc.value.problems)
    ok = _write(
        tmp_path / "ok.jsonl",
        [{"item": "a", "rater": "x", "label": "yes"}, {"item": "a", "rater": "y", "label": "no"}],
    )
    with pytest.raises(DataError) as exc:
        agreement_file(ok, positive="maybe", n_resamples=10)
    assert str(exc.value) == f"{ok}: positive: 'maybe' is not among the labels ['no', 'yes']"
    with pytest.raises(DataError, match=rf"^{ok}: criterion: no labels with criterion 'x'$"):
        agreement_file(ok, criterion="x")


def test_bad_arguments_are_refused_before_the_file_is_read(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(StatsInputError, match=r"^confidence: must be in \(0, 1\), got 1.5$"):
        agreement_file(missing, confidence=1.5)
    human = _write(tmp_path / "h.jsonl", [{"id": "a", "pass": True}])
    judged = _write(tmp_path / "j.jsonl", [{"id": "a", "pass": "fail"}])
    with pytest.raises(StatsInputError, match="n_resamples"):
        calibrate_files(human, judged, n_resamples=0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (0, False), (1.0, True), (" PASS ", True), ("incorrect", False), ("n", False)],
)
def test_read_verdict_reads_words_and_numbers(value: object, expected: bool) -> None:
    assert read_verdict(value, file="f.jsonl", line=3, field_name="pass") is expected


def test_read_verdict_refuses_anything_else_naming_file_line_and_field() -> None:
    with pytest.raises(DataError, match=r"^f.jsonl:3: grade: expected a PASS/FAIL verdict"):
        read_verdict("maybe", file="f.jsonl", line=3, field_name="grade")
    with pytest.raises(DataError):
        read_verdict(2, file="f.jsonl", line=3, field_name="grade")
