"""compare/ stays split by concern, and its options stay typed: no module grows past the size
one concern needs, and no function takes untyped keyword options (``**kwargs: Any``) again;
options travel as one `assay.compare.CompareOptions` value or as its typed keywords."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.compare

PACKAGE = Path(assay.compare.__file__).parent
MAX_LINES = 600


def _modules() -> list[Path]:
    found = sorted(PACKAGE.rglob("*.py"))
    assert len(found) > 5, found
    return found


def test_no_module_of_compare_outgrows_one_concern() -> None:
    sizes = {p.name: len(p.read_text("utf-8").splitlines()) for p in _modules()}
    assert {n: s for n, s in sizes.items() if s > MAX_LINES} == {}


def _untyped_keywords(source: str) -> list[str]:
    """The functions whose ``**`` parameter is unannotated or annotated ``Any``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.args.kwarg:
            note = node.args.kwarg.annotation
            text = "" if note is None else ast.unparse(note)
            if text in ("", "Any", "typing.Any", "object"):
                out.append(f"{node.name}(**{node.args.kwarg.arg}: {text or '?'})")
    return out


def test_no_function_of_compare_takes_untyped_keyword_options() -> None:
    found = {p.name: _untyped_keywords(p.read_text("utf-8")) for p in _modules()}
    assert {n: f for n, f in found.items() if f} == {}


def test_the_scan_finds_untyped_keywords() -> None:
    assert _untyped_keywords("def f(a, **kwargs: Any) -> None: ...") == ["f(**kwargs: Any)"]
    assert _untyped_keywords("def g(**kw): ...") == ["g(**kw: ?)"]
    typed = "def h(*, options: O | None = None, **given: Unpack[RunsOptions]) -> None: ..."
    assert _untyped_keywords(typed) == []
