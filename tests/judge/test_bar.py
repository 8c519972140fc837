"""The calibration bar (assay.judge.bar): at least 100 labelled items, 30-50 human FAILs, TPR
and TNR >= 0.85, kappa >= 0.60, on held-out items. Kappa and the rates are checked against
scikit-learn's on the same labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.judge.bar import BAR

runner = CliRunner()


def _cells(h: np.ndarray, j: np.ndarray) -> tuple[int, int, int, int]:
    return (
        int((h & j).sum()),
        int((h & ~j).sum()),
        int((~h & j).sum()),
        int((~h & ~j).sum()),
    )


def test_measures_match_scikit_learn() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    h = rng.random(150) < 0.75
    j = np.where(rng.random(150) < 0.9, h, ~h)
    m = BAR.measures(_cells(h, j))
    assert m["kappa"] == pytest.approx(sk.cohen_kappa_score(h, j))
    assert m["tpr"] == pytest.approx(sk.recall_score(h, j))
    assert m["tnr"] == pytest.approx(sk.recall_score(~h, ~j))


@pytest.mark.parametrize(
    ("cells", "expect"),
    [
        ((60, 5, 4, 36), []),  # 105 items, 40 FAILs, TPR .92, TNR .90, kappa ~.83
        ((55, 5, 4, 26), ["90 labelled items (at least 100)"]),
        ((80, 5, 2, 23), ["25 human FAILs (30 to 50)"]),
        ((45, 5, 6, 54), ["60 human FAILs (30 to 50)"]),
        ((50, 15, 4, 36), ["TPR 0.769 (at least 0.85)"]),
        ((60, 5, 8, 32), ["TNR 0.800 (at least 0.85)"]),
    ],
)
def test_the_bar(cells: tuple[int, int, int, int], expect: list[str]) -> None:
    assert BAR.shortfalls(cells) == expect


def test_kappa_below_the_bar_alone() -> None:
    """500 items, 50 FAILs, TPR 0.90 and TNR 0.86 clear their floors, yet kappa is 0.568:
    rare FAILs make chance agreement high."""
    cells = (405, 45, 7, 43)
    m = BAR.measures(cells)
    assert m["kappa"] == pytest.approx(0.568, abs=1e-3)
    assert BAR.shortfalls(cells) == ["kappa 0.568 (at least 0.60)"]
    assert BAR.shortfalls((60, 5, 4, 36), not_held_out=3)[0].startswith("3 items are not held")


def _files(tmp: Path, n: int, fails: int, flip: int, split: str | None = None) -> tuple[Path, Path]:
    human, judge = tmp / "human.jsonl", tmp / "judge.jsonl"
    hrows, jrows = [], []
    for i in range(n):
        passed = i >= fails
        row = {"id": f"q{i}", "pass": passed}
        if split and i < 5:
            row["split"] = split
        hrows.append(row)
        jrows.append({"id": f"q{i}", "pass": passed != (i < flip), "judge_hash": "jh"})
    human.write_text("".join(json.dumps(r) + "\n" for r in hrows))
    judge.write_text("".join(json.dumps(r) + "\n" for r in jrows))
    return human, judge


def test_calibrate_refuses_the_issues_weak_calibration(tmp_path: Path) -> None:
    """Today's main accepted a calibration on 9 items with TNR 0.6."""
    human, judge = _files(tmp_path, 9, 5, 2)  # 5 FAILs, 2 of them passed by the judge
    out = tmp_path / "cal.json"
    args = ["judge", "calibrate", "--human", str(human), "--judge", str(judge), "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and not out.exists()
    assert "9 labelled items" in res.output and "TNR 0.600" in res.output


def test_calibrate_writes_a_calibration_that_clears_the_bar(tmp_path: Path) -> None:
    human, judge = _files(tmp_path, 120, 40, 3)  # 3 FAILs the judge passed: TNR .925
    out = tmp_path / "cal.json"
    args = ["judge", "calibrate", "--human", str(human), "--judge", str(judge), "--out", str(out)]
    res = runner.invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["bar"] == {**json.loads(res.stdout)["bar"], "met": True}
    res = runner.invoke(app, args)
    assert "calibration bar met" in res.output


def test_items_from_the_judges_own_split_are_not_held_out(tmp_path: Path) -> None:
    human, judge = _files(tmp_path, 120, 40, 3, split="judge-fewshot")
    out = tmp_path / "cal.json"
    args = ["judge", "calibrate", "--human", str(human), "--judge", str(judge), "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "5 items are not held out" in res.output
