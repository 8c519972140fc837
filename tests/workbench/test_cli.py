"""`assay workbench ...` commands: thin wrappers with clear errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.workbench_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.dataset import load_dataset, load_manifest
from assay.workbench.db import Database
from assay.workbench.demo_store import DEMO_DIR
from assay.workbench.models import Item, Task, User

runner = CliRunner()


def run(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.output


def test_help_teaches_every_command() -> None:
    code, out = run("workbench", "--help")
    assert code == 0
    for cmd in (
        "serve",
        "adduser",
        "import-corpus",
        "import-entries",
        "import-run",
        "export",
        "demo",
    ):
        assert cmd in out
        c, text = run("workbench", cmd, "--help")
        assert c == 0 and "--db" in text


def test_import_export_round_trip(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    code, out = run(
        "workbench",
        "import-corpus",
        str(DEMO_DIR / "chunks.jsonl"),
        "--documents",
        str(DEMO_DIR / "documents.jsonl"),
        "--db",
        db,
        "--format",
        "json",
    )
    assert code == 0, out
    assert json.loads(out)["added"] == 16
    code, out = run(
        "workbench", "import-entries", str(DEMO_DIR / "entries.jsonl"), "--overlap", "3", "--db", db
    )
    assert code == 0, out
    code, out = run(
        "workbench",
        "import-run",
        str(DEMO_DIR / "run.jsonl"),
        "--name",
        "sys-a",
        "--db",
        db,
        "--format",
        "markdown",
    )
    assert code == 0 and "| run sys-a |" in out
    store = Database(db)
    with store.read() as s:
        assert s.query(Item).count() == 6
        assert s.query(Task).filter(Task.kind == "judge").count() == 6
        assert {t.overlap for t in s.query(Task).filter(Task.kind == "evidence")} == {3}
    store.dispose()
    out_path = tmp_path / "gold.jsonl"
    code, out = run(
        "workbench", "export", "--out", str(out_path), "-m", "first", "--db", db, "--format", "json"
    )
    assert code == 0, out
    got = json.loads(out)
    assert got["version"] == "1.0.0" and got["n_entries"] == 0 and got["n_left_out"] == 6
    assert "first" in load_manifest(out_path)["changelog"][0]["note"]
    code, out = run(
        "workbench",
        "export",
        "--out",
        str(out_path),
        "--include-unlabelled",
        "--db",
        db,
        "-f",
        "json",
    )
    assert code == 0, out
    assert json.loads(out)["n_drafts"] == 6
    assert {e.label_tier for e in load_dataset(out_path).entries} == {"draft"}


def test_adduser_and_bad_role(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'w.db'}"
    r = runner.invoke(
        app,
        ["workbench", "adduser", "dora", "--role", "adjudicator", "--db", db],
        input="secret-orbit-41\nsecret-orbit-41\n",
    )
    assert r.exit_code == 0, r.output
    store = Database(db)
    with store.read() as s:
        u = s.query(User).filter(User.username == "dora").one()
        assert u.role == "adjudicator" and u.password_hash.startswith("$argon2id$")
    store.dispose()
    r = runner.invoke(
        app,
        ["workbench", "adduser", "eve", "--role", "boss", "--db", db],
        input="secret-orbit-41\nsecret-orbit-41\n",
    )
    assert r.exit_code == 2 and "role must be one of" in r.output


def test_bad_input_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "entries.jsonl"
    bad.write_text('{"id": "a", "query": "q", "category": "c"}\n{"id": "b", "query": "q"}\n')
    code, out = run(
        "workbench", "import-entries", str(bad), "--db", f"sqlite:///{tmp_path / 'w.db'}"
    )
    assert code == 2
    assert "entries.jsonl:2" in out and "category" in out
    # nothing was imported: the good first line is not left behind alone
    store = Database(f"sqlite:///{tmp_path / 'w.db'}")
    with store.read() as s:
        assert s.query(Item).count() == 0
    store.dispose()


def test_demo_loads_and_is_idempotent(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    pytest.importorskip("argon2")
    code, out = run("workbench", "demo", "--db", db)
    assert code == 0, out
    assert "adjudicator" in out
    code, _ = run("workbench", "demo", "--db", db)
    assert code == 0
    store = Database(db)
    with store.read() as s:
        assert s.query(User).count() == 4 and s.query(Item).count() == 6
    store.dispose()
