"""The adapter registry: adapters declare their options once; load_system and the CLI ask it."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.runner import fake_systems
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.errors import UsageError
from assay.systems import (
    Adapter,
    Option,
    find_adapter,
    list_adapters,
    load_system,
    package_hash,
    source_hash,
    system_identity,
)
from assay.systems import registry as registry_mod


def test_the_built_in_adapters_are_registered() -> None:
    assert {a.name for a in list_adapters()} >= {"python", "http", "bm25", "filings"}
    assert find_adapter("bm25").name == "bm25"
    assert find_adapter("https://example.org/x").name == "http"
    assert find_adapter("pkg.mod:attr").name == "python"
    with pytest.raises(UsageError, match=r"expected one of: .*pkg\.module:attr"):
        find_adapter("nonsense")


def test_run_help_lists_every_adapter_and_its_options() -> None:
    res = CliRunner().invoke(app, ["run", "--help"], terminal_width=200)
    assert res.exit_code == 0
    for adapter in list_adapters():
        assert f"Options of --system {adapter.usage}" in res.output, adapter.name
        for opt in adapter.options:
            assert opt.flag in res.output, (adapter.name, opt.flag)


def test_an_option_of_another_adapter_is_refused(tmp_path: Path) -> None:
    ds = tmp_path / "g.jsonl"
    ds.write_text(json.dumps({"id": "a", "query": "q", "category": "c"}) + "\n")
    res = CliRunner().invoke(
        app,
        ["run", str(ds), "--system", "bm25", "--corpus", "x", "--out", str(tmp_path / "r.jsonl")],
    )
    assert res.exit_code == 2
    assert "--system bm25 does not take --corpus (its options: --chunks)" in res.output
    res = CliRunner().invoke(
        app, ["run", str(ds), "--system", "bm25", "--out", str(tmp_path / "r.jsonl")]
    )
    assert res.exit_code == 2 and "needs --chunks (the chunk table to index)" in res.output


def test_options_are_validated_against_their_declaration() -> None:
    with pytest.raises(UsageError, match="--mode must be one of bm25, dense, hybrid, full"):
        load_system("filings", corpus="c", mode="fancy")
    with pytest.raises(UsageError, match="--timeout must be float"):
        load_system("http://127.0.0.1:9/x", timeout="soon")
    with pytest.raises(UsageError, match="does not take --k-max"):
        load_system("bm25", chunks="c.jsonl", k_max=3)


def test_filings_modes_agree_with_the_pipeline() -> None:
    from assay.systems.adapters.filings import ANSWERERS, MODES
    from assay.systems.filings import ANSWERERS as PIPELINE_ANSWERERS
    from assay.systems.filings import MODES as PIPELINE_MODES

    assert MODES == PIPELINE_MODES
    assert ANSWERERS == PIPELINE_ANSWERERS


def test_adding_an_adapter_is_one_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[dict[str, Any]] = []

    def build(spec: str, options: dict[str, Any]) -> Any:
        built.append(options)
        return fake_systems.Echo()

    toy = Adapter(
        name="toy",
        usage="toy",
        help="a toy",
        build=build,
        options=(Option("depth", int, "how deep", default=2),),
    )
    monkeypatch.setitem(registry_mod._REGISTRY, "toy", toy)
    system = load_system("toy", depth="5")
    assert isinstance(system, fake_systems.Echo) and built == [{"depth": 5}]
    with pytest.raises(ValueError, match="already registered"):
        registry_mod.register_adapter(toy)


def test_import_path_arguments(tmp_path: Path) -> None:
    system = load_system("tests.runner.fake_systems:FailsOn", system_arg=['fail="q9"'])
    assert isinstance(system, fake_systems.FailsOn) and system.fail == "q9"
    assert load_system("tests.runner.fake_systems:FailsOn", fail="zz").fail == "zz"  # Python kwargs
    with pytest.raises(UsageError, match="cannot be called with"):
        load_system("tests.runner.fake_systems:FailsOn", system_arg=["nope=1"])
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        load_system("tests.runner.fake_systems:FailsOn", system_arg=["fail"])


def test_source_hash_follows_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = tmp_path / "hashpkg_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from hashpkg_demo.core import System\n")
    (pkg / "core.py").write_text(
        textwrap.dedent(
            """
            class System:
                def retrieve(self, query, *, as_of, k):
                    return []
            """
        )
    )
    (tmp_path / "single_mod_demo.py").write_text("X = 1\n")
    whole = source_hash("hashpkg_demo")
    single = source_hash("single_mod_demo")
    assert whole is not None and single is not None
    (pkg / "helpers.py").write_text("Y = 2\n")  # a package stands for all of its files
    assert source_hash("hashpkg_demo") != whole
    (tmp_path / "single_mod_demo.py").write_text("X = 2\n")
    assert source_hash("single_mod_demo") != single
    assert source_hash("builtins") is None and source_hash("no_such_module_here") is None
    system = load_system("hashpkg_demo:System")
    ident = system_identity(system, "hashpkg_demo:System")
    # the identity hashes the system's whole top-level package, helpers included
    assert ident["code"] == package_hash("hashpkg_demo") == package_hash("hashpkg_demo.core")


def test_a_declared_identity_is_combined_with_the_source_hash() -> None:
    ident = system_identity(fake_systems.Echo(), "e", {"x": Path("a/b")})
    assert ident == {
        "spec": "e",
        "args": {"x": "a/b"},
        "identity": {"kind": "echo", "version": 1},
        "code": package_hash("tests"),
    }

    class Plain:
        def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[str]:
            return []

    plain = system_identity(Plain())
    assert plain["spec"].endswith("Plain") and plain["code"] == package_hash(__name__)


def test_builtin_systems_declare_code_and_corpus(tmp_path: Path) -> None:
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        json.dumps({"chunk_id": "d/1/0", "doc_id": "d", "page": 1, "text": "revenue grew"}) + "\n"
    )
    bm25 = load_system("bm25", chunks=chunks)
    assert bm25.identity["code"] == source_hash("assay.systems.bm25")
    assert bm25.corpus_hash == bm25.identity["index_version"]


def test_option_declarations_are_checked() -> None:
    with pytest.raises(ValueError, match="reserved"):
        Option("k", int, "would shadow assay run --k")
    with pytest.raises(ValueError, match="type must be"):
        Option("pairs", dict, "mappings are not supported")
    # a bool option is a flag (--ignore-acl); text reads as a bool only when it says one
    flag = Option("ignore_acl", bool, "a flag", default=False)
    assert flag.coerce(True, "x") is True
    assert (flag.coerce("false", "x"), flag.coerce("yes", "x")) == (False, True)
    with pytest.raises(UsageError, match="must be bool"):
        flag.coerce("maybe", "x")
    with pytest.raises(ValueError, match="declares an option twice"):
        registry_mod.register_adapter(
            Adapter("twice", "x", build=lambda s, o: None, options=(Option("a"), Option("a")))
        )
