"""`workbench export` never writes over its store, whatever spelling of the store's URL names
it: SQLite's URI form (``sqlite:///file:store.db?uri=true``, with an authority, percent-escapes
or more query parameters) is resolved to the file the driver opens before the guard compares.
Attack: `workbench export --out store.db --db 'sqlite:///file:store.db?uri=true'` exited 0 and
left the store at 0 bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app as cli_app
from assay.workbench.db import Database
from assay.workbench.models import Task


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli_app, list(args))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The demo store's bytes, made once (each test writes them into its own folder)."""
    store = tmp_path_factory.mktemp("demo") / "store.db"
    code, out = _cli("workbench", "demo", "--db", f"sqlite:///{store}", "-f", "json")
    assert code == 0, out
    assert not Path(f"{store}-wal").exists() or Path(f"{store}-wal").stat().st_size == 0
    return store.read_bytes()


def _tasks(url: str) -> int:
    d = Database(url)
    try:
        with d.read() as s:
            return int(s.scalar(select(func.count()).select_from(Task)) or 0)
    finally:
        d.dispose()


@pytest.mark.parametrize(
    "spelling",
    [
        "sqlite:///file:store.db?uri=true",
        "sqlite:///file:store.db?uri=1&mode=rw",
        "sqlite:///file:st%6Fre.db?uri=true",
        "sqlite:///file:{abs}?uri=true",
        "sqlite:///file://localhost{abs}?uri=true&cache=shared",
        "sqlite:///file:./sub/../store.db?uri=true",
    ],
)
@pytest.mark.parametrize("output", ["store.db", "store.db-wal"])
def test_export_refuses_the_store_by_its_sqlite_uri(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    demo_store: bytes,
    spelling: str,
    output: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    store = tmp_path / "store.db"
    store.write_bytes(demo_store)
    url = spelling.format(abs=store)
    n = _tasks(url)  # the spelling opens this very store
    assert n > 0 and n == _tasks(f"sqlite:///{store}")
    before = store.read_bytes()
    code, out = _cli("workbench", "export", "--out", output, "--db", url)
    assert code == 2, out
    assert "this output is an input" in out
    assert store.read_bytes() == before
    assert _tasks(f"sqlite:///{store}") == n


def test_an_in_memory_uri_has_no_file_to_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mode=memory` names no file: an output called like it is an ordinary file."""
    from assay.cli.workbench_cmds import _store_files

    monkeypatch.chdir(tmp_path)
    assert _store_files("sqlite:///file:mem1?uri=true&mode=memory") == [Path("file:mem1.writelock")]
    assert Path("store.db") in _store_files("sqlite:///file:store.db?uri=true")
    # without uri=true the name is a literal file name, as the driver opens it
    assert _store_files("sqlite:///file:store.db")[0] == Path("file:store.db")
