"""assay export and assay report through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app

from .conftest import Case

runner = CliRunner()
FAST = ["--resamples", "200"]


def test_export_then_report(case: Case, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.json"
    runs = [str(p) for p in case.runs]
    args = ["export", str(case.dataset), *runs, "--chunks", str(case.chunks), "--out", str(bundle)]
    res = runner.invoke(
        app, [*args, "--ladder", str(case.ladder), "--judged", f"cand={case.judged}", *FAST]
    )
    assert res.exit_code == 0, res.output
    assert "Results bundle" in res.stdout and json.loads(bundle.read_text())["k"] == 5
    site = tmp_path / "site"
    res = runner.invoke(app, ["report", str(bundle), "--out", str(site), "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["index"] == str(site / "index.html") and out["pages"] == 14
    # in one step, the same site
    one = tmp_path / "one"
    res = runner.invoke(
        app,
        [
            *("report", str(case.dataset), *runs, "--chunks", str(case.chunks), "--out", str(one)),
            *("--ladder", str(case.ladder), "--judged", f"cand={case.judged}", *FAST),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (one / "index.html").read_bytes() == (site / "index.html").read_bytes()


@pytest.mark.parametrize(
    "extra",
    [
        ["--judged", "cand"],  # not RUN=FILE
        ["--judged", "nope={judged}"],  # no such run
    ],
)
def test_bad_export_writes_nothing(case: Case, tmp_path: Path, extra: list[str]) -> None:
    out = tmp_path / "bundle.json"
    extra = [e.replace("{judged}", str(case.judged)) for e in extra]
    args = ["export", str(case.dataset), *map(str, case.runs), "--chunks", str(case.chunks)]
    res = runner.invoke(app, [*args, "--out", str(out), *extra])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert not out.exists()


def test_report_refuses_what_is_not_a_bundle(case: Case, tmp_path: Path) -> None:
    site = tmp_path / "site"
    res = runner.invoke(app, ["report", str(case.ladder), "--out", str(site)])
    assert res.exit_code == 2 and "not a results bundle" in res.output
    res = runner.invoke(
        app, ["report", str(case.dataset), "--chunks", str(case.chunks), "--out", str(site)]
    )
    assert res.exit_code == 2 and "only with a dataset and runs" in res.output
    assert not site.exists()


@pytest.mark.parametrize("command", ["report", "export"])
def test_the_dataset_is_read_and_guarded_once(case: Case, tmp_path: Path, command: str) -> None:
    """`assay report DATASET RUNS` and `assay export` read the dataset once and enter the
    fresh-sample guard once (a sealed sample in the registry, so the guard does its work):
    scoring, checking and attributing each run is part of that use, not a guard of its own;
    a sealed sample so rendered is still used once."""
    from tests.compare.test_opened_once import counting

    from assay.dataset import fresh, load_dataset

    other = tmp_path / "other_fresh.jsonl"
    other.write_text(
        json.dumps({"id": "f0", "query": "an unrelated question", "category": "x",
                    "evidence_paths": [[["zz-0"]]]}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    fresh.seal(other)
    out = tmp_path / ("site" if command == "report" else "bundle.json")
    args = [command, str(case.dataset), *map(str, case.runs), "--chunks", str(case.chunks),
            "--out", str(out), *FAST]  # fmt: skip
    with counting(load_dataset=load_dataset, using=fresh.using.__wrapped__) as counts:  # type: ignore[attr-defined]
        res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert (counts["load_dataset"], counts["using"]) == (1, 1)
    fresh.seal(case.dataset)
    assert runner.invoke(app, args).exit_code == 0
    assert len(fresh.uses(case.dataset)) == 1
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "already used" in again.output, again.output
