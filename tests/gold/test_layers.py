"""Gold's place in the layers: dataset and corpus below it, scoring above it, nothing hidden.

Every import counts, function-local ones included (they used to hide a corpus <-> dataset cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import assay

SRC = Path(assay.__file__).parent

# package -> the assay packages/modules it may import (besides itself); report and stats are the
# ground floor
BASE = {
    "_criteria",
    "_faces",
    "_io",
    "_numfmt",
    "_stopwords",
    "_text",
    "_tokens",
    "errors",
    "report",
    "stats",
}
ALLOWED = {
    "dataset": BASE,
    "corpus": BASE | {"dataset"},
    "gold": BASE | {"dataset", "corpus"},
}


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m == "assay" or m.startswith("assay.")}


def test_dataset_and_corpus_sit_below_gold_and_gold_below_scoring() -> None:
    bad: list[str] = []
    for pkg, allowed in ALLOWED.items():
        for path in sorted((SRC / pkg).rglob("*.py")):
            for mod in _imports(path):
                parts = mod.split(".")
                top = parts[1] if len(parts) > 1 else ""
                if top != pkg and top not in allowed:
                    bad.append(f"{path.relative_to(SRC)} imports {mod}")
    assert bad == []


def test_scoring_uses_the_one_resolver() -> None:
    import assay.gold
    import assay.score.retrieval as retrieval

    assert retrieval.GoldIndex is assay.gold.GoldIndex
    assert retrieval.resolve_gold is assay.gold.resolve_gold
    text = (SRC / "score" / "retrieval.py").read_text(encoding="utf-8")
    assert "resolve_anchor" not in text and "class GoldIndex" not in text
