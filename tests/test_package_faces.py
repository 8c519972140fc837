"""The faces of assay.dataset, assay.corpus and assay.score: the rest of assay imports them only
through their ``__init__`` (no deep import into a module of theirs), and every name a face
exports resolves to the object of the module that defines it."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
FACES = ("assay.dataset", "assay.corpus", "assay.score")


def _module_name(path: Path, src: Path) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _literal(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        targets = node.targets if isinstance(node, ast.Assign) else [target] if target else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(node.value)  # type: ignore[arg-type]
    return None


def _exports(face: str, src: Path) -> set[str]:
    init = src / Path(*face.split(".")) / "__init__.py"
    return set(_literal(ast.parse(init.read_text(encoding="utf-8")), "__all__") or [])  # type: ignore[call-overload]


def deep_imports(src: Path = SRC) -> list[str]:
    """``file:line: what`` for every import, from a module outside one of `FACES`, of a module
    inside it or of a name its face does not export."""
    exported = {face: _exports(face, src) for face in FACES}
    found = []
    for path in sorted((src / "assay").rglob("*.py")):
        importer = _module_name(path, src)
        package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
            targets: list[tuple[str, list[str]]] = []
            if isinstance(node, ast.Import):
                targets = [(a.name, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, module] if module else base)
                targets = [(module, [a.name for a in node.names])]
            for module, names in targets:
                for face in FACES:
                    if importer == face or importer.startswith(face + "."):
                        continue
                    where = f"{path.relative_to(src.parent)}:{node.lineno}"
                    if module.startswith(face + "."):
                        found.append(f"{where}: {module}")
                    elif module == face:
                        found += [f"{where}: {face}.{n}" for n in names if n not in exported[face]]
    return found


def test_no_deep_imports_into_the_faces() -> None:
    """Outside assay.dataset, assay.corpus and assay.score, code imports their public names from
    the package (``from assay.dataset import Entry``), never from the module that happens to hold
    them (``from assay.dataset.schema import Entry``) nor a name the face does not export."""
    found = deep_imports()
    assert found == [], f"{len(found)} deep imports:\n" + "\n".join(found)


def test_deep_imports_are_found(tmp_path: Path) -> None:
    """The scan sees every spelling: a deep from-import (split over lines, inside a function), a
    plain import of a module, a relative import, a name the face does not export; and leaves
    imports inside the package and through the face alone."""
    root = tmp_path / "src" / "assay"
    (root / "dataset").mkdir(parents=True)
    (root / "dataset" / "__init__.py").write_text('__all__ = ["Entry"]\n')
    (root / "dataset" / "inner.py").write_text("from assay.dataset.schema import Entry\n")
    (root / "other.py").write_text(
        "from assay.dataset import Entry\n"
        "def f():\n    from assay.dataset.io import (\n        Dataset,\n    )\n"
        "import assay.corpus.chunks\n"
        "from assay.dataset import schema\n"
    )
    (root / "score").mkdir()
    (root / "score" / "__init__.py").write_text("")
    (root / "corpus").mkdir()
    (root / "corpus" / "__init__.py").write_text("")
    (root / "score" / "x.py").write_text("from ..corpus.chunks import Chunk\n")
    found = deep_imports(tmp_path / "src")
    assert [f.split(": ", 1)[1] for f in found] == [
        "assay.dataset.io",
        "assay.corpus.chunks",
        "assay.dataset.schema",
        "assay.corpus.chunks",
    ]
    assert found[0].startswith("src/assay/other.py:3:")


def _submodules(face: ModuleType) -> list[str]:
    return [f"{face.__name__}.{m.name}" for m in pkgutil.iter_modules(face.__path__)]


@pytest.mark.parametrize("name", FACES)
def test_face_names_resolve(name: str) -> None:
    """Every name in a face's ``__all__`` resolves, to the very object of the module the face
    says defines it, also once every module of the package is imported (a submodule named like
    an exported name would shadow it); namespaces are the submodules; the names the type checker
    sees (the ``TYPE_CHECKING`` imports) are the same map."""
    face = importlib.import_module(name)
    lazy: dict[str, str] = face._LAZY
    namespaces: dict[str, str] = face._NAMESPACES
    assert face.__doc__ and len(face.__doc__.splitlines()) > 3, f"{name} says what it is for"
    assert sorted(face.__all__) == sorted({*lazy, *namespaces})
    for module in _submodules(face):
        importlib.import_module(module)
    for export in face.__all__:
        value = getattr(face, export)
        if export in namespaces:
            assert value is sys.modules[namespaces[export]], export
        else:
            assert value is getattr(sys.modules[lazy[export]], export), export
            assert not isinstance(value, ModuleType), export
    assert not hasattr(face, "no_such_name")
    assert set(face.__all__) <= set(dir(face))
    tree = ast.parse(Path(face.__file__ or "").read_text(encoding="utf-8"))
    checked: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                for a in imp.names:
                    checked[a.asname or a.name] = (
                        f"{imp.module}.{a.name}" if imp.module == name else imp.module
                    )
    assert checked == {**lazy, **namespaces}


@pytest.mark.parametrize("name", FACES)
def test_face_exports_every_public_name_of_its_modules(name: str) -> None:
    """What a module of the package declares public (its ``__all__``) is on the face, except in
    a namespace module, whose verbs are read through the namespace (``fresh.seal``)."""
    face = importlib.import_module(name)
    missing = {}
    for module in _submodules(face):
        if module.rpartition(".")[2].startswith("_") or module in face._NAMESPACES.values():
            continue
        public = set(getattr(importlib.import_module(module), "__all__", ()))
        if public - set(face.__all__):
            missing[module] = sorted(public - set(face.__all__))
    assert missing == {}


def test_importing_a_face_imports_none_of_its_modules() -> None:
    code = (
        "import sys, assay.dataset, assay.corpus, assay.score; "
        "print(sorted(m for m in sys.modules if m.startswith(('assay.dataset.', 'assay.corpus.', "
        "'assay.score.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
