"""The gate builds its many long-lived objects (entries, chunk table, runs, gold) with the cyclic
garbage collector paused (`assay._io.gc_paused`), and leaves it as it found it; run from the
command line, it leaves without tearing the interpreter down once its output is written."""

from __future__ import annotations

import gc
import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import cli_in_child, write_case

import assay.compare.files as files
from assay._io import gc_paused
from assay.compare import compare_files, gate_files
from assay.errors import DataError

KW: dict[str, Any] = {"n_resamples": 100, "n_permutations": 100, "record": False}
OUTCOMES = {"a": [(1, 2), (2, 2), (0, 2)] * 4}


def test_the_gate_reads_and_compares_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    seen: list[bool] = []
    real = files.open_inputs

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "open_inputs", spy)
    assert gc.isenabled()
    result = gate_files(ds, base, cand, **KW)
    assert seen == [False]
    assert gc.isenabled()  # restored
    assert result.comparison.rows


def test_compare_reads_and_compares_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    seen: list[bool] = []
    real = files.open_inputs

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "open_inputs", spy)
    comparison = compare_files(ds, base, cand, **KW)
    assert seen == [False]
    assert gc.isenabled()
    assert comparison.rows


def test_the_collector_is_restored_when_the_gate_refuses(tmp_path: Path) -> None:
    ds, base, _ = write_case(tmp_path, OUTCOMES)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q0", "retrieved": [}\n', encoding="utf-8")
    with pytest.raises(DataError):
        gate_files(ds, base, bad, **KW)
    assert gc.isenabled()


def _nested() -> Iterator[bool]:
    with gc_paused():
        yield gc.isenabled()
        with gc_paused():
            yield gc.isenabled()
        yield gc.isenabled()  # the inner block leaves it paused


def test_gc_paused_nests_and_keeps_a_disabled_collector_disabled() -> None:
    assert list(_nested()) == [False, False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_the_gate_command_runs_whole_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `assay gate` is one-shot: the collector stays paused from its imports to its output
    # (recording and rendering included), and is restored when the command exits
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (every command registered)
    from assay.cli import app
    from assay.compare.gate import GateResult

    ds, base, cand = write_case(tmp_path, OUTCOMES)
    seen: list[bool] = []
    real = GateResult.to_json

    def spy(self: Any) -> str:
        seen.append(gc.isenabled())
        return real(self)

    monkeypatch.setattr(GateResult, "to_json", spy)
    args = ["gate", str(ds), str(base), str(cand), "--no-record", "-f", "json"]
    res = CliRunner().invoke(app, [*args, "--resamples", "100", "--permutations", "100"])
    assert res.exit_code in (0, 1), res.output
    assert seen == [False]
    assert gc.isenabled()


@pytest.mark.parametrize("cluster", [[], ["--cluster", "none"]])
def test_the_gate_loads_no_scipy(tmp_path: Path, cluster: list[str]) -> None:
    # the gate's tests (an exact binomial, a t quantile, a chi-square tail, Tango's bounds by
    # Brent's method) come from the standard library (assay.stats._dist, the exact binomial
    # tails): scipy.special's import alone was 0.2 s of CPU, scipy.stats' a second
    ds, base, cand = write_case(tmp_path, {"a": [(1, 2), (2, 2), (0, 2)] * 4, "b": [(2, 0)] * 9})
    args = ["gate", str(ds), str(base), str(cand), "--no-record", "-f", "json", *cluster]
    out, code, modules = cli_in_child(args)
    assert code in ("0", "1"), out
    assert '"rows"' in out
    assert sorted(m for m in modules if m.split(".")[0] == "scipy") == [], (
        "assay gate imported scipy"
    )


def test_the_statistics_face_names_each_function_where_it_lives() -> None:
    # `assay.stats` imports a module when one of its names is first asked for; every name of
    # its __all__ is found there, and importing the package loads no distribution
    import subprocess
    import sys

    import assay.stats as face

    assert sorted(face._HOME) == sorted(face.__all__)
    for name in face.__all__:
        value = getattr(face, name)
        assert getattr(importlib.import_module(face._HOME[name]), name) is value
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        face.nothing  # noqa: B018
    probe = "import sys, assay.stats; print('scipy.stats' in sys.modules)"
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


_LEAVES = """
import atexit, gc, os, runpy, sys
class Witness:
    def __del__(self):
        os.write(2, b"torn down\\n")
kept = Witness()  # freed only when the interpreter is torn down
atexit.register(lambda: os.write(2, b"exit handlers ran\\n"))
atexit.register(lambda: os.write(2, b"collector on\\n" if gc.isenabled() else b"collector off\\n"))
sys.argv = ["assay", *sys.argv[1:]]
runpy.run_module("assay.cli", run_name="__main__")
"""


@pytest.mark.parametrize("passing", [True, False])
def test_the_gate_leaves_without_tearing_the_interpreter_down(
    tmp_path: Path, passing: bool
) -> None:
    # once its output is written, `assay gate` runs the exit handlers and leaves: the freeing of
    # every object and module one by one (a fifth of a second at 100,000 entries) is skipped
    import subprocess
    import sys

    ds, base, cand = write_case(tmp_path, OUTCOMES)
    runs = [base, cand] if passing else [cand, base]  # the candidate better, then worse
    args = ["gate", str(ds), *map(str, runs), "--no-record"]
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([src, *sys.path])}
    cmd = [sys.executable, "-c", _LEAVES]
    proc = subprocess.run([*cmd, *args, "-f", "json"], env=env, capture_output=True, text=True)
    assert proc.returncode == (0 if passing else 1), proc.stderr
    assert json.loads(proc.stdout)["passed"] is passing  # the whole output, flushed
    assert "exit handlers ran" in proc.stderr
    assert "torn down" not in proc.stderr
    # nor turns the collector back on: its first collection would walk every object the gate
    # built (0.3 s at 100,000 entries) just before leaving
    assert "collector off" in proc.stderr
    # a command that is not one-shot exits as usual
    proc = subprocess.run([*cmd, "validate", str(ds)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "exit handlers ran" in proc.stderr and "torn down" in proc.stderr
    assert "collector on" in proc.stderr


@pytest.mark.parametrize("daemon", [True, False])
def test_a_daemon_thread_does_not_keep_the_gate_from_leaving(tmp_path: Path, daemon: bool) -> None:
    # a thread still alive when the gate is done (as a progress bar's refresh thread, told to
    # stop but not yet woken, was in one gate in three on a loaded machine): a daemon thread,
    # which the usual exit would not wait for either, does not hold the quick exit back; a
    # non-daemon one does (the usual exit waits for it)
    import subprocess
    import sys

    ds, base, cand = write_case(tmp_path, OUTCOMES)
    spawn = (
        "import threading, time\n"
        f"threading.Thread(target=time.sleep, args=(0.5,), daemon={daemon}).start()\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([src, *sys.path])}
    args = ["gate", str(ds), str(base), str(cand), "--no-record", "-f", "json"]
    proc = subprocess.run(
        [sys.executable, "-c", spawn + _LEAVES, *args], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "exit handlers ran" in proc.stderr
    assert ("torn down" in proc.stderr) is not daemon


def test_the_command_line_holds_the_inputs_until_it_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run from the command line, the inputs a gate opened are held to the end (reclaimed whole
    # as the process leaves); a library call holds nothing
    import weakref

    import assay._io

    ds, base, cand = write_case(tmp_path, OUTCOMES)
    seen: list[Any] = []
    real = files.compare_runs

    def spy(dataset: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(weakref.ref(dataset))
        return real(dataset, *args, **kwargs)

    monkeypatch.setattr(files, "compare_runs", spy)
    assert assay._io.HELD is None
    gate_files(ds, base, cand, **KW)
    assert seen[-1]() is None  # freed once the gate returned
    monkeypatch.setattr(assay._io, "HELD", [])
    gate_files(ds, base, cand, **KW)
    (held,) = assay._io.HELD
    assert seen[-1]() is held.dataset and len(held.runs) == 2
