"""Every `assay workbench` subcommand: `--help` teaches, and a real minimal invocation works
(as tests/cli/test_every_command.py does for the rest). `serve` and `demo --serve` start a real
server process that answers the login page (`demo --serve` crashed before it served: its call
of `serve` left an option's default unresolved)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import typer.main
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.workbench.demo_store import DEMO_DIR

from .serverutil import SRC, free_port

runner = CliRunner()
PW = "tulip-basin-4821"


def _workbench_commands() -> list[str]:
    root = typer.main.get_command(app)
    group = root.commands["workbench"]  # type: ignore[attr-defined]
    return sorted(group.commands)


# a real minimal invocation per command, run in this order on one store ({db}, {tmp})
REAL: dict[str, list[str]] = {
    "demo": ["--db", "{db}", "-f", "json"],
    "adduser": ["dora", "--db", "{db}", "--password", PW, "-f", "json"],
    "access": [
        "dora",
        "--groups",
        "deal:ACME",
        "--clearance",
        "insider",
        "--db",
        "{db}",
        "-f",
        "json",
    ],
    "import-corpus": [
        str(DEMO_DIR / "chunks.jsonl"),
        "--documents",
        str(DEMO_DIR / "documents.jsonl"),
        "--db",
        "{db}",
        "-f",
        "json",
    ],
    "import-entries": [str(DEMO_DIR / "entries.jsonl"), "--db", "{db}", "-f", "json"],
    "import-run": [str(DEMO_DIR / "run.jsonl"), "--db", "{db}", "-f", "json"],
    "export": ["--out", "{tmp}/gold.jsonl", "--include-unlabelled", "--db", "{db}", "-f", "json"],
    "release-stale": ["--db", "{db}", "-f", "json"],
    "plan": ["--rows", "10", "--db", "{db}", "-f", "json"],
    "serve": [],  # a server: see test_serve_and_demo_serve_answer
}


def test_every_workbench_command_has_a_real_invocation() -> None:
    assert sorted(REAL) == _workbench_commands()


@pytest.mark.parametrize("name", _workbench_commands())
def test_help(name: str) -> None:
    r = runner.invoke(app, ["workbench", name, "--help"])
    assert r.exit_code == 0, r.output
    assert "--db" in r.output and "Usage" in r.output


def test_every_command_runs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    for name, args in REAL.items():
        if not args:
            continue
        filled = [a.replace("{db}", db).replace("{tmp}", str(tmp_path)) for a in args]
        r = runner.invoke(app, ["workbench", name, *filled])
        assert r.exit_code == 0, (name, r.output)
        json.loads(r.stdout)  # -f json prints JSON on stdout


def _serves(cmd: list[str], port: int) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay.cli", *cmd],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}: {err[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/login", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError(f"{' '.join(cmd)} did not serve")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


@pytest.mark.parametrize("how", ["serve", "demo --serve"])
def test_serve_and_demo_serve_answer(tmp_path: Path, how: str) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    port = free_port()
    if how == "serve":
        cmd = ["workbench", "serve", "--db", db, "--port", str(port)]
    else:
        cmd = ["workbench", "demo", "--db", db, "--serve", "--port", str(port)]
    _serves(cmd, port)
