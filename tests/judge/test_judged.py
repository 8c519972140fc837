"""The judged-answers file `judge run --out` writes and `judge calibrate` reads has a library reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.errors import DataError
from assay.judge import read_judged
from assay.judge.calibrated import JudgeReport
from assay.judge.report import rate_table
from assay.label_files import calibrate_files
from assay.stats.calibration import binary_calibration

H = "ab" * 32


def row(i: str, matches: bool | None, **kw: Any) -> dict[str, Any]:
    base = {
        "id": i,
        "category": "lookup",
        "judge_hash": H,
        "supported": True,
        "matches_reference": matches,
        "critiques": {"supported": "Fine.", "matches_reference": "Figure."},
    }
    return {**base, **kw}


def test_written_by_the_report_read_back_and_calibrated(tmp_path: Path) -> None:
    rows = [row("a", True), row("b", False), row("c", None), row("d", True, category="other")]
    rep = JudgeReport(
        rows=rows,
        checks=["supported", "matches_reference"],
        rates=rate_table(rows, ["supported", "matches_reference"], np.random.default_rng(0), 50),
        meta={"dataset": {"version": "v1"}, "run": {"hash": "r1"}, "judge": {"hash": H}},
    )
    path = tmp_path / "judged.jsonl"
    rep.write_rows(path)
    judged = read_judged(path)
    assert judged.judge_hash == H and len(judged) == 4
    assert judged.questions == ("supported", "matches_reference")
    assert judged.verdicts("matches_reference") == {"a": True, "b": False, "d": True}
    assert judged.categories()["d"] == "other" and judged.meta["dataset_version"] == "v1"
    assert judged.rows[1].critiques["matches_reference"] == "Figure." and judged.rows[1].line == 2
    with pytest.raises(DataError, match="not a question of this judge"):
        judged.verdicts("faithful")
    # the same file feeds calibration, in the library as on the command line
    human = tmp_path / "human.jsonl"
    human.write_text(
        "".join(json.dumps({"id": i, "pass": p}) + "\n" for i, p in [("a", True), ("b", True)])
    )
    cal = calibrate_files(human, path, judge_field="matches_reference")
    assert cal.judge_hash == H and (cal.overall.tp, cal.overall.fn) == (1, 1)
    # an unreadable reply (null) is left out with a warning, not a reason to refuse the file
    assert cal.n_judge_only == 1 and any("no verdict (null" in w for w in cal.warnings)
    v = judged.verdicts("matches_reference")
    direct = binary_calibration([True, True], [v["a"], v["b"]])
    assert (direct.tp, direct.fn) == (cal.overall.tp, cal.overall.fn)


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        (["[1, 2]"], ":1: expected a JSON object"),
        ([json.dumps(row("", True))], ":1: id: required"),
        ([json.dumps(row("a", True)), json.dumps(row("a", False))], ":2: id: duplicate id 'a' (first on line 1)"),
        ([json.dumps(row("a", True)), json.dumps(row("b", True, judge_hash="cd" * 32))], ":2: judge_hash: cdcdcdcdcdcd differs"),
        ([json.dumps({**row("a", True), "judge_hash": None})], ":1: judge_hash: required"),
        ([json.dumps(row("a", "yes"))], ":1: matches_reference: expected true, false or null"),
        ([json.dumps({k: v for k, v in row("a", True).items() if k != "supported"})], ":1: supported: missing verdict"),
        ([json.dumps({k: v for k, v in row("a", True).items() if k != "critiques"})], ":1: critiques: required"),
        ([json.dumps(row("a", True)), json.dumps({**row("b", True), "critiques": {"supported": "x"}})], ":2: critiques: questions"),
        ([json.dumps(row("a", True, category=3))], ":1: category: expected a string"),
    ],
)  # fmt: skip
def test_bad_rows_are_named_by_file_line_and_field(
    tmp_path: Path, lines: list[str], where: str
) -> None:
    path = tmp_path / "judged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as exc:
        read_judged(path)
    assert any(str(p).startswith(str(path)) and where in str(p) for p in exc.value.problems), [
        str(p) for p in exc.value.problems
    ]


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "judged.jsonl"
    path.write_text("")
    with pytest.raises(DataError, match="no judged answers"):
        read_judged(path)


def test_a_cell_where_every_entry_passed_has_an_interval_not_a_point() -> None:
    """113 passes out of 113 is not certainty: no fail at all is a rare event, so Clopper-Pearson's
    interval, not the bootstrap's [1, 1]."""
    from assay.judge.report import rate_table
    from assay.stats.proportion import clopper_pearson

    rows = [{"category": "c", "ok": True} for _ in range(113)]
    cell = rate_table(rows, ["ok"], np.random.default_rng(0), 200)["c"]["ok"]
    iv = cell.interval
    ref = clopper_pearson(113, 113)
    assert iv.value == 1.0 and iv.high == 1.0 and iv.low is not None and iv.low < 1.0
    assert (iv.low, iv.high) == (ref.low, ref.high)
