from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli.agreement_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.label_files import load_labels, read_calibration
from assay.stats.agreement import agreement
from assay.stats.calibration import binary_calibration

runner = CliRunner()


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    rows: list[dict[str, Any]] = []
    cells = [
        (("pass", "pass"), 88),
        (("pass", "fail"), 4),
        (("fail", "pass"), 4),
        (("fail", "fail"), 4),
    ]
    i = 0
    for (a, b), n in cells:
        for _ in range(n):
            rows.append({"item": f"fd-{i:03d}", "rater": "ann", "label": a, "criterion": "answer"})
            rows.append({"item": f"fd-{i:03d}", "rater": "bob", "label": b, "criterion": "answer"})
            i += 1
    for j in range(30):
        for r, delta in (("ann", 0), ("bob", j % 3 == 0), ("cyd", -(j % 5 == 0))):
            rows.append(
                {
                    "item": f"fd-{j:03d}",
                    "rater": r,
                    "label": max(0, min(3, j % 4 + int(delta))),
                    "criterion": "relevance",
                }
            )
    return _write_jsonl(tmp_path / "labels.jsonl", rows)


def test_agreement_json_matches_library(labels: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    res = runner.invoke(
        app,
        [
            "agreement",
            str(labels),
            "--format",
            "json",
            "--seed",
            "3",
            "--resamples",
            "200",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    assert data["kind"] == "assay.agreement" and len(data["labels"]["sha256"]) == 64
    assert [r["criterion"] for r in data["results"]] == ["answer", "relevance"]
    recs = [r for r in load_labels(labels) if r.criterion == "answer"]
    lib = agreement(recs, criterion="answer", rng=3, n_resamples=200)
    got = data["results"][0]["statistics"]["cohen_kappa"]
    assert got["value"] == pytest.approx(lib.statistics["cohen_kappa"].value)
    assert round(got["value"], 2) == 0.46
    assert any("prevalence paradox" in m for m in data["results"][0]["messages"])


def test_agreement_criterion_markdown_and_table(labels: Path) -> None:
    md = runner.invoke(
        app, ["agreement", str(labels), "-c", "relevance", "-f", "markdown", "--resamples", "100"]
    )
    assert md.exit_code == 0, md.output
    assert "Krippendorff's alpha (ordinal)" in md.stdout and "| ann | bob |" in md.stdout
    assert "'answer'" not in md.stdout
    table = runner.invoke(
        app, ["agreement", str(labels), "--resamples", "100", "--max-disagreements", "2"]
    )
    assert table.exit_code == 0, table.output
    assert "prevalence paradox" in table.stdout and "and 6 more" in table.stdout
    none = runner.invoke(app, ["agreement", str(labels), "-c", "nope"])
    assert none.exit_code == 2


def test_agreement_bad_input_exits_2_names_line_and_writes_nothing(tmp_path: Path) -> None:
    bad = _write_jsonl(
        tmp_path / "bad.jsonl",
        [{"item": "a", "rater": "x", "label": 1}, {"item": "a", "rater": "x", "label": 2}],
    )
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["agreement", str(bad), "--out", str(out)])
    assert res.exit_code == 2
    assert "bad.jsonl:2" in res.stderr and "twice" in res.stderr
    assert not out.exists()


def test_agreement_stats_refusal_exits_2_naming_file_line_and_field(tmp_path: Path) -> None:
    """A value `assay.stats` refuses (StatsInputError) comes out as FILE:LINE: field: message."""
    mixed = _write_jsonl(
        tmp_path / "mixed.jsonl",
        [{"item": "a", "rater": "x", "label": 1}, {"item": "a", "rater": "y", "label": "one"}],
    )
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["agreement", str(mixed), "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{mixed}:2: label: labels mix kinds" in res.stderr
    assert not out.exists()
    ok = _write_jsonl(
        tmp_path / "ok.jsonl",
        [{"item": "a", "rater": "x", "label": "yes"}, {"item": "a", "rater": "y", "label": "no"}],
    )
    res = runner.invoke(app, ["agreement", str(ok), "--positive", "maybe"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{ok}: positive: 'maybe' is not among the labels" in res.stderr


def _calibration_files(
    tmp_path: Path, n_lab: int = 240, n_all: int = 800
) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    truth = rng.random(n_all) < 0.7
    judge = np.where(truth, rng.random(n_all) < 0.9, rng.random(n_all) < 0.3)
    cats = np.where(rng.random(n_all) < 0.5, "metrics", "domain")
    human = _write_jsonl(
        tmp_path / "human.jsonl",
        [
            {
                "id": f"q{i}",
                "verdict": "Correct" if truth[i] else "Incorrect",
                "category": str(cats[i]),
            }
            for i in range(n_lab)
        ],
    )
    judged = _write_jsonl(
        tmp_path / "judged.jsonl",
        [{"id": f"q{i}", "pass": bool(judge[i]), "judge_hash": "jh-1"} for i in range(n_all)],
    )
    return human, judged, truth[:n_lab], judge[:n_lab]


def test_calibrate_writes_calibration_tied_to_judge_hash(tmp_path: Path) -> None:
    human, judged, h, j = _calibration_files(tmp_path)
    out = tmp_path / "calib.json"
    res = runner.invoke(
        app,
        [
            "judge",
            "calibrate",
            "--human",
            str(human),
            "--judge",
            str(judged),
            "--out",
            str(out),
            "--resamples",
            "300",
            "-f",
            "json",
            "--accept-weak-calibration",
        ],
    )
    assert res.exit_code == 0, res.output
    data = read_calibration(out)
    assert data == json.loads(res.stdout)
    assert data["bar"]["accepted_weak"] is True and not data["bar"]["met"]
    assert data["judge_hash"] == "jh-1"
    assert (
        data["inputs"]["human"]["field"] == "verdict" and data["inputs"]["judge"]["field"] == "pass"
    )
    assert data["n_labelled"] == 240 and data["n_judge_only"] == 560
    ref = binary_calibration(h, j, n_resamples=10)
    assert data["overall"]["tpr"]["value"] == pytest.approx(ref.tpr.value)
    assert data["overall"]["kappa"]["value"] == pytest.approx(ref.kappa.value)
    assert set(data["categories"]) == {"domain", "metrics"}
    cpr = data["corrected_pass_rate"]
    assert cpr["narrowest"] in {"rogan_gladen", "ppi", "ppi++"}
    assert set(cpr["estimates"]) == {
        "judge_uncorrected",
        "labels_only",
        "rogan_gladen",
        "ppi",
        "ppi++",
    }


def test_calibrate_table_and_markdown(tmp_path: Path) -> None:
    human, judged, _, _ = _calibration_files(tmp_path, n_lab=60)
    table = runner.invoke(
        app,
        ["judge", "calibrate", "--human", str(human), "--judge", str(judged), "--resamples", "100"],
    )
    assert table.exit_code == 0, table.output
    assert "overall" in table.stdout and "narrowest" in table.stdout
    assert "60 labelled items" in table.stdout  # the small-sample warning
    md = runner.invoke(
        app,
        [
            "judge",
            "calibrate",
            "--human",
            str(human),
            "--judge",
            str(judged),
            "--resamples",
            "100",
            "-f",
            "markdown",
        ],
    )
    assert md.exit_code == 0 and "| overall | 60 |" in md.stdout


def test_calibrate_errors(tmp_path: Path) -> None:
    human, judged, _, _ = _calibration_files(tmp_path, n_lab=50, n_all=100)
    wrong = runner.invoke(
        app,
        [
            "judge",
            "calibrate",
            "--human",
            str(human),
            "--judge",
            str(judged),
            "--judge-hash",
            "other",
        ],
    )
    assert wrong.exit_code == 2 and "judge_hash" in wrong.stderr
    rows = [json.loads(x) for x in judged.read_text().splitlines()]
    rows[3]["judge_hash"] = "jh-2"
    mixed = _write_jsonl(tmp_path / "mixed.jsonl", rows)
    res = runner.invoke(app, ["judge", "calibrate", "--human", str(human), "--judge", str(mixed)])
    assert res.exit_code == 2 and "mixes judges" in res.stderr
    conflict = _write_jsonl(
        tmp_path / "conflict.jsonl", [{"id": "q1", "label": "pass"}, {"id": "q1", "label": "fail"}]
    )
    res = runner.invoke(
        app, ["judge", "calibrate", "--human", str(conflict), "--judge", str(judged)]
    )
    assert res.exit_code == 2 and "conflict.jsonl:2" in res.stderr and "adjudicate" in res.stderr
    odd = _write_jsonl(tmp_path / "odd.jsonl", [{"id": "q1", "label": "Refusal"}])
    res = runner.invoke(app, ["judge", "calibrate", "--human", str(odd), "--judge", str(judged)])
    assert res.exit_code == 2 and "odd.jsonl:1: label" in res.stderr
    disjoint = _write_jsonl(tmp_path / "disjoint.jsonl", [{"id": "zz", "label": True}])
    out = tmp_path / "never.json"
    res = runner.invoke(
        app,
        ["judge", "calibrate", "--human", str(disjoint), "--judge", str(judged), "--out", str(out)],
    )
    assert res.exit_code == 2 and "in common" in res.stderr and not out.exists()


def test_calibrate_without_hash_warns(tmp_path: Path) -> None:
    human, judged, _, _ = _calibration_files(tmp_path, n_lab=40, n_all=40)
    rows = [json.loads(x) for x in judged.read_text().splitlines()]
    for r in rows:
        del r["judge_hash"]
    nohash = _write_jsonl(tmp_path / "nohash.jsonl", rows)
    res = runner.invoke(
        app,
        [
            "judge",
            "calibrate",
            "--human",
            str(human),
            "--judge",
            str(nohash),
            "-f",
            "json",
            "--resamples",
            "100",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["judge_hash"] is None and data["corrected_pass_rate"] is None
    assert any("no judge hash" in w for w in data["warnings"])


def test_calibrate_from_long_format_labels_with_criterion(tmp_path: Path) -> None:
    _, judged, h, j = _calibration_files(tmp_path, n_lab=120, n_all=120)
    rows: list[dict[str, Any]] = []
    for i, passed in enumerate(h):
        for rater in ("ann", "bob"):  # two experts who agree on "answer"
            rows.append(
                {"item": f"q{i}", "rater": rater, "label": bool(passed), "criterion": "answer"}
            )
        rows.append({"item": f"q{i}", "rater": "ann", "label": i % 2 == 0, "criterion": "style"})
        rows.append({"item": f"q{i}", "rater": "bob", "label": i % 3 == 0, "criterion": "style"})
    long = _write_jsonl(tmp_path / "labels.jsonl", rows)
    args = [
        "judge",
        "calibrate",
        "--human",
        str(long),
        "--judge",
        str(judged),
        "-f",
        "json",
        "--resamples",
        "100",
    ]
    res = runner.invoke(app, [*args, "--criterion", "answer"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["overall"]["tpr"]["value"] == pytest.approx(binary_calibration(h, j).tpr.value)
    conflicting = runner.invoke(app, [*args, "--criterion", "style"])
    assert conflicting.exit_code == 2 and "adjudicate" in conflicting.stderr
