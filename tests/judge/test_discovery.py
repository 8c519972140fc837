"""assay's own checks and plug-ins' are found through the ``assay.checks`` entry points (assay's
own from the modules of `assay.checks`, by pkgutil, when its metadata is not installed), from one
place: the registry's first read. No module imports a check module for its side effect or names one in a string."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


def _declared() -> dict[str, str]:
    """Every check name in assay's sources, read from the ``@check("name", ...)`` decorators
    (not by importing anything): name -> the module declaring it."""
    out: dict[str, str] = {}
    for path in sorted((SRC / "assay").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Name)
                    and deco.func.id == "check"
                    and deco.args
                    and isinstance(deco.args[0], ast.Constant)
                ):
                    out[str(deco.args[0].value)] = _module(path)
    return out


def test_every_builtin_check_is_found_by_the_registry_alone() -> None:
    """A fresh interpreter that imports only the registry and reads it once knows every check
    declared in assay's sources (the gold SQL checks too), and nothing else."""
    declared = _declared()
    assert {"numeric_correct", "acknowledges_gap", "leak", "exec_match"} <= set(declared)
    code = (
        "import json, sys\n"
        "from assay.judge.registry import check_names, get_check\n"
        "names = check_names()\n"
        "print(json.dumps({n: get_check(n).fn.__module__ for n in names}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout)
    assert found == declared


def test_the_check_package_imports_every_module_declaring_checks() -> None:
    """The modules that declare checks are imported by `assay.checks` (one module per group,
    found by pkgutil), and only there."""
    from assay.judge.registry import BUILTIN_MODULES

    owners = set(_declared().values())
    imported = set(BUILTIN_MODULES)  # a group of one module declares its checks itself
    for name in BUILTIN_MODULES:
        path = SRC / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported |= {f"{node.module}.{a.name}" for a in node.names}
    assert owners <= imported, sorted(owners - imported)
    assert [m.rsplit(".", 1)[1] for m in BUILTIN_MODULES] == [
        "answer",
        "conversation",
        "policy",
        "routing",
        "sql",
        "tools",
    ]


def test_no_module_imports_a_check_module_for_its_effect_or_names_one_in_a_string() -> None:
    """A check module imported only to register its checks (an unused import), or named in a
    string, is a hidden dependency, and a check lost when it goes: discovery needs neither."""
    owners = set(_declared().values())
    for path in sorted((SRC / "assay").rglob("*.py")):
        if path.parent.name == "checks" and path.parent.parent.name == "assay":
            continue  # the package discovery imports
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and node.value in owners:
                raise AssertionError(f"{path}: names the check module {node.value!r} in a string")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and "F401" in lines[node.lineno - 1]:
                names = [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom):
                    names = [f"{node.module}.{n}" for n in names] + [str(node.module)]
                hidden = set(names) & (owners | {"assay.judge"})
                assert not hidden, f"{path}:{node.lineno}: imports {hidden} for its effect"


def test_the_order_of_groups_and_checks_does_not_depend_on_what_was_imported_first() -> None:
    """A test (or a user) that imports the SQL checks or the policy checks before anything
    reads the registry sees the same order as one that does not: the table and the help stay."""
    import subprocess
    import sys

    code = (
        "import {first}\n"
        "from assay.judge.registry import check_groups, check_names\n"
        "print([g.name for g in check_groups()][:6]); print(list(check_names()))"
    )
    outs = [
        subprocess.run(
            [sys.executable, "-c", code.format(first=m)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for m in ("assay.checks.sql", "assay.checks.policy", "assay.judge.registry")
    ]
    assert outs[0].splitlines()[0] == (
        "['answer', 'conversation', 'policy', 'routing', 'sql', 'tools']"
    )
    assert outs[0] == outs[1] == outs[2]


def _declared_entry_points() -> dict[str, str]:
    """assay's own ``assay.checks`` entry points as its ``pyproject.toml`` declares them."""
    pyproject = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(pyproject["project"].get("entry-points", {}).get("assay.checks", {}))


def test_pyproject_declares_every_check_module_as_an_entry_point() -> None:
    """Each module of `assay.checks` is an ``assay.checks`` entry point of assay itself, named
    like its group: a new module that is not declared would be found only from the sources."""
    from assay.judge.registry import BUILTIN_MODULES

    assert _declared_entry_points() == {m.rsplit(".", 1)[1]: m for m in BUILTIN_MODULES}


def _loads(site: Path) -> dict[str, object]:
    """In a fresh interpreter with `site` first on the path: every entry point the check
    registry loads (distribution, value, whether its module was imported before), and the
    checks it then knows."""
    code = (
        "import importlib.metadata as md, json, sys\n"
        "seen = []\n"
        "load = md.EntryPoint.load\n"
        "def spy(ep):\n"
        "    if ep.group == 'assay.checks':\n"
        "        seen.append([ep.dist.name, ep.value, ep.module in sys.modules])\n"
        "    return load(ep)\n"
        "md.EntryPoint.load = spy\n"
        "from assay.judge.registry import check_names\n"
        "print(json.dumps({'loads': seen, 'checks': list(check_names())}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr
    out: dict[str, object] = json.loads(res.stdout)
    return out


def _site(where: Path, own: dict[str, str]) -> Path:
    """A site folder holding assay's metadata (its ``assay.checks`` entry points `own`, which
    shadow the installed ones) and a plug-in distribution adding one check module."""
    from tests.test_plugins import make_distribution

    make_distribution(
        where,
        "aardvark-checks",
        {"aardvark_checks": PLUGIN},
        {"assay.checks": {"more": "aardvark_checks"}},
    )
    return make_distribution(where, "assay", {}, {"assay.checks": own} if own else {})


PLUGIN = (
    "from assay.judge import check\n"
    "@check('cites_two', default=False)\n"
    "def cites_two(ctx):\n"
    "    '''The answer cites two chunks or more.'''\n"
    "    return len(ctx.citations) >= 2\n"
)


def test_assays_own_checks_and_a_plugins_are_loaded_by_the_same_entry_point_scan(
    tmp_path: Path,
) -> None:
    """With assay installed with its metadata, its own check modules are imported by the
    entry-point loader that imports a plug-in's, in one scan of the group: own first."""
    from assay.judge.registry import BUILTIN_MODULES

    found = _loads(_site(tmp_path / "site", {m.rsplit(".", 1)[1]: m for m in BUILTIN_MODULES}))
    assert found["loads"] == [
        *(["assay", module, False] for module in BUILTIN_MODULES),
        ["aardvark-checks", "aardvark_checks", False],
    ]
    checks = found["checks"]
    assert isinstance(checks, list)
    assert set(_declared()) | {"cites_two"} == set(checks)


def test_without_assays_metadata_its_own_checks_come_from_the_package(tmp_path: Path) -> None:
    """assay run from its sources, or installed before it declared its checks: metadata that
    declares none of them falls back to the modules of `assay.checks`, imported before the
    plug-ins' entry points are loaded."""
    found = _loads(_site(tmp_path / "site", {}))
    assert found["loads"] == [["aardvark-checks", "aardvark_checks", False]]
    checks = found["checks"]
    assert isinstance(checks, list)
    assert set(_declared()) | {"cites_two"} == set(checks)
