"""Import hygiene: every module imports, no import cycles, and `assay.stats` stands alone.

The import graph is built statically with `ast` from every `import` statement of each module under
src/assay: at top level, inside functions and methods, and under `if TYPE_CHECKING:` alike.
Function-level imports count because they are how cycles hide (and they run whenever the function
does); TYPE_CHECKING imports count because they state the same dependency in the same direction
(and turn into runtime imports the moment a name is needed at run time). `from assay.x import y`
is an edge to the module `assay.x.y` when there is one, else to `assay.x`; importing a module does
not count as importing its parent packages (that is Python's mechanics, not a design choice).

Cycles are looked for at two levels: between modules, and between layers (the top-level package
`assay`, each subpackage `assay.X` and each top-level module, as one node each), so that
`corpus <-> dataset` is a cycle even though no two of their modules import each other.

Cycles that other areas are removing are listed in `KNOWN`, each by the edges that close it: the
main tests ignore those edges, and one strict xfail test per entry fails as soon as the cycle is
gone, so that its entry is deleted.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "assay"

# modules that are scripts run by a tool, not importable on their own
NOT_IMPORTABLE = {
    "assay.cli.__main__": "runs the command line (`python -m assay.cli`)",
    "assay.workbench.migrations.env": "alembic's migration script; needs alembic's context",
}

Graph = dict[str, set[str]]


@dataclass(frozen=True)
class Known:
    """A cycle owned by another area of the code: the edges (src, dst) that close it."""

    owner: str
    closes: Callable[[str, str], bool]


def _layer(module: str) -> str:
    return ".".join(module.split(".")[:2])


KNOWN: dict[str, Known] = {}

# `assay.stats` modules that still import something of assay outside `assay.stats`
KNOWN_STATS: dict[str, str] = {}


# ------------------------------------------------------------------------------- the graph


@cache
def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package) for every .py file under src/assay."""
    out: dict[str, tuple[Path, bool]] = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


def _imports(name: str) -> set[str]:
    """Every assay module `name` imports, anywhere in its file."""
    mods = _modules()
    path, is_pkg = mods[name]
    package = name if is_pkg else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                out.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod)
    return {m for m in out if m in mods and m != name}


@cache
def module_graph() -> Graph:
    return {m: _imports(m) for m in _modules()}


def layer_graph(g: Graph) -> Graph:
    out: Graph = {}
    for a, deps in g.items():
        out.setdefault(_layer(a), set()).update(_layer(b) for b in deps if _layer(b) != _layer(a))
    return out


def without(g: Graph, known: list[Known]) -> Graph:
    return {a: {b for b in deps if not any(k.closes(a, b) for k in known)} for a, deps in g.items()}


def strongly_connected(g: Graph) -> list[list[str]]:
    """Components of more than one node (Tarjan, iterative), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def a_cycle(g: Graph, component: list[str]) -> str:
    """A shortest cycle through the component's first node, as `a -> b -> a`."""
    inside = set(component)
    start = component[0]
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(g[v] & inside):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return " -> ".join([*reversed(path), start])
            if w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError(f"no cycle in {component}")  # pragma: no cover


def cycles(g: Graph) -> list[str]:
    """One line per tangle: a shortest cycle, and the other modules caught in the same tangle."""
    out = []
    for comp in strongly_connected(g):
        cycle = a_cycle(g, comp)
        rest = [m for m in comp if m not in cycle.split(" -> ")]
        out.append(cycle + (f" (tangled with {', '.join(rest)})" if rest else ""))
    return out


# ------------------------------------------------------------------------------- the tests


def test_the_graph_sees_every_kind_of_import() -> None:
    """The parser itself: relative, function-level and TYPE_CHECKING imports are edges."""
    g = module_graph()
    assert "assay.synth.facts_ledger" in g["assay.synth.filings"]  # top level
    assert "assay.synth.generate" in g["assay.cli.synth_cmds"]  # inside a function
    assert "assay.compare" in g["assay"]  # under TYPE_CHECKING
    assert "assay.runner" in g["assay.cli.core_cmds"]  # inside a function
    assert g["assay.stats"] >= {"assay.stats.bootstrap"}  # a package's re-exports
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]
    assert cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}) == ["a -> b -> a (tangled with c)"]
    assert cycles({"a": {"b"}, "b": set()}) == []


# The child of the test below. Importing `a.b.c` first imports `a` first, then `a.b`, then the
# module itself: the state in which `a.b.c` is imported first is the one `a.b` leaves when imported
# first. So each package is imported once, in a process forked from the one its own package left,
# and each module below it in a process forked from there: every module is imported first, as in
# a fresh interpreter with the third-party modules loaded, and no package is imported twice. A
# module that its package's own import already imported is not forked for: importing it first is
# importing its package first.
_FIRST_IMPORTS = """
import importlib, json, os, sys


def first_imports(package, names, report):
    known = set(names)

    def parent(name):
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:i]) in known:
                return ".".join(parts[:i])
        return None

    below = {}
    for name in names:
        below.setdefault(parent(name), []).append(name)
    for name in names:  # the third-party modules they need, loaded once for all
        try:
            importlib.import_module(name)
        except Exception:
            pass
    for k in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
        del sys.modules[k]
    out = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def tell(names, why=None):  # why None: imported first without error
        os.write(out, "".join(json.dumps([n, why]) + "\\n" for n in names).encode())

    def under(name):
        for sub in below.get(name, []):
            if sub in sys.modules:  # imported by its package: importing it first is that
                tell([sub])
                under(sub)
                continue
            pid = os.fork()
            if pid == 0:  # never returns: the rest of the loop is its parent's
                try:
                    importlib.import_module(sub)
                except BaseException as exc:
                    tell([sub, *(n for n in names if n.startswith(sub + "."))], repr(exc))
                    os._exit(0)
                tell([sub])
                try:
                    under(sub)
                except BaseException as exc:
                    tell([sub], f"below it: {exc!r}")
                    os._exit(1)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            if status:
                tell([sub], f"its process ended with status {status}")

    under(None)
    os.close(out)


for package, names, report in json.loads(sys.argv[1]):
    first_imports(package, names, report)
"""

# a package whose modules import one another: `b` imported first asks `a` for `B` before `b` has
# defined it (and so does `c`, which imports `b` first); `a` first, `d` first and `d.e` first
# (after `d` imported `a`) all succeed
_TANGLE = {
    "__init__.py": "",
    "a.py": "from tangle.b import B\nA = 1\n",
    "b.py": "import tangle.a\nB = 2\n",
    "c.py": "import tangle.b\n",
    "d/__init__.py": "from tangle import a\n",
    "d/e.py": "import tangle.b\n",
}


def _imported_first(
    packages: list[tuple[str, list[str]]], where: Path
) -> list[dict[str, str | None]]:
    """For each (package, its modules): each module imported first -> None, or the error it
    met, from one fresh interpreter with `where` and src first on its path."""
    jobs = [(package, names, str(where / f"{package}.jsonl")) for package, names in packages]
    subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORTS, json.dumps(jobs)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(where), str(SRC)])},
        check=True,
        timeout=600,
    )
    out: list[dict[str, str | None]] = []
    for _, _, report in jobs:
        told: dict[str, str | None] = {}
        for line in Path(report).read_text().splitlines():
            name, why = json.loads(line)
            told[name] = told.get(name) or why
        out.append(told)
    return out


def test_every_module_imports_on_its_own(tmp_path: Path) -> None:
    """Each module imported first in a fresh interpreter state (catches import-order cycles);
    the same child finds the modules of a tangled package that fail when imported first."""
    names = sorted(m for m in module_graph() if m not in NOT_IMPORTABLE)
    for rel, text in _TANGLE.items():
        (tmp_path / "tangle" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tangle" / rel).write_text(text, encoding="utf-8")
    tangle = ["tangle", *(f"tangle.{m}" for m in ("a", "b", "c", "d", "d.e"))]
    found, tangled = _imported_first([("assay", names), ("tangle", tangle)], tmp_path)
    assert {n: why for n, why in found.items() if why} == {}
    assert sorted(found) == names  # every one of them imported first
    assert sorted(tangled) == tangle
    bad = {n: why for n, why in tangled.items() if why}
    assert sorted(bad) == ["tangle.b", "tangle.c"], tangled
    assert all("cannot import name 'B'" in why for why in bad.values()), bad
    assert len(names) > 80


def test_no_import_cycles_between_modules() -> None:
    assert cycles(without(module_graph(), list(KNOWN.values()))) == []


def test_no_import_cycles_between_layers() -> None:
    assert cycles(layer_graph(without(module_graph(), list(KNOWN.values())))) == []


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=k.owner))
        for n, k in KNOWN.items()
    ],
)
def test_known_cycle_is_gone(name: str) -> None:
    """Fails while the cycle exists (xfail); once it is gone this passes, strict xfail turns that
    into a failure, and the entry comes out of KNOWN."""
    others = [k for n, k in KNOWN.items() if n != name]
    g = without(module_graph(), others)
    closes = KNOWN[name].closes
    for level in (g, layer_graph(g)):
        for comp in strongly_connected(level):
            inside = set(comp)
            closing = [(a, b) for a in comp for b in level[a] & inside if closes(a, b)]
            assert not closing, f"{a_cycle(level, comp)} (closed by {closing[:3]})"


# the ground floor: errors, atomic file writing, the one registry class and the lazy package
# faces (stdlib only, and `assay.errors`), so that `assay.stats` can keep its coefficients in the
# same kind of registry as the metrics, checks and adapters without importing any layer above it
GROUND_FLOOR = ("assay.errors", "assay._io", "assay._registry", "assay._faces")


def _inside(dep: str, *prefixes: str) -> bool:
    return any(dep == p or dep.startswith(p + ".") for p in prefixes)


def test_stats_imports_only_report_and_the_ground_floor() -> None:
    g = module_graph()
    outside = {
        m: sorted(d for d in deps if not _inside(d, "assay.stats", "assay.report", *GROUND_FLOOR))
        for m, deps in g.items()
        if m.startswith("assay.stats") and m not in KNOWN_STATS
    }
    assert {m: d for m, d in outside.items() if d} == {}


def test_report_is_the_ground_floor() -> None:
    """`assay.report` imports nothing of assay above the ground floor (not stats, not scipy)."""
    g = module_graph()
    outside = {
        m: sorted(d for d in deps if not _inside(d, "assay.report", *GROUND_FLOOR))
        for m, deps in g.items()
        if _inside(m, "assay.report")
    }
    assert {m: d for m, d in outside.items() if d} == {}


def test_the_ground_floor_stands_on_nothing_else() -> None:
    """errors, _io, _registry and _faces import only each other (and the standard library)."""
    g = module_graph()
    outside = {m: sorted(d for d in g[m] if not _inside(d, *GROUND_FLOOR)) for m in GROUND_FLOOR}
    assert {m: d for m, d in outside.items() if d} == {}


def test_import_assay_report_loads_no_scipy() -> None:
    code = (
        "import sys, assay.report; "
        "print([m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'assay.stats'))])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SRC
    )
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=f"imports {why}"))
        for m, why in KNOWN_STATS.items()
    ],
)
def test_known_stats_import_is_gone(module: str) -> None:
    assert sorted(d for d in module_graph()[module] if not d.startswith("assay.stats")) == []


def test_tests_mirror_the_source_tree() -> None:
    """Every folder under tests/ is named after a subpackage or module of src/assay."""
    tests = Path(__file__).resolve().parent
    names = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    names |= {p.stem for p in PKG.glob("*.py") if not p.stem.startswith("_")}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders - names == set(), f"test folders with no source counterpart: {folders - names}"


def test_stats_computes_and_does_not_render() -> None:
    """Markdown and rich tables are drawn above assay.stats (assay.label_files, assay.report): a
    statistic may describe itself as a plain `Tabular`, never draw it."""
    drawn = {
        str(p.relative_to(SRC)): [w for w in ("markdown_table", "rich_table", "rich.") if w in t]
        for p in sorted((PKG / "stats").glob("*.py"))
        if (t := p.read_text(encoding="utf-8"))
    }
    assert {f: w for f, w in drawn.items() if w} == {}
