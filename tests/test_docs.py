"""Every command has help, answers --help, and is documented in the README (as sqlite-utils does)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _leaves(cmd: Any, prefix: list[str]) -> Iterator[tuple[str, Any]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        yield " ".join(prefix), cmd
        return
    for name, sub in sorted(subs.items()):
        yield from _leaves(sub, [*prefix, name])


COMMANDS = dict(_leaves(typer.main.get_command(app), []))


def test_there_are_commands() -> None:
    assert {"validate", "run", "score", "schema"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    assert (COMMANDS[name].help or "").strip(), f"assay {name} has no help text"
    res = CliRunner().invoke(app, [*name.split(), "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_in_the_readme(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"`assay {re.escape(name)}(\s|`)", readme), (
        f"README does not document `assay {name}`"
    )


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(((?:docs|bench)/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_every_extra_is_in_the_readme_install_table() -> None:
    """Each optional-dependency group of pyproject.toml has a row saying what it adds."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    readme = (root / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w-]+)` \| \S", readme, flags=re.MULTILINE))
    assert sorted(set(extras) - rows) == []


def test_make_demo_needs_only_the_core_install() -> None:
    """`make demo` installs the core only (`pip install -e .`), so every step it runs must find
    its packages there: the gold SQL step (`assay demo --sql`) needs sqlglot and DuckDB, which
    were once only in the `sql` extra, and the step was skipped from a core install."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    make = (root / "Makefile").read_text(encoding="utf-8")
    demo = make[make.index("\ndemo:") :].split("\n\n")[0]
    core = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "dependencies"
    ]
    names = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in core}
    if "--sql" in demo:
        assert {"sqlglot", "duckdb"} <= names, names
    if "--logs" in demo:
        assert "duckdb" in names, names


def test_readme_metric_and_check_tables_are_the_registries() -> None:
    """The README's tables of metrics and checks are what the registries say
    (`python -m assay.reference README.md` rewrites them)."""
    from assay.reference import check_table, metric_table, render_readme

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert render_readme(text) == text, (
        "README tables are stale: python -m assay.reference README.md"
    )
    for table in (metric_table(), check_table()):
        assert table in text
    assert "| `answer_correct` | binary: exact McNemar | higher | yes |" in check_table()
    assert "| `complete@k` | binary: exact McNemar | yes |" in metric_table()


def test_the_readme_tables_follow_a_change_in_a_registry() -> None:
    """A built-in check redescribed changes the rendered table (the test above then fails until
    the README is regenerated); a check from outside assay (a plug-in's, a test's) is not listed."""
    from dataclasses import replace

    from assay.judge import check, get_check, unregister
    from assay.judge.registry import _REGISTRY
    from assay.reference import render_readme

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    real = get_check("fiscal_year_ok")
    _REGISTRY["fiscal_year_ok"] = replace(real, description="Redescribed.")
    try:
        changed = render_readme(text)
        assert (
            changed != text
            and "| `fiscal_year_ok` | binary: exact McNemar | higher | yes | Redescribed. |"
            in changed
        )
    finally:
        _REGISTRY["fiscal_year_ok"] = real

    @check("cites_anything", default=False)
    def _cites(ctx: Any) -> bool:
        """The answer cites a chunk."""
        return bool(ctx.citations)

    try:
        assert render_readme(text) == text
    finally:
        unregister("cites_anything")
    with pytest.raises(ValueError, match="registry:metrics"):
        render_readme("no markers here")
