"""`open_inputs` parses the runs before the dataset (a run's parse needs several times the
file's size for a moment, which then does not come on top of the loaded entries), yet reports
problems in the order the files are named: a bad dataset first, then a bad run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write_case

import assay.dataset as dataset_face
import assay.runs as runs_face
from assay.compare import gate_files
from assay.compare._reading import open_inputs
from assay.errors import DataError

OUTCOMES = {"a": [(1, 2), (2, 2), (0, 2)] * 2}
KW: dict[str, Any] = {"n_resamples": 50, "n_permutations": 50, "record": False}


def test_runs_are_parsed_before_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    order: list[str] = []
    real_run, real_ds = runs_face.load_run, dataset_face.load_dataset

    def run_spy(path: Any, **kw: Any) -> Any:
        order.append(f"run {Path(path).name}")
        return real_run(path, **kw)

    def ds_spy(path: Any) -> Any:
        order.append("dataset")
        return real_ds(path)

    monkeypatch.setattr(runs_face, "load_run", run_spy)
    monkeypatch.setattr(dataset_face, "load_dataset", ds_spy)
    with open_inputs(ds, [base, cand]) as inputs:
        assert [r.path for r in inputs.runs] == [str(base), str(cand)]
        assert len(inputs.dataset) == 6
    assert order == ["run base.jsonl", "run cand.jsonl", "dataset"]


def test_a_bad_dataset_is_reported_before_a_bad_run(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    ds.write_text(ds.read_text() + '{"id": "x", "query": ""}\n', encoding="utf-8")
    cand.write_text('{"id": "q0", "retrieved": [}\n', encoding="utf-8")
    with pytest.raises(DataError) as err:
        gate_files(ds, base, cand, **KW)
    assert {p.file for p in err.value.problems} == {str(ds)}
    assert err.value.problems[0].line == 7


@pytest.mark.parametrize("bad", ["not json", "directory"])
def test_a_bad_run_is_still_reported_after_a_good_dataset(tmp_path: Path, bad: str) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    if bad == "directory":
        cand.unlink()
        cand.mkdir()
        with pytest.raises(IsADirectoryError):
            gate_files(ds, base, cand, **KW)
        return
    cand.write_text('{"id": "q0", "retrieved": [}\n', encoding="utf-8")
    with pytest.raises(DataError) as err:
        gate_files(ds, base, cand, **KW)
    assert {p.file for p in err.value.problems} == {str(cand)}


def test_the_rows_are_read_once_for_both_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.compare import compare_files

    ds, base, cand = write_case(tmp_path, OUTCOMES | {"b": [(1, 2), (2, 0)] * 3})
    calls: list[str] = []
    real = dataset_face.groups

    def spy(entries: Any, by: str, **kw: Any) -> Any:
        calls.append(by)
        return real(entries, by, **kw)

    monkeypatch.setattr(dataset_face, "groups", spy)
    cmp = compare_files(ds, base, cand, **KW)
    assert calls == ["category"]
    assert sorted(cmp.categories) == ["a", "b"]
    assert [cmp.categories[c].n for c in ("a", "b")] == [6, 6]
