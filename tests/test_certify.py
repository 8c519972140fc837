"""`assay certify`: the label set's bar (overlap, alpha, its lower bound, enrichment stated), the
certificate in the manifest, and `assay gate --require-certified`.

The labels are built here in the long format the workbench exports (`assay workbench
export --labels-long`, `assay.workbench.export.labels_long`: one {item, rater, label, criterion} per
label, items named by entry id) rather than by driving the workbench store through 200 labelling
requests: the certificate reads only that file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.certify import certify, check_certified
from assay.cli import app
from assay.compare.ledger import read_ledger
from assay.dataset import load_manifest, manifest_path
from assay.errors import DataError
from assay.runs import write_run

runner = CliRunner()
RES = ["--resamples", "400"]
FAST = ["--resamples", "200", "--permutations", "200"]


def _dataset(tmp_path: Path, n: int = 120) -> Path:
    rows = [
        {
            "id": f"e{i:03d}",
            "query": f"question {i}",
            "category": "lookup" if i % 2 else "trend",
            "evidence_paths": [[[f"e{i:03d}-a"]]],
            "label_tier": "gold",
            "reviewed_by": 2,
        }
        for i in range(n)
    ]
    p = tmp_path / "golden.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def _labels(
    tmp_path: Path, *, n_items: int = 100, flips: int = 4, seed: int = 3, prefix: str = "e"
) -> Path:
    """Two raters label ``n_items`` entries on two criteria; they disagree on ``flips`` items of
    each (answerable: a boolean; expected_behavior: three words)."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    words = ["answer", "abstain", "clarify"]
    for crit in ("answerable", "expected_behavior"):
        truth = rng.integers(0, 2 if crit == "answerable" else 3, size=n_items)
        moved = set(rng.choice(n_items, size=flips, replace=False).tolist())
        for i in range(n_items):
            a = int(truth[i])
            b = (a + 1) % (2 if crit == "answerable" else 3) if i in moved else a
            for rater, v in (("ana", a), ("ben", b)):
                label: Any = bool(v) if crit == "answerable" else words[v]
                rows.append(
                    {"item": f"{prefix}{i:03d}", "rater": rater, "label": label, "criterion": crit}
                )
    p = tmp_path / "labels.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def _runs(tmp_path: Path, ds: Path) -> tuple[Path, Path]:
    ids = [json.loads(line)["id"] for line in ds.read_text().splitlines()]
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    write_run(base, [{"id": i, "retrieved": [f"{i}-a"]} for i in ids])
    write_run(cand, [{"id": i, "retrieved": [f"{i}-a"]} for i in ids])
    return base, cand


def test_the_certificate_reproduces_assay_agreement_and_an_edit_voids_it(tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    labels = _labels(tmp_path)
    res = runner.invoke(
        app,
        ["certify", str(ds), "--labels", str(labels), "--enrichment", "none", "-f", "json", *RES],
    )
    assert res.exit_code == 0, res.output
    cert = json.loads(res.output)
    agree = json.loads(runner.invoke(app, ["agreement", str(labels), "-f", "json", *RES]).output)
    by_crit = {r["criterion"]: r for r in agree["results"]}
    assert {c["criterion"] for c in cert["criteria"]} == {"answerable", "expected_behavior"}
    for c in cert["criteria"]:
        figures = by_crit[c["criterion"]]["statistics"][c["statistic"]]
        assert c["alpha"] == figures  # value, bounds, level, method: the same figures
        assert c["n_overlap"] == by_crit[c["criterion"]]["n_items_multi"] == 100
        assert c["passed"] and c["alpha"]["value"] >= 0.80 and c["alpha"]["low"] >= 0.667
    # the point value against the reference implementation
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    yes = [[float(r["label"]) for r in rows if r["criterion"] == "answerable" and r["rater"] == w]
           for w in ("ana", "ben")]  # fmt: skip
    ans = next(c for c in cert["criteria"] if c["criterion"] == "answerable")
    ref = krippendorff.alpha(reliability_data=np.array(yes), level_of_measurement="nominal")
    assert ans["alpha"]["value"] == pytest.approx(ref, abs=1e-12)
    # written into the manifest, bound to the file's content and the labels' bytes
    stored = load_manifest(ds)["certificate"]
    assert stored["dataset"]["content_hash"] == hashlib.sha256(ds.read_bytes()).hexdigest()
    assert stored["labels"]["sha256"] == hashlib.sha256(labels.read_bytes()).hexdigest()
    assert (
        stored["enriched"] is False
        and stored["date"]
        and stored["thresholds"]["min_overlap"] == 100
    )
    assert check_certified(ds)["certified"] is True
    base, cand = _runs(tmp_path, ds)
    gate = ["gate", str(ds), str(base), str(cand), "--require-certified", *FAST]
    ok = runner.invoke(app, gate)
    assert ok.exit_code == 0, ok.output
    n_ledger = len(read_ledger(ds))
    # one entry edited: the certificate no longer speaks for the set
    lines = ds.read_text().splitlines()
    lines[5] = lines[5].replace("question 5", "question five")
    ds.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = runner.invoke(app, gate)
    assert res.exit_code == 2 and "changed since it was certified" in res.output, res.output
    assert len(read_ledger(ds)) == n_ledger  # nothing recorded
    assert runner.invoke(app, gate[:-5] + FAST).exit_code == 0  # without the flag it still runs


def test_a_gate_that_requires_a_certificate_refuses_a_set_without_one(tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    base, cand = _runs(tmp_path, ds)
    res = runner.invoke(app, ["gate", str(ds), str(base), str(cand), "--require-certified", *FAST])
    assert res.exit_code == 2 and "has no certificate" in res.output, res.output
    assert read_ledger(ds) == []


def test_below_the_bar_nothing_is_written_and_the_report_says_why(tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    few = _labels(tmp_path, n_items=60)
    res = runner.invoke(
        app, ["certify", str(ds), "--labels", str(few), "--enrichment", "none", *RES]
    )
    assert res.exit_code == 1, res.output
    assert "NOT CERTIFIED" in res.output and "60 overlap items < 100" in " ".join(
        res.output.split()
    )
    # the footer names the intervals it read: the goodness-of-fit interval of alpha on the
    # binary criterion, the score interval on the three-word one
    flat = " ".join(res.output.split())
    assert "Donner-Eliasziw goodness-of-fit interval" in flat
    assert "score interval under the common-correlation model" in flat
    assert "certificate" not in load_manifest(ds)
    # the thresholds are options
    res = runner.invoke(
        app,
        [
            "certify",
            str(ds),
            "--labels",
            str(few),
            "--enrichment",
            "none",
            "--min-overlap",
            "50",
            "--min-lower",
            "0.6",
            *RES,
        ],
    )
    assert res.exit_code == 0, res.output
    thresholds = load_manifest(ds)["certificate"]["thresholds"]
    assert thresholds["min_overlap"] == 50 and thresholds["min_lower"] == 0.6
    # experts who disagree often: alpha (and its lower bound) below the bar
    noisy = _labels(tmp_path, n_items=120, flips=30)
    cert = certify(ds, noisy, enrichment="none", n_resamples=400, write=False)
    assert not cert.certified and all(
        any("alpha" in f or "lower bound" in f for f in c.failures) for c in cert.checks
    )


def test_an_enriched_overlap_batch_is_stated_and_per_category_checks_split(tmp_path: Path) -> None:
    ds = _dataset(tmp_path, n=240)
    labels = _labels(tmp_path, n_items=240, flips=6)
    res = runner.invoke(
        app,
        ["certify", str(ds), "--labels", str(labels), "--enrichment", "half from judge failures",
         "--per-category", "answerable", *RES],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "enriched with likely failures (half from judge failures)" in " ".join(
        res.output.split()
    )
    cert = load_manifest(ds)["certificate"]
    assert cert["enriched"] is True and cert["enrichment"] == "half from judge failures"
    cats = {(c["criterion"], c["category"]) for c in cert["criteria"]}
    assert {("answerable", "lookup"), ("answerable", "trend"), ("answerable", None)} <= cats


@pytest.mark.parametrize("case", ["another dataset", "no overlap", "no enrichment", "no criterion"])
def test_bad_input_is_refused_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    ds = _dataset(tmp_path)
    args = ["--enrichment", "none"]
    if case == "another dataset":
        labels = _labels(tmp_path, prefix="fb-")
    elif case == "no overlap":
        labels = tmp_path / "solo.jsonl"
        rows = [{"item": f"e{i:03d}", "rater": "ana", "label": True} for i in range(100)]
        labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        labels = _labels(tmp_path)
        args = (
            ["--enrichment", " "]
            if case == "no enrichment"
            else [*args, "--per-category", "faithful"]
        )
    res = runner.invoke(app, ["certify", str(ds), "--labels", str(labels), *args, *RES])
    assert res.exit_code == 2, res.output
    assert {
        "another dataset": "is an entry of",
        "no overlap": "no item was labelled by two raters",
        "no enrichment": "how the overlap batch was drawn",
        "no criterion": "'faithful'",
    }[case] in " ".join(res.output.split())
    assert not manifest_path(ds).exists()
    with pytest.raises(DataError):
        check_certified(ds)
