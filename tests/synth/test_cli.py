from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import assay.cli.synth_cmds  # registers the commands
from assay.cli import app

runner = CliRunner()


def test_generate_then_check(tmp_path: Path) -> None:
    out = tmp_path / "room"
    res = runner.invoke(
        app,
        [
            "synth",
            "generate",
            "--seed",
            "5",
            "--out",
            str(out),
            "--companies",
            "2",
            "--years",
            "1",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["documents"] == len((out / "documents.jsonl").read_text().splitlines())
    assert summary["entries"] == len((out / "golden.jsonl").read_text().splitlines())
    res = runner.invoke(app, ["synth", "check", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []


def test_check_reports_problems_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "room"
    assert (
        runner.invoke(
            app,
            [
                "synth",
                "generate",
                "--out",
                str(out),
                "--companies",
                "2",
                "--years",
                "1",
                "--format",
                "json",
            ],
        ).exit_code
        == 0
    )
    lines = (out / "golden.jsonl").read_text().splitlines()
    e = json.loads(lines[0])
    e["evidence_paths"][0][0][0]["quote"] = "a sentence no filing contains"
    lines[0] = json.dumps(e)
    (out / "golden.jsonl").write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["synth", "check", str(out), "--format", "json"])
    assert res.exit_code == 1
    assert any("not on" in p["message"] for p in json.loads(res.stdout))


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("not a room")
    res = runner.invoke(
        app, ["synth", "generate", "--out", str(tmp_path), "--companies", "2", "--years", "1"]
    )
    assert res.exit_code == 2
    res = runner.invoke(
        app, ["synth", "generate", "--out", str(tmp_path / "r"), "--formats", "docx"]
    )
    assert res.exit_code == 2
    assert not (tmp_path / "r").exists()
    res = runner.invoke(app, ["synth", "check", str(tmp_path)])
    assert res.exit_code == 2
    res = runner.invoke(app, ["synth", "generate", "--help"])
    assert res.exit_code == 0 and "same seed" in res.stdout


def test_cli_defaults_match_the_library_and_import_lazily() -> None:
    import subprocess
    import sys

    from assay.synth import generate

    assert assay.cli.synth_cmds.DEFAULT_COMPANIES == generate.DEFAULT_COMPANIES
    assert assay.cli.synth_cmds.DEFAULT_YEARS == generate.DEFAULT_YEARS
    code = "import sys, assay.cli.synth_cmds; print('numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(generate.__file__).parents[2])},
    )
    assert out.stdout.strip() == "False"
