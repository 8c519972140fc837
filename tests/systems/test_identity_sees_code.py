"""A system's identity sees its code: every source file of its top-level package, its declared
data files, and its declared identity combined with (not instead of) the source hash. A resumed
run whose system changed is refused, naming what changed. ``--python`` runs an import-path
system in another interpreter."""

from __future__ import annotations

import importlib
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.corpus import load_chunks
from assay.dataset import Entry
from assay.runner import JournalMismatch, run_system
from assay.systems import load_system, package_hash, system_identity

ROWS = [
    {"id": "a", "query": "qa", "category": "x", "as_of": "2024-01-01"},
    {"id": "b", "query": "qb", "category": "x"},
    {"id": "c", "query": "qc", "category": "y"},
    {"id": "d", "query": "qd", "category": "y"},
]
ENTRIES = [Entry.model_validate(r) for r in ROWS]

CORE = textwrap.dedent(
    """
    from {pkg}.helpers import suffix

    class System:
        {extra}
        def retrieve(self, query, *, as_of, k):
            return [f"{{query}}-{{suffix()}}-{{i}}" for i in range(k)]
    """
)


def _package(root: Path, name: str, *, extra: str = "pass") -> Path:
    """A package `name` whose system (in core.py) takes its hits' suffix from helpers.py."""
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(CORE.format(pkg=name, extra=extra))
    (pkg / "helpers.py").write_text('def suffix():\n    return "v1"\n')
    return pkg


def _fresh_import(name: str) -> None:
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]
    importlib.invalidate_caches()


def _edit_helper(pkg: Path, name: str) -> None:
    (pkg / "helpers.py").write_text('def suffix():\n    return "v2"\n')
    _fresh_import(name)


def _run(system: Any, cache: RequestCache, out: Path | None = None, spec: str | None = None) -> Any:
    return run_system(ENTRIES, system, k=2, cache=cache, out=out, spec=spec, progress=False)


def test_editing_a_helper_module_is_a_cache_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = _package(tmp_path, "idpkg_helper")
    cache = RequestCache(tmp_path / "cache.sqlite")
    first = _run("idpkg_helper.core:System", cache)
    assert first.meta["called_rows"] == 4
    again = _run("idpkg_helper.core:System", cache)
    assert again.meta["cache_hits"] == 4 and again.meta["system"] == first.meta["system"]
    _edit_helper(pkg, "idpkg_helper")
    edited = _run("idpkg_helper.core:System", cache)
    # the helper module is not the module of the class, yet its edit is seen
    assert edited.meta["called_rows"] == 4 and edited.meta["cache_hits"] == 0
    assert edited.meta["system"]["code"] != first.meta["system"]["code"]
    assert edited.hits("a") == ["qa-v2-0", "qa-v2-1"]


def test_a_declared_identity_is_combined_with_the_source_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = _package(tmp_path, "idpkg_declared", extra='identity = {"model": "m1"}')
    system = load_system("idpkg_declared.core:System")
    ident = system_identity(system, "idpkg_declared.core:System")
    assert ident["identity"] == {"model": "m1"}
    assert ident["code"] == package_hash("idpkg_declared")
    _edit_helper(pkg, "idpkg_declared")
    edited = system_identity(
        load_system("idpkg_declared.core:System"), "idpkg_declared.core:System"
    )
    assert edited["identity"] == {"model": "m1"} and edited["code"] != ident["code"]


def test_declared_data_files_are_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    data = tmp_path / "index"
    data.mkdir()
    (data / "vectors.txt").write_text("1 2 3\n")
    (tmp_path / "weights.txt").write_text("w1\n")
    extra = f"data_files = [{str(tmp_path / 'weights.txt')!r}, {str(data)!r}]"
    _package(tmp_path, "idpkg_data", extra=extra)
    cache = RequestCache(tmp_path / "cache.sqlite")
    first = _run("idpkg_data.core:System", cache)
    assert "data" in first.meta["system"]
    assert _run("idpkg_data.core:System", cache).meta["cache_hits"] == 4
    (data / "vectors.txt").write_text("1 2 4\n")  # a file inside a declared folder
    second = _run("idpkg_data.core:System", cache)
    assert (
        second.meta["called_rows"] == 4
        and second.meta["system"]["data"] != first.meta["system"]["data"]
    )
    (tmp_path / "weights.txt").unlink()  # a declared file that disappears is seen too
    assert _run("idpkg_data.core:System", cache).meta["called_rows"] == 4


def test_a_single_module_system_is_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = tmp_path / "idmod_single.py"
    mod.write_text(
        "class System:\n    def retrieve(self, query, *, as_of, k):\n        return []\n"
    )
    before = system_identity(load_system("idmod_single:System"), "idmod_single:System")["code"]
    mod.write_text(mod.read_text() + "# edited\n")
    _fresh_import("idmod_single")
    after = system_identity(load_system("idmod_single:System"), "idmod_single:System")["code"]
    assert before != after


def test_a_resumed_run_whose_code_changed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows journalled by the old code are never mixed with rows of the new code."""
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = _package(tmp_path, "idpkg_resume")
    (pkg / "flaky.py").write_text(
        textwrap.dedent(
            """
            from idpkg_resume.core import System

            class Flaky(System):
                def retrieve(self, query, *, as_of, k):
                    if query == "qc":
                        raise RuntimeError("down")
                    return super().retrieve(query, as_of=as_of, k=k)
            """
        )
    )
    out = tmp_path / "run.jsonl"
    cache = RequestCache(enabled=False)
    with pytest.raises(Exception, match="entry c"):
        _run("idpkg_resume.flaky:Flaky", cache, out)
    assert Path(str(out) + ".partial").exists()
    _edit_helper(pkg, "idpkg_resume")
    (pkg / "flaky.py").write_text((pkg / "flaky.py").read_text().replace('"qc"', '"never"'))
    with pytest.raises(JournalMismatch, match=r"its code \(a source file of its package\) changed"):
        _run("idpkg_resume.flaky:Flaky", cache, out)
    fixed = run_system(
        ENTRIES, "idpkg_resume.flaky:Flaky", k=2, cache=cache, out=out, restart=True,
        progress=False,
    )  # fmt: skip
    assert {h for r in fixed.ids for h in fixed.hits(r)} == {
        f"q{x}-v2-{i}" for x in "abcd" for i in (0, 1)
    }


def _interpreter(tmp_path: Path) -> tuple[Path, Path]:
    """A second interpreter: the same executable, with a system module on a PYTHONPATH that only
    it sees (as a separate virtualenv would have the system's dependencies)."""
    where = tmp_path / "elsewhere"
    where.mkdir()
    (where / "isolated_sys_demo.py").write_text(
        textwrap.dedent(
            """
            import sys
            print("the system prints to stdout")  # must not break the protocol

            class System:
                identity = {"model": "iso"}
                corpus_hash = "corpus-iso"

                def retrieve(self, query, *, as_of, k):
                    return [{"chunk_id": f"{query}-{as_of}-{i}", "score": float(k - i)}
                            for i in range(k)]

                def answer(self, query, *, as_of, hits):
                    return {"answer": f"{query}:{hits[0].chunk_id}", "citations": [hits[0].chunk_id]}

            class Chunked:  # names the chunk table it searches (a method returning a Path)

                def __init__(self, chunks):
                    self.chunks = chunks

                def chunks_path(self):
                    from pathlib import Path
                    return Path(self.chunks)

                def retrieve(self, query, *, as_of, k):
                    return [f"{query}-{i}" for i in range(k)]

            def broken(**kw):
                class B:
                    def retrieve(self, query, *, as_of, k):
                        raise ValueError("index missing")
                return B()
            """
        )
    )
    wrapper = tmp_path / "python-elsewhere"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH={where} exec {sys.executable} "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    assert "PYTHONPATH" not in env or str(where) not in env["PYTHONPATH"]
    return wrapper, where


def test_python_runs_the_system_in_its_own_interpreter(tmp_path: Path) -> None:
    python, where = _interpreter(tmp_path)
    assert importlib.util.find_spec("isolated_sys_demo") is None  # assay's side cannot import it
    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "run.jsonl"
    args = ["run", str(ds), "--system", "isolated_sys_demo:System", "--python", str(python)]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--k", "2", *cache])
    assert res.exit_code == 0, res.output
    assert "0 from cache, 4 called" in res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["retrieved"] == [
        {"chunk_id": "qa-2024-01-01-0", "score": 2.0},
        {"chunk_id": "qa-2024-01-01-1", "score": 1.0},
    ]
    assert rows[0]["answer"] == "qa:qa-2024-01-01-0" and rows[0]["citations"] == ["qa-2024-01-01-0"]
    meta = json.loads(Path(str(out) + ".meta.json").read_text())
    assert meta["system"]["identity"] == {"model": "iso"} and meta["corpus_hash"] == "corpus-iso"
    assert meta["system"]["args"] == {"python": str(python)} and meta["system"]["code"]
    again = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "2.jsonl"), "--k", "2", *cache])
    assert "4 from cache, 0 called" in again.output, again.output
    (where / "isolated_sys_demo.py").write_text(
        (where / "isolated_sys_demo.py").read_text() + "# edited\n"
    )
    edited = CliRunner().invoke(
        app, [*args, "--out", str(tmp_path / "3.jsonl"), "--k", "2", *cache]
    )
    assert "0 from cache, 4 called" in edited.output, edited.output


def test_python_runs_record_their_chunk_table_and_key_the_cache_on_it(tmp_path: Path) -> None:
    """``--python`` runs recorded ``"chunks": null``: the table the system names never crossed."""
    from assay._io import sha256_file

    python, _ = _interpreter(tmp_path)
    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"chunk_id": "qa-0", "doc_id": "d", "page": 1, "text": "one"}\n')
    args = ["run", str(ds), "--system", "isolated_sys_demo:Chunked", "--python", str(python),
            "--system-arg", f"chunks={chunks}", "--k", "1", "--cache-dir", str(tmp_path / "c")]  # fmt: skip

    def meta(out: str) -> dict[str, Any]:
        res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
        return dict(json.loads((tmp_path / f"{out}.meta.json").read_text()))

    first = meta("1.jsonl")
    assert first["chunks"] == {
        "path": str(chunks.resolve()),
        "hash": sha256_file(chunks)[:16],
        "fingerprint": load_chunks(chunks).fingerprint,
    }
    assert first["cache_hits"] == 0
    assert meta("2.jsonl")["cache_hits"] == 4
    # the table rechunked in place: the replies made on the old one are not served
    chunks.write_text('{"chunk_id": "qa-0", "doc_id": "d", "page": 1, "text": "two"}\n')
    third = meta("3.jsonl")
    assert third["cache_hits"] == 0 and third["chunks"]["hash"] == sha256_file(chunks)[:16]


def test_python_errors_name_the_entry_and_the_interpreter(tmp_path: Path) -> None:
    python, _ = _interpreter(tmp_path)
    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    base = [
        "run",
        str(ds),
        "--python",
        str(python),
        "--out",
        str(tmp_path / "r.jsonl"),
        "--no-cache",
    ]
    res = CliRunner().invoke(app, [*base, "--system", "isolated_sys_demo:broken"])
    assert res.exit_code == 2 and "entry a: ValueError: index missing" in res.output, res.output
    res = CliRunner().invoke(app, [*base, "--system", "isolated_sys_demo:Nope"])
    assert res.exit_code == 2 and "has no attribute 'Nope'" in res.output, res.output
    res = CliRunner().invoke(app, [*base, "--system", "no_such_mod_xyz:S"])
    assert res.exit_code == 2 and "cannot import no_such_mod_xyz" in res.output, res.output
    bad = [*base[:2], "--python", str(tmp_path / "no-python"), *base[4:]]
    res = CliRunner().invoke(app, [*bad, "--system", "isolated_sys_demo:System"])
    assert res.exit_code == 2 and "no such interpreter" in res.output, res.output
