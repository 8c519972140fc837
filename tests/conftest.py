"""Suite-wide fixtures and helpers: tiny datasets and runs with chosen outcomes, JSONL writing,
the issue's example entry, and an isolated fresh-sample registry and ledger index for every
test."""

from __future__ import annotations

import compileall
import gc
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest


def _compile_assay_once() -> None:
    """Byte-compile assay's sources once, where Python itself would cache them.

    With PYTHONDONTWRITEBYTECODE set (as in the CI image) no interpreter writes a ``.pyc``, so
    every Python process the suite starts (the CLI in a subprocess, `--python` workers, Ray
    workers, the fresh interpreters of the import-order tests) compiled every assay module it
    imported from source, each time: minutes of CPU over a run. Python still reads ``.pyc``
    files with the variable set, so compiling the package up front (a second or so, then only
    what changed) gives every process cached bytecode. Only assay's own package is compiled:
    modules that tests write and import stay uncached, as the environment asks."""
    if not sys.dont_write_bytecode:
        return  # Python caches as it imports
    spec = importlib.util.find_spec("assay")
    if spec is None or not spec.submodule_search_locations:
        return
    package = Path(next(iter(spec.submodule_search_locations)))
    if os.access(package, os.W_OK):
        compileall.compile_dir(package, quiet=2, workers=1)


_compile_assay_once()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """The test modules' rewritten bytecode cached while the suite is collected.

    pytest rewrites each test module's asserts and caches the result beside it, unless
    PYTHONDONTWRITEBYTECODE is set (as in the CI image): then each worker parsed, rewrote and
    compiled every test module of the suite on every run, about ten seconds of CPU each. pytest
    reads its cache with the variable set, so writing is allowed while the suite is collected
    (the suite's own modules, and what they import) and the environment's choice restored for
    the tests themselves: modules that tests write and import stay uncached."""
    environment = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = environment


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive once the suite is collected (every module imported, every test item) is
    frozen out of the garbage collector's reach. A full collection (Python runs one now and then,
    statsmodels' Holm adjustment runs one on every call, a workbench server one as it starts)
    then scans what the tests made since, not the millions of objects of a worker that
    collected the whole suite: a second or more each time."""
    gc.collect()
    gc.freeze()


import typer  # noqa: E402
import typer.main  # noqa: E402
import typer.testing  # noqa: E402

import assay.cli._register  # noqa: E402, F401  (every command, in its place, before any test's import)
from assay.runs import write_run  # noqa: E402  (after the compilation above)


def _tree(app: typer.Typer) -> list[object]:
    """What typer builds a Typer app's click command from, in a fixed order: the app's
    callback, each command's record and function, each group's record and, recursively, its
    app's tree (the objects themselves, compared by identity)."""
    out: list[object] = [app.registered_callback, app.info.callback]
    for command in app.registered_commands:
        out += [command, command.callback]
    for group in app.registered_groups:
        out.append(group)
        if group.typer_instance is not None:
            out += _tree(group.typer_instance)
    return out


_BUILT: dict[int, tuple[typer.Typer, list[object], Any]] = {}


def _built_command(app: typer.Typer) -> Any:
    """`typer.main.get_command`, kept per app while its tree is unchanged.

    typer's CliRunner builds the whole click command tree of the app on every `invoke`: for
    assay's ~80 commands that is ~0.2 s of CPU (the type hints of every parameter of every
    command evaluated again), paid by each of the suite's thousands of invocations. A click
    command is built once and invoked many times in any click program (a context per
    invocation), so the suite builds it once, and again whenever a command, group or callback
    was added, removed or replaced (a plug-in registering a command rebuilds it)."""
    tree = _tree(app)
    hit = _BUILT.get(id(app))
    if (
        hit is not None
        and hit[0] is app
        and len(hit[1]) == len(tree)
        and all(a is b for a, b in zip(hit[1], tree, strict=True))
    ):
        return hit[2]
    command = typer.main.get_command(app)
    _BUILT[id(app)] = (app, tree, command)  # the app held, so its id is not reused
    return command


typer.testing._get_command = _built_command  # type: ignore[attr-defined]

# the semantic second opinion (assay.judge.semantic) loads a sentence encoder: the suite runs
# the deterministic rules alone, and tests/judge/test_semantic.py and test_polarity.py turn it on
os.environ.setdefault("ASSAY_SEMANTIC_OPINION", "off")


# The files that take longest alone (each 20 s or more on 2 busy cores, longest first), run first.
# `make test` hands whole files to 2 workers in order (pytest-xdist's --dist loadfile), and xdist
# itself orders them by their number of tests: a slow file of one or two tests (a Ray cluster, the
# whole demo, a server in a child process) came last, and one worker ran it alone while the other
# had finished. Started first, they are spread over both workers and the short files fill in
# behind them. A file missing from this list only runs later; a file named here must exist.
LONG_FILES = (
    "tests/demo/test_demo.py",
    "tests/test_docs.py",
    "tests/runner/test_ray_executor.py",
    "tests/workbench/test_every_command.py",
    "tests/logs/test_ingest_ray.py",
    "tests/logs/test_ingest_fast.py",
    "tests/workbench/test_browser.py",
    "tests/workbench/test_security.py",
    "tests/systems/filings/test_vectors_ray.py",
    "tests/workbench/test_load.py",
    "tests/workbench/test_browser_sql_policy.py",
    "tests/test_architecture.py",
    "tests/synth/test_guards.py",
    "tests/synth/test_conversations.py",
    "tests/stats/test_multiple.py",
    "tests/logs/test_traffic_demo.py",
    "tests/compare/test_clusters.py",
    "tests/sql/test_systems.py",
    "tests/judge/test_discovery.py",
    "tests/stats/test_agreement_posterior.py",
    "tests/explorer/test_browser_conversations.py",
    "tests/runs/test_trec_export.py",
    "tests/workbench/test_slow_readers.py",
    "tests/score/test_reference.py",
    "tests/workbench/test_server.py",
    "tests/corpus/test_labels_survive.py",
    "tests/compare/test_gate_reads_no_check.py",
    "tests/workbench/test_integrity.py",
    "tests/explorer/test_sql.py",
    "tests/synth/test_generate.py",
    "tests/compare/test_ci_ledger.py",
    "tests/logs/test_report_demo_month.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """xdist's reordering of files by their number of tests would undo the order below."""
    if getattr(config.option, "loadscopereorder", None):
        config.option.loadscopereorder = False


def _file_order(items: list[pytest.Item]) -> None:
    """`LONG_FILES` first, in their order, then the other files by their number of tests, most
    first (xdist's own order), each file's tests in their order."""
    files: dict[str, int] = {}
    for item in items:
        name = item.nodeid.split("::", 1)[0]
        files[name] = files.get(name, 0) + 1
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    first = {name: i for i, name in enumerate(files)}
    items.sort(
        key=lambda item: (
            rank.get(f := item.nodeid.split("::", 1)[0], len(rank)),
            -files[f] if f not in rank else 0,
            first[f],
        )
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files in the order `_file_order` gives. Monte-Carlo studies of minutes (marker
    ``simulation``) are not part of `make test`: they run when asked for, ``pytest -m
    simulation`` (or ``ASSAY_SIMULATIONS=1``); each has a seeded fast version that always
    runs."""
    _file_order(items)
    asked = "simulation" in (config.getoption("markexpr") or "")
    if asked or os.environ.get("ASSAY_SIMULATIONS") == "1":
        return
    skip = pytest.mark.skip(reason="a Monte-Carlo study of minutes: pytest -m simulation")
    for item in items:
        if item.get_closest_marker("simulation") is not None:
            item.add_marker(skip)


CHROMIUM = "/usr/bin/chromium"
# the marks of a module that drives a real browser: skipped where Debian's chromium is absent
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, one for a module (the modules marked `NEEDS_CHROMIUM`)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


@pytest.fixture(autouse=True)
def _isolated_fresh_registry(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own fresh-sample registry, never the user's."""
    path = tmp_path_factory.mktemp("fresh-registry") / "fresh.sqlite"
    monkeypatch.setenv("ASSAY_FRESH_REGISTRY", str(path))
    # and its own index of ledgers by dataset content (`assay.compare.ledger_index.ledger_index_path`)
    monkeypatch.setenv("ASSAY_LEDGER_INDEX", str(path.with_name("ledgers.jsonl")))
    return path


EXAMPLE_ENTRY = (
    '{"id": "fd-0183", "query": "bank-04 NIM 22 vs 23, did it expand", "category": "comparison",\n'
    ' "answerable": true, "as_of": "2024-03-31",\n'
    ' "evidence_paths": [\n'
    '   [["bank-04/10-K/fy2023#mdna-nii-table"]],\n'
    '   [["bank-04/10-K/fy2022#mdna-nii-table"],\n'
    '    ["bank-04/10-K/fy2023#mdna-nii-table", "bank-04/10-K/fy2023#mdna-nim-text"]]\n'
    " ],\n"
    ' "reference_answer": "NIM expanded by roughly 40 bp year over year; higher asset yields outpaced rising deposit costs.",\n'
    ' "source": "log", "reviewed_by": 2, "added": "2026-08-14"}'
)


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def example_entry() -> dict[str, Any]:
    return json.loads(EXAMPLE_ENTRY)


Outcomes = Mapping[str, Sequence[tuple[int, int]]]
"""category -> [(baseline pieces found, candidate pieces found)], each 0, 1 or 2 of 2 pieces."""

CaseFactory = Callable[..., tuple[Path, Path, Path]]


def _rows(outcomes: Outcomes, which: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for cat, pairs in outcomes.items():
        for i, pair in enumerate(pairs):
            eid = f"{cat}-{i:03d}"
            found = [f"{eid}-a", f"{eid}-b"][: pair[which]]
            fill = [f"noise-{j}" for j in range(6 - len(found))]
            rows.append({"id": eid, "retrieved": found + fill})
    return rows


def write_case(
    directory: Path, outcomes: Outcomes, name: str = "golden"
) -> tuple[Path, Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ds = directory / f"{name}.jsonl"
    with open(ds, "w", encoding="utf-8") as fh:
        for cat, pairs in outcomes.items():
            for i in range(len(pairs)):
                eid = f"{cat}-{i:03d}"
                entry = {
                    "id": eid,
                    "query": f"question {eid}",
                    "category": cat,
                    "evidence_paths": [[[f"{eid}-a"], [f"{eid}-b"]]],
                    "metadata": {"fact_id": f"fact-{i // 3}"},
                }
                fh.write(json.dumps(entry) + "\n")
    base = directory / "base.jsonl"
    cand = directory / "cand.jsonl"
    write_run(base, _rows(outcomes, 0))
    write_run(cand, _rows(outcomes, 1))
    return ds, base, cand


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    def make(outcomes: Outcomes, name: str = "golden") -> tuple[Path, Path, Path]:
        return write_case(tmp_path, outcomes, name)

    return make


_CLI_IN_CHILD = """
import atexit, runpy, sys
sys.argv = ["assay", *sys.argv[1:]]
atexit.register(  # run however the command leaves (`assay.cli._common.leave_at_once`)
    lambda: print("modules", ",".join(sorted(m for m in sys.modules if "." in m)), file=sys.stderr)
)
runpy.run_module("assay.cli", run_name="__main__")
"""


def cli_in_child(args: Sequence[str], *, site: Path | None = None) -> tuple[str, str, set[str]]:
    """`assay ARGS` in a fresh interpreter (this tree's src first on its path, then `site` if
    given, then this process's path): its output (stdout then stderr), its exit code as text
    and the dotted modules it had imported when it ended."""
    import subprocess

    src = Path(__file__).resolve().parents[1] / "src"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([*([str(site)] if site else []), str(src), *sys.path])
    proc = subprocess.run(
        [sys.executable, "-c", _CLI_IN_CHILD, *args], env=env, capture_output=True, text=True
    )
    lines = proc.stderr.strip().splitlines()
    code = str(proc.returncode)
    modules = set(lines[-1].split(" ", 1)[1].split(",")) if lines[-1:] else set()
    return proc.stdout + proc.stderr, code, modules


def python_in_child(code: str) -> str:
    """``python -c CODE`` in a fresh interpreter on this process's path: its stdout (a failure
    fails the calling test with the child's stderr)."""
    import subprocess

    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout
