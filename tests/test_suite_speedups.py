"""The suite's own speed-ups (tests/conftest.py) keep what they promise: CliRunner reuses a
built click command only while the app's commands are unchanged, and assay's bytecode is
current when the environment writes none; the test modules' rewritten bytecode is cached while
the suite is collected, what the collection left is frozen out of the garbage collector's reach,
and the files that take longest run first."""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
from pathlib import Path

import pytest
import typer
import typer.testing
from typer.testing import CliRunner

from tests.conftest import LONG_FILES, _built_command, _compile_assay_once, _file_order


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    def hello() -> None:
        print("hello")

    @app.command()
    def bye() -> None:
        print("bye")

    return app


def test_the_runner_uses_the_memoised_build() -> None:
    assert typer.testing._get_command is _built_command  # type: ignore[attr-defined]


def test_an_unchanged_app_is_built_once() -> None:
    app = _app()
    first = _built_command(app)
    assert _built_command(app) is first
    assert CliRunner().invoke(app, ["hello"]).output == "hello\n"
    assert _built_command(app) is first


def test_an_added_command_rebuilds_and_runs() -> None:
    app = _app()
    first = _built_command(app)

    @app.command()
    def later() -> None:
        print("later")

    res = CliRunner().invoke(app, ["later"])
    assert res.exit_code == 0 and res.output == "later\n"
    assert _built_command(app) is not first


def test_a_replaced_command_function_rebuilds() -> None:
    app = _app()
    assert CliRunner().invoke(app, ["hello"]).output == "hello\n"

    def hello() -> None:
        print("hi again")

    app.registered_commands[0].callback = hello
    assert CliRunner().invoke(app, ["hello"]).output == "hi again\n"


def test_a_command_added_to_a_group_rebuilds() -> None:
    app, group = _app(), typer.Typer()

    @group.command()
    def one() -> None:
        print("one")

    @group.command()
    def two() -> None:
        print("two")

    app.add_typer(group, name="grp")
    assert CliRunner().invoke(app, ["grp", "one"]).output == "one\n"

    @group.command()
    def three() -> None:
        print("three")

    assert CliRunner().invoke(app, ["grp", "three"]).output == "three\n"


def test_assay_bytecode_is_current_when_the_environment_writes_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every module of the package has a ``.pyc`` Python accepts (source mtime and size in
    its header) after the suite's start-up compilation."""
    spec = importlib.util.find_spec("assay")
    assert spec is not None and spec.submodule_search_locations
    package = Path(next(iter(spec.submodule_search_locations)))
    if not os.access(package, os.W_OK):
        pytest.skip("assay is installed read-only: Python's own cache is what it is")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _compile_assay_once()
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 80
    stale = []
    for source in sources:
        pyc = Path(importlib.util.cache_from_source(str(source)))
        if not pyc.is_file():
            stale.append(str(source))
            continue
        header = pyc.read_bytes()[:16]
        st = source.stat()
        if (
            header[:4] != importlib.util.MAGIC_NUMBER
            or int.from_bytes(header[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
            or int.from_bytes(header[12:16], "little") != st.st_size & 0xFFFFFFFF
        ):
            stale.append(str(source))
    assert stale == []


def test_collection_cached_this_modules_rewritten_bytecode_and_gave_the_choice_back() -> None:
    """pytest's rewritten bytecode of a test module is cached beside it once the suite is
    collected (a checked-hash pyc of the source as it is), and the tests run with the
    environment's own choice about writing bytecode."""
    assert sys.dont_write_bytecode == bool(sys.flags.dont_write_bytecode)
    here = Path(__file__)
    if not os.access(here.parent, os.W_OK):
        pytest.skip("the tests are read-only: pytest's cache is what it is")
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}"
    pyc = here.parent / "__pycache__" / f"{here.stem}.{tag}.pyc"
    header = pyc.read_bytes()[:16]
    assert header[:4] == importlib.util.MAGIC_NUMBER
    assert header[4:8] == b"\x03\x00\x00\x00"  # hash-based, always checked (PEP 552)
    assert header[8:16] == importlib.util.source_hash(here.read_bytes())[:8]


def test_the_long_files_exist_and_run_first(
    request: pytest.FixtureRequest,
) -> None:
    """Every file `LONG_FILES` names exists; the session runs the ones it collected first, in
    that order, then the other files, each file's tests together; and xdist, when present,
    keeps that order."""
    root = Path(__file__).resolve().parents[1]
    assert [f for f in LONG_FILES if not (root / f).is_file()] == []
    files = [item.nodeid.split("::", 1)[0] for item in request.session.items]
    order = list(dict.fromkeys(files))
    assert len(order) == len({f: None for f in files})  # each file's tests together
    assert [f for f in files if f in LONG_FILES] == sorted(
        (f for f in files if f in LONG_FILES), key=LONG_FILES.index
    )
    rest = [f for f in order if f not in LONG_FILES]
    assert order == [f for f in LONG_FILES if f in order] + rest
    assert getattr(request.config.option, "loadscopereorder", False) is False


def test_the_file_order_of_a_made_up_collection() -> None:
    """Long files first in their list's order, the rest most tests first and, among files of as
    many tests, in collection order; a file's tests keep their order."""

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    ids = [
        "tests/a.py::t1",
        "tests/b.py::t1",
        "tests/b.py::t2",
        f"{LONG_FILES[1]}::t1",
        "tests/c.py::t1",
        f"{LONG_FILES[0]}::t2",
        f"{LONG_FILES[0]}::t1",
    ]
    items = [Item(i) for i in ids]
    _file_order(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        f"{LONG_FILES[0]}::t2",
        f"{LONG_FILES[0]}::t1",
        f"{LONG_FILES[1]}::t1",
        "tests/b.py::t1",
        "tests/b.py::t2",
        "tests/a.py::t1",
        "tests/c.py::t1",
    ]


def test_what_the_collection_left_is_frozen_out_of_the_collectors_reach() -> None:
    """The suite's modules and items, alive since it was collected, are frozen: a full garbage
    collection in a test scans only what the tests made since."""
    assert gc.get_freeze_count() > 0
