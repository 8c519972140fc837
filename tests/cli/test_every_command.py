"""Every command of `assay`: `--help` works, and a bad input exits 2 with a message, no traceback.

The command tree is walked from the Typer app, so a command added without an entry in `BAD`
fails `test_every_command_has_a_bad_invocation`.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app

runner = CliRunner()


def _walk(cmd: object, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        return [path]
    out: list[tuple[str, ...]] = []
    for name, sub in sorted(subs.items()):
        out += _walk(sub, (*path, name))
    return out


def command_paths() -> list[tuple[str, ...]]:
    return _walk(typer.main.get_command(app), ())


def group_paths() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    out: list[tuple[str, ...]] = []

    def go(cmd: object, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is not None:
            out.append(path)
            for name, sub in sorted(subs.items()):
                go(sub, (*path, name))

    go(root, ())
    return out


# One bad invocation per command. {dir} is an existing directory (where a file is expected),
# {missing} a path that does not exist, {file} a file of garbage, {tmp} a scratch folder. Every one must exit 2.
D = "{dir}"
M = "{missing}"
F = "{file}"
BAD: dict[tuple[str, ...], list[str]] = {
    ("agreement",): [M],
    ("audit", "correct"): [D, M],
    ("audit", "labels"): [D],
    ("audit", "leakage"): [D, M],
    ("audit", "seasonal"): [D, "--corpus", D],
    ("attribute",): [D, D, "--corpus", M],
    ("bench", "financebench-judge"): ["--questions", M],
    ("bench", "financebench-retrieval"): ["--corpus", M, "--questions", M],
    ("cache", "clear"): ["--cache-dir", F],
    ("cache", "ls"): ["--cache-dir", F],
    ("certify",): [D, "--labels", D, "--enrichment", "none"],
    ("check",): [D, D],
    ("compare",): [D, D, D],
    ("corpus", "build"): [M, "--out", "{tmp}/corpus"],
    ("corpus", "embed"): [M, "--cache-dir", "{tmp}/cache"],
    ("demo",): ["--k", "0", "--out", "{tmp}/demo"],
    ("diff",): [F, M],
    ("keyfacts",): [F, "--out", "{tmp}/drafted.jsonl"],
    ("export",): [F, F, "--chunks", M, "--out", "{tmp}/bundle.json"],
    ("export-as", "argilla"): [M, "--out", "{tmp}/x-argilla"],
    ("export-as", "csv"): [M, "--out", "{tmp}/x-csv"],
    ("export-as", "deepeval"): [M, "--out", "{tmp}/x-deepeval"],
    ("export-as", "hf"): [M, "--out", "{tmp}/x-hf"],
    ("export-as", "label-studio"): [M, "--out", "{tmp}/x-label-studio"],
    ("export-as", "promptfoo"): [M, "--out", "{tmp}/x-promptfoo"],
    ("export-as", "ragas"): [M, "--out", "{tmp}/x-ragas"],
    ("routing",): [M, M],
    ("report",): [F, "--out", "{tmp}/site"],
    ("fresh", "retire"): [D, "--into", D],
    ("fresh", "seal"): [D],
    ("ledger", "show"): [D],
    ("ledger", "void"): [M, "1", "--reason", "wrong index"],
    ("gate",): [D, D, D],
    ("import", "financebench"): [D, "--out", "{tmp}/fb.jsonl"],
    ("import", "argilla"): [M, "--out", "{tmp}/argilla.jsonl"],
    ("import", "csv"): [M, "--out", "{tmp}/csv.jsonl"],
    ("import", "deepeval"): [M, "--out", "{tmp}/deepeval.jsonl"],
    ("import", "hf"): [M, "--out", "{tmp}/hf.jsonl"],
    ("import", "label-studio"): [M, "--out", "{tmp}/label-studio.jsonl"],
    ("import", "promptfoo"): [M, "--out", "{tmp}/promptfoo.jsonl"],
    ("import", "ragas"): [M, "--out", "{tmp}/ragas.jsonl"],
    ("judge", "calibrate"): [M],
    ("judge", "run"): [D, D],
    ("logs", "failures"): [M],
    ("logs", "ingest"): [M, "--db", "{tmp}/logs.db"],
    ("logs", "to-run"): [M, "--dataset", M, "--out", "{tmp}/r.jsonl"],
    ("logs", "report"): [D],
    ("logs", "sample"): [M, "--month", "2026-10"],
    ("plan",): ["--delta", "0.03"],
    ("run",): [D, "--system", "bm25", "--out", "{tmp}/run.jsonl"],
    ("sweep",): [D, "--corpus", M, "--grid", M, "--out", "{tmp}/sweep"],
    ("schema",): ["--out", D],
    ("score",): [D, D],
    ("split",): [D],
    ("sql", "ask"): [M, "how many?"],
    ("sql", "check"): [D, D],
    ("sql", "exec"): [F, "SELECT 1"],
    ("sql", "load-pg"): [M, "--url", "postgresql://127.0.0.1:1/none"],
    ("sql", "near-miss"): [D],
    ("sql", "run"): [D, "--system", "template", "--out", "{tmp}/r.jsonl"],
    ("sql", "safe"): ["SELECT 1", "--dialect", "no-such-dialect"],
    ("sql", "suite"): [M],
    ("synth", "check"): [D],
    ("synth", "generate"): ["--out", "{tmp}/room", "--companies", "0"],
    ("synth", "routing"): ["--out", F],
    ("synth", "questions"): ["--corpus", M, "--golden", M, "--out", "{tmp}/s.jsonl"],
    ("synth", "warehouse"): ["--out", "{tmp}/wh", "--companies", "0"],
    ("trec", "export"): [D, "--qrels", "{tmp}/q.qrels"],
    ("trec", "import"): [D, "--out", "{tmp}/r.jsonl"],
    ("validate",): [D],
    ("workbench", "access"): ["alice", "--clearance", "cosmic", "--db", "sqlite:///{tmp}/w.db"],
    ("workbench", "adduser"): ["alice", "--db", D, "--password", "x"],
    ("workbench", "demo"): ["--db", D],
    ("workbench", "export"): ["--db", D, "--out", "{tmp}/x.jsonl"],
    ("workbench", "import-corpus"): [D, "--db", D],
    ("workbench", "import-entries"): [D, "--db", D],
    ("workbench", "import-run"): [D, "--db", D],
    ("workbench", "plan"): ["--rows", "10", "--overlap", "1.5"],
    ("workbench", "release-stale"): ["--db", D],
    ("workbench", "serve"): ["--db", D, "--port", "-1"],
}


def _fill(args: list[str], tmp: Path) -> list[str]:
    (tmp / "adir").mkdir(exist_ok=True)
    (tmp / "garbage.bin").write_bytes(b"\xff\xfe not json \x00\n")
    sub = {
        "{file}": str(tmp / "garbage.bin"),
        "{dir}": str(tmp / "adir"),
        "{missing}": str(tmp / "missing.jsonl"),
        "{tmp}": str(tmp),
    }
    out = []
    for a in args:
        for k, v in sub.items():
            a = a.replace(k, v)
        out.append(a)
    return out


def assert_clean_failure(result: object, code: int = 2) -> str:
    """Exit `code`, a message, and no Python traceback (a SystemExit is how typer exits)."""
    exc = getattr(result, "exception", None)
    text = getattr(result, "output", "")
    if exc is not None and not isinstance(exc, SystemExit):
        tb = "".join(traceback.format_exception(exc))
        raise AssertionError(f"uncaught {type(exc).__name__}: {exc}\n{tb}\n{text}")
    assert getattr(result, "exit_code", None) == code, text
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    assert text.strip(), "no message"
    return str(text)


def test_every_command_has_a_bad_invocation() -> None:
    paths = set(command_paths())
    assert len(paths) > 25
    assert sorted(paths - set(BAD)) == [], "add a bad invocation for each new command to BAD"
    assert sorted(set(BAD) - paths) == [], "BAD names commands that do not exist"


@pytest.mark.parametrize(
    "path", [*command_paths(), *group_paths()], ids=lambda p: " ".join(p) or "assay"
)
def test_help(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Usage" in result.output and len(result.output.strip()) > 40


@pytest.mark.parametrize("path", sorted(BAD), ids=" ".join)
def test_bad_input_exits_2_without_traceback(path: tuple[str, ...], tmp_path: Path) -> None:
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = runner.invoke(app, [*path, *_fill(BAD[path], tmp_path)])
    assert_clean_failure(result)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before and p.name not in ("adir", "garbage.bin")] == [], (
        "output written"
    )


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("assay ")


def test_the_help_lists_commands_in_one_order_whichever_module_is_imported_first() -> None:
    """`assay --help` (and the docs generated from it) lists the top-level commands in one
    order: a program that imports a command module (``assay.cli.stats_cmds``) before the
    registry module gets the same order as the command line."""
    import subprocess
    import sys

    script = (
        "import {first}\n"
        "import assay.cli._register\n"
        "from assay.cli import app\n"
        "print([i.callback.__name__ for i in app.registered_commands])\n"
    )
    orders = {
        first: subprocess.run(
            [sys.executable, "-c", script.format(first=first)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for first in ("assay.cli", "assay.cli.stats_cmds", "assay.cli.sweep_cmds")
    }
    assert len(set(orders.values())) == 1, orders


def test_the_help_lists_a_modules_commands_in_their_source_order() -> None:
    """Within a command module the commands are listed in the order the source defines them,
    whatever decorators a command carries (`collector_paused` on gate once listed gate before
    compare: its wrapper's line was read instead of the command's)."""
    import re
    from pathlib import Path

    from assay.cli import stats_cmds

    source = Path(stats_cmds.__file__).read_text(encoding="utf-8")
    defined = re.findall(r'^@app\.command\("([\w-]+)"', source, flags=re.M)
    listed = [i.name for i in app.registered_commands if i.name in defined]
    assert len(defined) >= 4 and listed == defined, (listed, defined)


def test_every_command_goes_through_the_error_route_once_applied_in_one_place() -> None:
    """The registry wraps every command in `handle_errors` exactly once; no command module
    wraps its own, so a new command cannot miss the route or take it twice."""
    import re
    from pathlib import Path

    from assay.cli import _common

    route = _common.handle_errors(lambda: None).__code__

    def layers(fn: object) -> int:
        n = 0
        while fn is not None:
            n += getattr(fn, "__code__", None) is route
            fn = getattr(fn, "__wrapped__", None)
        return n

    def callbacks(typer_app: typer.Typer) -> list[object]:
        out = [i.callback for i in typer_app.registered_commands]
        for group in typer_app.registered_groups:
            if group.typer_instance is not None:
                out += callbacks(group.typer_instance)
        return out

    found = callbacks(app)
    assert len(found) == len(command_paths())
    assert [layers(fn) for fn in found] == [1] * len(found)
    modules = Path(_common.__file__).parent.glob("*_cmds.py")
    applied = [m.name for m in modules if re.search(r"\bhandle_errors\b", m.read_text("utf-8"))]
    assert applied == []


def test_the_command_map_names_the_modules_of_every_command() -> None:
    """`assay.cli._commands.COMMANDS` (read by the command line to import one command's
    modules) is what the modules register: for each top-level command or group, the modules of
    its callbacks and subcommands', and the module that made the group (`groups` is always
    imported, so it need not be named); `MODULES` is every command module."""
    import importlib
    import inspect

    from assay.cli import _commands

    def module(fn: object) -> str:
        return str(inspect.unwrap(fn).__module__).rsplit(".", 1)[-1]  # type: ignore[arg-type]

    def walk(t: typer.Typer, acc: set[str]) -> set[str]:
        acc.update(module(i.callback) for i in t.registered_commands)
        for g in t.registered_groups:
            assert g.typer_instance is not None
            walk(g.typer_instance, acc)
        return acc

    made = {}  # the module holding each group's Typer as a global
    for name in _commands.MODULES:
        for value in vars(importlib.import_module(f"assay.cli.{name}")).values():
            if isinstance(value, typer.Typer) and value is not app:
                made.setdefault(id(value), name)
    found: dict[str, set[str]] = {}
    for info in app.registered_commands:
        assert info.name is not None
        found.setdefault(info.name, set()).add(module(info.callback))
    for g in app.registered_groups:
        assert g.name is not None and g.typer_instance is not None
        acc = walk(g.typer_instance, {made[id(g.typer_instance)]})
        found.setdefault(g.name, set()).update(acc)
    assert {k: sorted(v - {"groups"}) for k, v in found.items()} == {
        k: sorted(v) for k, v in _commands.COMMANDS.items()
    }
    here = Path(_commands.__file__).parent
    assert sorted(_commands.MODULES) == sorted(
        [p.stem for p in here.glob("*_cmds.py")] + ["groups"]
    )


def test_the_command_line_imports_only_the_modules_of_its_command(tmp_path: Path) -> None:
    """``assay gate`` imports none of the other command modules (their imports were a tenth of a
    second of every command's start); ``assay --help`` still lists every command."""
    from assay.cli import _commands
    from tests.conftest import cli_in_child

    out, code, modules = cli_in_child(["gate", "--help"])
    assert code == "0", out
    loaded = {m.rsplit(".", 1)[-1] for m in modules if m.startswith("assay.cli.")}
    assert loaded & set(_commands.MODULES) == {"groups", "stats_cmds"}
    out, code, modules = cli_in_child(["--help"])
    assert code == "0", out
    assert {f"assay.cli.{m}" for m in _commands.MODULES} <= modules
    for name in _commands.COMMANDS:
        assert f" {name} " in out, name
