"""The calibration bar (assay.judge.bar): at least 100 labelled items, at least 30 human FAILs,
TPR and TNR >= 0.85 (0.90 in high-risk categories), kappa >= 0.60, overall and in every category
with enough labels, on held-out items. Kappa and the rates are checked against scikit-learn's on
the same labels, the slices' intervals against statsmodels'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
        ((80, 5, 2, 23), ["25 human FAILs (at least 30)"]),
        ((45, 5, 6, 54), []),  # 60 FAILs: a minimum of 30, not a maximum of 50
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


# ------------------------------------------------------------------------------ per slice


def _cat_files(
    tmp: Path, cats: dict[str, tuple[int, int, int, int]], *, manifest: dict[str, Any] | None = None
) -> tuple[Path, Path, Path]:
    """Human and judged files whose categories have these confusion counts (tp, fn, fp, tn),
    and a golden dataset with those categories (its manifest `manifest`)."""
    human, judge, golden = tmp / "human.jsonl", tmp / "judge.jsonl", tmp / "golden.jsonl"
    hrows, jrows, entries = [], [], []
    for cat, (tp, fn, fp, tn) in cats.items():
        pairs = [(True, True)] * tp + [(True, False)] * fn + [(False, True)] * fp
        for i, (h, j) in enumerate(pairs + [(False, False)] * tn):
            hrows.append({"id": f"{cat}{i}", "pass": h, "category": cat})
            jrows.append({"id": f"{cat}{i}", "pass": j, "judge_hash": "jh"})
        entries.append({"id": f"e-{cat}", "query": "Q?", "category": cat})
    human.write_text("".join(json.dumps(r) + "\n" for r in hrows))
    judge.write_text("".join(json.dumps(r) + "\n" for r in jrows))
    golden.write_text("".join(json.dumps(r) + "\n" for r in entries))
    if manifest is not None:
        (tmp / "golden.manifest.json").write_text(json.dumps(manifest))
    return human, judge, golden


# numeric: TPR 0.98, TNR 0.70 (14 of 20); the rest 0.98. Overall TPR 0.98, TNR 0.93, kappa 0.92:
# the overall figures clear the bar
ONE_WEAK = {
    "numeric": (98, 2, 6, 14),
    "text": (98, 2, 1, 49),
    "ratio": (98, 2, 1, 49),
}


def _calibrate(human: Path, judge: Path, *extra: str) -> Any:
    return runner.invoke(
        app, ["judge", "calibrate", "--human", str(human), "--judge", str(judge), *extra]
    )


def test_one_weak_category_fails_the_bar_and_is_named(tmp_path: Path) -> None:
    """Overall TNR 0.93 passes; numeric's 0.70 does not, and the refusal names it."""
    overall = tuple(sum(c[i] for c in ONE_WEAK.values()) for i in range(4))
    assert BAR.shortfalls(overall) == []  # what the old bar looked at, and passed
    checked = BAR.check(overall, ONE_WEAK)
    assert checked.failed == ["numeric"] and not checked.met
    assert checked.shortfalls == ["category numeric: TNR 0.700 [0.48, 0.85] (at least 0.85)"]
    human, judge, _ = _cat_files(tmp_path, ONE_WEAK)
    out = tmp_path / "cal.json"
    res = _calibrate(human, judge, "--out", str(out))
    assert res.exit_code == 2 and not out.exists()
    assert "category numeric: TNR 0.700" in res.output
    res = _calibrate(human, judge, "-f", "json")
    bar = json.loads(res.stdout)["bar"]
    assert bar["met"] is False and bar["failed_slices"] == ["numeric"]
    rows = {s["slice"]: s for s in bar["slices"]}
    assert list(rows) == ["numeric", "ratio", "text", "overall"]
    assert rows["numeric"]["met"] is False and rows["text"]["met"] and rows["overall"]["met"]
    assert rows["numeric"]["tnr"]["value"] == pytest.approx(0.7)


def test_a_weak_category_the_overall_bar_let_through(tmp_path: Path) -> None:
    """300 items, 50 human FAILs, overall TPR 0.98 and TNR 0.88: the overall bar passed it and
    `--out` wrote it, with numeric's TNR at 0.70."""
    cats = {"numeric": (98, 2, 6, 14), "ratio": (98, 2, 0, 15), "text": (98, 2, 0, 15)}
    human, judge, _ = _cat_files(tmp_path, cats)
    out = tmp_path / "cal.json"
    res = _calibrate(human, judge, "--out", str(out))
    assert res.exit_code == 2 and not out.exists()
    assert "below the calibration bar: category numeric: TNR 0.700 [0.48, 0.85]" in res.output
    assert "category ratio" not in res.output and "category text" not in res.output


def test_slice_rows_and_the_failing_slice_in_every_format(tmp_path: Path) -> None:
    human, judge, _ = _cat_files(tmp_path, ONE_WEAK)
    md = _calibrate(human, judge, "-f", "markdown")
    assert md.exit_code == 0, md.output
    # the failing slice in bold, its TNR with its interval, and the verdict
    line = next(x for x in md.stdout.splitlines() if x.startswith("| **numeric** | normal |"))
    assert "| 0.700 [0.48, 0.85] |" in line and line.rstrip(" |").endswith("FAILED")
    assert "| text | normal | 150 | 50 |" in md.stdout
    assert "below the calibration bar [failed: numeric]" in md.stdout
    table = _calibrate(human, judge)
    assert table.exit_code == 0
    row = next(x for x in table.stdout.splitlines() if "numeric" in x and "FAILED" in x)
    assert "0.700 [0.48, 0.85]" in row
    assert "below the calibration bar [failed: numeric]" in table.stdout


def test_more_fails_than_fifty_are_accepted(tmp_path: Path) -> None:
    """300 labelled items, 90 of them human FAILs: the FAIL count is a minimum."""
    human, judge = _files(tmp_path, 300, 90, 3)  # TNR 87/90
    out = tmp_path / "cal.json"
    res = runner.invoke(
        app, ["judge", "calibrate", "--human", str(human), "--judge", str(judge), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["bar"]["met"] is True
    assert "calibration bar met" in res.output


# two categories, each TPR 34/40 = 0.85 and TNR 17/20 = 0.85, kappa 0.675
AT_085 = {"lookup": (34, 6, 3, 17), "numeric": (34, 6, 3, 17)}


def test_high_risk_category_needs_0_90() -> None:
    overall = (68, 12, 6, 34)
    assert BAR.min_tpr == BAR.min_tnr == 0.85 and BAR.high_risk_tpr == BAR.high_risk_tnr == 0.90
    assert BAR.check(overall, AT_085).met  # 0.85 at the normal bar: met
    checked = BAR.check(overall, AT_085, high_risk=["numeric"])
    assert checked.failed == ["numeric"]
    assert checked.shortfalls == [
        "category numeric (high-risk): TPR 0.850 [0.71, 0.93] (at least 0.90)",
        "category numeric (high-risk): TNR 0.850 [0.62, 0.97] (at least 0.90)",  # 3 misses: C-P
    ]
    rows = {s.name: s for s in checked.slices}
    assert rows["numeric"].floors == {"tpr": 0.9, "tnr": 0.9, "kappa": 0.6}
    assert rows["lookup"].floors == {"tpr": 0.85, "tnr": 0.85, "kappa": 0.6}


def test_high_risk_from_the_option_and_from_the_manifest(tmp_path: Path) -> None:
    human, judge, golden = _cat_files(tmp_path, AT_085)
    out = tmp_path / "cal.json"
    assert _calibrate(human, judge, "--out", str(out)).exit_code == 0
    out.unlink()
    res = _calibrate(human, judge, "--out", str(out), "--high-risk", "numeric")
    assert res.exit_code == 2 and not out.exists()
    assert "category numeric (high-risk): TNR 0.850" in res.output and "lookup" not in res.output
    # the same, declared on the category in the dataset manifest
    (tmp_path / "golden.manifest.json").write_text(
        json.dumps({"version": "1", "categories": {"numeric": {"risk": "high"}, "lookup": {}}})
    )
    res = _calibrate(human, judge, "--out", str(out), "--dataset", str(golden))
    assert res.exit_code == 2 and "category numeric (high-risk): TPR 0.850" in res.output
    res = _calibrate(
        human, judge, "--dataset", str(golden), "--out", str(out), "--accept-weak-calibration"
    )
    assert res.exit_code == 0, res.output
    bar = json.loads(out.read_text())["bar"]
    assert bar["high_risk"] == ["numeric"] and bar["failed_slices"] == ["numeric"]
    assert bar["accepted_weak"] is True
    assert {s["slice"]: s["risk"] for s in bar["slices"]} == {
        "lookup": "normal",
        "numeric": "high",
        "overall": None,
    }


def test_a_small_category_is_not_checked_unless_high_risk() -> None:
    """A category with 5 human FAILs is too small to hold its TNR to the bar (shown, not
    failed); a high-risk one that small has not shown it clears 0.90."""
    cats = {"big": (90, 5, 3, 47), "tiny": (20, 0, 3, 2)}  # tiny: TNR 2/5
    overall = (110, 5, 6, 49)
    checked = BAR.check(overall, cats)
    assert checked.met
    tiny = next(s for s in checked.slices if s.name == "tiny")
    assert tiny.floors == {"tpr": 0.85} and tiny.verdict() == "met (partly checked)"
    assert tiny.unchecked == ("TNR: 5 human FAILs (< 10)", "kappa: 5 in the smaller class (< 10)")
    risky = BAR.check(overall, cats, high_risk=["tiny"])
    assert risky.shortfalls == [
        "category tiny (high-risk): 5 human FAILs, at least 10 needed to show TNR >= 0.90"
    ]
    # a high-risk category no item was labelled in: the judge is unmeasured there
    absent = BAR.check(overall, cats, high_risk=["numeric"])
    assert absent.failed == ["numeric"]
    assert absent.shortfalls == ["category numeric (high-risk): no labelled items (the judge is "
                                 "unmeasured there)"]  # fmt: skip


def test_a_category_with_low_kappa_fails() -> None:
    """200 human passes and 10 FAILs, TPR and TNR 0.90: kappa 0.42 in that category."""
    cats = {"rare": (180, 20, 1, 9), "even": (95, 5, 5, 95)}
    overall = tuple(sum(c[i] for c in cats.values()) for i in range(4))
    checked = BAR.check(overall, cats)  # type: ignore[arg-type]
    assert checked.failed == ["rare"]
    assert checked.shortfalls[0].startswith("category rare: kappa 0.4")


def test_slice_intervals_match_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.stats.proportion")
    cats = {"a": (47, 6, 5, 22), "b": (70, 12, 9, 31), "c": (30, 1, 2, 18)}
    overall = tuple(sum(c[i] for c in cats.values()) for i in range(4))
    checked = BAR.check(overall, cats, confidence=0.9)  # type: ignore[arg-type]
    for s in checked.slices:
        tp, fn, fp, tn = s.cells
        for iv, k, n in ((s.tpr, tp, tp + fn), (s.tnr, tn, fp + tn)):
            rare = min(k, n - k) < 4  # Clopper-Pearson's exact interval there, and said so
            assert iv.method == ("clopper-pearson" if rare else "wilson")
            lo, hi = sm.proportion_confint(k, n, alpha=0.1, method="beta" if rare else "wilson")
            assert (iv.low, iv.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert [s.name for s in checked.slices if s.tpr.method == "clopper-pearson"] == ["c"]


@pytest.mark.parametrize(
    ("manifest", "args", "expect"),
    [
        (None, ["--high-risk", "numerc"], "--high-risk names 'numerc', which is not a category"),
        (None, ["--high-risk", "numeric,"], "--high-risk names ''"),
        (
            {"categories": {"numeric": {"risk": "extreme"}}},
            [],
            "golden.manifest.json: categories.numeric.risk: expected one of normal, high, got "
            "'extreme'",
        ),
        (
            {"categories": {"numerc": {"risk": "high"}}},
            [],
            "golden.manifest.json: categories.numerc: no entry has category 'numerc'",
        ),
        (
            {"categories": {"numeric": {"risks": "high"}}},
            [],
            "golden.manifest.json: categories.numeric.risks: unknown field",
        ),
        ({"categories": ["numeric"]}, [], "golden.manifest.json: categories: expected an object"),
    ],
)
def test_bad_high_risk_input_is_refused(
    tmp_path: Path, manifest: dict[str, Any] | None, args: list[str], expect: str
) -> None:
    human, judge, golden = _cat_files(tmp_path, AT_085, manifest=manifest)
    out = tmp_path / "cal.json"
    res = _calibrate(human, judge, "--out", str(out), "--dataset", str(golden), *args)
    assert res.exit_code == 2 and not out.exists()
    assert expect in " ".join(res.output.split()), res.output


def test_reading_a_calibration_holds_its_categories_to_the_bar(tmp_path: Path) -> None:
    """A file written under the old bar (overall only, 30 to 50 FAILs) is read under this one:
    its weak category shows; its FAIL count above 50 no longer does; a category the dataset now
    declares high-risk is held to 0.90 when the judge grades that dataset."""
    from assay.dataset import high_risk_categories, load_dataset
    from assay.judge.calibrated import JudgeCalibration

    def conf(c: tuple[int, int, int, int]) -> dict[str, Any]:
        return {"confusion": dict(zip(("tp", "fn", "fp", "tn"), c, strict=True))}

    def write(cats: dict[str, tuple[int, int, int, int]], shortfalls: list[str]) -> Path:
        overall = tuple(sum(c[i] for c in cats.values()) for i in range(4))
        path = tmp_path / "cal.json"
        path.write_text(json.dumps({
            "kind": "assay.judge_calibration", "judge_hash": "jh",
            "inputs": {"judge": {"field": "pass"}}, "overall": conf(overall),  # type: ignore[arg-type]
            "categories": {k: conf(v) for k, v in cats.items()},
            "bar": {"met": not shortfalls, "shortfalls": shortfalls},
        }))  # fmt: skip
        return path

    cal = JudgeCalibration.read(write(ONE_WEAK, []))
    assert cal.shortfalls == ["category numeric: TNR 0.700 [0.48, 0.85] (at least 0.85)"]
    many = {"lookup": (34, 6, 9, 51), "numeric": (34, 6, 3, 17)}  # 80 human FAILs
    cal = JudgeCalibration.read(write(many, ["80 human FAILs (30 to 50)"]))
    assert cal.shortfalls == []
    _, _, golden = _cat_files(
        tmp_path, AT_085, manifest={"categories": {"numeric": {"risk": "high"}}}
    )
    held = cal.with_high_risk(high_risk_categories(load_dataset(golden)))
    assert held.high_risk == ("numeric",)
    assert [s.split(":")[0] for s in held.shortfalls] == ["category numeric (high-risk)"] * 2


def test_judge_run_holds_the_datasets_high_risk_categories(tmp_path: Path) -> None:
    """`judge_run` refuses, before any model call, a calibration that clears the normal bar on a
    category the graded dataset's manifest declares high-risk."""
    from types import SimpleNamespace

    from assay.dataset import load_dataset
    from assay.judge.bar import WeakCalibration
    from assay.judge.llm import judge_run

    human, judge, golden = _cat_files(
        tmp_path, AT_085, manifest={"categories": {"numeric": {"risk": "high"}}}
    )
    cal = tmp_path / "cal.json"
    assert _calibrate(human, judge, "--out", str(cal)).exit_code == 0  # no --dataset: normal
    fake = SimpleNamespace(identity_hash="jh")
    with pytest.raises(WeakCalibration, match=r"category numeric \(high-risk\): TPR 0.850"):
        judge_run(load_dataset(golden), None, fake, calibration=cal)  # type: ignore[arg-type]


_counts = st.tuples(*(st.integers(0, 60) for _ in range(4)))


@settings(max_examples=150, deadline=None)
@given(
    cats=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _counts, min_size=1, max_size=4),
    risky=st.sets(st.sampled_from(["a", "b", "c", "d"])),
)
def test_the_bar_per_slice_properties(
    cats: dict[str, tuple[int, int, int, int]], risky: set[str]
) -> None:
    """Met exactly when no slice failed and the counts clear; naming more categories high-risk
    never lifts a calibration over the bar; every failed slice is named in a shortfall."""
    overall = tuple(sum(c[i] for c in cats.values()) for i in range(4))
    normal = BAR.check(overall, cats)  # type: ignore[arg-type]
    strict = BAR.check(overall, cats, high_risk=risky)  # type: ignore[arg-type]
    for checked in (normal, strict):
        assert checked.met == (not checked.failed and not checked.overall_shortfalls)
        for name in set(checked.failed) - {"overall"}:
            assert any(s.startswith(f"category {name}") for s in checked.shortfalls)
    assert set(normal.failed) <= set(strict.failed)
    assert normal.shortfalls == BAR.shortfalls(overall, categories=cats)  # type: ignore[arg-type]
    if strict.met:
        assert normal.met
