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
    assert json.loads(res.stdout)["problems"] == []


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
    assert any("not on" in p["message"] for p in json.loads(res.stdout)["problems"])


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


def test_results_are_reports_in_every_format(tmp_path: Path) -> None:
    from assay.errors import Problem
    from assay.report import Report, render
    from assay.synth import RoomCheck, check_room, generate_room

    summary = generate_room(tmp_path / "room", seed=5, companies=2, years=1, formats=("html",))
    assert isinstance(summary, Report)
    assert json.loads(render(summary, "json")) == json.loads(json.dumps(summary.to_dict()))
    md = render(summary, "markdown")
    assert f"| golden entries | {summary.entries} |" in md
    assert f"| room hash | {summary.room_hash[:16]} |" in md
    assert f"{summary.documents}" in render(summary, "table")

    ok = check_room(tmp_path / "room")
    assert isinstance(ok, Report) and ok.ok
    assert json.loads(ok.to_json()) == {
        "room": str(tmp_path / "room"),
        "ok": True,
        "documents": summary.documents,
        "entries": summary.entries,
        "problems": [],
    }
    assert "consistent" in render(ok, "markdown") and "|" not in render(ok, "markdown")
    bad = RoomCheck(Path("r"), 3, 4, [Problem("r/golden.jsonl", 7, "evidence_paths", "quote x")])
    assert not bad.ok
    assert "| r/golden.jsonl:7 | evidence_paths | quote x |" in render(bad, "markdown")
    table = render(bad, "table")
    assert "r/golden.jsonl:7: evidence_paths: quote x" in table and "1 problem(s)" in table


def test_short_format_option_on_both_commands(tmp_path: Path) -> None:
    out = tmp_path / "room"
    args = ["synth", "generate", "--out", str(out), "--companies", "2", "--years", "1"]
    res = runner.invoke(app, [*args, "--formats", "html", "-f", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("**synthetic room**") and "| golden entries |" in res.stdout
    res = runner.invoke(app, ["synth", "check", str(out), "-f", "markdown"])
    assert res.exit_code == 0, res.output
    assert "consistent" in res.stdout
    res = runner.invoke(app, ["synth", "check", str(out), "-f", "table"])
    assert res.exit_code == 0 and "consistent" in res.stdout
    assert "Traceback" not in res.output
