"""Agreement and calibration results are reports: the same four renderings as every result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from assay.label_files import agreement_file, load_labels
from assay.report import Report, render
from assay.stats.agreement import AGREEMENT_KIND, agreement
from assay.stats.calibration import binary_calibration, corrected_pass_rate


def _labels(tmp_path: Path) -> Path:
    rows = []
    for i in range(40):
        for rater, flip in (("ann", False), ("bob", i % 7 == 0), ("cyd", i % 5 == 0)):
            label = (i % 3 == 0) != flip
            rows.append({"item": f"q{i}", "rater": rater, "label": label, "criterion": "answer"})
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_agreement_results_render_four_ways(tmp_path: Path) -> None:
    path = _labels(tmp_path)
    report = agreement_file(path, n_resamples=200, max_disagreements=3)
    res = report.results[0]
    for obj in (report, res):
        assert isinstance(obj, Report)
        data = json.loads(render(obj, "json"))
        assert "Cohen's kappa" in render(obj, "markdown")
        assert "Krippendorff's alpha (nominal)" in render(obj, "table")
    data = json.loads(report.to_json())
    assert data["kind"] == AGREEMENT_KIND and data["labels"]["path"] == str(path)
    kappa = data["results"][0]["statistics"]["cohen_kappa"]
    assert set(kappa) == {"value", "low", "high", "level", "method", "note"}
    assert kappa["value"] == res.statistics["cohen_kappa"].value  # full precision
    # the library call is what the CLI runs: same numbers from agreement() on the records
    again = agreement(
        [{"item": r.item, "rater": r.rater, "label": r.label} for r in _records(path)],
        rng=0,
        n_resamples=200,
    )
    assert again.statistics["fleiss_kappa"] == res.statistics["fleiss_kappa"]
    md = report.to_markdown()
    assert "To adjudicate" in md and md.count("| q") == 3  # max_disagreements items listed
    assert len(data["results"][0]["disagreements"]) > 3  # JSON lists them all


def _records(path: Path):  # type: ignore[no-untyped-def]
    return load_labels(path)


def test_calibration_results_render_four_ways() -> None:
    rng = np.random.default_rng(2)
    human = rng.random(150) < 0.7
    judge = np.where(human, rng.random(150) < 0.9, rng.random(150) < 0.3)
    cal = binary_calibration(human, judge, n_resamples=200)
    fix = corrected_pass_rate(human, judge, rng.random(400) < 0.7)
    for obj in (cal, fix):
        assert isinstance(obj, Report)
        json.loads(render(obj, "json"))
        assert render(obj, "markdown").startswith("**")
        assert render(obj, "table").strip()
    assert "| overall | 150 |" in cal.to_markdown()
    assert fix.summary in fix.to_markdown()
    assert json.loads(cal.to_json())["tpr"]["method"] in ("wilson", "clopper-pearson")
    assert json.loads(cal.to_json())["kappa"]["method"] == "percentile"
